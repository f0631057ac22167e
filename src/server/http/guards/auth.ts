/**
 * Bearer authentication: when tokens are configured, every request to the MCP endpoint must
 * carry one of them (`Authorization: Bearer T`), else 401 with `WWW-Authenticate`. Checked per
 * request, never per connection or per session. Each token identifies one client; the guard
 * records which (`client`: "token:N" for the Nth read-write token, "read:N" for the Nth read-only
 * one) for the session table's fairness, and what it may do (`authInfo`, with the scopes
 * wmcp:read and, for a read-write token, wmcp:write) for the server factory's tool view.
 * Without tokens every request is the client "anonymous" with no authInfo (everything the server
 * serves). Needs no body.
 */
import type { MiddlewareHandler } from "hono";
import type { AuthInfo } from "@modelcontextprotocol/server";
import { createHash, timingSafeEqual } from "node:crypto";
import { type HttpEnv, jsonRpcError } from "../context.ts";
import { READ_SCOPE, WRITE_SCOPE } from "../../factory.ts";

/** The client id of every request when no token is configured. */
export const ANONYMOUS_CLIENT = "anonymous";

/** Options of the bearer guard. */
export interface BearerAuthOptions {
  /** Accepted read-write bearer tokens (every tool the server serves). */
  tokens: readonly string[];
  /** Accepted read-only bearer tokens (the read tools only). Both empty: no authentication. */
  readTokens?: readonly string[];
}

function digest(s: string): Uint8Array {
  return createHash("sha256").update(s).digest();
}

/** Refuses a request without an accepted bearer token (401); records the client it identifies. */
export function bearerAuth(options: BearerAuthOptions): MiddlewareHandler<HttpEnv> {
  const known = [
    ...options.tokens.map((t, i) => ({ client: `token:${i}`, write: true, d: digest(t) })),
    ...(options.readTokens ?? []).map((t, i) => ({
      client: `read:${i}`,
      write: false,
      d: digest(t),
    })),
  ];
  return async (c, next) => {
    if (known.length === 0) {
      c.set("client", ANONYMOUS_CLIENT);
      return await next();
    }
    const m = /^Bearer (.+)$/i.exec(c.req.raw.headers.get("authorization") ?? "");
    let match: (typeof known)[number] | undefined;
    if (m !== null) {
      // Compare against every token, so the time taken says nothing about which one matched.
      const d = digest(m[1]);
      for (const k of known) {
        if (timingSafeEqual(d, k.d) && match === undefined) match = k;
      }
    }
    if (m === null || match === undefined) {
      return jsonRpcError(401, { code: -32001, message: "Unauthorized" }, {
        "www-authenticate": m === null
          ? 'Bearer realm="wmcp"'
          : 'Bearer realm="wmcp", error="invalid_token"',
      });
    }
    const authInfo: AuthInfo = {
      token: m[1],
      clientId: match.client,
      scopes: match.write ? [READ_SCOPE, WRITE_SCOPE] : [READ_SCOPE],
    };
    c.set("client", match.client);
    c.set("authInfo", authInfo);
    await next();
  };
}
