/**
 * The server flags as one table, shared by serve_http.ts, serve_stdio.ts and the launcher
 * (`wmcp serve stdio|http`): parsing with did-you-mean, number and secret validation, the
 * generated --help, and the one function that turns flags into Deno permissions.
 */
import { streams, writeText } from "../std_streams.ts";
import { type CommandDecl, type FlagDecl, flagTokens, parseCommand, rootsOf } from "./declare.ts";
import denoConfig from "../../deno.json" with { type: "json" };
import { parseLimitFlags, UsageError } from "../config.ts";
import type { Limits } from "../workspace/limits.ts";
import type { RootSpec } from "../workspace/roots.ts";
import { instanceNameProblem } from "../server/http/instance.ts";
import { closest, unknownFlagMessage } from "./suggest.ts";
import { LAUNCHER_USAGE, programName } from "./help.ts";
import { bindHost } from "./server_hosts.ts";
import { SANDBOX_MODES } from "../sandbox/bwrap.ts";
import { ENGINE_CHOICES } from "../workspace/native/protocol.ts";
import { MIN_STATE_KEY_BYTES, MIN_TOKEN_CHARS, SECRET_ENV } from "./server_secrets.ts";

/** The two server entries: serve_stdio.ts and serve_http.ts. */
export type ServerKind = "stdio" | "http";

/** How a flag's value is checked (once, in parseServerFlags). */
export type FlagValue =
  | "boolean"
  | "string"
  | "path"
  | "port"
  | "count"
  | "bytes"
  | "seconds"
  | "positive-seconds"
  | "limit"
  | "name";

/** One server flag: what it takes, its default, which servers take it, its help line. */
export interface ServerFlagSpec {
  /** The long name, without `--`. */
  name: string;
  /** Its value's kind, which decides the check. */
  value: FlagValue;
  /** The placeholder in help (`DIR`, `N`, ...); none for a boolean. */
  meta?: string;
  /** The default, as the user would type it; none when absent means off or unset. */
  default?: string;
  /** May be given more than once. */
  multiple?: boolean;
  /** The servers that take it. */
  servers: readonly ServerKind[];
  /** One line of help. */
  help: string;
}

const BOTH: readonly ServerKind[] = ["stdio", "http"];
const HTTP: readonly ServerKind[] = ["http"];

