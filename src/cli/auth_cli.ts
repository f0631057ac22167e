/** The `auth login|status|logout` commands: MCP authorization (OAuth 2.1) for remote servers. */
import { endpointUrl } from "./client_cli.ts";
import { AUTH_LOGIN, AUTH_LOGOUT, AUTH_STATUS } from "./commands.ts";
import { type CommandDecl, parseCommand, type ValuesOf, wordIndices } from "./declare.ts";
import {
  auth,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  OAuthError,
} from "@modelcontextprotocol/client";
import { resolveFromInvocation, UsageError } from "../config.ts";
import { CLIENT_EXIT, ClientError, unreachableError } from "../client/errors.ts";
import { targetFromConfig } from "../client/config_file.ts";
import type { CredentialStore, Redirector, StoredCredentials } from "../client/auth/types.ts";
import {
  credentialsDir,
  CredentialStoreError,
  fileStore,
  normaliseServerUrl,
} from "../client/auth/store.ts";
import { AuthFlowError, browserCommand, loopbackRedirector } from "../client/auth/loopback.ts";
import { StdoutClosed, writeStdout } from "./output.ts";
import { terminalJson, terminalLine, terminalSafe } from "../client/terminal_text.ts";
import { onInterrupt } from "./interrupt.ts";
import { commandPermissions, UngrantablePathError } from "./command_permissions.ts";
import { programName, seeHelp, SUBCOMMANDS } from "./help.ts";
import { didYouMean } from "./suggest.ts";
import { isHttpUrl, schemeRefusal } from "../client/auth/http_only.ts";
import { AUTH_RESPONSE_BYTES, cappedFetch } from "../client/response_cap.ts";
import { unreachableWords } from "../workarounds/deno_fetch_error.ts";
import { denoPath, mayRun } from "../launch/deno.ts";
import { spawnDeno } from "../launch/child.ts";

/** Network requests to the authorization server give up after this long. */
const AS_REQUEST_TIMEOUT_MS = 30_000;

/** The values of any auth command's flags (a flag the command does not take is absent). */
type Values = ValuesOf<typeof AUTH_LOGIN> & ValuesOf<typeof AUTH_LOGOUT>;

/** The declaration of each `auth` subcommand. */
const AUTH_COMMANDS: Readonly<Record<string, CommandDecl>> = {
  login: AUTH_LOGIN,
  status: AUTH_STATUS,
  logout: AUTH_LOGOUT,
};

/** The class (and so the exit code) of an authorization failure. */
export function authFailure(err: unknown): ClientError {
  if (err instanceof ClientError) return err;
  if (err instanceof CredentialStoreError) return new ClientError("usage", err.message);
  if (err instanceof AuthFlowError) {
    // Timing out and failing to listen keep their classes (7, 3); every other failure of the
    // sign-in (nobody here to sign in, state mismatch, denied, unsafe URL) is class auth (8).
    const cls = err.failure === "timeout" || err.failure === "cancelled"
      ? "timeout"
      : err.failure === "listen"
      ? "transport"
      : "auth";
    return new ClientError(cls, err.message, { details: { auth: err.failure } });
  }
  if (err instanceof OAuthError) {
    return new ClientError("auth", `authorization server: ${err.message}`, {
      details: { auth: "oauth", oauthError: err.code },
    });
  }
  const e = err as Error;
  // A hanging authorization server ends in boundedFetch's TimeoutError: unreachable, as documented.
  if (
    e instanceof TypeError || e?.name === "TimeoutError" ||
    unreachableWords(e?.message ?? "")
  ) {
    return new ClientError("transport", e.message, { details: { auth: "unreachable" } });
  }
  return new ClientError("auth", e?.message ?? String(err), { details: { auth: "flow" } });
}

/** `fetch` with a time limit, for every request to the authorization server and the resource. */
function boundedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  // Every URL here comes from the server or its AS: a file: (or other) URL is never fetched.
  if (!isHttpUrl(input)) {
    return Promise.reject(schemeRefusal(input instanceof Request ? input.url : String(input)));
  }
  const signal = init?.signal
    ? AbortSignal.any([init.signal, AbortSignal.timeout(AS_REQUEST_TIMEOUT_MS)])
    : AbortSignal.timeout(AS_REQUEST_TIMEOUT_MS);
  // Every response of the sign-in is a small document: capped (AUTH_RESPONSE_BYTES, 0047).
  const capped = cappedFetch((i, o) => fetch(i, o), () => ({
    maxBytes: AUTH_RESPONSE_BYTES,
    failure: "auth",
    what: "OAuth response",
  }));
  return capped(input, { ...init, signal });
}

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
  // A login always asks the person again: the old tokens are dropped, the registration kept.
  // A registration made for another redirect URI (another port) cannot serve this sign-in.
  const uris = (existing?.clientInformation as { redirect_uris?: unknown } | undefined)
    ?.redirect_uris;
  const fits = !Array.isArray(uris) || uris.includes(options.redirector.redirectUri);
  const creds: StoredCredentials = {
    serverUrl: key,
    issuer: existing?.issuer,
    clientInformation: fits ? existing?.clientInformation : undefined,
  };
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
    result = await auth(provider, { serverUrl, scope: options.scope, fetchFn });
    if (result === "REDIRECT") {
      if (provider.code === undefined) throw new AuthFlowError("denied", "no authorization code");
      result = await auth(provider, {
        serverUrl,
        authorizationCode: provider.code,
        iss: provider.iss,
        scope: options.scope,
        fetchFn,
      });
    }
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

