/**
 * stdio MCP server on one workspace: `serve_stdio.ts [--root DIR] [--write] [--limit name=N]`.
 * stdout carries only protocol messages; logs go to stderr. A line over the request cap (6 x
 * maxWriteBytes + 64 KiB) is answered with a -32600 error for its id; the connection stays open.
 */
import { parseArgs } from "node:util";
import process from "node:process";
import { serveStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { openWorkspaceFromFlags, UsageError } from "./src/config.ts";
import { createServerFactory } from "./src/server/factory.ts";
import { type OversizeLine, stdioLineFilter } from "./src/server/stdio_lines.ts";
import { requestCapFor } from "./src/workspace/message_limits.ts";

async function main(): Promise<number> {
  try {
    const { values } = parseArgs({
      args: Deno.args,
      options: {
        root: { type: "string" },
        write: { type: "boolean" },
        limit: { type: "string", multiple: true },
        "page-size": { type: "string", default: "50" },
      },
      strict: true,
    });
    const write = values.write === true;
    const workspace = await openWorkspaceFromFlags(values, { refuseBroadDefaultRoot: true });
    const pageSize = Number(values["page-size"]);
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
      throw new UsageError("--page-size must be a positive integer");
    }
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
    return 2;
  }
}

if (import.meta.main) {
  const code = await main();
  if (code !== 0) Deno.exit(code);
}