/** Every server flag, in help order. */
export const SERVER_FLAGS: readonly ServerFlagSpec[] = [
  {
    name: "root",
    value: "path",
    meta: "DIR",
    multiple: true,
    servers: BOTH,
    help: "workspace root, repeatable (default: the directory you run from; /, $HOME and " +
      "above only as a literal absolute path)",
  },
  {
    name: "read-only-root",
    value: "path",
    meta: "DIR",
    multiple: true,
    servers: BOTH,
    help: "a root that refuses every write, even with --write; repeatable",
  },
  { name: "write", value: "boolean", servers: BOTH, help: "enable the write tools" },
  {
    name: "limit",
    value: "limit",
    meta: "name=N",
    multiple: true,
    servers: BOTH,
    help: "override a limit (see workspace_info), repeatable",
  },
  {
    name: "page-size",
    value: "count",
    meta: "N",
    default: "50",
    servers: BOTH,
    help: "tools per tools/list page",
  },
  {
    name: "host",
    value: "string",
    meta: "H",
    default: "127.0.0.1",
    servers: HTTP,
    help: "bind address; non-loopback needs a token; 0.0.0.0 or :: binds every interface",
  },
  {
    name: "port",
    value: "port",
    meta: "N",
    default: "3000",
    servers: HTTP,
    help: "port, 0..65535; 0 picks a free one (the ready line says which)",
  },
  {
    name: "endpoint",
    value: "string",
    meta: "P",
    default: "/mcp",
    servers: HTTP,
    help: "MCP endpoint path",
  },
  {
    name: "allowed-host",
    value: "string",
    meta: "H",
    multiple: true,
    servers: HTTP,
    help: "extra accepted Host name, repeatable; a non-loopback name needs a token",
  },
  {
    name: "allowed-origin",
    value: "string",
    meta: "O",
    multiple: true,
    servers: HTTP,
    help: "extra accepted Origin, exact scheme://host[:port], repeatable",
  },
  {
    name: "token-file",
    value: "path",
    meta: "F",
    servers: HTTP,
    help: `read-write bearer tokens, one a line (else ${SECRET_ENV.token}); each >= ` +
      `${MIN_TOKEN_CHARS} characters`,
  },
  {
    name: "read-token-file",
    value: "path",
    meta: "F",
    servers: HTTP,
    help: `read-only bearer tokens, one a line (else ${SECRET_ENV.readToken}); each >= ` +
      `${MIN_TOKEN_CHARS} characters`,
  },
  {
    name: "state-key-file",
    value: "path",
    meta: "F",
    servers: HTTP,
    help: `HMAC key for confirmation state (else ${SECRET_ENV.stateKey}, else random); >= ` +
      `${MIN_STATE_KEY_BYTES} bytes`,
  },
  {
    name: "pid-file",
    value: "path",
    meta: "F",
    servers: HTTP,
    help: "pid file (never inside the root); needs a loopback or wildcard --host",
  },
  {
    name: "shutdown-timeout",
    value: "seconds",
    meta: "S",
    default: "10",
    servers: HTTP,
    help: "seconds in-flight requests get after SIGINT/SIGTERM",
  },
  {
    name: "body-timeout",
    value: "positive-seconds",
    meta: "S",
    default: "30",
    servers: HTTP,
    help: "seconds a request body may take to arrive in full (408 after)",
  },
  {
    name: "unused-session",
    value: "positive-seconds",
    meta: "S",
    default: "60",
    servers: HTTP,
    help: "seconds a legacy session never used after initialize lives",
  },
  {
    name: "instance",
    value: "name",
    meta: "NAME",
    servers: HTTP,
    help: "this instance's tag behind a balancer, [a-z0-9-] (1-32): legacy session ids become " +
      "NAME.<random> and responses carry Wmcp-Instance: NAME (docs/deployment.md)",
  },
  {
    name: "max-buffered-body",
    value: "bytes",
    meta: "N",
    servers: HTTP,
    help: "bytes of request bodies read at once, all requests together (>= the request cap; " +
      "default twice it)",
  },
];

/**
 * The launcher's own flag of `serve stdio|http` (split off the server's arguments by
 * splitLauncherFlags in serve_launch.ts), declared for help and completions.
 */
export const LAUNCHER_FLAGS: Readonly<Record<string, FlagDecl>> = {
  sandbox: {
    kind: "choice",
    choices: SANDBOX_MODES,
    value: "MODE",
    help: "auto (default): bubblewrap when available, else say why not; required; off",
  },
  engine: {
    kind: "choice",
    choices: ENGINE_CHOICES,
    value: "MODE",
    help: "search_text's engine: auto (default): ripgrep in its own sandbox when bwrap and rg " +
      "are installed, else built-in (workspace_info says why); native (else refuse to start); " +
      "builtin",
  },
};

/** The flags every server answers without starting: help and version. */
const INFO_FLAGS = [
  { name: "help", short: "h", help: "show this help and exit" },
  { name: "version", short: "V", help: "print the version and exit" },
] as const;

/** The flags a server of this kind takes. */
export function flagsOf(kind: ServerKind): ServerFlagSpec[] {
  return SERVER_FLAGS.filter((f) => f.servers.includes(kind));
}

/** The server flags parsed and checked: numbers as numbers, the host normalised. */
export interface ServerFlags {
  /** The first --root or --read-only-root (relative paths address it); undefined when none. */
  root?: string;
  /** Every --root and --read-only-root, in command-line order; empty when none was given. */
  roots: RootSpec[];
  write: boolean;
  /** The --limit values as given (openWorkspaceFromFlags takes them). */
  limit: string[];
  /** The --limit values parsed. */
  limits: Partial<Limits>;
  pageSize: number;
  /** The bind address as Deno takes it (bindHost). */
  host: string;
  port: number;
  endpoint: string;
  allowedHosts: string[];
  allowedOrigins: string[];
  tokenFile?: string;
  readTokenFile?: string;
  stateKeyFile?: string;
  pidFile?: string;
  shutdownMs: number;
  bodyTimeoutMs: number;
  unusedSessionMs: number;
  maxBufferedBodyBytes?: number;
  /** The instance tag (--instance), checked by instanceNameProblem. */
  instance?: string;
}