/** What `auth status` shows of one stored server: never a token or a secret. */
export function describe(c: StoredCredentials): Record<string, unknown> {
  const t = (c.tokens ?? {}) as Record<string, unknown>;
  const info = (c.clientInformation ?? {}) as Record<string, unknown>;
  const expiresIn = typeof t.expires_in === "number" ? t.expires_in : undefined;
  const expiresAt = expiresIn !== undefined && c.tokensSavedAt !== undefined
    ? new Date(c.tokensSavedAt + expiresIn * 1000).toISOString()
    : null;
  return {
    serverUrl: c.serverUrl,
    issuer: c.issuer ?? null,
    clientId: typeof info.client_id === "string" ? info.client_id : null,
    scopes: typeof t.scope === "string" ? t.scope.split(" ").filter(Boolean) : [],
    hasAccessToken: typeof t.access_token === "string",
    expiresAt,
    expired: expiresAt === null ? null : Date.parse(expiresAt) <= Date.now(),
    hasRefreshToken: typeof t.refresh_token === "string",
  };
}

/** The RFC 8414 metadata (or OpenID configuration) of `issuer`, read from the issuer itself. */
async function issuerMetadata(issuer: string): Promise<Record<string, unknown> | undefined> {
  let iss: URL;
  try {
    iss = new URL(issuer);
  } catch {
    return undefined;
  }
  if (iss.protocol !== "https:" && iss.protocol !== "http:") return undefined;
  const path = iss.pathname === "/" ? "" : iss.pathname.replace(/\/$/, "");
  for (
    const url of [
      new URL(`/.well-known/oauth-authorization-server${path}`, iss),
      new URL(`${path}/.well-known/openid-configuration`, iss),
    ]
  ) {
    try {
      const res = await boundedFetch(url, { headers: { accept: "application/json" } });
      if (res.ok) {
        const meta = await res.json();
        if (typeof meta === "object" && meta !== null && meta.issuer === issuer) return meta;
      } else await res.body?.cancel();
    } catch { /* try the next one */ }
  }
  return undefined;
}

/** Revokes the stored tokens at the authorization server when it offers revocation (RFC 7009). */
async function revoke(c: StoredCredentials, warn: (m: string) => void): Promise<number> {
  const t = (c.tokens ?? {}) as Record<string, unknown>;
  const tokens = [
    ["refresh_token", t.refresh_token],
    ["access_token", t.access_token],
  ].filter(([, v]) => typeof v === "string") as [string, string][];
  if (tokens.length === 0) return 0;
  // Revocation goes only to the issuer that issued these tokens: a cached discovery may name
  // another authorization server (the resource's metadata can change), which must never receive
  // them. Cached metadata is used only when it is that issuer's own.
  if (!c.issuer) {
    warn("the stored credentials name no issuer; the tokens were not revoked");
    return 0;
  }
  const cached = c.discoveryState?.authorizationServerMetadata as
    | Record<string, unknown>
    | undefined;
  let meta = cached?.issuer === c.issuer ? cached : await issuerMetadata(c.issuer);
  if (meta && meta.issuer !== c.issuer) meta = undefined;
  if (!meta) {
    warn(`could not read the metadata of issuer ${c.issuer}; the tokens were not revoked`);
    return 0;
  }
  const endpoint = meta?.revocation_endpoint;
  if (typeof endpoint !== "string") return 0;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 0;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return 0;
  const info = (c.clientInformation ?? {}) as Record<string, unknown>;
  let revoked = 0;
  for (const [hint, token] of tokens) {
    const body = new URLSearchParams({ token, token_type_hint: hint });
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
    };
    if (typeof info.client_secret === "string" && typeof info.client_id === "string") {
      headers.authorization = `Basic ${
        btoa(`${encodeURIComponent(info.client_id)}:${encodeURIComponent(info.client_secret)}`)
      }`;
    } else if (typeof info.client_id === "string") {
      body.set("client_id", info.client_id);
    }
    try {
      const res = await boundedFetch(url, { method: "POST", headers, body });
      await res.body?.cancel();
      if (res.ok) revoked++;
      else warn(`revoking the ${hint.replace("_", " ")} failed: HTTP ${res.status}`);
    } catch (err) {
      warn(`revoking the ${hint.replace("_", " ")} failed: ${(err as Error).message}`);
    }
  }
  return revoked;
}

