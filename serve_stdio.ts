/**
 * stdio MCP server on one workspace: `serve_stdio.ts [--root DIR] [--write] [--limit name=N]`.
 * stdout carries only protocol messages; logs go to stderr. A line over the request cap (6 x
 * maxWriteBytes + 64 KiB) is answered with a -32600 error for its id; the connection stays open.
 *
 * Started as the launcher starts it (`--root /ABS [--write]`), a modern `tools/list` or
 * `server/discover` sent first is answered from precomputed JSON before the server's modules are
 * evaluated (src/server/stdio_early.ts); the server then reads stdin from its first byte. Run
 * directly, Deno has loaded the server's graph before this runs; the launcher starts
 * src/server/stdio_launched.ts, the same start without that wait.
 */
import { runStdioEntry } from "./src/server/stdio_start.ts";

if (import.meta.main) {
  // A literal: Deno loads this graph before the entry runs (any permissions will do). The
  // launcher starts src/server/stdio_launched.ts instead, which loads it after the first answers.
  await runStdioEntry(() => import("./src/server/stdio_entry.ts"));
}
