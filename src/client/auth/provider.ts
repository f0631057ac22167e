/**
 * The bundled client's MCP authorization: the v2 SDK's OAuthClientProvider over a
 * CredentialStore (where tokens and registrations live) and a Redirector (who approves). The
 * SDK's auth() does discovery, registration, PKCE, the token exchange, refresh and the issuer
 * checks; this provider supplies state, storage, client identification and the redirect leg,
 * refreshes a token shortly before its known expiry, and registers again when a stored
 * registration was made for another redirect URI.
 */
import {
  auth,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  registerClient,
  resolveClientMetadata,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import { ClientError } from "../errors.ts";
import type { CredentialStore, Redirector, StoredCredentials } from "./types.ts";
import { AUTH_RESPONSE_BYTES, cappedFetch } from "../response_cap.ts";
import { httpOnlyFetch } from "./http_only.ts";

/** How the client identifies itself and what it asks for. */
export interface AuthProviderOptions {
  /** The MCP server (the protected resource) the credentials are for. */
  serverUrl: URL;
  store: CredentialStore;
  redirector: Redirector;
  /** A pre-registered client id (then DCR and CIMD are not used). */
  clientId?: string;
  /** The pre-registered client's secret (client_secret_basic or _post as the AS allows). */
  clientSecret?: string;
  /**
   * The authorization server the pre-registered client belongs to: its credentials go to no
   * other issuer (required with a secret).
   */
  clientIssuer?: string;
  /** An HTTPS client ID metadata document URL, used when the AS supports it. */
  clientMetadataUrl?: string;
  /** Scope to request when neither the challenge nor the resource metadata names one. */
  scope?: string;
  /** Most authorization requests (redirects) in this run; default 3. */
  maxAuthorizations?: number;
  /** Fetch for the code exchange (defaults to the global fetch). */
  fetch?: typeof fetch;
  /** The clock (ms since epoch) tokens are stamped and their expiry judged by (default Date.now). */
  now?: () => number;
}

/** The client name sent on dynamic registration. */
const CLIENT_NAME = "wmcp";
const DEFAULT_MAX_AUTHORIZATIONS = 3;

/**
 * How long before its known expiry a token is refreshed (ms): a request does not go out with a
 * token that runs out on the way. A token living shorter than twice this is refreshed at half
 * its lifetime instead, so that not every request refreshes it.
 */
export const REFRESH_AHEAD_MS = 60_000;

/**
 * When tokens saved at `savedAt` (ms since epoch) are due for a refresh: REFRESH_AHEAD_MS before
 * `expires_in` runs out, or half way for a short-lived token. Undefined when the expiry is not
 * known (no `expires_in`, or no time it was issued at).
 */
export function refreshDueAt(
  tokens: { expires_in?: unknown } | undefined,
  savedAt: number | undefined,
): number | undefined {
  const expiresIn = tokens?.expires_in;
  if (typeof expiresIn !== "number" || !(expiresIn > 0) || savedAt === undefined) return undefined;
  const lifetime = expiresIn * 1000;
  return savedAt + lifetime - Math.min(REFRESH_AHEAD_MS, lifetime / 2);
}

/** What a refresh ahead of expiry throws where the SDK would send a person to sign in. */
class RefreshOnly extends Error {
  constructor() {
    super("a refresh ahead of expiry does not sign in");
    this.name = "RefreshOnly";
  }
}

/** base64url(SHA-256(text)): the S256 code challenge of a verifier. */
async function s256(text: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  return btoa(String.fromCharCode(...digest)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** Whether two issuer identifiers name the same server (one trailing "/" is tolerated). */
function sameIssuer(a: string, b: string): boolean {
  const strip = (s: string) => s.endsWith("/") ? s.slice(0, -1) : s;
  return strip(a) === strip(b);
}

/** The OAuthClientProvider of the bundled client (one per connection target). */
export class WmcpAuthProvider implements OAuthClientProvider {
  readonly #options: AuthProviderOptions;
  readonly #serverKey: string;
  #loaded: StoredCredentials | undefined;
  #verifiers = new Map<string, string>();
  #verifier: string | undefined;
  #authorizations = 0;
  #completed = 0;
  #queue: Promise<unknown> = Promise.resolve();
  #failure: unknown;
  #unsafe: unknown;
  /** The refresh ahead of expiry in flight (one at a time). */
  #refreshing: Promise<void> | undefined;
  /** A refresh ahead of expiry failed in this run: the 401 path takes over. */
  #refreshAheadFailed = false;
  readonly #now: () => number;

  /**
   * Called when a sign-in starts waiting for its Redirector (a person at a browser); the function
   * returned is called when the wait ends. The connect timer holds meanwhile (session.ts): the
   * sign-in's own timeout bounds that wait.
   */
  readonly onSignIn = new Set<() => () => void>();

  constructor(options: AuthProviderOptions) {
    if (options.clientSecret !== undefined && options.clientId === undefined) {
      throw new ClientError("usage", "a client secret needs --client-id");
    }
    if (options.clientSecret !== undefined && options.clientIssuer === undefined) {
      throw new ClientError("usage", "a client secret needs --client-issuer URL");
    }
    if (options.clientMetadataUrl !== undefined) {
      let url: URL | undefined;
      try {
        url = new URL(options.clientMetadataUrl);
      } catch { /* reported below */ }
      if (!url || url.protocol !== "https:" || url.pathname === "/") {
        throw new ClientError(
          "usage",
          "--client-metadata-url must be an https URL with a path (a client ID metadata document)",
        );
      }
    }
    this.#options = options;
    this.#serverKey = options.serverUrl.href;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The longest the sign-ins of one run may wait for their Redirector (ms): its own timeout
   * times the authorizations allowed; 0 when the Redirector has no timer (it never waits).
   */
  get signInBoundMs(): number {
    const max = this.#options.maxAuthorizations ?? DEFAULT_MAX_AUTHORIZATIONS;
    return max * (this.#options.redirector.timeoutMs ?? 0);
  }

  /** Authorization flows completed (code exchanged) in this run. */
  get completedAuthorizations(): number {
    return this.#completed;
  }

  /**
   * The last failure of the redirect leg (the SDK may report a request that failed because of
   * it in other words, e.g. as a failed version negotiation).
   */
  get lastFailure(): unknown {
    return this.#unsafe ?? this.#failure;
  }

  /** Records a refusal made outside the provider (an unsafe URL the server advertised). */
  refused(err: unknown): void {
    // Sticky: the SDK may swallow the failed fetch and go on; nothing of this flow may.
    this.#unsafe ??= err;
    this.#failure = this.#unsafe;
  }

  get redirectUrl(): string {
    return this.#options.redirector.redirectUri;
  }

  get clientMetadataUrl(): string | undefined {
    return this.#options.clientId === undefined ? this.#options.clientMetadataUrl : undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: CLIENT_NAME,
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      // A native public client proving possession with PKCE; the AS may assign another method
      // (and a secret) in its registration response, which is then used.
      token_endpoint_auth_method: "none",
      ...(this.#options.scope ? { scope: this.#options.scope } : {}),
    };
  }

  state(): string {
    return crypto.randomUUID();
  }

  async #creds(): Promise<StoredCredentials> {
    if (this.#unsafe !== undefined) throw this.#unsafe;
    if (!this.#loaded) {
      this.#loaded = await this.#options.store.load(this.#serverKey) ??
        { serverUrl: this.#serverKey };
    }
    return this.#loaded;
  }

  async #save(change: Partial<StoredCredentials>): Promise<void> {
    const next = { ...await this.#creds(), ...change, serverUrl: this.#serverKey };
    for (const [k, v] of Object.entries(next)) {
      if (v === undefined) delete (next as Record<string, unknown>)[k];
    }
    this.#loaded = next;
    await this.#options.store.save(next);
  }

  async clientInformation(
    ctx?: OAuthClientInformationContext,
  ): Promise<StoredOAuthClientInformation | undefined> {
    const { clientId, clientSecret, clientIssuer } = this.#options;
    if (clientId !== undefined) {
      // Pre-registered by the user with one authorization server (--client-issuer): another
      // issuer the server names gets neither the id nor the secret; the run fails instead.
      if (clientIssuer !== undefined && ctx?.issuer && !sameIssuer(clientIssuer, ctx.issuer)) {
        this.#failure = new ClientError(
          "auth",
          `the server names authorization server ${ctx.issuer}, but the pre-registered client ` +
            `belongs to ${clientIssuer} (--client-issuer); refused`,
          { details: { auth: "issuer-mismatch" } },
        );
        throw this.#failure;
      }
      const issuer = clientIssuer ?? ctx?.issuer;
      return {
        client_id: clientId,
        ...(clientSecret !== undefined ? { client_secret: clientSecret } : {}),
        ...(issuer ? { issuer } : {}),
      } as StoredOAuthClientInformation;
    }
    return (await this.#creds()).clientInformation as StoredOAuthClientInformation | undefined;
  }

  async saveClientInformation(
    info: StoredOAuthClientInformation,
    ctx?: OAuthClientInformationContext,
  ): Promise<void> {
    if (this.#options.clientId !== undefined) return;
    const creds = await this.#creds();
    const issuer = ctx?.issuer ?? (info as { issuer?: string }).issuer;
    // A registration with another authorization server: what the old one issued goes.
    const moved = creds.issuer !== undefined && issuer !== undefined && creds.issuer !== issuer;
    await this.#save({
      issuer,
      clientInformation: info as unknown as Record<string, unknown>,
      ...(moved ? { tokens: undefined, tokensSavedAt: undefined } : {}),
    });
  }

  /**
   * The stored tokens. Asked without an issuer context, this is the read for a request to the
   * resource server (the SDK's transports): tokens whose known expiry is near are refreshed
   * first (refreshDueAt); when that fails, the tokens go out as they are and a 401 takes the
   * usual path (refresh, else a new authorization).
   */
  async tokens(ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    if (ctx === undefined) await this.#refreshIfDue();
    return (await this.#creds()).tokens as StoredOAuthTokens | undefined;
  }

  /** Refreshes the stored tokens when they are due (once at a time; not again after a failure). */
  async #refreshIfDue(): Promise<void> {
    if (this.#refreshAheadFailed) return;
    const creds = await this.#creds();
    const tokens = creds.tokens as { refresh_token?: unknown; expires_in?: unknown } | undefined;
    const identified = creds.clientInformation !== undefined ||
      this.#options.clientId !== undefined;
    if (typeof tokens?.refresh_token !== "string" || !identified) return;
    const due = refreshDueAt(tokens, creds.tokensSavedAt);
    if (due === undefined || this.#now() < due) return;
    this.#refreshing ??= this.#refreshAhead().finally(() => this.#refreshing = undefined);
    await this.#refreshing;
  }

  /**
   * The SDK's auth() with the stored refresh token, through a view of this provider that refuses
   * to send anyone to sign in: a refresh, or nothing. Success is new tokens saved.
   */
  async #refreshAhead(): Promise<void> {
    const before = (await this.#creds()).tokensSavedAt;
    try {
      await auth(this.#refreshOnly(), {
        serverUrl: this.#options.serverUrl,
        fetchFn: this.#flowFetch(),
      });
    } catch {
      // Refused, unreachable, or the SDK wanted a sign-in: the 401 path decides.
    }
    const after = this.#loaded;
    if (after?.tokens === undefined || after.tokensSavedAt === before) {
      this.#refreshAheadFailed = true;
    }
  }

  /** This provider, except that its redirect leg refuses (RefreshOnly) instead of signing in. */
  #refreshOnly(): OAuthClientProvider {
    const refuse = () => Promise.reject(new RefreshOnly());
    return new Proxy(this, {
      get(target, key) {
        if (key === "redirectToAuthorization") return refuse;
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  /**
   * The fetch of the authorization flow's own requests (the code exchange, a refresh ahead of
   * expiry, a new registration): http(s) only, each response capped at AUTH_RESPONSE_BYTES.
   */
  #flowFetch(): typeof fetch {
    return httpOnlyFetch(
      cappedFetch(this.#options.fetch ?? fetch, () => ({
        maxBytes: AUTH_RESPONSE_BYTES,
        failure: "auth",
        what: "OAuth response",
        onExceeded: (err) => this.refused(err),
      })),
      (err) => this.refused(err),
    );
  }

  async saveTokens(tokens: StoredOAuthTokens, ctx?: OAuthClientInformationContext): Promise<void> {
    const creds = await this.#creds();
    const previous = creds.tokens as StoredOAuthTokens | undefined;
    // A refresh response may omit the refresh token: the one we hold stays valid then.
    const keep = tokens.refresh_token === undefined && previous?.refresh_token !== undefined &&
        previous.issuer === (ctx?.issuer ?? tokens.issuer)
      ? { refresh_token: previous.refresh_token }
      : {};
    await this.#save({
      issuer: ctx?.issuer ?? tokens.issuer ?? creds.issuer,
      tokens: { ...tokens, ...keep } as unknown as Record<string, unknown>,
      tokensSavedAt: this.#now(),
    });
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    this.#verifiers.set(await s256(codeVerifier), codeVerifier);
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) {
      throw new ClientError("auth", "no PKCE code verifier for this authorization response");
    }
    return this.#verifier;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    if (state.resourceMetadata === undefined && state.authorizationServerMetadata === undefined) {
      // Neither RFC 9728 nor RFC 8414 metadata: the server does not do MCP authorization, its
      // 401 is a plain refusal (as without a provider).
      this.#failure = new ClientError(
        "transport",
        "the server requires authorization but publishes no authorization metadata (RFC 9728, " +
          "RFC 8414): give it a token (--bearer-token-env VAR or the config entry's headers)",
      );
      throw this.#failure;
    }
    await this.#save({ discoveryState: state as unknown as Record<string, unknown> });
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return (await this.#creds()).discoveryState as OAuthDiscoveryState | undefined;
  }

  async invalidateCredentials(
    scope: "all" | "client" | "tokens" | "verifier" | "discovery",
  ): Promise<void> {
    if (scope === "verifier") {
      this.#verifier = undefined;
      return;
    }
    if (scope === "tokens" && await this.#adoptNewerTokens()) return;
    if (scope === "all") {
      await this.#options.store.remove(this.#serverKey);
      this.#loaded = { serverUrl: this.#serverKey };
      return;
    }
    await this.#save(
      scope === "client"
        ? { clientInformation: undefined }
        : scope === "tokens"
        ? { tokens: undefined, tokensSavedAt: undefined }
        : { discoveryState: undefined },
    );
  }

  /**
   * Another run (a concurrent wmcp process) may have refreshed the tokens we hold since we read
   * them: the authorization server then refuses our rotated-away refresh token, but the store
   * holds working ones. Those are taken instead of being overwritten by an entry without tokens.
   */
  async #adoptNewerTokens(): Promise<boolean> {
    const mine = await this.#creds();
    const stored = await this.#options.store.load(this.#serverKey).catch(() => undefined);
    const theirs = stored?.tokens as Record<string, unknown> | undefined;
    const ours = mine.tokens as Record<string, unknown> | undefined;
    if (!stored || !theirs || stored.issuer !== mine.issuer) return false;
    const different = theirs.refresh_token !== ours?.refresh_token ||
      theirs.access_token !== ours?.access_token;
    const newer = (stored.tokensSavedAt ?? 0) >= (mine.tokensSavedAt ?? 0);
    if (!different || !newer) return false;
    this.#loaded = stored;
    return true;
  }

  /**
   * The resource server refused a token we sent: forget the cached discovery so the next
   * flow reads the protected resource metadata again (its authorization server may have moved).
   */
  async bearerRejected(): Promise<void> {
    if ((await this.#creds()).discoveryState !== undefined) {
      await this.invalidateCredentials("discovery");
    }
  }

  /**
   * The redirect leg, done in place: the Redirector brings back the code, the state is
   * checked, and the SDK's auth() exchanges the code (checking `iss` per RFC 9207 and the
   * recorded issuer first). The transport then retries the request with the new token.
   * One flow at a time; at most maxAuthorizations per run.
   */
  redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const run = this.#queue.then(() => this.#authorize(authorizationUrl)).catch((err) => {
      this.#failure = err;
      throw err;
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  async #authorize(url: URL): Promise<void> {
    const max = this.#options.maxAuthorizations ?? DEFAULT_MAX_AUTHORIZATIONS;
    if (this.#authorizations >= max) {
      throw new ClientError(
        "auth",
        `authorization did not satisfy the server after ${max} attempts; giving up`,
      );
    }
    this.#authorizations++;
    url = await this.#registeredFor(url);
    const challenge = url.searchParams.get("code_challenge") ?? "";
    const verifier = this.#verifiers.get(challenge);
    const sentState = url.searchParams.get("state");
    const back = await this.#signInWait(() => this.#options.redirector.authorize(url));
    if (sentState !== null && back.state !== sentState) {
      throw new ClientError(
        "auth",
        "the authorization response's state does not match the request; refused",
      );
    }
    this.#verifier = verifier;
    try {
      const result = await auth(this, {
        serverUrl: this.#options.serverUrl,
        authorizationCode: back.code,
        iss: back.iss,
        fetchFn: this.#flowFetch(),
      });
      if (result !== "AUTHORIZED") {
        throw new ClientError("auth", "the authorization code was not exchanged for a token");
      }
    } finally {
      this.#verifier = undefined;
      this.#verifiers.delete(challenge);
    }
    this.#completed++;
  }

  /** The Redirector's wait, with every onSignIn listener told when it starts and ends. */
  async #signInWait<T>(wait: () => Promise<T>): Promise<T> {
    const ends = [...this.onSignIn].map((start) => start());
    try {
      return await wait();
    } finally {
      for (const end of ends) end();
    }
  }

  /**
   * The authorization URL, for a registration made for this run's redirect URI. A stored
   * registration (dynamic registration, RFC 7591) lists the redirect URIs it was made for; an
   * authorization server that matches them exactly refuses another (a loopback listener gets a
   * new port each run). Then the client registers again, keeps the new registration, and the
   * URL names it; everything else in the URL (PKCE, state, scope, resource) stays. A refresh
   * never gets here: it sends no redirect URI, so the old registration still serves it.
   */
  async #registeredFor(url: URL): Promise<URL> {
    if (this.#options.clientId !== undefined) return url; // pre-registered: the user's own
    const creds = await this.#creds();
    const info = creds.clientInformation as
      | { client_id?: unknown; redirect_uris?: unknown }
      | undefined;
    const uris = info?.redirect_uris;
    const redirectUri = url.searchParams.get("redirect_uri");
    if (
      info?.client_id !== url.searchParams.get("client_id") || !Array.isArray(uris) ||
      redirectUri === null || uris.includes(redirectUri)
    ) {
      return url;
    }
    const discovery = creds.discoveryState as OAuthDiscoveryState | undefined;
    if (discovery?.authorizationServerUrl === undefined) return url;
    const metadata = discovery.authorizationServerMetadata;
    const issuer = metadata?.issuer ?? String(discovery.authorizationServerUrl);
    const registered = await registerClient(discovery.authorizationServerUrl, {
      metadata,
      clientMetadata: resolveClientMetadata(this),
      scope: url.searchParams.get("scope") ?? undefined,
      fetchFn: this.#flowFetch(),
    });
    await this.saveClientInformation({ ...registered, issuer }, { issuer });
    const next = new URL(url);
    next.searchParams.set("client_id", registered.client_id);
    return next;
  }
}
