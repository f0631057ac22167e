/** The MCP authorization flags of the client commands, read into AuthSettings. */
import { streams } from "../std_streams.ts";
import { readOptionFile } from "../option_file.ts";
import { resolveFromInvocation } from "../config.ts";
import { ClientError } from "../client/errors.ts";
import type { Target } from "../client/config_file.ts";
import type { AuthSettings } from "../client/auth/setup.ts";

/** The flag values this reads (a subset of the client commands' parsed options). */
export interface AuthFlagValues {
  "client-id"?: string;
  "client-secret-env"?: string;
  "client-secret-file"?: string;
  "client-metadata-url"?: string;
  "client-issuer"?: string;
  scope?: string;
  "no-auth"?: boolean;
  "no-auth-store"?: boolean;
  "no-browser"?: boolean;
  "auth-follow-redirects"?: boolean;
  "auth-timeout"?: string;
  "non-interactive"?: boolean;
}

const AUTH_FLAGS = [
  "client-id",
  "client-secret-env",
  "client-secret-file",
  "client-metadata-url",
  "client-issuer",
  "scope",
  "no-auth-store",
  "no-browser",
  "auth-follow-redirects",
  "auth-timeout",
] as const;

/**
 * Whether `target` gets authorization at all: not stdio, not `--no-auth`, no static Authorization
 * header (a bearer token by flag or config wins). Throws on an auth flag that cannot apply.
 */
function authApplies(values: AuthFlagValues, target: Target): boolean {
  const given = AUTH_FLAGS.filter((f) => values[f] !== undefined && values[f] !== false);
  if (target.kind === "stdio") {
    if (given.length > 0 || values["no-auth"]) {
      throw new ClientError("usage", `--${given[0] ?? "no-auth"} applies to HTTP servers only`);
    }
    return false;
  }
  if (values["no-auth"]) {
    if (given.length > 0) {
      throw new ClientError("usage", `--no-auth contradicts --${given[0]}`);
    }
    return false;
  }
  return !Object.keys(target.headers).some((k) => k.toLowerCase() === "authorization");
}

/** The client secret from `--client-secret-env` or `--client-secret-file` (never argv), if any. */
async function clientSecretFrom(values: AuthFlagValues): Promise<string | undefined> {
  if (values["client-secret-env"] !== undefined && values["client-secret-file"] !== undefined) {
    throw new ClientError("usage", "give --client-secret-env or --client-secret-file, not both");
  }
  let clientSecret: string | undefined;
  if (values["client-secret-env"] !== undefined) {
    clientSecret = Deno.env.get(values["client-secret-env"]);
    if (!clientSecret) {
      throw new ClientError(
        "usage",
        `environment variable ${values["client-secret-env"]} is not set`,
      );
    }
  } else if (values["client-secret-file"] !== undefined) {
    const path = resolveFromInvocation(values["client-secret-file"]);
    clientSecret = (await readOptionFile(path, "--client-secret-file").catch((err) => {
      throw new ClientError("usage", (err as Error).message);
    })).trim();
    if (clientSecret === "") throw new ClientError("usage", `${path} is empty`);
  }
  return clientSecret;
}

/** Checks that a secret has its client id and issuer, and that both are well formed. */
function checkClientIdentity(values: AuthFlagValues, clientSecret: string | undefined): void {
  if (clientSecret !== undefined && values["client-id"] === undefined) {
    throw new ClientError("usage", "a client secret needs --client-id");
  }
  // A client secret is bound to one authorization server: whichever AS a server names must not
  // receive it (review 12: SEP-2352's per-issuer check needs the issuer it was issued by).
  const clientIssuer = values["client-issuer"];
  if (clientSecret !== undefined && clientIssuer === undefined) {
    throw new ClientError(
      "usage",
      "a client secret needs --client-issuer URL (the authorization server that issued it)",
    );
  }
  if (clientIssuer !== undefined) {
    if (values["client-id"] === undefined) {
      throw new ClientError("usage", "--client-issuer needs --client-id");
    }
    let u: URL | undefined;
    try {
      u = new URL(clientIssuer);
    } catch { /* reported below */ }
    if (!u || (u.protocol !== "https:" && u.protocol !== "http:") || u.search || u.hash) {
      throw new ClientError(
        "usage",
        "--client-issuer must be an http(s) URL without query or fragment",
      );
    }
  }
  if (values["client-id"] !== undefined && values["client-id"].trim() === "") {
    throw new ClientError("usage", "--client-id must not be empty");
  }
}

/** The longest `--auth-timeout` (s): a day, as `auth login` takes. */
const MAX_AUTH_TIMEOUT_S = 86_400;

/** `--auth-timeout` in ms (undefined: the default), checked against MAX_AUTH_TIMEOUT_S. */
function signInTimeoutMs(values: AuthFlagValues): number | undefined {
  const given = values["auth-timeout"];
  if (given === undefined) return undefined;
  const s = Number(given);
  if (!(s > 0) || s > MAX_AUTH_TIMEOUT_S) {
    throw new ClientError(
      "usage",
      `--auth-timeout must be a number of seconds above 0, at most ${MAX_AUTH_TIMEOUT_S}`,
    );
  }
  return Math.round(s * 1000);
}

/**
 * The authorization settings for `target`, or undefined when it gets none: stdio, `--no-auth`,
 * or a static Authorization header (a bearer token by flag or config wins). Secrets come from an
 * environment variable or a file, never from argv.
 */
export async function authSettingsFrom(
  values: AuthFlagValues,
  target: Target,
): Promise<AuthSettings | undefined> {
  if (!authApplies(values, target)) return undefined;
  const clientSecret = await clientSecretFrom(values);
  checkClientIdentity(values, clientSecret);
  return {
    clientId: values["client-id"],
    clientSecret,
    clientIssuer: values["client-issuer"],
    clientMetadataUrl: values["client-metadata-url"],
    scope: values.scope?.trim() || undefined,
    noStore: values["no-auth-store"] === true,
    followRedirects: values["auth-follow-redirects"] === true,
    interactive: !values["non-interactive"] && streams().stdinIsTerminal(),
    noBrowser: values["no-browser"] === true,
    signInTimeoutMs: signInTimeoutMs(values),
  };
}
