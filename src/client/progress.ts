/**
 * The progress line: notifications/progress of a running call shown on stderr as one updating
 * line (cleared when the call ends), only when stderr is a terminal; plain text under NO_COLOR.
 */

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

/** The text of one progress line (no escapes). */
export function progressText(name: string, p: ProgressUpdate): string {
  const count = p.total !== undefined && p.total > 0
    ? `${p.progress}/${p.total} (${Math.min(100, Math.floor((p.progress / p.total) * 100))}%)`
    : String(p.progress);
  const message = typeof p.message === "string" ? ` ${p.message.replace(/\s+/g, " ")}` : "";
  return `${name}: ${count}${message}`;
}

/** A progress line on out (stderr by default); off when it is not a terminal. */
export function progressLine(
  out: ProgressOutput = {
    isTerminal: () => Deno.stderr.isTerminal(),
    writeSync: (b) => Deno.stderr.writeSync(b),
    columns: () => {
      try {
        return Deno.consoleSize().columns;
      } catch {
        return undefined;
      }
    },
  },
  env: { noColor: boolean } = { noColor: noColorSet() },
): ProgressLine {
  const on = out.isTerminal();
  const shown = { any: false };
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
      const width = Math.max(20, (out.columns?.() ?? 80) - 1);
      let text = progressText(name, p);
      if (text.length > width) text = text.slice(0, width - 1) + "…";
      // \r and erase-line redraw one line; dim unless NO_COLOR asks for no styling.
      write(`\r\x1b[2K${env.noColor ? text : `\x1b[2m${text}\x1b[0m`}`);
      shown.any = true;
    },
    clear() {
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
