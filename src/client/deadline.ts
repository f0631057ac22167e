/**
 * The client's own request timers: an inactivity timer that progress resets (--timeout), a
 * total cap that nothing resets (--max-timeout), and the connect timer (--connect-timeout),
 * which a sign-in waiting for a person holds.
 * They govern; the SDK's own request timer is set well beyond them, and if it ever fires
 * anyway its error is mapped to the same timeout error, so one message, one class and one
 * exit code (7) result whichever timer fires.
 */
import { SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { ClientError } from "./errors.ts";
import { relayedRequestTimeout } from "../workarounds/sdk_error_text.ts";

/**
 * How far beyond the client's own inactivity timer the SDK's request timer is set (ms): it
 * must never fire first (both are reset by the same progress notification, and ours expires
 * earlier), and it only backs ours up.
 */
export const SDK_TIMEOUT_SLACK_MS = 30_000;

/**
 * When the inactivity timer expires, the client first reads what already arrived (ms): after a
 * pause of the client process (a busy machine), the timer and a buffered progress notification
 * are both due, and the timer must not win only because timers run before I/O.
 */
export const INACTIVITY_CONFIRM_MS = 50;

/** The time limits of one request, as the flags gave them (ms). */
export interface TimeLimits {
  /** --timeout: no response and no progress for this long. */
  timeoutMs?: number;
  /** --max-timeout: the whole call, progress or not. */
  maxTimeoutMs?: number;
  /** --connect-timeout: connecting and negotiating. */
  connectTimeoutMs?: number;
}

/** Which timer fired. */
export type TimerKind = "inactivity" | "total" | "connect" | "sdk";

const seconds = (ms: number) => `${ms / 1000} s`;

/** The one timeout error of the client: the same message for a request whichever timer fired. */
export function timeoutError(
  limits: TimeLimits,
  detail: { timer: TimerKind; elapsedMs?: number; cause?: unknown },
): ClientError {
  const parts: string[] = [];
  if (limits.connectTimeoutMs !== undefined) {
    parts.push(`--connect-timeout ${seconds(limits.connectTimeoutMs)}`);
  }
  if (limits.timeoutMs !== undefined) {
    parts.push(`--timeout ${seconds(limits.timeoutMs)} without progress`);
  }
  if (limits.maxTimeoutMs !== undefined) {
    parts.push(`--max-timeout ${seconds(limits.maxTimeoutMs)} in total`);
  }
  return new ClientError(
    "timeout",
    `timed out: no response within the client's time limits${
      parts.length ? ` (${parts.join(", ")})` : ""
    }`,
    {
      details: {
        timer: detail.timer,
        ...limits,
        ...(detail.elapsedMs === undefined ? {} : { elapsedMs: Math.round(detail.elapsedMs) }),
      },
      cause: detail.cause,
    },
  );
}

/**
 * Whether an error is the SDK's own request timeout (SdkErrorCode.RequestTimeout: `Request
 * timed out`, `Maximum total ...`) or a request timeout relayed as -32001.
 */
export function isSdkTimeout(err: unknown): boolean {
  if (SdkError.isInstance(err)) return err.code === SdkErrorCode.RequestTimeout;
  const code = (err as { code?: unknown })?.code;
  return typeof code === "number" && relayedRequestTimeout(code, String((err as Error)?.message));
}

/** The timers of one request. */
export interface Deadline {
  /** Aborts when the caller's signal aborts or a timer fires (pass it to the SDK). */
  readonly signal: AbortSignal;
  /** Progress arrived: restarts the inactivity timer. */
  touch(): void;
  /** Stops the inactivity timer while the client itself is busy (a person answering an
   * elicitation); the total timer keeps running. Returns the function that restarts it. */
  hold(): () => void;
  /** The timeout error, once a timer fired. */
  expired(): ClientError | undefined;
  /** The SDK's own timer options: set beyond ours so that ours fire first. */
  readonly sdkOptions: { timeout: number; resetTimeoutOnProgress: boolean };
  /** Clears the timers (call on every exit path). */
  dispose(): void;
}

/** Starts the timers of one request (the inactivity timer needs timeoutMs). */
export function startDeadline(
  limits: TimeLimits & { timeoutMs: number },
  parent?: AbortSignal,
): Deadline {
  return new RequestDeadline(limits, parent);
}

/**
 * Starts the connect timer (--connect-timeout) as a Deadline of its own: it fires as `connect`,
 * and a hold stops it while the client waits for a person (a sign-in at the browser); released,
 * it runs its full length again.
 */
export function startConnectDeadline(connectTimeoutMs: number, parent?: AbortSignal): Deadline {
  return new RequestDeadline({ timeoutMs: connectTimeoutMs }, parent, {
    timer: "connect",
    limits: { connectTimeoutMs },
  });
}

/** A promise that rejects with the signal's reason once it aborts (and never settles before). */
export function abortedBy(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

/** What the restartable timer of a Deadline is when it fires, and the limits its error names. */
interface IdleTimer {
  timer: TimerKind;
  limits: TimeLimits;
}

/**
 * The timers of one request: the inactivity one (restarted by progress, stopped while a hold is
 * on), the total one, and the caller's signal; whichever fires first aborts the signal. The
 * connect timer is the same machine with its restartable timer named `connect`.
 */
class RequestDeadline implements Deadline {
  readonly sdkOptions: { timeout: number; resetTimeoutOnProgress: boolean };
  readonly #controller = new AbortController();
  readonly #started = performance.now();
  readonly #limits: TimeLimits & { timeoutMs: number };
  readonly #idleTimer: IdleTimer;
  readonly #parent: AbortSignal | undefined;
  #error: ClientError | undefined;
  #idle: ReturnType<typeof setTimeout> | undefined;
  #total: ReturnType<typeof setTimeout> | undefined;
  #holds = 0;

  constructor(
    limits: TimeLimits & { timeoutMs: number },
    parent: AbortSignal | undefined,
    idleTimer: IdleTimer = { timer: "inactivity", limits },
  ) {
    this.#limits = limits;
    this.#idleTimer = idleTimer;
    this.#parent = parent;
    this.sdkOptions = {
      timeout: limits.timeoutMs + SDK_TIMEOUT_SLACK_MS,
      resetTimeoutOnProgress: true,
    };
    if (parent?.aborted) this.#controller.abort(parent.reason);
    else {
      parent?.addEventListener("abort", this.#onParentAbort, { once: true });
      this.#idle = setTimeout(this.#confirmIdle, limits.timeoutMs);
      if (limits.maxTimeoutMs !== undefined) {
        this.#total = setTimeout(() => this.#fire("total"), limits.maxTimeoutMs);
      }
    }
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  touch(): void {
    if (this.#controller.signal.aborted) return;
    clearTimeout(this.#idle);
    if (this.#holds === 0) this.#idle = setTimeout(this.#confirmIdle, this.#limits.timeoutMs);
  }

  hold(): () => void {
    this.#holds++;
    this.touch();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holds--;
      this.touch();
    };
  }

  expired(): ClientError | undefined {
    return this.#error;
  }

  dispose(): void {
    clearTimeout(this.#idle);
    clearTimeout(this.#total);
    this.#parent?.removeEventListener("abort", this.#onParentAbort);
  }

  /** A timer fired: the one timeout error, and the signal aborted with it. */
  #fire(timer: TimerKind): void {
    if (this.#controller.signal.aborted) return;
    const limits = timer === this.#idleTimer.timer ? this.#idleTimer.limits : this.#limits;
    this.#error = timeoutError(limits, {
      timer,
      elapsedMs: performance.now() - this.#started,
    });
    this.dispose();
    this.#controller.abort(this.#error);
  }

  /** Expired: give already-received progress one turn of the event loop to reset the timer. */
  readonly #confirmIdle = () => {
    this.#idle = setTimeout(() => this.#fire(this.#idleTimer.timer), INACTIVITY_CONFIRM_MS);
  };

  /** The caller aborted: so does the request, with the caller's reason. */
  readonly #onParentAbort = () => {
    this.dispose();
    this.#controller.abort(this.#parent!.reason);
  };
}