/** The server URL named by --endpoint or --config/--server (HTTP entries only). */
async function serverUrlOf(values: Values): Promise<URL> {
  if (values.config !== undefined || values.server !== undefined) {
    if (values.config === undefined || values.server === undefined) {
      throw new ClientError("usage", "--config and --server go together");
    }
    if (values.endpoint !== undefined) {
      throw new ClientError("usage", "give --endpoint or --config, not both");
    }
    const t = await targetFromConfig(resolveFromInvocation(values.config), values.server);
    if (t.kind === "stdio") {
      throw new ClientError("usage", `server ${values.server} is a stdio server: no authorization`);
    }
    return t.url;
  }
  if (values.endpoint === undefined) {
    throw new ClientError(
      "usage",
      "name the server: --endpoint URL or --config FILE --server NAME",
    );
  }
  return endpointUrl(values.endpoint);
}

function number(v: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (
    !Number.isFinite(n) || n < min || n > max ||
    (flag === "--redirect-port" && !Number.isInteger(n))
  ) {
    throw new ClientError("usage", `${flag} must be a number from ${min} to ${max}`);
  }
  return n;
}

/** Set in a process re-launched with the credentials directory's permissions. */
export const RELAUNCHED = "WMCP_AUTH_RELAUNCHED";

/** Whether this process may read and write the credentials directory. */
export function holdsCredentialsDir(): boolean {
  const dir = credentialsDir().replace(/\/auth$/, "");
  const can = (name: "read" | "write") =>
    Deno.permissions.querySync({ name, path: dir }).state === "granted";
  return can("read") && can("write");
}

/**
 * Runs `cli.ts auth ARGS` again with exactly the permissions the router grants `auth`
 * (command_permissions.ts: the one definition) when this process lacks the credentials
 * directory (cli.ts started with narrower flags than the router's, so it ran auth in process).
 * Undefined when no re-launch is needed or possible (already re-launched, or no permission to
 * run Deno).
 */
export async function relaunchWithCredentials(authArgs: string[]): Promise<number | undefined> {
  if (Deno.env.get(RELAUNCHED) || holdsCredentialsDir()) return undefined;
  if (!mayRun(denoPath())) return undefined;
  const invocationDir = Deno.env.get("INIT_CWD") ?? Deno.cwd();
  const argv = ["auth", ...authArgs];
  let plan;
  try {
    plan = commandPermissions(argv, {
      invocationDir,
      configDir: credentialsDir().replace(/\/auth$/, ""),
      deno: [denoPath()],
      browser: browserCommand(),
    });
  } catch (err) {
    if (err instanceof UngrantablePathError) throw new ClientError("usage", err.message);
    throw err;
  }
  if (plan.kind !== "child") return undefined;
  const child = spawnDeno({
    deno: denoPath(),
    flags: plan.flags,
    module: new URL("../../cli.ts", import.meta.url),
    args: argv,
    env: { [RELAUNCHED]: "1", INIT_CWD: invocationDir },
  });
  return (await child.status).code;
}

/** Lines on stderr; they may quote a server or its authorization server (decision 0042). */
function say(lines: string): void {
  console.error(terminalSafe(lines));
}

const jsonLine = (v: unknown) => terminalJson(JSON.stringify(v)) + "\n";
/** What auth status|login|logout print quotes servers' metadata: made safe for a terminal. */
const writeSafe = (text: string) => writeStdout(terminalSafe(text));

