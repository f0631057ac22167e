/**
 * CORS for browser clients at an allowed origin (MCP Inspector's web UI, say): it runs after the
 * Origin guard, so any Origin that reaches it is allowed. A preflight (OPTIONS with
 * Access-Control-Request-Method) is answered here, before authentication and the method guard
 * (a browser sends no credentials on it); other responses to an Origin get that origin, never
 * `*`, and the MCP response headers exposed. Requests without an Origin are left alone. Needs no
 * body.
 */
import type { MiddlewareHandler } from "hono";
import type { HttpEnv } from "../context.ts";

/** Methods a browser may use, as the method guard serves them. */
export const CORS_METHODS = "GET, POST, DELETE";

/** Request headers a browser may send: both eras' MCP headers and the standard ones. */
export const CORS_REQUEST_HEADERS: readonly string[] = [
  "accept",
  "authorization",
  "content-type",
  "last-event-id",
  "mcp-protocol-version",
  "mcp-session-id",
  "mcp-method",
  "mcp-name",
];

/** Tool-defined parameter headers of the modern revision (`Mcp-Param-<Name>`). */
const PARAM_HEADER = /^mcp-param-[a-z0-9-]+$/;

/** Response headers a browser script may read. */
export const CORS_EXPOSED_HEADERS = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate";

/** How long (s) a browser may cache a preflight answer. */
const MAX_AGE_S = 600;

/** The requested headers this server allows, lower-cased, in the order asked. */
function allowedRequestHeaders(requested: string | null): string[] {
  if (requested === null) return [];
  return requested.split(",").map((h) => h.trim().toLowerCase()).filter((h) =>
    h !== "" && (CORS_REQUEST_HEADERS.includes(h) || PARAM_HEADER.test(h))
  );
}

/** Answers CORS preflights and marks responses to allowed origins (place after the Origin guard). */
export function corsGuard(): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const origin = c.req.raw.headers.get("origin");
    if (origin === null) return await next();
    const method = c.req.raw.headers.get("access-control-request-method");
    if (c.req.method === "OPTIONS" && method !== null) {
      const headers = new Headers({
        "access-control-allow-origin": origin,
        "access-control-allow-methods": CORS_METHODS,
        "access-control-max-age": String(MAX_AGE_S),
        "vary": "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
      });
      const allowed = allowedRequestHeaders(
        c.req.raw.headers.get("access-control-request-headers"),
      );
      if (allowed.length > 0) headers.set("access-control-allow-headers", allowed.join(", "));
      return new Response(null, { status: 204, headers });
    }
    await next();
    // A fresh Response: the one from the SDK may carry immutable headers.
    const res = new Response(c.res.body, c.res);
    res.headers.set("access-control-allow-origin", origin);
    res.headers.set("access-control-expose-headers", CORS_EXPOSED_HEADERS);
    res.headers.append("vary", "Origin");
    c.res = undefined;
    c.res = res;
  };
}
