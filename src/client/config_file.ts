/** Reads a standard `mcpServers` configuration file (as desktop MCP hosts use) into a target. */
import { ClientError } from "./errors.ts";
import { parseJsonText, readOptionFile } from "../option_file.ts";
import { invocationDirectory, resolveFromInvocation } from "../config.ts";
import { noteExpansion } from "./redaction.ts";
import {
  checkIdentity,
  type ClientIdentity,
  entryNames,
  namesSecret,
} from "./auth/client_identity.ts";

/**
 * How messages show the fields of a config entry that came from a `${VAR}` expansion: the
 * unexpanded template and the field's name (`"/srv/${APP}/bin" (mcpServers.s.command)`),
 * never the expanded value. A field without an expansion is absent (shown as is).
 */
export interface ShownFields {
  command?: string;
  cwd?: string;
  /** The url template, query values and userinfo redacted as shownUrl does. */
  url?: string;
}

/** Where the client connects. */
export type Target =
  | {
    kind: "stdio";
    command: string;
    args: string[];
    env?: Record<string, string>;
    cwd?: string;
    label: string;
    /** Message forms of the fields that came from an expansion. */
    shown?: ShownFields;
  }
  | {
    /** Streamable HTTP (`http`) or the older HTTP+SSE transport (`sse`, 2024-11-05). */
    kind: "http" | "sse";
    url: URL;
    headers: Record<string, string>;
    label: string;
    /** Message forms of the fields that came from an expansion. */
    shown?: ShownFields;
    /** Sends the Streamable HTTP requests instead of the global fetch (an in-process handler). */
    fetch?: (request: Request) => Promise<Response>;
    /** The entry's OAuth settings (`oauth`), checked, the secret named but not read. */
    oauth?: EntryOAuth;
  };

/**
 * A config entry's `oauth` object: the client commands' OAuth flags as fields (`clientId`,
 * `clientSecretEnv`, `clientSecretFile`, `clientIssuer`, `clientMetadataUrl`, `scope`), each
 * `${VAR}`-expanded, checked as the flags are (client_identity.ts). `clientSecretFile` is
 * absolute (a relative one is taken from the invocation directory, as `cwd` is); the secret is
 * read only when the client signs in (src/cli/auth_flags.ts).
 */
export interface EntryOAuth extends ClientIdentity {
  scope?: string;
  /** Where it came from, for messages: `mcpServers.NAME.oauth`. */
  field: string;
}

/** The fields an entry's `oauth` object may give. */
const OAUTH_FIELDS = [
  "clientId",
  "clientSecretEnv",
  "clientSecretFile",
  "clientIssuer",
  "clientMetadataUrl",
  "scope",
] as const;

/** The `type` values a config entry may give (as desktop hosts spell them). */
const ENTRY_TYPES: Record<string, "stdio" | "http" | "sse"> = {
  stdio: "stdio",
  http: "http",
  "streamable-http": "http",
  streamableHttp: "http",
  sse: "sse",
};

/** A variable name that looks like it holds a secret. */
const SECRET_NAME = /TOKEN|KEY|SECRET|PASSWORD/i;

/** Options of expandVars. */
export interface ExpandOptions {
  /**
   * Set where the value lands in a child's argv (`command`, `args`): a variable named like a
   * secret is then reported here (its name, never its value).
   */
  onArgvSecret?: (name: string) => void;
}

/** Replaces ${VAR} with the environment's value; a missing variable is a usage error naming it. */
export function expandVars(value: string, where: string, options: ExpandOptions = {}): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const v = Deno.env.get(name);
    if (v === undefined) {
      throw new ClientError("usage", `${where} refers to \${${name}}, which is not set`);
    }
    if (SECRET_NAME.test(name)) options.onArgvSecret?.(name);
    noteExpansion(name, v);
    return v;
  });
}

/** Whether value holds a `${VAR}` that expandVars replaces. */
function expands(value: string): boolean {
  return /\$\{[A-Za-z_][A-Za-z0-9_]*\}/.test(value);
}

/** How a message shows a field whose value is template (undefined: as is, no expansion). */
function shownField(template: string, where: string): string | undefined {
  return expands(template) ? `${JSON.stringify(template)} (${where})` : undefined;
}

