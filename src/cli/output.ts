/** Output renderers shared by every CLI command: results on stdout, errors on stderr. */
import { streams, writeText, writeTextSync } from "../std_streams.ts";
import { UsageError } from "../config.ts";
import type { ErrorObject } from "../workspace/errors.ts";
import { palette, stderrColor, stdoutColor } from "./colors.ts";
import { errorLine, prettyResult, workspaceErrorLine } from "./pretty.ts";
import { toolTable } from "./table.ts";
import type { ToolRow } from "./pretty.ts";

/** Output formats of the `op` commands. */
export type OutputFormat = "json" | "pretty";

/** Picks the format: explicit, else pretty on a terminal and json otherwise. */
export function chooseFormat(flag: string | undefined): OutputFormat {
  if (flag === undefined) return streams().stdout.isTerminal() ? "pretty" : "json";
  if (flag === "json" || flag === "pretty") return flag;
  throw new UsageError(`--output must be json or pretty, got ${JSON.stringify(flag)}`);
}

/**
 * The output a command would choose, read before its flags are parsed, so that an error in them
 * is reported as the command would report its result: `choose` of the last `--output` value, or
 * of none when that value is missing or one `choose` refuses.
 */
export function outputBeforeParse<T>(
  args: readonly string[],
  choose: (flag: string | undefined) => T,
): T {
  let asked: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--") break;
    if (args[i] === "--output") asked = args[++i];
    else if (args[i].startsWith("--output=")) asked = args[i].slice("--output=".length);
  }
  try {
    return choose(asked);
  } catch {
    return choose(undefined);
  }
}

/** Renders a JSON value (one line). */
export function render(value: unknown): string {
  return JSON.stringify(value) + "\n";
}

/** Renders one operation's result: its JSON line, or for people (src/cli/pretty.ts). */
export function renderResult(
  name: string,
  result: Record<string, unknown>,
  options: { format: OutputFormat; args?: Record<string, unknown> },
): string {
  if (options.format === "json") return render(result);
  return prettyResult(name, result, { palette: palette(stdoutColor()), args: options.args });
}

/** Renders `op list`: its JSON line, or for people a table and a count. */
export function renderOperations(ops: (ToolRow & Record<string, unknown>)[], format: OutputFormat) {
  if (format === "json") return render({ operations: ops });
  return toolTable(ops, { palette: palette(stdoutColor()), columns: terminalColumns() }) +
    `${ops.length} operations\n`;
}

/** Columns assumed for a terminal that reports no size (a pty made without one reports 0). */
const DEFAULT_COLUMNS = 80;

/** The terminal's width when stdout is one (80 when it reports none); else undefined. */
export function terminalColumns(): number | undefined {
  if (!streams().stdout.isTerminal()) return undefined;
  try {
    const { columns } = Deno.consoleSize();
    return columns > 0 ? columns : DEFAULT_COLUMNS;
  } catch {
    return DEFAULT_COLUMNS;
  }
}

/**
 * Stdout was closed by its reader (`wmcp ... | head`): the command ends quietly with exit 0, as
 * ripgrep does (nothing on stderr; the reader has what it wanted). See INTERFACES.md.
 */
export class StdoutClosed extends Error {
  constructor() {
    super("stdout closed");
    this.name = "StdoutClosed";
  }
}

/** Whether err is a write to a pipe whose reader went away (EPIPE, Deno.errors.BrokenPipe). */
export function isBrokenPipe(err: unknown): boolean {
  return err instanceof StdoutClosed || err instanceof Deno.errors.BrokenPipe ||
    (err as { code?: string } | null)?.code === "EPIPE";
}

/** Writes a whole string to stdout; a closed reader throws StdoutClosed. */
export async function writeStdout(text: string): Promise<void> {
  try {
    await writeText(streams().stdout, text);
  } catch (err) {
    if (isBrokenPipe(err)) throw new StdoutClosed();
    throw err;
  }
}

/** Writes the error to stderr: one JSON object line, or (pretty) one line for people. */
export function writeError(
  error: ErrorObject | { code: "USAGE"; message: string },
  format: OutputFormat,
): void {
  const c = palette(stderrColor());
  const text = format === "json"
    ? render({ error })
    : error.code === "USAGE"
    ? errorLine("usage", error.message, c)
    : workspaceErrorLine(error, c);
  writeTextSync(streams().stderr, text);
}
