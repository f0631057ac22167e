/**
 * Origin guard: an absent Origin passes (non-browser clients send none); `null`, a non-http(s)
 * origin and any origin other than the loopback origins (any port) and the configured exact
 * origins is 403. Decided per request, never per connection. Needs no body.
 */
import type { MiddlewareHandler } from "hono";
import { type HttpEnv, jsonRpcError } from "../context.ts";
import { LOOPBACK_HOSTS } from "./host.ts";

/** Options of the Origin guard. */
export interface OriginGuardOptions {
  /** Origins accepted besides loopback origins, exactly (scheme://host[:port]). */
  allowedOrigins?: readonly string[];
}

function normalizeOrigin(origin: string): string | null {
  try {
    const u = new URL(origin);
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    return u.origin;
  } catch {
    return null;
  }
}

/** Refuses a request whose Origin is present and not allowed (403, JSON-RPC body). */
export function originGuard(options: OriginGuardOptions = {}): MiddlewareHandler<HttpEnv> {
  const allowed = new Set(
    (options.allowedOrigins ?? []).map((o) => {
      const n = normalizeOrigin(o);
      if (!n) throw new TypeError(`allowed origin ${JSON.stringify(o)} is not an http(s) origin`);
      return n;
    }),
  );
  return async (c, next) => {
    const origin = c.req.raw.headers.get("origin");
    if (origin !== null) {
      const n = normalizeOrigin(origin);
      const ok = n !== null && (LOOPBACK_HOSTS.includes(new URL(n).hostname) || allowed.has(n));
      if (!ok) return jsonRpcError(403, { code: -32600, message: `Invalid Origin: ${origin}` });
    }
    await next();
  };
}
