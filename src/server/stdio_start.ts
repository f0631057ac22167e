/**
 * The stdio server entries' one start sequence (decision 0063): the first answers from precomputed
 * JSON (stdio_early.ts), then the server's module, loaded by the entry's own `load`, then the
 * server from stdin's first byte. serve_stdio.ts (run directly) names the server's module by a
 * literal; stdio_launched.ts (what the launcher starts) names it through a variable, so its graph
 * is not loaded before the first answers.
 *
 * @module
 */
import { startEarlyStdio } from "./stdio_early.ts";

/** How long an entry waits for a first request before it loads the server (ms). */
const FIRST_READ_MS = 15;

/** What the server's module (stdio_entry.ts) gives an entry. */
export interface StdioServerModule {
  main(args: string[], early: ReturnType<typeof startEarlyStdio>): Promise<number>;
}

/** Writes one whole line to stdout, synchronously (the server's own writes come later). */
function writeLine(line: string): void {
  const bytes = new TextEncoder().encode(line);
  for (let off = 0; off < bytes.length;) off += Deno.stdout.writeSync(bytes.subarray(off));
}

/** Answers early, loads the server's module with `load`, and serves; exits with its code. */
export async function runStdioEntry(load: () => Promise<StdioServerModule>): Promise<void> {
  const early = startEarlyStdio(Deno.args, Deno.stdin, writeLine);
  // A host writes its first request as it starts the server: it is in the pipe by now. Loading
  // the server's modules holds the event loop, so the first read is seen first (at most
  // FIRST_READ_MS is spent waiting for one that is not coming yet).
  await early?.firstSeen(FIRST_READ_MS);
  // Loaded now, not before: the first answers above went out first.
  const { main } = await load();
  const code = await main(Deno.args, early);
  if (code !== 0) Deno.exit(code);
}
