/**
 * Progress of an `op` command: the client's progress line (src/client/progress.ts) on stderr,
 * drawn at the server's cadence (PROGRESS_INTERVAL_MS: once at the start, then every interval)
 * with the operation's latest counters, and erased before the result or error is written.
 * Nothing at all when stderr is not a terminal.
 */
import type { OperationProgress } from "../operations/types.ts";
import { PROGRESS_INTERVAL_MS } from "../server/progress.ts";
import { type ProgressLine, progressLine } from "../client/progress.ts";
import { stderrColor } from "./colors.ts";

/** A running operation's progress display. */
export interface OpProgress {
  /** Receives the operation's counters (its onProgress). */
  report(p: OperationProgress): void;
  /** Stops drawing and erases the line. Idempotent. */
  stop(): void;
}

/** Options of startOpProgress. */
export interface OpProgressOptions {
  /** Where to draw (default: stderr, on only when it is a terminal). */
  line?: ProgressLine;
  /** Interval between redraws (ms). */
  intervalMs?: number;
}

/** Starts the progress display of operation `name`. */
export function startOpProgress(name: string, options: OpProgressOptions = {}): OpProgress {
  const line = options.line ??
    progressLine(undefined, { noColor: !stderrColor() });
  let ticks = 0;
  let latest: OperationProgress | undefined;
  let stopped = false;
  const draw = () => {
    ticks++;
    line.update(name, { progress: ticks, message: latest?.message ?? "running" });
  };
  const timer = setInterval(draw, options.intervalMs ?? PROGRESS_INTERVAL_MS);
  draw();
  return {
    report(p) {
      latest = p;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      line.clear();
    },
  };
}
