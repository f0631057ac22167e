/**
 * Example: serve the workspace's HTTP handler with Deno.serve on a free loopback port, call a
 * tool over the network with the bundled client, then stop. Run from the repository:
 * `deno run --allow-read=. --allow-env --allow-net=127.0.0.1 --unstable-no-legacy-abort
 * examples/http_server.ts` (the flag keeps Deno's request.signal from aborting after a response).
 */
import { connect, createHttpHandler, Workspace } from "@wmcp/wmcp";

const workspace = await Workspace.open({ root: "." });
const handler = createHttpHandler({ workspace });
const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: () => {} },
  handler.fetch,
);
try {
  const client = await connect({ url: `http://127.0.0.1:${server.addr.port}/mcp` });
  try {
    const result = await client.callTool("list_directory", { path: "." });
    const { entries } = result.structuredContent as { entries: { name: string }[] };
    console.log(`${client.protocolVersion}: ${entries.length} entries in the workspace root`);
  } finally {
    await client.close();
  }
} finally {
  await handler.close();
  await server.shutdown();
}
