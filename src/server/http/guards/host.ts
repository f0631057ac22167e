/**
 * Host guard: the request's Host names an allowed host (loopback names with any port, plus the
 * configured names), else 403. Defends a loopback server against DNS rebinding. Needs no body.
 */
import type { MiddlewareHandler } from "hono";
import { type HttpEnv, jsonRpcError } from "../context.ts";

/** Host names accepted by default (any port). */
export const LOOPBACK_HOSTS: readonly string[] = ["localhost", "127.0.0.1", "[::1]"];

/** Options of the Host guard. */
export interface HostGuardOptions {
  /** Host names accepted besides the loopback names (no port; IPv6 in brackets). */
  allowedHosts?: readonly string[];
}

function hostnameOf(host: string): string | null {
  try {
    return new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/** Refuses a request whose Host header is missing or not allowed (403, JSON-RPC body). */
export function hostGuard(options: HostGuardOptions = {}): MiddlewareHandler<HttpEnv> {
  const allowed = new Set(
    [...LOOPBACK_HOSTS, ...(options.allowedHosts ?? [])].map((h) => h.toLowerCase()),
  );
  return async (c, next) => {
    const host = c.req.raw.headers.get("host");
    const hostname = host === null ? null : hostnameOf(host);
    if (hostname === null || !allowed.has(hostname)) {
      return jsonRpcError(403, {
        code: -32600,
        message: `Invalid Host header: ${host ?? "(none)"}`,
      });
    }
    await next();
  };
}
