/**
 * The SDK's HTTP transports with an OAuthClientProvider, plus what the SDK leaves to the host:
 * a request whose 401 or 403 led to a completed authorization (the provider's redirect leg
 * exchanges the code in place) is sent again, a bounded number of times; a bearer token the
 * server refuses makes the provider forget its cached discovery (the authorization server may
 * have moved).
 */
import {
  SSEClientTransport,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import type { WmcpAuthProvider } from "./provider.ts";
import { httpOnlyFetch } from "./http_only.ts";
import {
  AUTH_RESPONSE_BYTES,
  cappedFetch,
  isJsonRpcRequest,
  type ResponseCap,
} from "../response_cap.ts";

/** Most times one message is sent again after an authorization completed for it. */
const MAX_RESENDS = 3;

/**
 * The cap of an authorization-flow document (metadata, registration, token): small, class auth.
 * `onExceeded` records it as the flow's failure.
 */
export function authCap(provider?: WmcpAuthProvider): ResponseCap {
  return {
    maxBytes: AUTH_RESPONSE_BYTES,
    failure: "auth",
    what: "OAuth response",
    onExceeded: (err) => provider?.refused(err),
  };
}

/**
 * A fetch that adds the target's static headers (under the transport's own) and tells the
 * provider when a bearer token was refused (HTTP 401). Responses are capped (response_cap.ts):
 * MCP traffic (the endpoint itself, or a JSON-RPC body) by `cap`, anything else the SDK fetches
 * through it (the authorization flow's documents) by AUTH_RESPONSE_BYTES.
 */
function watchingFetch(
  provider: WmcpAuthProvider,
  endpoint: URL,
  headers: Record<string, string>,
  cap: ResponseCap,
): typeof fetch {
  const small = authCap(provider);
  const capped = cappedFetch(fetch, (input, init) => {
    const href = input instanceof Request ? input.url : String(input);
    const u = URL.canParse(href) ? new URL(href) : undefined;
    const mcp = (u?.origin === endpoint.origin && u?.pathname === endpoint.pathname) ||
      isJsonRpcRequest(init);
    return mcp ? cap : small;
  });
  const httpOnly = httpOnlyFetch(capped, (err) => provider.refused(err));
  return async (input, init) => {
    const merged = new Headers(headers);
    new Headers(init?.headers).forEach((v, k) => merged.set(k, v));
    const res = await httpOnly(input, { ...init, headers: merged });
    if (res.status === 401) {
      const auth = merged.get("authorization") ?? "";
      if (/^bearer /i.test(auth)) await provider.bearerRejected();
    }
    return res;
  };
}

/** Runs `send`; again while each failure followed a newly completed authorization. */
async function resendAuthorized<T>(provider: WmcpAuthProvider, send: () => Promise<T>): Promise<T> {
  for (let resend = 0;; resend++) {
    const before = provider.completedAuthorizations;
    try {
      return await send();
    } catch (err) {
      const authorized = provider.completedAuthorizations > before;
      if (!authorized || resend >= MAX_RESENDS || !UnauthorizedError.isInstance(err)) throw err;
    }
  }
}

class AuthorizingStreamableTransport extends StreamableHTTPClientTransport {
  readonly #provider: WmcpAuthProvider;
  constructor(
    url: URL,
    provider: WmcpAuthProvider,
    headers: Record<string, string>,
    cap: ResponseCap,
  ) {
    super(url, { authProvider: provider, fetch: watchingFetch(provider, url, headers, cap) });
    this.#provider = provider;
  }
  override send(...args: Parameters<StreamableHTTPClientTransport["send"]>): Promise<void> {
    return resendAuthorized(this.#provider, () => super.send(...args));
  }
}

class AuthorizingSseTransport extends SSEClientTransport {
  readonly #provider: WmcpAuthProvider;
  constructor(
    url: URL,
    provider: WmcpAuthProvider,
    headers: Record<string, string>,
    cap: ResponseCap,
  ) {
    super(url, { authProvider: provider, fetch: watchingFetch(provider, url, headers, cap) });
    this.#provider = provider;
  }
  override send(...args: Parameters<SSEClientTransport["send"]>): Promise<void> {
    return resendAuthorized(this.#provider, () => super.send(...args));
  }
}

/** The Streamable HTTP or HTTP+SSE transport for `target`, authorized by `provider`. */
export function authorizingTransport(
  target: { kind: "http" | "sse"; url: URL; headers: Record<string, string> },
  provider: WmcpAuthProvider,
  cap: ResponseCap,
): StreamableHTTPClientTransport | SSEClientTransport {
  return target.kind === "sse"
    ? new AuthorizingSseTransport(target.url, provider, target.headers, cap)
    : new AuthorizingStreamableTransport(target.url, provider, target.headers, cap);
}
