/**
 * Builds the client's MCP authorization for one HTTP target from its flags: the provider, its
 * credential store and its redirector. The persistent store and the person's redirector are
 * the file store and loopback listener of `auth login` (src/client/auth/store.ts, loopback.ts).
 */
import { ClientError } from "../errors.ts";
import { WmcpAuthProvider } from "./provider.ts";
import { followingRedirector } from "./follow_redirector.ts";
import { fileStore } from "./store.ts";
import { loopbackRedirector, SIGN_IN_TIMEOUT_MS } from "./loopback.ts";
import { type CredentialStore, memoryStore, type Redirector } from "./types.ts";

/** The authorization flags of a client command (secrets already read from env or file). */
export interface AuthSettings {
  clientId?: string;
  clientSecret?: string;
  /** The issuer the pre-registered client belongs to (`--client-issuer`). */
  clientIssuer?: string;
  clientMetadataUrl?: string;
  scope?: string;
  /** Keep credentials in memory only (`--no-auth-store`). */
  noStore: boolean;
  /** Follow the authorization URL without a person (`--auth-follow-redirects`). */
  followRedirects: boolean;
  /** Whether a person can sign in here (a terminal, not --non-interactive). */
  interactive: boolean;
  /** Print the URL instead of opening a browser (`--no-browser`). */
  noBrowser: boolean;
  /**
   * How long a sign-in waits for the browser (ms; `--auth-timeout`, default SIGN_IN_TIMEOUT_MS).
   * The connect timer holds meanwhile: it bounds connecting, not a person signing in.
   */
  signInTimeoutMs?: number;
}

/**
 * The credential store that outlives the run (the user's config directory). Reading it happens on
 * every HTTP run, also against servers that need no authorization: a store this process cannot
 * read (no permission, an unsafe directory) counts as empty then, and only an authorization that
 * must save credentials fails, with the store's own error.
 */
function persistentStore(): CredentialStore {
  return readTolerant(fileStore());
}

/** `inner`, with load() and list() failures read as "nothing stored". */
function readTolerant(inner: CredentialStore): CredentialStore {
  return {
    load: (serverUrl) => inner.load(serverUrl).catch(() => undefined),
    save: (creds) => inner.save(creds),
    remove: (serverUrl) => inner.remove(serverUrl),
    list: () => inner.list().catch(() => []),
  };
}

/** The redirector for a person at a terminal (loopback listener and browser). */
function personRedirector(settings: AuthSettings): Promise<Redirector> {
  return loopbackRedirector({
    openBrowser: !settings.noBrowser,
    timeoutMs: settings.signInTimeoutMs ?? SIGN_IN_TIMEOUT_MS,
  });
}

/** A redirector for runs with nobody to sign in: it fails at once, saying what to do. */
function refusingRedirector(): Redirector {
  return {
    redirectUri: "http://127.0.0.1/callback",
    authorize: () =>
      Promise.reject(
        new ClientError(
          "auth",
          "this server needs authorization and nobody is here to sign in: run `wmcp auth login` " +
            "first, supply a token (--bearer-token-env VAR), or use --auth-follow-redirects with " +
            "an authorization server that approves without a person",
        ),
      ),
    close: () => Promise.resolve(),
  };
}

/** The provider for `serverUrl`; its redirector must be closed when the run ends. */
export async function authProviderFor(
  serverUrl: URL,
  settings: AuthSettings,
): Promise<{ provider: WmcpAuthProvider; close(): Promise<void> }> {
  if (settings.followRedirects && settings.noBrowser) {
    throw new ClientError("usage", "--auth-follow-redirects and --no-browser exclude each other");
  }
  const redirector = settings.followRedirects
    ? followingRedirector({ timeoutMs: settings.signInTimeoutMs })
    : settings.interactive
    ? await personRedirector(settings)
    : refusingRedirector();
  try {
    const provider = new WmcpAuthProvider({
      serverUrl,
      store: settings.noStore ? memoryStore() : persistentStore(),
      redirector,
      clientId: settings.clientId,
      clientSecret: settings.clientSecret,
      clientIssuer: settings.clientIssuer,
      clientMetadataUrl: settings.clientMetadataUrl,
      scope: settings.scope,
    });
    return { provider, close: () => redirector.close() };
  } catch (err) {
    await redirector.close();
    throw err;
  }
}
