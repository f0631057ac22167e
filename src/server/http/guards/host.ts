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

/** Most Host values whose verdict a guard remembers (then it starts over). */
const MAX_VERDICTS = 64;

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
  // Verdicts of recent Host values (a client sends the same one every time): no URL parse each.
  const verdicts = new Map<string, boolean>();
  const accepted = (host: string): boolean => {
    let ok = verdicts.get(host);
    if (ok === undefined) {
      const hostname = hostnameOf(host);
      ok = hostname !== null && allowed.has(hostname);
      if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
      verdicts.set(host, ok);
    }
    return ok;
  };
  return async (c, next) => {
    const host = c.req.raw.headers.get("host");
    if (host === null || !accepted(host)) {
      return jsonRpcError(403, {
        code: -32600,
        message: `Invalid Host header: ${host ?? "(none)"}`,
      });
    }
    await next();
  };
}
