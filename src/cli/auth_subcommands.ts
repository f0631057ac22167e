/** The work of `auth status`, `auth logout` and `auth login`, once their flags are read. */
import { errLine } from "../std_streams.ts";
import { endpointUrl } from "./client_cli.ts";
import type { AUTH_LOGIN, AUTH_LOGOUT } from "./commands.ts";
import type { ValuesOf } from "./declare.ts";
import { resolveFromInvocation } from "../config.ts";
import { CLIENT_EXIT, ClientError } from "../client/errors.ts";
import { targetFromConfig } from "../client/config_file.ts";
import type { CredentialStore, StoredCredentials } from "../client/auth/types.ts";
import { normaliseServerUrl } from "../client/auth/store.ts";
import { AuthFlowError, loopbackRedirector } from "../client/auth/loopback.ts";
import { signIn } from "../client/auth/sign_in.ts";
import { revoke } from "../client/auth/revoke.ts";
import { authFailure } from "../client/auth/failure.ts";
import { writeStdout } from "./output.ts";
import { terminalJson, terminalLine, terminalSafe } from "../client/terminal_text.ts";
import { onInterrupt } from "./interrupt.ts";

/** The values of any auth command's flags (a flag the command does not take is absent). */
export type AuthValues = ValuesOf<typeof AUTH_LOGIN> & ValuesOf<typeof AUTH_LOGOUT>;

/** The store the subcommands work on: the file store, whose directory status names. */
export type AuthStore = CredentialStore & { readonly dir: string };

/** One subcommand's work: its exit code (failures are thrown, runAuth reports them). */
export type AuthSubcommand = (
  values: AuthValues,
  store: AuthStore,
  useJson: boolean,
) => Promise<number>;

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

/** The server URL named by --endpoint or --config/--server (HTTP entries only). */
async function serverUrlOf(values: AuthValues): Promise<URL> {
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

/** A number flag's value within [min, max] (--redirect-port: an integer); usage error else. */
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

/** Lines on stderr; they may quote a server or its authorization server (decision 0042). */
export function say(lines: string): void {
  errLine(terminalSafe(lines));
}

export const jsonLine = (v: unknown) => terminalJson(JSON.stringify(v)) + "\n";
/** What auth status|login|logout print quotes servers' metadata: made safe for a terminal. */
const writeSafe = (text: string) => writeStdout(terminalSafe(text));

/** `auth status`: what is stored, for every server or the one named. */
export const authStatus: AuthSubcommand = async (values, store, useJson) => {
  let entries = await store.list();
  if (values.endpoint !== undefined || values.config !== undefined) {
    const key = normaliseServerUrl(await serverUrlOf(values));
    entries = entries.filter((e) => e.serverUrl === key);
  }
  const servers = entries.map(describe);
  await writeSafe(
    useJson
      ? jsonLine({ operation: "auth/status", directory: store.dir, servers })
      : statusText(servers, store.dir),
  );
  return CLIENT_EXIT.ok;
};

/** The text `auth status` prints for people. */
function statusText(servers: Record<string, unknown>[], dir: string): string {
  return servers.map((s) =>
    `${s.serverUrl}\n  issuer ${s.issuer ?? "-"}  client ${s.clientId ?? "-"}\n  scopes ${
      (s.scopes as string[]).join(" ") || "-"
    }  expires ${s.expiresAt ?? "-"}${s.expired ? " (expired)" : ""}  refresh token ${
      s.hasRefreshToken ? "yes" : "no"
    }\n`
  ).join("") + `${servers.length} server(s) in ${dir}\n`;
}

/** `auth logout`: revokes (where offered) and removes the named server's entry, or all. */
export const authLogout: AuthSubcommand = async (values, store, useJson) => {
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
};

/** `auth login`: a sign-in through the loopback redirector and the person's browser. */
export const authLogin: AuthSubcommand = async (values, store, useJson) => {
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
    await reportLogin(describe(creds), useJson);
    return CLIENT_EXIT.ok;
  } finally {
    interrupt.dispose();
    await redirector.close();
  }
};

/** What a login says on stderr and prints on stdout. */
async function reportLogin(d: Record<string, unknown>, useJson: boolean): Promise<void> {
  say(
    `wmcp: signed in to ${d.serverUrl}${
      d.issuer ? ` (issuer ${terminalLine(String(d.issuer))})` : ""
    }`,
  );
  await writeSafe(
    useJson
      ? jsonLine({ operation: "auth/login", ...d })
      : `signed in to ${d.serverUrl}; scopes ${(d.scopes as string[]).join(" ") || "-"}; expires ${
        d.expiresAt ?? "-"
      }\n`,
  );
}
