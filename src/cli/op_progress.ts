/**
 * Progress of an `op` command: the client's progress line (src/client/progress.ts) on stderr,
 * drawn only once the operation has run for PROGRESS_DELAY_MS (an instant operation draws
 * nothing), then at the server's cadence (PROGRESS_INTERVAL_MS) with the operation's latest
 * counters, and erased before the result or error is written. Nothing at all when stderr is not
 * a terminal.
 */
import type { OperationProgress } from "../operations/types.ts";
import { PROGRESS_INTERVAL_MS } from "../server/progress.ts";
import { PROGRESS_DELAY_MS, type ProgressLine, progressLine } from "../client/progress.ts";
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
  /** How long the operation runs before the first draw (ms). */
  delayMs?: number;
}

/** Starts the progress display of operation `name`. */
export function startOpProgress(name: string, options: OpProgressOptions = {}): OpProgress {
  const line = options.line ??
    progressLine(undefined, { noColor: !stderrColor() });
  let latest: OperationProgress | undefined;
  let stopped = false;
  let interval: ReturnType<typeof setInterval> | undefined;
  const draw = () => line.update(name, { progress: 0, message: latest?.message ?? "running" });
  const delay = setTimeout(() => {
    draw();
    interval = setInterval(draw, options.intervalMs ?? PROGRESS_INTERVAL_MS);
  }, options.delayMs ?? PROGRESS_DELAY_MS);
  return {
    report(p) {
      latest = p;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      clearTimeout(delay);
      clearInterval(interval);
      line.clear();
    },
  };
}
