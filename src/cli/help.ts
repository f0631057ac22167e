/**
 * Help texts of every CLI command and subcommand, under the program name the user typed, and the
 * argument help of one operation or tool rendered from its JSON Schema.
 */
import denoConfig from "../../deno.json" with { type: "json" };
import { envIfGranted } from "../config.ts";
import { CONNECTION, DECLARED } from "./commands.ts";
import { type CommandDecl, type FlagDecl, flagTokens, renderHelp } from "./declare.ts";
import { shellQuote } from "./shell_quote.ts";
import { shownUrl } from "../client/shown_url.ts";

/** The version every `--version`/`-V` prints. */
export const VERSION: string = denoConfig.version;

/**
 * The name the user typed: WMCP_PROG when the launcher sets it (and the env grant allows reading
 * it), else `wmcp`.
 */
export function programName(): string {
  const p = envIfGranted("WMCP_PROG")?.trim();
  return p && /^[^\s`]{1,200}$/.test(p) ? p : "wmcp";
}

/** The commands of the CLI, for dispatch and did-you-mean. */
export const COMMANDS = [
  "op",
  "serve",
  "config",
  "server-info",
  "tools",
  "resources",
  "prompts",
  "ping",
  "auth",
  "completion",
  "help",
] as const;

/** The subcommands of each command that has them. */
export const SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  serve: ["stdio", "http", "stop"],
  config: ["print"],
  tools: ["list", "show", "call", "run"],
  resources: ["list", "templates", "read"],
  prompts: ["list", "get"],
  auth: ["login", "status", "logout"],
};

/** "see `wmcp op --help`": the last words of every usage error. */
export function seeHelp(path: readonly string[], prog: string = programName()): string {
  return `see \`${[prog, ...path].join(" ")} --help\``;
}

/** `wmcp --help`: the commands, the flags every command takes, examples. */
function programHelp(p: string): string {
  return `${p} ${VERSION}: typed, contained access to one workspace directory

Usage: ${p} COMMAND [SUBCOMMAND] [FLAGS]

Commands:
  op list | op NAME [key=value ...]   run one workspace operation locally (no server)
  serve stdio|http | serve stop       run the MCP server; stop one started with --pid-file
  config print                        print an MCP host's configuration snippet for wmcp
  server-info                         connect to an MCP server and describe it
  tools list|show|call|run            list, inspect and call an MCP server's tools
  resources list|templates|read       list and read an MCP server's resources
  prompts list|get                    list an MCP server's prompts and get one
  ping                                ping an MCP server
  auth login|status|logout            OAuth sign-in for HTTP MCP servers
  completion bash|zsh|fish            print a shell completion script for wmcp

Every command takes --help (-h) and --version (-V).

Examples:
  ${p} op list
  ${p} op read_file path=README.md endLine:=20
  ${p} op read_file --help
  ${p} serve http --root ~/project --port 8080
  ${p} tools call search_text --root ~/project query=TODO

Results go to stdout; errors are one JSON object on stderr. Exit code 2 is a usage error.
`;
}

/** The server launcher's own flags in a usage line. */
export const LAUNCHER_USAGE = "[--sandbox auto|required|off] [--engine auto|native|builtin]";

/** `wmcp serve --help`: the launcher and serve stop. */
function serveHelp(p: string): string {
  return `Usage:
  ${p} serve stdio|http ${LAUNCHER_USAGE} [server flags]
  ${p} serve stop --pid-file FILE [--timeout SECONDS]

See \`${p} serve stdio --help\`, \`${p} serve http --help\` and \`${p} serve stop --help\`.

Examples:
  ${p} serve stdio --root ~/project
  ${p} serve http --root ~/project --port 8080 --pid-file /tmp/wmcp.pid
  ${p} serve stop --pid-file /tmp/wmcp.pid
`;
}

/** `wmcp config --help`. */
function configHelp(p: string): string {
  return `Usage: ${p} config print --host HOST (--root DIR [--write] | --http URL) [--name NAME]

See \`${p} config print --help\`.

Example:
  ${p} config print --host claude-desktop --root ~/project
`;
}

/** `wmcp tools --help`: the four subcommands and the connection flags. */
function toolsHelp(p: string): string {
  return `Usage:
  ${p} tools list [--single-page] [--cursor C] [--max-pages N] [CONNECTION] [OUTPUT]
  ${p} tools show NAME [CONNECTION] [OUTPUT]
  ${p} tools call NAME [key=value | key:=json ...] [--arguments JSON | --arguments-file PATH |
                  --arguments-stdin] [--skip-local-validation] [TIME] [INTERACTION] [CONNECTION]
  ${p} tools run FILE|- [--keep-going] [TIME] [INTERACTION] [CONNECTION]

See \`${p} tools SUBCOMMAND --help\`; \`${p} tools call NAME --help\` shows NAME's arguments.

${CONNECTION}

Examples:
  ${p} tools list --root ~/project
  ${p} tools call read_file --root ~/project path=README.md
  ${p} tools list --endpoint http://127.0.0.1:8080/mcp --output jsonl
`;
}

/** `wmcp resources --help`: the three subcommands and the connection flags. */
function resourcesHelp(p: string): string {
  return `Usage:
  ${p} resources list [--single-page] [--cursor C] [--max-pages N] [CONNECTION] [OUTPUT]
  ${p} resources templates [--single-page] [--cursor C] [--max-pages N] [CONNECTION] [OUTPUT]
  ${p} resources read URI [TIME] [CONNECTION] [OUTPUT]

See \`${p} resources SUBCOMMAND --help\`.

${CONNECTION}

Examples:
  ${p} resources list --config mcp.json --server everything
  ${p} resources read demo://resource/static/document/features.md --config mcp.json --server everything
`;
}

/** `wmcp prompts --help`: the two subcommands and the connection flags. */
function promptsHelp(p: string): string {
  return `Usage:
  ${p} prompts list [--single-page] [--cursor C] [--max-pages N] [CONNECTION] [OUTPUT]
  ${p} prompts get NAME [key=value ...] [--arguments JSON | --arguments-file PATH |
                  --arguments-stdin] [--skip-local-validation] [TIME] [INTERACTION] [CONNECTION]

See \`${p} prompts SUBCOMMAND --help\`.

${CONNECTION}

Examples:
  ${p} prompts list --config mcp.json --server everything
  ${p} prompts get args-prompt city=Lisbon --config mcp.json --server everything
`;
}

/** `wmcp auth --help`: the three subcommands. */
function authHelp(p: string): string {
  return `Usage:
  ${p} auth login (--endpoint URL | --config FILE --server NAME) [--scope S] [--no-browser]
                 [--redirect-port N] [--auth-timeout S]
  ${p} auth status [--endpoint URL | --config FILE --server NAME] [--output json|pretty]
  ${p} auth logout (--endpoint URL | --config FILE --server NAME | --all)

OAuth sign-in for HTTP MCP servers; credentials are kept in ~/.config/wmcp.
See \`${p} auth SUBCOMMAND --help\`.

Examples:
  ${p} auth login --endpoint https://mcp.example.com/mcp
  ${p} auth status
  ${p} auth logout --all
`;
}

/** The overview helps (of the program and the commands with subcommands), by command path. */
const OVERVIEWS: Readonly<Record<string, (prog: string) => string>> = {
  "": programHelp,
  serve: serveHelp,
  config: configHelp,
  tools: toolsHelp,
  resources: resourcesHelp,
  prompts: promptsHelp,
  auth: authHelp,
};

/**
 * The help text of a command path (`[]` for the program), or undefined for an unknown path. With
 * `argv` (the command line the help was asked on), a client command's examples carry the
 * connection flags given there (connectionWords) instead of their own.
 */
export function helpText(
  path: readonly string[],
  prog: string = programName(),
  argv: readonly string[] = [],
): string | undefined {
  const key = path.join(" ");
  const declared = DECLARED.get(key);
  // Own keys only: `help constructor` is an unknown path, not Object.prototype's.
  if (declared === undefined) {
    return Object.hasOwn(OVERVIEWS, key) ? OVERVIEWS[key](prog) : undefined;
  }
  const connection = connectionWords(declared, argv);
  if (connection.length === 0) return renderHelp(declared, prog);
  const examples = declared.examples.map((e) => withConnection(declared, e, connection));
  return renderHelp({ ...declared, examples: [...new Set(examples)] }, prog);
}

/** A value the help shows in place of a URL it cannot show (not a URL at all). */
const URL_PLACEHOLDER = "URL";

/** A connection flag's value as an example shows it: one shell word, a URL redacted. */
function exampleValue(f: FlagDecl, value: string): string {
  if (f.kind !== "url") return shellQuote(value);
  // The URL as every client message shows it (no userinfo, each query value `***`): it may
  // carry a secret, which help never echoes.
  try {
    return shellQuote(shownUrl(new URL(value)));
  } catch {
    return URL_PLACEHOLDER;
  }
}

/**
 * The connection flags of argv by a client command's declaration (its flags of group
 * "connection": --endpoint, --config/--server, --root, --write, the OAuth flags...) as shell
 * words in the order given, for that command's help examples: pasted, an example talks to the
 * server the help was asked about. Values are shell-quoted; a URL is redacted as client messages
 * redact it. Flags after `--`, and a value flag without its value, are left out.
 */
export function connectionWords(decl: CommandDecl, argv: readonly string[]): string[] {
  const out: string[] = [];
  for (const t of flagTokens(decl, argv)) {
    if (t.kind === "option-terminator") break;
    if (t.kind !== "option") continue;
    const f = decl.flags[t.name];
    if (f === undefined || f.group !== "connection") continue;
    if (f.kind === "bool") {
      out.push(
        t.inlineValue && t.value !== undefined
          ? `--${t.name}=${shellQuote(t.value)}`
          : `--${t.name}`,
      );
      continue;
    }
    const flagLike = !t.inlineValue && t.value?.startsWith("-") === true && t.value !== "-";
    if (t.value === undefined || flagLike) continue;
    out.push(`--${t.name}`, exampleValue(f, t.value));
  }
  return out;
}

/**
 * An example command line with its own connection flags replaced by `connection`, where the
 * first of them was (at the end when it has none).
 */
function withConnection(decl: CommandDecl, example: string, connection: string[]): string {
  const words = example.split(" ");
  const drop = new Set<number>();
  let at: number | undefined;
  for (const t of flagTokens(decl, words)) {
    if (t.kind !== "option" || decl.flags[t.name]?.group !== "connection") continue;
    at ??= t.index;
    drop.add(t.index);
    if (decl.flags[t.name].kind !== "bool" && !t.inlineValue) drop.add(t.index + 1);
  }
  const kept = words.flatMap((w, i) => (i === at ? connection : drop.has(i) ? [] : [w]));
  return (at === undefined ? [...kept, ...connection] : kept).join(" ");
}

type Schema = Record<string, unknown>;

function typeOf(s: Schema): string {
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join("|");
  if (s.const !== undefined) return JSON.stringify(s.const);
  const alts = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (Array.isArray(alts)) return alts.map(typeOf).join("|");
  const t = Array.isArray(s.type) ? s.type.join("|") : typeof s.type === "string" ? s.type : "any";
  if (t === "array" && s.items && typeof s.items === "object") {
    return `array of ${typeOf(s.items as Schema)}`;
  }
  return t;
}

/**
 * The example argument of one schema key, as a shell word: the key and a default value come from
 * the schema (a server's, for `tools call NAME --help`), so each is shell-quoted.
 */
function placeholder(key: string, s: Schema): string {
  const k = shellQuote(key);
  if (s.default !== undefined) {
    return typeof s.default === "string"
      ? `${k}=${shellQuote(s.default)}`
      : `${k}:=${shellQuote(JSON.stringify(s.default))}`;
  }
  const t = typeOf(s);
  if (t === "string") return `${k}=${shellQuote(key.toUpperCase())}`;
  if (t === "integer" || t === "number") return `${k}:=1`;
  if (t === "boolean") return `${k}:=true`;
  if (t.startsWith("array")) return `${k}:='[...]'`;
  return `${k}:='...'`;
}

/** What to say about one operation or tool: its schema, annotations and how it is invoked. */
export interface SchemaHelp {
  /** The command line before the arguments, e.g. `wmcp op read_file`. */
  usage: string;
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  annotations?: Record<string, unknown>;
  /** True when the operation needs --write (wmcp operations only). */
  needsWrite?: boolean;
  /** Example command lines; one is derived from the schema when none is given. */
  examples?: string[];
  /**
   * Shell words the derived example puts after `usage`, before the arguments: the connection
   * flags `tools call NAME --help` was given (connectionWords).
   */
  flags?: readonly string[];
}

/** The argument help of one operation or tool, rendered from its JSON Schema. */
export function schemaHelp(h: SchemaHelp): string {
  const schema = (h.inputSchema ?? {}) as Schema;
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : []);
  const keys = Object.keys(props);
  const lines: string[] = [`Usage: ${h.usage} [key=value | key:=json ...] [--arguments JSON]`, ""];
  lines.push(`${h.name}${h.title ? ` (${h.title})` : ""}`);
  if (h.description) lines.push(`  ${h.description.replace(/\n/g, "\n  ")}`);
  lines.push("");
  if (keys.length === 0) {
    lines.push("Arguments: none");
  } else {
    lines.push("Arguments:");
    const w = Math.max(...keys.map((k) => k.length));
    const types = keys.map((k) => typeOf(props[k]));
    const tw = Math.max(...types.map((t) => t.length));
    keys.forEach((k, i) => {
      const s = props[k];
      const need = required.has(k)
        ? "required"
        : s.default !== undefined
        ? `default ${JSON.stringify(s.default)}`
        : "optional";
      const desc = typeof s.description === "string" ? `  ${s.description}` : "";
      lines.push(`  ${k.padEnd(w)}  ${types[i].padEnd(tw)}  ${need}${desc}`);
    });
    if (schema.additionalProperties === false) lines.push("  (no other keys)");
  }
  const a = h.annotations ?? {};
  const notes = [
    a.readOnlyHint === true ? "read-only" : a.readOnlyHint === false ? "writes" : undefined,
    a.destructiveHint === true ? "destructive" : undefined,
    a.idempotentHint === true ? "idempotent" : undefined,
    a.openWorldHint === true ? "open world" : undefined,
    h.needsWrite ? "needs --write" : undefined,
  ].filter((n) => n !== undefined);
  if (notes.length > 0) lines.push("", `Annotations: ${notes.join(", ")}`);
  const examples = h.examples ?? [
    [
      h.usage,
      ...(h.flags ?? []),
      ...keys.filter((k) => required.has(k)).map((k) => placeholder(k, props[k])),
    ].join(" "),
  ];
  lines.push(
    "",
    examples.length === 1 ? "Example:" : "Examples:",
    ...examples.map((e) => `  ${e}`),
  );
  return lines.join("\n") + "\n";
}
