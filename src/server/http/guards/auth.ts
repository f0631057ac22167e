/**
 * Bearer authentication: when tokens are configured, the request must carry one of them
 * (`Authorization: Bearer T`), else 401 with `WWW-Authenticate`. Each token identifies one
 * client; the guard records which (`client`, "token:N") for the session table's fairness.
 * Without tokens every request is the client "anonymous". Needs no body.
 */
import type { MiddlewareHandler } from "hono";
import { createHash, timingSafeEqual } from "node:crypto";
import { type HttpEnv, jsonRpcError } from "../context.ts";

/** The client id of every request when no token is configured. */
export const ANONYMOUS_CLIENT = "anonymous";

/** Options of the bearer guard. */
export interface BearerAuthOptions {
  /** Accepted bearer tokens; empty means no authentication. */
  tokens: readonly string[];
}

function digest(s: string): Uint8Array {
  return createHash("sha256").update(s).digest();
}

/** Refuses a request without an accepted bearer token (401); records the client it identifies. */
export function bearerAuth(options: BearerAuthOptions): MiddlewareHandler<HttpEnv> {
  const digests = options.tokens.map(digest);
  return async (c, next) => {
    if (digests.length === 0) {
      c.set("client", ANONYMOUS_CLIENT);
      return await next();
    }
    const m = /^Bearer (.+)$/i.exec(c.req.raw.headers.get("authorization") ?? "");
    let client = -1;
    if (m !== null) {
      // Compare against every token, so the time taken says nothing about which one matched.
      const d = digest(m[1]);
      digests.forEach((t, i) => {
        if (timingSafeEqual(d, t) && client === -1) client = i;
      });
    }
    if (client === -1) {
      return jsonRpcError(401, { code: -32001, message: "Unauthorized" }, {
        "www-authenticate": m === null
          ? 'Bearer realm="wmcp"'
          : 'Bearer realm="wmcp", error="invalid_token"',
      });
    }
    c.set("client", `token:${client}`);
    await next();
  };
}
