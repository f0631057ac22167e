/**
 * Body guard: reads a POST body, for a request that passed every header check, under a size
 * cap and a time limit, and hands it on in memory. Over the cap is 413 (a declared
 * `Content-Length` over it is refused without reading a byte); a body not received in full
 * within the time limit is 408; a body the peer broke off is 400. All bodies being read and
 * handled at once share one byte budget per handler (a declared `Content-Length` is reserved up
 * front, a body without one is counted chunk by chunk as it arrives): a body that would exceed it
 * is 503 with `Retry-After`, read no further, and every reservation is released when its request
 * ends, however it ends. Runs last of the guards, so no byte of a refused request's body is ever
 * read.
 */
import { exposeProtoKey, mayHoldProtoKeyBytes } from "../../../workarounds/proto_key.ts";
import type { MiddlewareHandler } from "hono";
import { type HttpEnv, jsonRpcError } from "../context.ts";
import { DEFAULT_LIMITS } from "../../../workspace/limits.ts";
import { requestCapFor } from "../../../workspace/message_limits.ts";
import { TimerList } from "../timer_list.ts";

/**
 * Default largest request body (bytes): the request cap of the default limits, 6 x maxWriteBytes
 * + 64 KiB (60 MiB + 64 KiB), so any JSON encoding of the largest allowed write fits.
 */
export const DEFAULT_MAX_BODY_BYTES = requestCapFor(DEFAULT_LIMITS);
/** Default time a request body may take to arrive in full (ms). */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;
/** Default budget of all request bodies being read and handled at once, as a multiple of the cap. */
export const BUFFERED_BODIES_PER_CAP = 2;
/** Seconds a client refused for the shared body budget is told to wait (`Retry-After`). */
export const BODY_BUDGET_RETRY_AFTER_S = 1;

/** A byte budget shared by the body reads of one handler. */
export interface BodyBudget {
  /** Takes `bytes` from the budget; false (and nothing taken) when they do not fit. */
  reserve(bytes: number): boolean;
  /** Gives `bytes` back. */
  release(bytes: number): void;
  /** Bytes currently reserved. */
  inUse(): number;
}

/** Creates a shared body budget of `maxBytes`. */
export function createBodyBudget(maxBytes: number): BodyBudget {
  let used = 0;
  return {
    reserve: (bytes) => {
      if (used + bytes > maxBytes) return false;
      used += bytes;
      return true;
    },
    release: (bytes) => void (used = Math.max(0, used - bytes)),
    inUse: () => used,
  };
}

/** Limits of one body read. */
export interface ReadLimits {
  /** Largest body (bytes). */
  maxBytes: number;
  /** Longest time the whole body may take to arrive (ms). */
  timeoutMs: number;
  /** Called with each chunk's size before it is kept; false stops the read (over budget). */
  take?: (bytes: number) => boolean;
}

/** Options of the body guard. */
export interface BodyLimitOptions extends ReadLimits {
  /** The budget shared by every body read of the handler. */
  budget: BodyBudget;
}

type BodyRead =
  | { kind: "ok"; bytes: Uint8Array }
  | { kind: "too-large" }
  | { kind: "over-budget" }
  | { kind: "timeout" }
  | { kind: "broken" };

/**
 * Reads a stream to its end under a byte cap, a deadline and an optional budget; cancels it
 * when any is hit. The deadline is one of `timers` (whose duration is options.timeoutMs): the
 * body guard shares one list among its requests.
 */
