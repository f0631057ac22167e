/** Output renderers shared by every CLI command: results on stdout, errors on stderr. */
import { UsageError } from "../config.ts";
import type { ErrorObject } from "../workspace/errors.ts";

/** Output formats of the `op` commands. */
export type OutputFormat = "json" | "pretty";

/** Picks the format: explicit, else pretty on a terminal and json otherwise. */
export function chooseFormat(flag: string | undefined): OutputFormat {
  if (flag === undefined) return Deno.stdout.isTerminal() ? "pretty" : "json";
  if (flag === "json" || flag === "pretty") return flag;
  throw new UsageError(`--output must be json or pretty, got ${JSON.stringify(flag)}`);
}

/** Renders a JSON value. */
export function render(value: unknown, format: OutputFormat): string {
  return (format === "pretty" ? JSON.stringify(value, null, 2) : JSON.stringify(value)) + "\n";
}

const enc = new TextEncoder();

/** Writes a whole string to stdout. */
export async function writeStdout(text: string): Promise<void> {
  const w = Deno.stdout.writable.getWriter();
  try {
    await w.write(enc.encode(text));
  } finally {
    w.releaseLock();
  }
}

/** Writes one JSON error object line to stderr. */
export function writeError(
  error: ErrorObject | { code: "USAGE"; message: string },
  format: OutputFormat,
): void {
  Deno.stderr.writeSync(enc.encode(render({ error }, format)));
}
