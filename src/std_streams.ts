/**
 * The CLI's one door to its standard streams. Every byte the commands and the client write for a
 * person or a pipe (results, errors, warnings, help, prompts, progress) goes through `streams()`,
 * and every "is this a terminal?" question asks it; nothing under src/cli or the client's terminal
 * code touches `Deno.stdout`/`Deno.stderr` itself. By default these are the process's own streams.
 *
 * `withStreams` runs a function with other streams. The suite uses it to run `main(argv)` in the
 * test's own process (tests/_support/in_process.ts) where what is tested is a command's
 * behaviour, not the process boundary: one Deno start saved per case (decision 0052). The
 * servers' protocol output (stdout of `serve stdio`) does not go through here.
 */

/** One output stream: what the CLI needs of `Deno.stdout` and `Deno.stderr`. */
export interface OutStream {
  /** Writes some of bytes; the number written. */
  write(bytes: Uint8Array): Promise<number>;
  /** Writes some of bytes synchronously; the number written. */
  writeSync(bytes: Uint8Array): number;
  /** Whether the stream is a terminal. */
  isTerminal(): boolean;
}

/** The standard streams as the CLI sees them. */
export interface StdStreams {
  stdout: OutStream;
  stderr: OutStream;
  /** Whether stdin is a terminal (prompts are offered only then). */
  stdinIsTerminal(): boolean;
}

/**
 * One of the process's streams, looked up when used, never at import: the HTTP server's flag
 * module imports this one and runs on Node and Bun too (adapters/), where `Deno` is not defined.
 */
function processStream(which: () => OutStream): OutStream {
  return {
    write: (bytes: Uint8Array) => which().write(bytes),
    writeSync: (bytes: Uint8Array) => which().writeSync(bytes),
    isTerminal: () => which().isTerminal(),
  };
}

const PROCESS: StdStreams = {
  stdout: processStream(() => Deno.stdout),
  stderr: processStream(() => Deno.stderr),
  stdinIsTerminal: () => Deno.stdin.isTerminal(),
};

let current: StdStreams = PROCESS;

/** The streams in use: the process's, or those of the innermost `withStreams`. */
export function streams(): StdStreams {
  return current;
}

/** Runs fn with `streams()` answering s, and restores the previous streams after. */
export async function withStreams<T>(s: StdStreams, fn: () => Promise<T>): Promise<T> {
  const previous = current;
  current = s;
  try {
    return await fn();
  } finally {
    current = previous;
  }
}

const enc = new TextEncoder();

/** Writes the whole of text (partial writes continued). */
export async function writeText(out: OutStream, text: string): Promise<void> {
  const bytes = enc.encode(text);
  let off = 0;
  while (off < bytes.length) off += await out.write(bytes.subarray(off));
}

/** Writes the whole of text synchronously (partial writes continued). */
export function writeTextSync(out: OutStream, text: string): void {
  writeBytesSync(out, enc.encode(text));
}

/** Writes all of bytes synchronously. */
export function writeBytesSync(out: OutStream, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += out.writeSync(bytes.subarray(off));
}

/** One line on stderr (a newline added), as `console.error` writes a string. */
export function errLine(text: string): void {
  writeTextSync(current.stderr, text + "\n");
}
