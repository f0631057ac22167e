/**
 * The progress line: notifications/progress of a running call shown on stderr as one updating
 * line (cleared when the call ends), only when stderr is a terminal, and only once the call has
 * run for delayMs (an instant call draws nothing); plain text under NO_COLOR.
 */

import { streams } from "../std_streams.ts";
import { terminalLine } from "./terminal_text.ts";

/** How long a call runs before the CLI draws its progress line (ms). */
export const PROGRESS_DELAY_MS = 400;

/** One progress notification's payload. */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** Where the line is drawn. */
export interface ProgressOutput {
  isTerminal(): boolean;
  writeSync(bytes: Uint8Array): number;
  /** Terminal width in columns, when known. */
  columns?: () => number | undefined;
}

/** Shows progress; every method is a no-op when the output is not a terminal. */
export interface ProgressLine {
  update(name: string, p: ProgressUpdate): void;
  /** Erases the line (at the end of a call, or before a prompt). */
  clear(): void;
}

/**
 * The text of one progress line (no escapes; the server's message made safe by terminalLine): `name: ` then, with a total, the count and
 * percentage and the message; without a total the message alone (a bare count, such as the
 * server's notification sequence number, says nothing), or the count when there is no message.
 * A message that already starts with `name: ` is not prefixed twice.
 */
export function progressText(name: string, p: ProgressUpdate): string {
  let message = typeof p.message === "string" ? p.message.replace(/\s+/g, " ").trim() : "";
  if (message.startsWith(`${name}: `)) message = message.slice(name.length + 2);
  // All of it is one line of text: no terminal sequence of the server's gets through (0042).
  if (p.total !== undefined && p.total > 0) {
    const pct = Math.min(100, Math.floor((p.progress / p.total) * 100));
    return terminalLine(
      `${name}: ${p.progress}/${p.total} (${pct}%)${message ? ` ${message}` : ""}`,
    );
  }
  return terminalLine(`${name}: ${message || String(p.progress)}`);
}

/** A progress line on out (stderr by default); off when it is not a terminal. */
export function progressLine(
  out: ProgressOutput = {
    isTerminal: () => streams().stderr.isTerminal(),
    writeSync: (b) => streams().stderr.writeSync(b),
    columns: () => {
      try {
        return Deno.consoleSize().columns;
      } catch {
        return undefined;
      }
    },
  },
  env: { noColor: boolean; delayMs?: number } = { noColor: noColorSet() },
): ProgressLine {
  const on = out.isTerminal();
  const shown = { any: false, since: undefined as number | undefined };
  const write = (s: string) => {
    const bytes = new TextEncoder().encode(s);
    let off = 0;
    try {
      while (off < bytes.length) off += out.writeSync(bytes.subarray(off));
    } catch {
      // the terminal went away: nothing to draw on
    }
  };
  return {
    update(name, p) {
      if (!on) return;
      // The first update of a call starts its clock; nothing is drawn before delayMs.
      const now = performance.now();
      shown.since ??= now;
      if (now - shown.since < (env.delayMs ?? 0)) return;
      // A pty without a size reports 0 columns: the usual 80 then.
      const columns = out.columns?.();
      const width = Math.max(20, (columns !== undefined && columns > 0 ? columns : 80) - 1);
      let text = progressText(name, p);
      if (text.length > width) text = text.slice(0, width - 1) + "…";
      // \r and erase-line redraw one line; dim unless NO_COLOR asks for no styling.
      write(`\r\x1b[2K${env.noColor ? text : `\x1b[2m${text}\x1b[0m`}`);
      shown.any = true;
    },
    clear() {
      shown.since = undefined;
      if (!on || !shown.any) return;
      write("\r\x1b[2K");
      shown.any = false;
    },
  };
}

/** Whether NO_COLOR is set to something (https://no-color.org); unreadable counts as unset. */
function noColorSet(): boolean {
  try {
    return (Deno.env.get("NO_COLOR") ?? "") !== "";
  } catch {
    return false;
  }
}
