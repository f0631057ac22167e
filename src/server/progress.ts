/**
 * Progress at a steady cadence for a tool call whose request carries a progressToken: one
 * notifications/progress when the call starts and one every PROGRESS_INTERVAL_MS until it
 * ends, carrying the latest counters the operation reported, so a client's inactivity
 * timeout is reset however long the operation runs (its walk included) and whether or not
 * the operation itself has reported anything yet.
 */
import type { ServerContext } from "@modelcontextprotocol/server";
import type { OperationProgress } from "../operations/types.ts";

/**
 * How often a call with a progressToken gets notifications/progress (ms). A tenth of a
 * second: far below any sane client inactivity timeout (the bundled client's smallest useful
 * `--timeout` is a second; SDK defaults are 60 s), cheap (about ten small frames a second).
 */
export const PROGRESS_INTERVAL_MS = 100;

/** The running cadence of one call. */
export interface ProgressCadence {
  /** Records the operation's latest counters; the next notification carries them. */
  report(p: OperationProgress): void;
  /** Stops the cadence: nothing is sent after this. Idempotent. */
  stop(): void;
}

/** Options of startProgressCadence. */
export interface ProgressCadenceOptions {
  /** What is running (the tool name), for the message before the operation reported anything. */
  label: string;
  /** Stops the cadence when it aborts (cancellation, transport close). */
  signal?: AbortSignal;
  /** Interval between notifications (ms). Default PROGRESS_INTERVAL_MS. */
  intervalMs?: number;
}

const NONE: ProgressCadence = Object.freeze({ report() {}, stop() {} });

/**
 * Starts the cadence for a call (a no-op when the request has no progressToken). The
 * `progress` value is the count of notifications sent (1, 2, 3, ...), so it strictly
 * increases as MCP requires even while the operation's own counters stand still; the
 * operation's counters travel in `message`. The caller must call stop() on every exit path.
 */
export function startProgressCadence(
  ctx: ServerContext,
  options: ProgressCadenceOptions,
): ProgressCadence {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  if (progressToken === undefined) return NONE;
  const intervalMs = options.intervalMs ?? PROGRESS_INTERVAL_MS;
  let stopped = false;
  let sent = 0;
  let latest: OperationProgress | undefined;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    options.signal?.removeEventListener("abort", stop);
  };
  const tick = () => {
    if (stopped) return;
    sent++;
    const message = latest?.message ?? `${options.label}: started`;
    ctx.mcpReq.notify({
      method: "notifications/progress",
      params: { progressToken, progress: sent, message },
    }).catch(stop); // the stream is gone: stop rather than fail every tick
  };
  const timer = setInterval(tick, intervalMs);
  if (options.signal?.aborted) {
    stop();
    return NONE;
  }
  options.signal?.addEventListener("abort", stop, { once: true });
  tick();
  return {
    report(p) {
      if (!stopped) latest = p;
    },
    stop,
  };
}
