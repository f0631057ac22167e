/**
 * stdio MCP server on one workspace: `serve_stdio.ts [--root DIR] [--write] [--limit name=N]`.
 * stdout carries only protocol messages; logs go to stderr. A line over the request cap (6 x
 * maxWriteBytes + 64 KiB) is answered with a -32600 error for its id; the connection stays open.
 *
 * Started as the launcher starts it (`--root /ABS [--write]`), a modern `tools/list` or
 * `server/discover` sent first is answered from precomputed JSON before the server's modules
 * have loaded (src/server/stdio_early.ts); the server then reads stdin from its first byte.
 */
import { startEarlyStdio } from "./src/server/stdio_early.ts";

/** How long the entry waits for a first request before it loads the server (ms). */
const FIRST_READ_MS = 15;

/** Writes one whole line to stdout, synchronously (the server's own writes come later). */
function writeLine(line: string): void {
  const bytes = new TextEncoder().encode(line);
  for (let off = 0; off < bytes.length;) off += Deno.stdout.writeSync(bytes.subarray(off));
}

if (import.meta.main) {
  const early = startEarlyStdio(Deno.args, Deno.stdin, writeLine);
  // A host writes its first request as it starts the server: it is in the pipe by now. Loading
  // the server's modules holds the event loop, so the first read is seen first (at most
  // FIRST_READ_MS is spent waiting for one that is not coming yet).
  await early?.firstSeen(FIRST_READ_MS);
  // Loaded now, not before: the first answers above went out before this graph loads.
  const { main } = await import("./src/server/stdio_entry.ts");
  const code = await main(Deno.args, early);
  if (code !== 0) Deno.exit(code);
}
