/**
 * The MCP authorization flags of the client commands, and a `--config` entry's `oauth` settings,
 * read into AuthSettings.
 */
import { streams } from "../std_streams.ts";
import { resolveFromInvocation } from "../config.ts";
import {
  checkIdentity,
  type ClientIdentity,
  entryNames,
  FLAG_NAMES,
  type IdentityNames,
  readClientSecret,
} from "../client/auth/client_identity.ts";
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

/** The flags that identify the client: given any, the flags identify it (identityFrom). */
const IDENTITY_FLAGS = [
  "client-id",
  "client-secret-env",
  "client-secret-file",
  "client-issuer",
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

/**
 * Whose identity settings apply: the flags' when any of them is given (all of them then, none of
 * the entry's: a secret never pairs with another source's client id), else the config entry's
 * `oauth` (validated when the entry was loaded), else none.
 */
function identityFrom(
  values: AuthFlagValues,
  target: Target,
): { identity: ClientIdentity; names: IdentityNames } {
  const entry = target.kind === "stdio" ? undefined : target.oauth;
  if (entry !== undefined && !IDENTITY_FLAGS.some((f) => values[f] !== undefined)) {
    return { identity: entry, names: entryNames(entry.field) };
  }
  const file = values["client-secret-file"];
  return {
    identity: {
      clientId: values["client-id"],
      clientSecretEnv: values["client-secret-env"],
      clientSecretFile: file === undefined ? undefined : resolveFromInvocation(file),
      clientIssuer: values["client-issuer"],
    },
    names: FLAG_NAMES,
  };
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
 * or a static Authorization header (a bearer token by flag or config wins). The flags win over a
 * config entry's `oauth` settings (identityFrom). Secrets come from an environment variable or a
 * file, never from argv.
 */
export async function authSettingsFrom(
  values: AuthFlagValues,
  target: Target,
): Promise<AuthSettings | undefined> {
  if (!authApplies(values, target)) return undefined;
  const entry = target.kind === "stdio" ? undefined : target.oauth;
  const { identity, names } = identityFrom(values, target);
  const clientSecret = await readClientSecret(identity, names);
  checkIdentity(identity, clientSecret !== undefined, names);
  return {
    clientId: identity.clientId,
    clientSecret,
    clientIssuer: identity.clientIssuer,
    // The rest one by one: a flag given wins over the entry's setting.
    clientMetadataUrl: values["client-metadata-url"] ?? entry?.clientMetadataUrl,
    scope: values.scope?.trim() || entry?.scope?.trim() || undefined,
    noStore: values["no-auth-store"] === true,
    followRedirects: values["auth-follow-redirects"] === true,
    interactive: !values["non-interactive"] && streams().stdinIsTerminal(),
    noBrowser: values["no-browser"] === true,
    signInTimeoutMs: signInTimeoutMs(values),
  };
}
