/**
 * Method and content-type guard of the MCP endpoint: POST (JSON-RPC), GET (a legacy session's
 * stream) and DELETE (end a legacy session) are served; any other method is 405 with `Allow`.
 * A POST must declare a JSON body (`Content-Type: application/json`), else 415, the SDK's own
 * answer, given here before any byte of the body is read. Needs no body.
 */
import type { MiddlewareHandler } from "hono";
import { isJsonContentType } from "@modelcontextprotocol/server";
import { type HttpEnv, jsonRpcError } from "../context.ts";

/** Methods the MCP endpoint serves. */
export const ENDPOINT_METHODS: readonly string[] = ["GET", "POST", "DELETE"];

/** Refuses methods the endpoint does not serve (405) and non-JSON POST bodies (415). */
export function methodGuard(): MiddlewareHandler<HttpEnv> {
  const allow = ENDPOINT_METHODS.join(", ");
  return async (c, next) => {
    const method = c.req.raw.method.toUpperCase();
    if (!ENDPOINT_METHODS.includes(method)) {
      return jsonRpcError(405, { code: -32000, message: "Method not allowed." }, { allow });
    }
    if (method === "POST" && !isJsonContentType(c.req.raw.headers.get("content-type"))) {
      return jsonRpcError(415, {
        code: -32000,
        message: "Unsupported Media Type: Content-Type must be application/json",
      });
    }
    await next();
  };
}
