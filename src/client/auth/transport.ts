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

/** Most times one message is sent again after an authorization completed for it. */
const MAX_RESENDS = 3;

/**
 * A fetch that adds the target's static headers (under the transport's own) and tells the
 * provider when a bearer token was refused (HTTP 401).
 */
function watchingFetch(provider: WmcpAuthProvider, headers: Record<string, string>): typeof fetch {
  const httpOnly = httpOnlyFetch(fetch, (err) => provider.refused(err));
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
  constructor(url: URL, provider: WmcpAuthProvider, headers: Record<string, string>) {
    super(url, { authProvider: provider, fetch: watchingFetch(provider, headers) });
    this.#provider = provider;
  }
  override send(...args: Parameters<StreamableHTTPClientTransport["send"]>): Promise<void> {
    return resendAuthorized(this.#provider, () => super.send(...args));
  }
}

class AuthorizingSseTransport extends SSEClientTransport {
  readonly #provider: WmcpAuthProvider;
  constructor(url: URL, provider: WmcpAuthProvider, headers: Record<string, string>) {
    super(url, { authProvider: provider, fetch: watchingFetch(provider, headers) });
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
): StreamableHTTPClientTransport | SSEClientTransport {
  return target.kind === "sse"
    ? new AuthorizingSseTransport(target.url, provider, target.headers)
    : new AuthorizingStreamableTransport(target.url, provider, target.headers);
}
