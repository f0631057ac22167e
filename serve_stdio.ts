/**
 * stdio MCP server on one workspace: `serve_stdio.ts [--root DIR] [--write] [--limit name=N]`.
 * stdout carries only protocol messages; logs go to stderr. A line over the request cap (6 x
 * maxWriteBytes + 64 KiB) is answered with a -32600 error for its id; the connection stays open.
 */
import { parseArgs } from "node:util";
import { openWorkspaceFromFlags, UsageError } from "./src/config.ts";
import { startStdioServer } from "./src/server/stdio_server.ts";

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
    startStdioServer({ workspace, pageSize });
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
