/**
 * stdio MCP server on one workspace: `serve_stdio.ts [--root DIR] [--write] [--limit name=N]`.
 * stdout carries only protocol messages; logs go to stderr. A line over the request cap (6 x
 * maxWriteBytes + 64 KiB) is answered with a -32600 error for its id; the connection stays open.
 */
import process from "node:process";
import { serveStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { EXIT_USAGE, openWorkspaceFromFlags, UsageError } from "./src/config.ts";
import { answerInfoFlags, parseServerFlags } from "./src/cli/server_flags.ts";
import { createServerFactory } from "./src/server/factory.ts";
import { type OversizeLine, stdioLineFilter } from "./src/server/stdio_lines.ts";
import { requestCapFor } from "./src/workspace/message_limits.ts";

async function main(): Promise<number> {
  const info = await answerInfoFlags("stdio", Deno.args);
  if (info !== undefined) return info;
  try {
    // Every flag checked against the one table (src/cli/server_flags.ts).
    const flags = parseServerFlags("stdio", Deno.args);
    const { write, pageSize } = flags;
    const workspace = await openWorkspaceFromFlags(flags, { refuseBroadDefaultRoot: true });
    // Lines over the request cap fail alone (a -32600 error for their id) instead of reaching the
    // SDK's buffer cap, which would close the connection; that cap stays as a backstop above ours.
    const maxLineBytes = requestCapFor(workspace.limits);
    const onOversize = ({ id, size }: OversizeLine) => {
      const message = `Message of ${size} bytes over ${maxLineBytes} bytes, the request cap`;
      console.error(
        `wmcp: refused ${
          id === undefined ? "a message without an id" : `request ${JSON.stringify(id)}`
        }: ${message}`,
      );
      if (id === undefined) return;
      transport.send({ jsonrpc: "2.0", id, error: { code: -32600, message } }).catch(() => {});
    };
    const stdin = process.stdin.pipe(stdioLineFilter({ maxLineBytes, onOversize }));
    const transport = new StdioServerTransport(stdin, process.stdout, {
      maxBufferSize: 2 * (maxLineBytes + 1),
    });
    serveStdio(createServerFactory({ workspace, pageSize }), {
      transport,
      onerror: (err) => console.error(`wmcp: ${err.message}`),
    });
    console.error(
      `wmcp: serving ${workspace.policy.rootReal} over stdio (${
        write ? "read-write" : "read-only"
      })`,
    );
    return 0;
  } catch (err) {
    console.error(
      `wmcp: ${err instanceof UsageError ? "" : "cannot start: "}${(err as Error).message}`,
    );
    return EXIT_USAGE;
  }
}

if (import.meta.main) {
  const code = await main();
  if (code !== 0) Deno.exit(code);
}