export async function readBounded(
  body: ReadableStream<Uint8Array>,
  options: ReadLimits,
  timers: TimerList = new TimerList(options.timeoutMs),
): Promise<BodyRead> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let cancel: () => void = () => {};
  const expired = new Promise<"timeout">((resolve) => {
    cancel = timers.start(() => resolve("timeout"));
  });
  const stop = (result: BodyRead): BodyRead => {
    reader.cancel().catch(() => {});
    return result;
  };
  try {
    while (true) {
      const next = reader.read();
      next.catch(() => {}); // settled after a cancel when the deadline won
      const r = await Promise.race([next, expired]).catch(() => "broken" as const);
      if (r === "timeout") return stop({ kind: "timeout" });
      if (r === "broken") return stop({ kind: "broken" });
      if (r.done) break;
      total += r.value.length;
      if (total > options.maxBytes) return stop({ kind: "too-large" });
      if (options.take !== undefined && !options.take(r.value.length)) {
        return stop({ kind: "over-budget" });
      }
      chunks.push(r.value);
    }
  } finally {
    cancel();
  }
  const bytes = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) {
    bytes.set(c, o);
    o += c.length;
  }
  return { kind: "ok", bytes };
}

/** The body with an own `__proto__` tool argument made visible to the registry (proto_key.ts). */
function exposeProtoKeyInBody(bytes: Uint8Array): Uint8Array {
  if (!mayHoldProtoKeyBytes(bytes)) return bytes;
  const text = new TextDecoder().decode(bytes);
  const out = exposeProtoKey(text);
  return out === text ? bytes : new TextEncoder().encode(out);
}

/** The request with the body the guard read (its own stream is spent); as is without one. */
export function bodyRequest(request: Request, body: Uint8Array | undefined): Request {
  return body === undefined ? request : new Request(request, { body: body as BodyInit });
}

/**
 * Buffers a POST body under a size cap (413), a time limit (408) and the handler's shared body
 * budget (503) before the MCP handlers, as HttpEnv "body" (see bodyRequest).
 */
export function bodyLimit(options: BodyLimitOptions): MiddlewareHandler<HttpEnv> {
  const { budget } = options;
  // One timer for the deadlines of all the bodies being read (timer_list.ts).
  const timers = new TimerList(options.timeoutMs);
  const tooLarge = () =>
    jsonRpcError(413, {
      code: -32600,
      message: `Request body over ${options.maxBytes} bytes, the request cap`,
    });
  const overBudget = (headers: Record<string, string>) =>
    jsonRpcError(503, {
      code: -32000,
      message: "Server busy: too many request bodies being received at once; retry later",
    }, { "retry-after": String(BODY_BUDGET_RETRY_AFTER_S), ...headers });
  return async (c, next) => {
    const req = c.req.raw;
    if (req.method.toUpperCase() !== "POST" || req.body === null) return await next();
    const declaredHeader = req.headers.get("content-length");
    const declared = declaredHeader === null ? NaN : Number(declaredHeader);
    if (declared > options.maxBytes) return tooLarge();
    // What this request holds of the shared budget, given back however the request ends.
    let reserved = 0;
    try {
      if (Number.isSafeInteger(declared) && declared > 0) {
        if (!budget.reserve(declared)) return overBudget({});
        reserved = declared;
      }
      let received = 0;
      const take = (bytes: number): boolean => {
        received += bytes;
        const extra = received - reserved;
        if (extra <= 0) return true;
        if (!budget.reserve(extra)) return false;
        reserved += extra;
        return true;
      };
      // Chunk by chunk, each chunk counted against the cap and the budget as it arrives, whatever
      // the declared length says (a Request built in process need not keep to it).
      const read = await readBounded(req.body, { ...options, take }, timers);
      switch (read.kind) {
        case "too-large":
          return tooLarge();
        case "over-budget":
          return overBudget({ connection: "close" });
        case "timeout":
          return jsonRpcError(408, {
            code: -32600,
            message: `Request body not received within ${options.timeoutMs} ms`,
          }, { connection: "close" });
        case "broken":
          return jsonRpcError(400, {
            code: -32700,
            message: "Parse error: the request body could not be read",
          });
      }
      // Handed on as bytes (HttpEnv "body"): the handler parses them for the fast path, and
      // only a request the fast path leaves is rebuilt around them for the SDK (bodyRequest).
      c.set("body", exposeProtoKeyInBody(read.bytes));
      await next();
    } finally {
      budget.release(reserved);
    }
  };
}
