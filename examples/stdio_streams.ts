/**
 * Example: the stdio MCP server over in-memory streams (any Node Readable/Writable pair works:
 * pipes, sockets), spoken to with raw JSON-RPC lines. Run from the repository:
 * `deno run --allow-read=. examples/stdio_streams.ts`.
 */
import { PassThrough } from "node:stream";
import { startStdioServer, Workspace } from "@wmcp/wmcp";

const workspace = await Workspace.open({ root: "." });
const input = new PassThrough();
const output = new PassThrough();
const server = startStdioServer({ workspace, input, output });

// The server writes one JSON-RPC message per line; collect them by id.
const answers = new Map<number, (message: Record<string, unknown>) => void>();
let buffered = "";
output.on("data", (chunk: Uint8Array) => {
  buffered += new TextDecoder().decode(chunk);
  let nl: number;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const message = JSON.parse(buffered.slice(0, nl));
    buffered = buffered.slice(nl + 1);
    answers.get(message.id)?.(message);
  }
});
function request(id: number, method: string, params: Record<string, unknown> = {}) {
  const answer = new Promise<Record<string, unknown>>((resolve) => answers.set(id, resolve));
  input.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  return answer;
}

try {
  await request(1, "initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "example", version: "1.0.0" },
  });
  input.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  const listed = await request(2, "tools/list");
  const { tools } = listed.result as { tools: { name: string }[] };
  console.log(`tools over stdio: ${tools.map((t) => t.name).join(", ")}`);
} finally {
  await server.close();
}
