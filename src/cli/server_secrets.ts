/**
 * The HTTP server's secrets: its bearer tokens (read-write and read-only) and its requestState
 * key, read from the files its flags name or else from environment variables, and checked. Runs
 * on Deno, Node and Bun (the adapters), so files are read through node:fs/promises.
 */
import { envIfGranted, resolveFromInvocation, UsageError } from "../config.ts";

/** The flags that name secret files (a part of ServerFlags, src/cli/server_flags.ts). */
export interface SecretFlags {
  tokenFile?: string;
  readTokenFile?: string;
  stateKeyFile?: string;
}

/** Bearer tokens shorter than this are refused (characters). */
export const MIN_TOKEN_CHARS = 16;
/** A requestState key shorter than this is refused (UTF-8 bytes). */
export const MIN_STATE_KEY_BYTES = 32;
/** The environment variables the HTTP server reads its secrets from when no file flag is given. */
export const SECRET_ENV = {
  token: "WMCP_TOKEN",
  readToken: "WMCP_READ_TOKEN",
  stateKey: "WMCP_STATE_KEY",
} as const;

/** The bearer tokens and requestState key of an HTTP server, read and checked. */
export interface ServerSecrets {
  /** Read-write tokens. */
  tokens: string[];
  /** Read-only tokens. */
  readTokens: string[];
  /** The requestState HMAC key, when one is given. */
  stateKey?: string;
}

/**
 * Where loadServerSecrets reads the environment and resolves relative file paths. The defaults
 * are Deno's (permission-checked env, the invocation directory); the Node and Bun adapters pass
 * process.env and process.cwd() so no Deno global is touched on their path.
 */
export interface SecretSources {
  /** An environment variable, or undefined. */
  env?: (name: string) => string | undefined;
  /** A user-given path made absolute. */
  resolve?: (path: string) => string;
}

/** Reads a secret file's text (node:fs/promises, so the same code runs on Deno, Node and Bun). */
async function readSecretFile(path: string, flag: string): Promise<string> {
  try {
    // Loaded when used: node:fs/promises costs the serve launcher ~30 ms (decision 0036).
    const { readFile } = await import("node:fs/promises");
    return await readFile(path, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read ${flag}: ${(err as Error).message}`);
  }
}

/** Reads bearer tokens from a file (one a line) or else from an environment variable. */
async function loadTokens(
  file: string | undefined,
  env: string,
  options: { flag: string; sources: Required<SecretSources> },
) {
  const { flag, sources } = options;
  if (file === undefined) {
    const envToken = sources.env(env) || undefined;
    return { tokens: envToken === undefined ? [] : [envToken], from: env };
  }
  // One token a line; each identifies one client (legacy sessions are shared fairly).
  const tokens = (await readSecretFile(sources.resolve(file), flag))
    .split(/\r?\n/).map((t) => t.trim()).filter((t) => t !== "");
  if (tokens.length === 0) throw new UsageError(`${flag} holds no token`);
  return { tokens, from: flag };
}

/**
 * Reads and checks the HTTP server's secrets (the one place they are validated): token files or
 * else WMCP_TOKEN/WMCP_READ_TOKEN, each token at least 16 characters (an empty variable is unset)
 * and of one kind only; the state key file or else WMCP_STATE_KEY, at least 32 bytes.
 * Failures are UsageErrors naming the flag or variable. `sources` replaces Deno's env and path
 * resolution (the Node and Bun adapters).
 */
export async function loadServerSecrets(
  flags: SecretFlags,
  sources: SecretSources = {},
): Promise<ServerSecrets> {
  const src: Required<SecretSources> = {
    env: sources.env ?? envIfGranted,
    resolve: sources.resolve ?? resolveFromInvocation,
  };
  const rw = await loadTokens(flags.tokenFile, SECRET_ENV.token, {
    flag: "--token-file",
    sources: src,
  });
  const ro = await loadTokens(flags.readTokenFile, SECRET_ENV.readToken, {
    flag: "--read-token-file",
    sources: src,
  });
  for (const { tokens, from } of [rw, ro]) {
    if (tokens.some((t) => t.length < MIN_TOKEN_CHARS)) {
      throw new UsageError(
        `${from} holds a token shorter than ${MIN_TOKEN_CHARS} characters: the bearer token must ` +
          `be at least ${MIN_TOKEN_CHARS} characters`,
      );
    }
  }
  if (rw.tokens.some((t) => ro.tokens.includes(t))) {
    throw new UsageError(
      "a token is both read-write and read-only; give each client one token of one kind",
    );
  }
  let stateKey: string | undefined = src.env(SECRET_ENV.stateKey) || undefined;
  let keyFrom: string = SECRET_ENV.stateKey;
  if (flags.stateKeyFile !== undefined) {
    const file = src.resolve(flags.stateKeyFile);
    stateKey = (await readSecretFile(file, "--state-key-file")).trim();
    keyFrom = "--state-key-file";
  }
  if (stateKey !== undefined && new TextEncoder().encode(stateKey).length < MIN_STATE_KEY_BYTES) {
    throw new UsageError(
      `${keyFrom} is too short: the requestState key must be at least ${MIN_STATE_KEY_BYTES} bytes`,
    );
  }
  return { tokens: rw.tokens, readTokens: ro.tokens, stateKey };
}
