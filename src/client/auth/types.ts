/**
 * The seams of the bundled client's MCP authorization: where credentials live and how an
 * authorization code is obtained; plus an in-memory store.
 */

/** What is stored for one (server resource URL, authorization server issuer). */
export interface StoredCredentials {
  serverUrl: string;
  issuer?: string;
  clientInformation?: Record<string, unknown>; // OAuthClientInformationFull as JSON
  tokens?: Record<string, unknown>; // OAuthTokens as JSON
  tokensSavedAt?: number; // ms since epoch
  discoveryState?: Record<string, unknown>; // OAuthDiscoveryState as JSON, optional cache
}

/** Where credentials live; keyed by the server's resource URL. */
export interface CredentialStore {
  load(serverUrl: string): Promise<StoredCredentials | undefined>;
  save(creds: StoredCredentials): Promise<void>;
  remove(serverUrl: string): Promise<boolean>;
  list(): Promise<StoredCredentials[]>;
}

/** Gets an authorization code for an authorization URL: a person in a browser, or headless. */
export interface Redirector {
  /** The redirect_uri to register and send (known before the flow starts). */
  readonly redirectUri: string;
  /**
   * The longest one `authorize()` waits (ms), when it is bounded by its own timer (the sign-in
   * timeout): a caller's timers are set beyond it.
   */
  readonly timeoutMs?: number;
  /**
   * Sends the user agent to `url`; resolves with the code and state the redirect brings back,
   * and its `iss` parameter (RFC 9207) when it carried one (the issuer check needs it).
   */
  authorize(
    url: URL,
    signal?: AbortSignal,
  ): Promise<{ code: string; state: string | null; iss?: string }>;
  close(): Promise<void>;
}

/** An in-memory CredentialStore (tests, headless runs that must not persist). */
export function memoryStore(): CredentialStore {
  const entries = new Map<string, StoredCredentials>();
  const copy = (c: StoredCredentials): StoredCredentials => structuredClone(c);
  return {
    load(serverUrl) {
      const found = entries.get(serverUrl);
      return Promise.resolve(found ? copy(found) : undefined);
    },
    save(creds) {
      entries.set(creds.serverUrl, copy(creds));
      return Promise.resolve();
    },
    remove(serverUrl) {
      return Promise.resolve(entries.delete(serverUrl));
    },
    list() {
      return Promise.resolve([...entries.values()].map(copy));
    },
  };
}
