/**
 * stdio MCP server on one workspace: `serve_stdio.ts [--root DIR] [--write] [--limit name=N]`.
 * stdout carries only protocol messages; logs go to stderr. A line over the request cap (6 x
 * maxWriteBytes + 64 KiB) is answered with a -32600 error for its id; the connection stays open.
 */
import { EXIT_USAGE, openWorkspaceFromFlags, UsageError } from "./src/config.ts";
import { answerInfoFlags, parseServerFlags } from "./src/cli/server_flags.ts";
import { startStdioServer } from "./src/server/stdio_server.ts";

async function main(): Promise<number> {
  const info = await answerInfoFlags("stdio", Deno.args);
  if (info !== undefined) return info;
  try {
    // Every flag checked against the one table (src/cli/server_flags.ts).
    const flags = await parseServerFlags("stdio", Deno.args);
    const { write, pageSize } = flags;
    const workspace = await openWorkspaceFromFlags(flags, { refuseBroadDefaultRoot: true });
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
    return EXIT_USAGE;
  }
}

if (import.meta.main) {
  const code = await main();
  if (code !== 0) Deno.exit(code);
}