/** A url template as messages show it: no userinfo or fragment, each query value `***`. */
function shownUrlTemplate(template: string, where: string): string | undefined {
  if (!expands(template)) return undefined;
  const bare = template.replace(/#.*$/s, "").replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, "$1");
  const q = bare.indexOf("?");
  const query = q < 0 ? "" : bare.slice(q + 1).split("&").filter((p) => p !== "")
    .map((p) => `${p.split("=")[0]}=***`).join("&");
  return `${q < 0 ? bare : bare.slice(0, q)}${query === "" ? "" : `?${query}`} (${where})`;
}

/** Refuses a NUL byte in a value bound for a child's argv or environment (no value quoted). */
function noNul(value: string, where: string): string {
  if (value.includes("\0")) {
    throw new ClientError("usage", `${where} contains a NUL byte, which no process can receive`);
  }
  return value;
}

/** Options of targetFromConfig. */
export interface ConfigOptions {
  /** Receives warnings (one line each; never a variable's value). */
  onWarning?: (message: string) => void;
}

function stringRecord(v: unknown, where: string): Record<string, string> {
  if (v === undefined) return {};
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw new ClientError("usage", `${where} must be an object of strings`);
  }
  const out: Record<string, string> = {};
  for (const [k, s] of Object.entries(v)) {
    if (typeof s !== "string") throw new ClientError("usage", `${where}.${k} must be a string`);
    out[k] = expandVars(s, `${where}.${k}`);
  }
  return out;
}

/** An entry's headers, each checked to be a valid HTTP header (the message quotes no value). */
function headerRecord(v: unknown, where: string): Record<string, string> {
  const out = stringRecord(v, where);
  for (const [k, s] of Object.entries(out)) {
    try {
      new Headers([[k, s]]);
    } catch {
      throw new ClientError("usage", `${where}.${k} is not a valid HTTP header (name or value)`);
    }
  }
  return out;
}

/** What one config entry is: the `type` field read (absent: by the entry's fields). */
type EntryType = "stdio" | "http" | "sse" | undefined;

/**
 * Loads server NAME from a config file: `{command,args,env,cwd}` (stdio) or `{url,headers}`
 * (Streamable HTTP; `"type": "sse"` for the older HTTP+SSE transport). A stdio server starts
 * in `cwd` when the entry gives one (relative to the invocation directory), else in the
 * directory the user ran the command from (INIT_CWD under `deno task`, else the cwd).
 */
export async function targetFromConfig(
  path: string,
  name: string,
  options: ConfigOptions = {},
): Promise<Target> {
  const e = await readEntry(path, name);
  const where = `mcpServers.${name}`;
  const type = entryType(e, where);
  if (type === "http" || type === "sse" || (type === undefined && e.url !== undefined)) {
    return httpTarget(e, name, type, options);
  }
  if (e.oauth !== undefined) {
    throw new ClientError("usage", `${where}.oauth applies to HTTP servers (an entry with "url")`);
  }
  return stdioTarget(e, name, options);
}

/** The entry NAME of the file's `mcpServers` object (the messages never quote the content). */
async function readEntry(path: string, name: string): Promise<Record<string, unknown>> {
  let parsed: unknown;
  try {
    parsed = parseJsonText(await readOptionFile(path, "--config"), `--config ${path}`);
  } catch (err) {
    // The message names the file and where it is wrong, never its content.
    throw new ClientError("usage", (err as Error).message);
  }
  const servers = (parsed as { mcpServers?: unknown })?.mcpServers;
  if (!servers || typeof servers !== "object") {
    throw new ClientError("usage", `${path} has no "mcpServers" object`);
  }
  const entry = (servers as Record<string, unknown>)[name];
  if (!entry || typeof entry !== "object") {
    throw new ClientError(
      "usage",
      `${path} has no server named ${JSON.stringify(name)}; it has: ${
        Object.keys(servers).join(", ")
      }`,
    );
  }
  return entry as Record<string, unknown>;
}

/** The entry's `type`, as one of the transports; a value hosts do not spell is a usage error. */
function entryType(e: Record<string, unknown>, where: string): EntryType {
  if (e.type === undefined) return undefined;
  const type = typeof e.type === "string" ? ENTRY_TYPES[e.type] : undefined;
  if (type === undefined) {
    throw new ClientError(
      "usage",
      `${where}.type must be one of ${Object.keys(ENTRY_TYPES).join(", ")}, got ${
        JSON.stringify(e.type)
      }`,
    );
  }
  return type;
}

/** An HTTP entry (`url`, `headers`, `oauth`): Streamable HTTP unless its type is `sse`. */
function httpTarget(
  e: Record<string, unknown>,
  name: string,
  type: EntryType,
  options: ConfigOptions,
): Target {
  const where = `mcpServers.${name}`;
  if (typeof e.url !== "string") {
    throw new ClientError("usage", `${where} of type ${type} needs "url"`);
  }
  let url: URL;
  try {
    url = new URL(expandVars(e.url, `${where}.url`));
  } catch {
    throw new ClientError("usage", `${where}.url is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ClientError("usage", `${where}.url must be http(s)`);
  }
  const shownUrl = shownUrlTemplate(e.url, `${where}.url`);
  const headers = headerRecord(e.headers, `${where}.headers`);
  const oauth = oauthOf(e.oauth, `${where}.oauth`, options);
  if (
    oauth !== undefined && Object.keys(headers).some((k) => k.toLowerCase() === "authorization")
  ) {
    options.onWarning?.(
      `${where}.oauth is not used: the entry's headers carry an Authorization header, which wins`,
    );
  }
  return {
    kind: type === "sse" ? "sse" : "http",
    url,
    headers,
    label: name,
    ...(shownUrl === undefined ? {} : { shown: { url: shownUrl } }),
    ...(oauth === undefined ? {} : { oauth }),
  };
}

