/**
 * Example: the MCP client talking to the HTTP handler in the same process (no socket): the
 * client's requests go straight to `handler.fetch`. Run from the repository:
 * `deno run --allow-read=. --allow-env examples/in_process_client.ts` (the client
 * needs env: the SDK's stdio client reads OSTYPE as it loads).
 */
import { connect, createHttpHandler, Workspace } from "@wmcp/wmcp";

const workspace = await Workspace.open({ root: "." });
const handler = createHttpHandler({ workspace });
const client = await connect({ url: "http://localhost/mcp", fetch: handler.fetch });
try {
  const tools = await client.listTools();
  console.log(`${tools.length} tools: ${tools.map((t) => t.name).join(", ")}`);
  const info = await client.callTool("workspace_info", {});
  const { mode } = info.structuredContent as { mode: string };
  console.log(`workspace mode: ${mode}`);
} finally {
  await client.close();
  await handler.close();
}