/** The closest known name to `given` (names without `--`), by the CLI's one did-you-mean rule. */
export function suggestFlag(given: string, known: readonly string[]): string | undefined {
  return closest(given, known);
}

/** The file name of a server entry. */
function entryName(kind: ServerKind): string {
  return kind === "http" ? "serve_http.ts" : "serve_stdio.ts";
}

/**
 * How messages name this server: its entry file when that file is the program run directly
 * (`deno run ... serve_http.ts`), else the command the user typed (`wmcp serve http`).
 */
function serverName(kind: ServerKind): string {
  return globalThis.Deno?.mainModule.endsWith(`/${entryName(kind)}`)
    ? entryName(kind)
    : `${programName()} serve ${kind}`;
}

/**
 * The pointer a usage error of this server ends with when the entry runs directly; under the
 * CLI none (its main adds the one `see \`wmcp serve KIND --help\`` ending).
 */
function seeServerHelp(kind: ServerKind): string {
  return globalThis.Deno?.mainModule.endsWith(`/${entryName(kind)}`)
    ? `; see \`${entryName(kind)} --help\``
    : "";
}

const DECLS = new Map<ServerKind, CommandDecl>();

/**
 * One server's flags as a command declaration (src/cli/declare.ts), from SERVER_FLAGS: how argv
 * is scanned and parsed. Values keep their text; checkValue checks them by the table's kinds.
 */
export function serverDecl(kind: ServerKind): CommandDecl {
  let decl = DECLS.get(kind);
  if (decl === undefined) {
    const flags: Record<string, FlagDecl> = {};
    for (const f of flagsOf(kind)) {
      flags[f.name] = {
        kind: f.value === "boolean"
          ? "bool"
          : f.value === "path"
          ? (f.meta === "DIR" ? "dir" : "path")
          : f.value === "limit"
          ? "limit"
          : "string",
        help: f.help,
        value: f.meta,
        multiple: f.multiple,
      };
    }
    decl = { path: ["serve", kind], usage: ["[flags]"], about: "", flags, examples: [] };
    DECLS.set(kind, decl);
  }
  return decl;
}

/** Refuses the first flag the table does not know for this server, with a did-you-mean. */
function refuseUnknown(kind: ServerKind, args: string[]): void {
  const known = [...flagsOf(kind).map((f) => f.name), ...INFO_FLAGS.map((f) => f.name)];
  for (const t of flagTokens(serverDecl(kind), args)) {
    if (t.kind === "positional") {
      throw new UsageError(
        `${serverName(kind)} takes no positional argument, got ${JSON.stringify(t.value)}${
          seeServerHelp(kind)
        }`,
      );
    }
    if (t.kind !== "option" || known.includes(t.name)) continue;
    const shown = t.rawName;
    if (kind === "stdio" && SERVER_FLAGS.some((f) => f.name === t.name)) {
      throw new UsageError(
        `${shown} is a flag of the HTTP server; ${serverName(kind)} does not take it${
          seeServerHelp(kind)
        }`,
      );
    }
    const flags = t.rawName.startsWith("--") ? known.map((k) => `--${k}`) : [];
    throw new UsageError(`${unknownFlagMessage(shown, flags)}${seeServerHelp(kind)}`);
  }
}

/** A decimal number as typed: digits, optionally a fraction; nothing else (no hex, no exponent). */
function decimal(flag: string, text: string, what: string, fraction: boolean): number {
  const pattern = fraction ? /^\d+(\.\d+)?$/ : /^\d+$/;
  const n = Number(text);
  if (!pattern.test(text) || !Number.isFinite(n) || (!fraction && !Number.isSafeInteger(n))) {
    throw new UsageError(`--${flag} must be ${what}, not ${JSON.stringify(text)}`);
  }
  return n;
}