/** Runs `auth login|status|logout`; returns the exit code (INTERFACES.md). */
export async function runAuth(argv: string[]): Promise<number> {
  const json = !Deno.stdout.isTerminal();
  let useJson = json;
  // The command a usage error points to, from the words as typed (before parsing can fail).
  const typed = argv.find((w) => !w.startsWith("-"));
  const path = typed !== undefined && SUBCOMMANDS.auth.includes(typed) ? ["auth", typed] : ["auth"];
  try {
    const subAt = wordIndices(AUTH_LOGIN, argv)[0];
    const sub = subAt === undefined ? undefined : argv[subAt];
    const subs = SUBCOMMANDS.auth;
    if (sub === undefined || !subs.includes(sub)) {
      throw new ClientError(
        "usage",
        sub !== undefined
          ? `unknown subcommand auth ${JSON.stringify(sub)}${didYouMean(sub, subs)}; auth takes ${
            subs.join(", ")
          }`
          : `auth takes ${subs.join(", ")}`,
      );
    }
    let values: Values;
    try {
      values = (await parseCommand(AUTH_COMMANDS[sub], argv.toSpliced(subAt!, 1)))
        .values as unknown as Values;
    } catch (err) {
      if (err instanceof UsageError) throw new ClientError("usage", err.message);
      throw err;
    }
    if (values.output !== undefined) {
      if (values.output !== "json" && values.output !== "pretty") {
        throw new ClientError("usage", "--output must be json or pretty");
      }
      useJson = values.output === "json";
    }
    const relaunched = await relaunchWithCredentials(argv);
    if (relaunched !== undefined) return relaunched;
    const store = fileStore();

    if (sub === "status") {
      let entries = await store.list();
      if (values.endpoint !== undefined || values.config !== undefined) {
        const key = normaliseServerUrl(await serverUrlOf(values));
        entries = entries.filter((e) => e.serverUrl === key);
      }
      const servers = entries.map(describe);
      await writeSafe(
        useJson
          ? jsonLine({ operation: "auth/status", directory: store.dir, servers })
          : servers.map((s) =>
            `${s.serverUrl}\n  issuer ${s.issuer ?? "-"}  client ${s.clientId ?? "-"}\n  scopes ${
              (s.scopes as string[]).join(" ") || "-"
            }  expires ${s.expiresAt ?? "-"}${s.expired ? " (expired)" : ""}  refresh token ${
              s.hasRefreshToken ? "yes" : "no"
            }\n`
          ).join("") + `${servers.length} server(s) in ${store.dir}\n`,
      );
      return CLIENT_EXIT.ok;
    }

    if (sub === "logout") {
      let targets: StoredCredentials[];
      if (values.all) {
        if (values.endpoint !== undefined || values.config !== undefined) {
          throw new ClientError("usage", "--all names every server; give no --endpoint/--config");
        }
        targets = await store.list();
      } else {
        const key = normaliseServerUrl(await serverUrlOf(values));
        const found = await store.load(key);
        targets = found ? [found] : [];
      }
      const removed: Record<string, unknown>[] = [];
      for (const c of targets) {
        const revoked = await revoke(c, (m) => say(`wmcp: warning: ${m}`));
        await store.remove(c.serverUrl);
        removed.push({ serverUrl: c.serverUrl, issuer: c.issuer ?? null, revokedTokens: revoked });
      }
      await writeSafe(
        useJson
          ? jsonLine({ operation: "auth/logout", removed })
          : removed.map((r) => `signed out of ${r.serverUrl} (${r.revokedTokens} revoked)\n`).join(
            "",
          ) || "nothing stored for that server\n",
      );
      return CLIENT_EXIT.ok;
    }

    // login
    const serverUrl = await serverUrlOf(values);
    const timeoutS = number(values["auth-timeout"], "--auth-timeout", 1, 86_400)!;
    const port = number(values["redirect-port"], "--redirect-port", 0, 65_535);
    if (values["non-interactive"]) {
      throw authFailure(
        new AuthFlowError(
          "headless",
          "auth login needs a person at a browser and --non-interactive forbids waiting for one; " +
            "supply a token instead (--bearer-token-env VAR)",
        ),
      );
    }
    const redirector = await loopbackRedirector({
      port,
      openBrowser: values["no-browser"] !== true,
      timeoutMs: Math.round(timeoutS * 1000),
      say,
    });
    const abort = new AbortController();
    const interrupt = onInterrupt(() => {
      abort.abort();
      redirector.close().catch(() => {});
    });
    try {
      const creds = await signIn(serverUrl, { store, redirector, scope: values.scope });
      const d = describe(creds);
      say(
        `wmcp: signed in to ${d.serverUrl}${
          d.issuer ? ` (issuer ${terminalLine(String(d.issuer))})` : ""
        }`,
      );
      await writeSafe(
        useJson
          ? jsonLine({ operation: "auth/login", ...d })
          : `signed in to ${d.serverUrl}; scopes ${
            (d.scopes as string[]).join(" ") || "-"
          }; expires ${d.expiresAt ?? "-"}\n`,
      );
      return CLIENT_EXIT.ok;
    } finally {
      interrupt.dispose();
      await redirector.close();
    }
  } catch (err) {
    // The reader of stdout went away (`| head`): end quietly, exit 0 (INTERFACES.md).
    if (err instanceof StdoutClosed) return CLIENT_EXIT.ok;
    let e = authFailure(err);
    if (e.failure === "usage") {
      e = new ClientError("usage", `${e.message}; ${seeHelp(path, programName())}`, {
        details: e.details,
        cause: e,
      });
    }
    Deno.stderr.writeSync(
      new TextEncoder().encode(
        useJson ? jsonLine({ error: e.toJSON() }) : `error (${e.failure}): ${e.message}\n`,
      ),
    );
    return e.exitCode;
  }
}
