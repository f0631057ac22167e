/**
 * A pre-registered OAuth client's identity as the user gives it, by flags (`--client-id`,
 * `--client-secret-env`, `--client-secret-file`, `--client-issuer`, `--client-metadata-url`) or by
 * a `--config` entry's `oauth` object (the same settings, camelCase): one set of checks for both,
 * whose messages name where each setting came from, and the one way its secret is read (an
 * environment variable or a regular file; never an argument, never quoted).
 */
import { ClientError } from "../errors.ts";
import { readOptionFile } from "../../option_file.ts";

/** How the client identifies itself; the secret only by where it is found. */
export interface ClientIdentity {
  clientId?: string;
  /** The environment variable holding the client secret. */
  clientSecretEnv?: string;
  /** The file holding the client secret (absolute, or as the user spelled it for flags). */
  clientSecretFile?: string;
  /** The authorization server the client id (and secret) belong to. */
  clientIssuer?: string;
  /** An https client ID metadata document URL. */
  clientMetadataUrl?: string;
}

/** What messages call each setting: a flag, or a config entry's field. */
export interface IdentityNames {
  clientId: string;
  clientSecretEnv: string;
  clientSecretFile: string;
  clientIssuer: string;
  clientMetadataUrl: string;
  /** Whether the names are a config entry's fields (then an unset variable names its field). */
  entry: boolean;
}

/** The flags' names. */
export const FLAG_NAMES: IdentityNames = {
  clientId: "--client-id",
  clientSecretEnv: "--client-secret-env",
  clientSecretFile: "--client-secret-file",
  clientIssuer: "--client-issuer",
  clientMetadataUrl: "--client-metadata-url",
  entry: false,
};

/** The names of a config entry's `oauth` fields (`field` is `mcpServers.NAME.oauth`). */
export function entryNames(field: string): IdentityNames {
  return {
    clientId: `${field}.clientId`,
    clientSecretEnv: `${field}.clientSecretEnv`,
    clientSecretFile: `${field}.clientSecretFile`,
    clientIssuer: `${field}.clientIssuer`,
    clientMetadataUrl: `${field}.clientMetadataUrl`,
    entry: true,
  };
}

/** A name a variable can have (Deno.env.get throws on others). */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether the identity names a secret (by variable or file). */
export function namesSecret(id: ClientIdentity): boolean {
  return id.clientSecretEnv !== undefined || id.clientSecretFile !== undefined;
}

/**
 * Refuses an identity that cannot be used, before anything is read or sent: a secret given two
 * ways, a secret without its client id or its issuer (a secret is bound to one authorization
 * server, SEP-2352), an issuer without a client id, a malformed issuer or metadata URL, an empty
 * client id. `hasSecret`: whether a secret is given (flags: read already; entries: named).
 */
export function checkIdentity(id: ClientIdentity, hasSecret: boolean, n: IdentityNames): void {
  if (id.clientSecretEnv !== undefined && id.clientSecretFile !== undefined) {
    throw new ClientError("usage", `give ${n.clientSecretEnv} or ${n.clientSecretFile}, not both`);
  }
  if (hasSecret && id.clientId === undefined) {
    throw new ClientError("usage", `a client secret needs ${n.clientId}`);
  }
  if (hasSecret && id.clientIssuer === undefined) {
    throw new ClientError(
      "usage",
      `a client secret needs ${n.clientIssuer} URL (the authorization server that issued it)`,
    );
  }
  if (id.clientIssuer !== undefined) {
    if (id.clientId === undefined) {
      throw new ClientError("usage", `${n.clientIssuer} needs ${n.clientId}`);
    }
    const u = URL.parse(id.clientIssuer);
    if (!u || (u.protocol !== "https:" && u.protocol !== "http:") || u.search || u.hash) {
      throw new ClientError(
        "usage",
        `${n.clientIssuer} must be an http(s) URL without query or fragment`,
      );
    }
  }
  if (id.clientId !== undefined && id.clientId.trim() === "") {
    throw new ClientError("usage", `${n.clientId} must not be empty`);
  }
  if (id.clientMetadataUrl !== undefined) {
    const u = URL.parse(id.clientMetadataUrl);
    if (!u || u.protocol !== "https:" || u.pathname === "/") {
      throw new ClientError(
        "usage",
        `${n.clientMetadataUrl} must be an https URL with a path (a client ID metadata document)`,
      );
    }
  }
}

/**
 * The client secret the identity names, if any: the variable's value, or the file's text
 * (trimmed) read only when it is a regular file (readOptionFile: a FIFO or device is refused
 * without blocking, and no message quotes the content). An unset or empty variable, an
 * unreadable or empty file is a usage error naming the variable or the path, never a value.
 */
export async function readClientSecret(
  id: ClientIdentity,
  n: IdentityNames,
): Promise<string | undefined> {
  if (id.clientSecretEnv !== undefined && id.clientSecretFile !== undefined) {
    throw new ClientError("usage", `give ${n.clientSecretEnv} or ${n.clientSecretFile}, not both`);
  }
  if (id.clientSecretEnv !== undefined) {
    const name = id.clientSecretEnv;
    const value = VARIABLE_NAME.test(name) ? Deno.env.get(name) : undefined;
    if (!value) {
      throw new ClientError(
        "usage",
        `environment variable ${name} ${n.entry ? `(${n.clientSecretEnv}) ` : ""}is not set`,
      );
    }
    return value;
  }
  if (id.clientSecretFile === undefined) return undefined;
  const path = id.clientSecretFile;
  const text = await readOptionFile(path, n.clientSecretFile).catch((err) => {
    throw new ClientError("usage", (err as Error).message);
  });
  const secret = text.trim();
  if (secret === "") throw new ClientError("usage", `${path} is empty`);
  return secret;
}