/** Checks one flag's value against its kind (the one place numbers are validated). */
function checkValue(spec: ServerFlagSpec, text: string): number | undefined {
  const n = spec.name;
  switch (spec.value) {
    case "port": {
      const port = decimal(n, text, "0..65535", false);
      if (port > 65535) {
        throw new UsageError(`--${n} must be 0..65535, not ${JSON.stringify(text)}`);
      }
      return port;
    }
    case "count":
    case "bytes": {
      const what = spec.value === "count" ? "a positive integer" : "a positive number of bytes";
      const v = decimal(n, text, what, false);
      if (v < 1) throw new UsageError(`--${n} must be ${what}, not ${JSON.stringify(text)}`);
      return v;
    }
    case "seconds":
      return decimal(n, text, "seconds >= 0", true) * 1000;
    case "positive-seconds": {
      const ms = decimal(n, text, "seconds > 0", true) * 1000;
      if (ms <= 0) throw new UsageError(`--${n} must be seconds > 0, not ${JSON.stringify(text)}`);
      return ms;
    }
    case "name": {
      const why = instanceNameProblem(text);
      if (why !== undefined) {
        throw new UsageError(`--${n} must be ${why}, not ${JSON.stringify(text)}`);
      }
      return undefined;
    }
    case "path":
      if (text.trim() === "" && n !== "root" && n !== "read-only-root") {
        throw new UsageError(`--${n} is empty: pass the file's path`);
      }
      return undefined;
    default:
      return undefined;
  }
}

/**
 * Parses and checks a server's arguments against the table: unknown flags (with a did-you-mean),
 * flags of the other server, positionals, missing values and bad numbers are UsageErrors naming
 * the flag. Secrets are checked by loadServerSecrets (they need read and env permissions).
 */
export async function parseServerFlags(kind: ServerKind, args: string[]): Promise<ServerFlags> {
  refuseUnknown(kind, args);
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = await parseCommand(serverDecl(kind), args));
  } catch (err) {
    // In the CLI's words (a flag missing its value says how to give one starting with '-').
    if (!(err instanceof UsageError)) throw err;
    throw new UsageError(err.message.replace(/\s*\n\s*/g, " "));
  }
  const num: Record<string, number | undefined> = {};
  const str = (name: string): string | undefined => {
    const v = values[name];
    return typeof v === "string" ? v : undefined;
  };
  const list = (name: string): string[] => {
    const v = values[name];
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
  };
  for (const spec of flagsOf(kind)) {
    const text = str(spec.name) ?? spec.default;
    if (text !== undefined) num[spec.name] = checkValue(spec, text);
  }
  const limit = list("limit");
  const endpoint = str("endpoint") ?? "/mcp";
  if (kind === "http" && !endpoint.startsWith("/")) {
    throw new UsageError(`--endpoint must start with /, not ${JSON.stringify(endpoint)}`);
  }
  const roots = rootsFromArgs(kind, args);
  return {
    root: roots[0]?.path,
    roots,
    write: values.write === true,
    limit,
    limits: parseLimitFlags(limit),
    pageSize: num["page-size"]!,
    host: bindHost(str("host") ?? "127.0.0.1"),
    port: num.port ?? 3000,
    endpoint,
    allowedHosts: list("allowed-host"),
    allowedOrigins: list("allowed-origin"),
    tokenFile: str("token-file"),
    readTokenFile: str("read-token-file"),
    stateKeyFile: str("state-key-file"),
    pidFile: str("pid-file"),
    shutdownMs: num["shutdown-timeout"] ?? 10_000,
    bodyTimeoutMs: num["body-timeout"] ?? 30_000,
    unusedSessionMs: num["unused-session"] ?? 60_000,
    maxBufferedBodyBytes: num["max-buffered-body"],
    instance: str("instance"),
  };
}

/** The version the servers and the CLI report. */
export const VERSION: string = denoConfig.version;

