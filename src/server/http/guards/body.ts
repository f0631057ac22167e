/**
 * Body guard: reads a POST body, for a request that passed every header check, under a size
 * cap and a time limit, and hands it on in memory. Over the cap is 413 (a declared
 * `Content-Length` over it is refused without reading a byte); a body not received in full
 * within the time limit is 408; a body the peer broke off is 400. Runs last of the guards, so
 * no byte of a refused request's body is ever read.
 */
import { Buffer } from "node:buffer";
import { exposeProtoKey } from "../../proto_key.ts";
import type { MiddlewareHandler } from "hono";
import { type HttpEnv, jsonRpcError } from "../context.ts";

/** Default largest request body (bytes). */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Default time a request body may take to arrive in full (ms). */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;

/** Options of the body guard. */
export interface BodyLimitOptions {
  /** Largest body (bytes). */
  maxBytes: number;
  /** Longest time the whole body may take to arrive (ms). */
  timeoutMs: number;
}

type BodyRead =
  | { kind: "ok"; bytes: Uint8Array }
  | { kind: "too-large" }
  | { kind: "timeout" }
  | { kind: "broken" };

/** Reads a stream to its end under a byte cap and a deadline; cancels it when either is hit. */
export async function readBounded(
  body: ReadableStream<Uint8Array>,
  options: BodyLimitOptions,
): Promise<BodyRead> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), options.timeoutMs);
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
      chunks.push(r.value);
    }
  } finally {
    clearTimeout(timer);
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
  if (!Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes("__proto__")) {
    return bytes;
  }
  const text = new TextDecoder().decode(bytes);
  const out = exposeProtoKey(text);
  return out === text ? bytes : new TextEncoder().encode(out);
}

/** Buffers a POST body under a size cap (413) and a time limit (408) before the MCP handlers. */
export function bodyLimit(options: BodyLimitOptions): MiddlewareHandler<HttpEnv> {
  const tooLarge = () =>
    jsonRpcError(413, { code: -32600, message: `Request body over ${options.maxBytes} bytes` });
  return async (c, next) => {
    const req = c.req.raw;
    if (req.method.toUpperCase() !== "POST" || req.body === null) return await next();
    const declared = req.headers.get("content-length");
    if (declared !== null && Number(declared) > options.maxBytes) return tooLarge();
    const read = await readBounded(req.body, options);
    switch (read.kind) {
      case "too-large":
        return tooLarge();
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
    c.req.raw = new Request(req, { body: exposeProtoKeyInBody(read.bytes) as BodyInit });
    await next();
  };
}
