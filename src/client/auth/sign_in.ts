/**
 * `auth login`'s sign-in: an OAuthClientProvider over one stored entry and a Redirector, and
 * signIn (the SDK's auth() through discovery, registration, PKCE and the token exchange).
 */
import {
  auth,
  type AuthResult,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from "@modelcontextprotocol/client";
import { unreachableError } from "../errors.ts";
import type { CredentialStore, Redirector, StoredCredentials } from "./types.ts";
import { normaliseServerUrl } from "./store.ts";
import { AuthFlowError } from "./loopback.ts";
import { boundedFetch } from "./bounded_fetch.ts";

/** A random state value: 32 bytes, base64url. */
function randomToken(): string {
  const b = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...b)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * An OAuthClientProvider over a CredentialStore entry and a Redirector (used by `auth login`
 * until the session's provider takes over this role). Tokens and registrations are saved as
 * soon as they arrive; the PKCE verifier and the code stay in memory.
 */
class StoreProvider implements OAuthClientProvider {
  #creds: StoredCredentials;
  #store: CredentialStore;
  #redirector: Redirector;
  #verifier = "";
  #state = "";
  #scope: string | undefined;
  /** The code the browser brought back (set by redirectToAuthorization). */
  code: string | undefined;
  /** The redirect's iss parameter (RFC 9207), when it carried one. */
  iss: string | undefined;

  constructor(
    creds: StoredCredentials,
    deps: { store: CredentialStore; redirector: Redirector; scope?: string },
  ) {
    this.#creds = creds;
    this.#store = deps.store;
    this.#redirector = deps.redirector;
    this.#scope = deps.scope;
  }

  get redirectUrl(): string {
    return this.#redirector.redirectUri;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "wmcp",
      redirect_uris: [this.#redirector.redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...(this.#scope ? { scope: this.#scope } : {}),
    } as OAuthClientMetadata;
  }

  state(): string {
    this.#state = randomToken();
    return this.#state;
  }

  clientInformation(ctx?: OAuthClientInformationContext) {
    const info = this.#creds.clientInformation;
    if (!info) return undefined;
    if (ctx?.issuer && this.#creds.issuer && ctx.issuer !== this.#creds.issuer) return undefined;
    // deno-lint-ignore no-explicit-any
    return info as any;
  }

  saveClientInformation(info: object, ctx?: OAuthClientInformationContext) {
    // Kept in memory until tokens arrive (saveTokens stores both): a login that is cancelled or
    // times out leaves the stored entry, and its working tokens, as they were.
    this.#creds.clientInformation = { ...info };
    if (ctx?.issuer) this.#creds.issuer = ctx.issuer;
  }

  tokens(ctx?: OAuthClientInformationContext) {
    const t = this.#creds.tokens;
    if (!t) return undefined;
    if (ctx?.issuer && this.#creds.issuer && ctx.issuer !== this.#creds.issuer) return undefined;
    // deno-lint-ignore no-explicit-any
    return t as any;
  }

  async saveTokens(tokens: object, ctx?: OAuthClientInformationContext) {
    this.#creds.tokens = { ...tokens };
    this.#creds.tokensSavedAt = Date.now();
    if (ctx?.issuer) this.#creds.issuer = ctx.issuer;
    await this.#store.save(this.#creds);
  }

  async redirectToAuthorization(url: URL) {
    const { code, state, iss } = await this.#redirector.authorize(url);
    if (state !== this.#state) {
      throw new AuthFlowError("state-mismatch", "the authorization response's state is not ours");
    }
    this.code = code;
    this.iss = iss;
  }

  saveCodeVerifier(v: string) {
    this.#verifier = v;
  }

  codeVerifier(): string {
    return this.#verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.#creds.discoveryState = { ...state } as Record<string, unknown>;
  }

  discoveryState() {
    return this.#creds.discoveryState as OAuthDiscoveryState | undefined;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "client") this.#creds.clientInformation = undefined;
    if (scope === "all" || scope === "tokens") this.#creds.tokens = undefined;
    if (scope === "all" || scope === "discovery") this.#creds.discoveryState = undefined;
    if (scope === "all" || scope === "verifier") this.#verifier = "";
  }
}

/**
 * An OAuthClientProvider over one stored entry and a Redirector: `auth login`'s own provider
 * (tokens and registration saved through the store as they arrive).
 */
export function storeProvider(
  creds: StoredCredentials,
  deps: { store: CredentialStore; redirector: Redirector; scope?: string },
): OAuthClientProvider & { readonly code: string | undefined } {
  return new StoreProvider(creds, deps);
}

/** Options of signIn. */
export interface SignInOptions {
  store: CredentialStore;
  redirector: Redirector;
  scope?: string;
  fetchFn?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
}

/**
 * Signs in to one server through the SDK's auth(): discovery, registration, authorization code
 * with PKCE through the redirector, token exchange; the store keeps the result.
 */
export async function signIn(serverUrl: URL, options: SignInOptions): Promise<StoredCredentials> {
  const key = normaliseServerUrl(serverUrl);
  const existing = await options.store.load(key);
  const creds = loginCredentials(key, existing, options.redirector.redirectUri);
  const provider = new StoreProvider(creds, options);
  // The address of the last request that failed: what a network failure of the flow names.
  let failed: URL | undefined;
  const fetchWith = options.fetchFn ?? boundedFetch;
  const fetchFn = (input: string | URL | Request, init?: RequestInit) =>
    fetchWith(input, init).catch((err) => {
      failed = URL.parse(input instanceof Request ? input.url : String(input)) ?? undefined;
      throw err;
    });
  let result;
  try {
    result = await authorizeInPlace(provider, { serverUrl, scope: options.scope, fetchFn });
  } catch (err) {
    // `cannot reach URL: REASON`, as the tools commands say it: the server named when the
    // request went to its origin (discovery), else the authorization server's address.
    const named = failed === undefined || failed.origin === serverUrl.origin ? serverUrl : failed;
    throw unreachableError(named, err, { auth: "unreachable" }) ?? err;
  }
  if (result !== "AUTHORIZED" || !creds.tokens) {
    throw new AuthFlowError("denied", "the authorization server issued no tokens");
  }
  return creds;
}

/**
 * The entry a login starts from: a login always asks the person again, so the old tokens are
 * dropped and the registration kept, unless it was made for another redirect URI (another port).
 */
function loginCredentials(
  key: string,
  existing: StoredCredentials | undefined,
  redirectUri: string,
): StoredCredentials {
  const uris = (existing?.clientInformation as { redirect_uris?: unknown } | undefined)
    ?.redirect_uris;
  const fits = !Array.isArray(uris) || uris.includes(redirectUri);
  return {
    serverUrl: key,
    issuer: existing?.issuer,
    clientInformation: fits ? existing?.clientInformation : undefined,
  };
}

/** auth() up to the redirect, then (the code is in hand) auth() again to redeem it. */
async function authorizeInPlace(
  provider: StoreProvider,
  options: {
    serverUrl: URL;
    scope?: string;
    fetchFn: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  },
): Promise<AuthResult> {
  const { serverUrl, scope, fetchFn } = options;
  const result = await auth(provider, { serverUrl, scope, fetchFn });
  if (result !== "REDIRECT") return result;
  if (provider.code === undefined) throw new AuthFlowError("denied", "no authorization code");
  return await auth(provider, {
    serverUrl,
    authorizationCode: provider.code,
    iss: provider.iss,
    scope,
    fetchFn,
  });
}