/** A server's help, generated from the table; `launcher` adds the launcher's usage and flags. */
export function serverHelp(kind: ServerKind, options: { launcher?: boolean } = {}): string {
  const rows: [string, string][] = [];
  if (options.launcher) {
    for (const [name, f] of Object.entries(LAUNCHER_FLAGS)) {
      rows.push([`--${name} ${f.value}`, f.help]);
    }
  }
  for (const f of flagsOf(kind)) {
    const def = f.default === undefined ? "" : ` (default ${f.default})`;
    rows.push([`--${f.name}${f.meta ? ` ${f.meta}` : ""}`, `${f.help}${def}`]);
  }
  for (const f of INFO_FLAGS) rows.push([`-${f.short}, --${f.name}`, f.help]);
  const width = Math.max(...rows.map(([l]) => l.length)) + 2;
  const title = kind === "http"
    ? "Streamable HTTP MCP server on one workspace directory"
    : "stdio MCP server on one workspace directory (stdout carries protocol messages only)";
  const prog = programName();
  const usage = options.launcher
    ? `${prog} serve ${kind} ${LAUNCHER_USAGE} [flags]`
    : `deno run PERMISSIONS ${entryName(kind)} [flags]`;
  const cmd = `${prog} serve ${kind}`;
  const examples = kind === "http"
    ? [
      `${cmd} --root ~/project --port 0`,
      `${cmd} --root ~/project --write --pid-file /run/user/1000/wmcp/pid`,
      `WMCP_TOKEN=$(cat ~/.wmcp-token) ${cmd} --host 0.0.0.0 --allowed-host box.lan`,
    ]
    : [
      `${cmd} --root ~/project`,
      `${cmd} --root ~/project --write --limit maxWriteBytes=1048576`,
    ];
  const exits = kind === "http"
    ? "0 stopped by a signal, 2 usage, 3 port in use, 4 another live server owns --pid-file"
    : "0 stdin closed, 2 usage";
  return [
    `${options.launcher ? cmd : entryName(kind)} ${VERSION}: ${title}`,
    "",
    "Usage:",
    `  ${usage}`,
    ...(options.launcher ? [] : [
      `  ${cmd} [flags]   (the launcher: computes the permissions from the flags)`,
    ]),
    "",
    "Flags:",
    ...rows.map(([l, r]) => `  ${l.padEnd(width)}${r}`),
    "",
    "Examples:",
    ...examples.map((e) => `  ${e}`),
    "",
    `Exit codes: ${exits}. Details: RUNTIME.md.`,
    "",
  ].join("\n");
}

/**
 * The roots a server's arguments name, in command-line order (decision 0064): each `--root DIR`
 * and `--read-only-root DIR` (`--flag=DIR` alike, nothing after `--`), the values as given.
 * Empty when neither flag is given (the server then serves the directory it runs from).
 */
export function rootsFromArgs(kind: ServerKind, args: readonly string[]): RootSpec[] {
  return rootsOf(serverDecl(kind), args);
}

/** Whether a --write as scanned turns the write tools on (`--write`, `--write=true`). */
export function writeAsked(value: string | boolean | undefined): boolean {
  return value === true || value === "true";
}

/** Whether the arguments ask for help or the version (-h/--help wins over -V/--version). */
export function infoRequest(kind: ServerKind, args: string[]): "help" | "version" | undefined {
  const tokens = flagTokens(serverDecl(kind), args);
  const names = new Set(tokens.flatMap((t) => (t.kind === "option" ? [t.name] : [])));
  return names.has("help") ? "help" : names.has("version") ? "version" : undefined;
}

/**
 * Answers -h/--help and -V/--version before anything else (other flags are not checked, nothing
 * starts): writes the help or the version to stdout and returns exit code 0, or undefined when
 * neither was asked for.
 */
export async function answerInfoFlags(
  kind: ServerKind,
  args: string[],
  options: { launcher?: boolean } = {},
): Promise<number | undefined> {
  const asked = infoRequest(kind, args);
  if (asked === undefined) return undefined;
  const text = asked === "help" ? serverHelp(kind, options) : `${VERSION}\n`;
  await writeText(streams().stdout, text);
  return 0;
}