/**
 * An entry's `oauth` object (EntryOAuth), checked as the flags are: a usage error names the
 * field, never a value. A secret written into the file itself (`clientSecret`) is refused: it
 * belongs in a variable or a file of its own, as for the flags. A field wmcp does not know (other
 * hosts' settings in a shared file) is a warning, not an error.
 */
function oauthOf(v: unknown, field: string, options: ConfigOptions): EntryOAuth | undefined {
  if (v === undefined) return undefined;
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw new ClientError("usage", `${field} must be an object`);
  }
  const o = v as Record<string, unknown>;
  if (o.clientSecret !== undefined) {
    throw new ClientError(
      "usage",
      `${field}.clientSecret is refused: give the secret through an environment variable ` +
        `(${field}.clientSecretEnv) or a file (${field}.clientSecretFile), never in the config`,
    );
  }
  const known: readonly string[] = OAUTH_FIELDS;
  for (const k of Object.keys(o)) {
    if (!known.includes(k)) {
      options.onWarning?.(
        `${field} has ${JSON.stringify(k)}, which wmcp does not read (it reads ${
          OAUTH_FIELDS.join(", ")
        }); ignored`,
      );
    }
  }
  const out: EntryOAuth = { field };
  for (const k of OAUTH_FIELDS) {
    const s = o[k];
    if (s === undefined) continue;
    if (typeof s !== "string" || s.trim() === "") {
      throw new ClientError("usage", `${field}.${k} must be a non-empty string`);
    }
    out[k] = noNul(expandVars(s, `${field}.${k}`), `${field}.${k}`);
  }
  if (out.clientSecretFile !== undefined) {
    out.clientSecretFile = resolveFromInvocation(out.clientSecretFile);
  }
  checkIdentity(out, namesSecret(out), entryNames(field));
  return out;
}

/** A stdio entry (`command`, `args`, `env`, `cwd`), each string with `${VAR}` expanded. */
function stdioTarget(e: Record<string, unknown>, name: string, options: ConfigOptions): Target {
  const where = `mcpServers.${name}`;
  if (typeof e.command !== "string" || e.command.length === 0) {
    throw new ClientError("usage", `${where} needs "command" (stdio) or "url" (HTTP)`);
  }
  const args = e.args === undefined ? [] : e.args;
  if (!Array.isArray(args) || args.some((a) => typeof a !== "string")) {
    throw new ClientError("usage", `${where}.args must be an array of strings`);
  }
  // ${VAR} is expanded in every string field hosts expand it in: command, args, env, cwd.
  const env = e.env === undefined ? undefined : stringRecord(e.env, `${where}.env`);
  for (const [k, v] of Object.entries(env ?? {})) noNul(v, `${where}.env.${k}`);
  const shown: ShownFields = {};
  const command = shownField(e.command, `${where}.command`);
  if (command !== undefined) shown.command = command;
  const cwd = typeof e.cwd === "string" ? shownField(e.cwd, `${where}.cwd`) : undefined;
  if (cwd !== undefined) shown.cwd = cwd;
  return {
    kind: "stdio",
    command: argvWord(e.command, `${where}.command`, options),
    args: (args as string[]).map((a, i) => argvWord(a, `${where}.args[${i}]`, options)),
    env,
    cwd: e.cwd === undefined
      ? invocationDirectory()
      : resolveFromInvocation(noNul(cwdOf(e.cwd, where), `${where}.cwd`)),
    label: name,
    ...(Object.keys(shown).length === 0 ? {} : { shown }),
  };
}

/**
 * A word of the child's argv (command or an arg), expanded and NUL-checked. The argv is what
 * every local user can read (ps, /proc): a variable named like a secret expanded there is worth
 * a warning.
 */
function argvWord(template: string, field: string, options: ConfigOptions): string {
  return noNul(
    expandVars(template, field, {
      onArgvSecret: (v: string) =>
        options.onWarning?.(
          `${field} expands \${${v}} into the server's command line, which other local users ` +
            `can read (ps); pass secrets through "env" instead`,
        ),
    }),
    field,
  );
}

function cwdOf(v: unknown, where: string): string {
  if (typeof v !== "string" || v === "") {
    throw new ClientError("usage", `${where}.cwd must be a non-empty string`);
  }
  return expandVars(v, `${where}.cwd`);
}
