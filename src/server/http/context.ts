/** What the HTTP guards share: the hono environment they run in and the JSON-RPC error answer. */
import type { AuthInfo } from "@modelcontextprotocol/server";

/** The hono environment of the handler: what a guard learned, for the handlers after it. */
export interface HttpEnv {
  Variables: {
    /** Who sent the request: the bearer token's client id, or "anonymous" without tokens. */
    client: string;
    /** What the bearer token grants (scopes); absent without tokens (everything is served). */
    authInfo?: AuthInfo;
    /** The POST body as the body guard read it (the bytes the MCP handlers are handed). */
    body?: Uint8Array;
  };
}

/** A JSON-RPC error answer without an id (the request was refused before dispatch). */
export function jsonRpcError(
  status: number,
  error: { code: number; message: string },
  headers: Record<string, string> = {},
): Response {
  return new Response(
    JSON.stringify({
      jsonrpc: "2.0",
      id: null,
      error: { code: error.code, message: error.message },
    }),
    { status, headers: { "content-type": "application/json", ...headers } },
  );
}
