/**
 * `config print --host H --root DIR [--write] [--http URL] [--name NAME]`: prints the snippet an
 * MCP host's own configuration format expects for serving a directory (or several: `--root` and
 * `--read-only-root` repeated, in order) with wmcp (stdout: the
 * JSON to merge; stderr: which file it goes into and notes). The stdio command is this
 * checkout's serve launcher run by an absolute Deno binary, with an absolute, existing root and
 * the launcher's scoped permissions, so it serves exactly that directory from any start
 * directory and any PATH. Formats and sources: docs/decisions/0019-host-setup-and-root-refusal.md.
 */
import { errLine } from "../std_streams.ts";
import { CONFIG_PRINT, HOSTS } from "./commands.ts";
import { parseCommand, rootsOf } from "./declare.ts";
import { serverPermissions } from "./server_permissions.ts";
import { envIfGranted, UsageError } from "../config.ts";
import { probePaths } from "./path_probe.ts";
import { denoPath, moduleArg, projectConfigFlag } from "../launch/deno.ts";
import { isNpmPackage, projectFile } from "../launch/project.ts";
import denoConfig from "../../deno.json" with { type: "json" };
import { shellQuote } from "./shell_quote.ts";
import { cacheEntryModules } from "../launch/warm.ts";
import type { RootSpec } from "../workspace/roots.ts";
import {
  broadRootNote,
  checkedRoots,
  type EntryRoots,
  rootArgs,
  servedNote,
} from "./host_roots.ts";

/** The hosts `config print` knows the configuration format of. */
export { HOSTS };

/** One of HOSTS. */
export type HostName = (typeof HOSTS)[number];

/**
 * The npm package wmcp is published as (scripts/npm_pack.ts builds it; npm/wmcp.cjs is its
 * command): a scope wmcp can own, since the unscoped name `wmcp` belongs to someone else.
 */
export const NPM_NAME = "@wmcp/wmcp";

/** What an npx entry runs: the package at exactly this version. */
export const NPM_SPEC = `${NPM_NAME}@${denoConfig.version}`;

/** How a host entry starts wmcp: this project's serve.ts run by Deno, or the npm package by npx. */
export const VIA = ["deno", "npx"] as const;

/** The stdio-to-HTTP bridge Claude Desktop runs for a remote server (its config file is stdio only). */
export const MCP_REMOTE = "mcp-remote@0.15.1";

/** The environment variable the server reads its bearer token from, and the snippets send. */
export const TOKEN_ENV = "WMCP_TOKEN";

/** The name a snippet gives the server unless --name says otherwise. */
export const DEFAULT_SERVER_NAME = "wmcp";

/** The launcher's own entry (what `cli.ts serve` runs, without the CLI's module graph; decision 0070). */
const SERVE_URL = projectFile("serve.ts");

/** The launcher's permission flags (server_flags.ts; the serve:stdio task is tested to match). */
export function launcherFlags(): string[] {
  return serverPermissions("stdio", [], { via: "launcher" });
}

/** A stdio server entry: the program and its arguments (and environment, where needed). */
export interface StdioEntry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** What a snippet is built from (all paths absolute). */
export interface SnippetInput {
  /** Server name (the key under the host's servers object). */
  name: string;
  /** The stdio server's command, or the bridge's for claude-desktop with http. */
  stdio?: StdioEntry;
  /** The remote server's URL (--http). */
  http?: URL;
  /** The remote server needs a bearer token (its URL is not loopback): send one per host. */
  token?: boolean;
}

/** A printed snippet: the JSON, the file it goes into, and notes for stderr. */
export interface HostSnippet {
  snippet: Record<string, unknown>;
  file: string;
  notes: string[];
}

/**
 * The stdio entry that runs this checkout's launcher on the roots (read-only unless write):
 * serve.ts, the launcher alone, since a host starts it for every session and waits for its first
 * answer (`cli.ts serve stdio`, the same launcher, stays valid in existing configurations).
 */
export function stdioEntry(options: { deno: string; write: boolean } & EntryRoots): StdioEntry {
  const serve = moduleArg(SERVE_URL);
  // Under node_modules (the npm package) Deno finds no deno.json by itself: name it.
  const config = isNpmPackage() ? [projectConfigFlag() ?? []].flat() : [];
  const args = ["run", ...launcherFlags(), ...config, serve, "stdio", "--sandbox", "auto"];
  args.push(...rootArgs(options));
  if (options.write) args.push("--write");
  return { command: options.deno, args };
}

/**
 * The stdio entry that runs the npm package through npx (npx absolute; PATH so its `env node`
 * works): `npx -y @wmcp/wmcp@VERSION serve stdio --sandbox auto --root DIR`, no checkout needed.
 */
export function npxEntry(
  options: { npx: { path: string; pathEnv?: string }; write: boolean } & EntryRoots,
): StdioEntry {
  const args = ["-y", NPM_SPEC, "serve", "stdio", "--sandbox", "auto", ...rootArgs(options)];
  if (options.write) args.push("--write");
  const entry: StdioEntry = { command: options.npx.path, args };
  if (options.npx.pathEnv !== undefined) entry.env = { PATH: options.npx.pathEnv };
  return entry;
}

/** The variable a Claude Desktop bridge entry holds the whole Authorization value in. */
export const AUTH_HEADER_ENV = "AUTH_HEADER";

/**
 * The mcp-remote bridge entry for Claude Desktop (npx absolute; PATH so its `env node` works).
 * With a token, mcp-remote sends `Authorization:${AUTH_HEADER}`, expanding the variable from the
 * entry's env (Claude Desktop expands nothing itself), which holds `Bearer <token>`: mcp-remote's
 * advice, since some hosts split an argument at a space (`Authorization: Bearer ...` would break).
 */
export function bridgeEntry(
  url: URL,
  options: { npx: { path: string; pathEnv?: string }; token?: boolean },
): StdioEntry {
  const args = ["-y", MCP_REMOTE, url.href];
  // mcp-remote 0.15.1 allows plain http only to exactly `localhost` or `127.0.0.1` unless told.
  if (url.protocol === "http:" && url.hostname !== "localhost" && url.hostname !== "127.0.0.1") {
    args.push("--allow-http");
  }
  const env: Record<string, string> = {};
  if (options.npx.pathEnv !== undefined) env.PATH = options.npx.pathEnv;
  if (options.token) {
    args.push("--header", `Authorization:\${${AUTH_HEADER_ENV}}`);
    env[AUTH_HEADER_ENV] = `Bearer ${TOKEN_PLACEHOLDER}`;
  }
  const entry: StdioEntry = { command: options.npx.path, args };
  if (Object.keys(env).length > 0) entry.env = env;
  return entry;
}

/** What a snippet holds where the user pastes the token (a host that expands nothing). */
export const TOKEN_PLACEHOLDER = "<paste the bearer token here>";

/** Whether the server on this URL host is loopback (serve_http then needs no token). */
export function isLoopbackUrlHost(host: string): boolean {
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** One host's snippet from the input; `need` is its stdio entry (an error when there is none). */
type SnippetBuilder = (input: SnippetInput, need: () => StdioEntry) => HostSnippet;

/** Claude Desktop: stdio only (an HTTP server through the mcp-remote bridge). */
const claudeDesktop: SnippetBuilder = (input, need) => {
  const { name, http } = input;
  const e = need();
  const entry: Record<string, unknown> = { command: e.command, args: e.args };
  if (e.env) entry.env = e.env;
  const notes = [
    "put this into claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/; " +
    "Settings > Developer > Edit Config opens it), merging the " +
    'entry into its "mcpServers" object; then quit and restart Claude Desktop',
  ];
  if (http) {
    notes.push(
      "Claude Desktop's config file takes only stdio servers: this entry runs the mcp-remote " +
        `bridge (${MCP_REMOTE}, from npm through npx) over stdio, which forwards to ${http.href}`,
    );
  }
  return { snippet: { mcpServers: { [name]: entry } }, file: "claude_desktop_config.json", notes };
};

/** Claude Code's .mcp.json (it expands ${VAR} in the url and headers). */
const claudeCode: SnippetBuilder = (input, need) => {
  const { name, http } = input;
  const entry = http
    ? { type: "http", url: http.href, ...bearer(input, `\${${TOKEN_ENV}}`) }
    : { type: "stdio", command: need().command, args: need().args, env: {} };
  return {
    snippet: { mcpServers: { [name]: entry } },
    file: ".mcp.json",
    notes: [
      'put this into .mcp.json at the project\'s root (project scope), merging the entry into its "mcpServers" object; ' +
      "or add it with: claude mcp add-json " + shellQuote(name) + " " +
      shellQuote(JSON.stringify(entry)) + " (add --scope user for every project)",
    ],
  };
};

/** VS Code's mcp.json (it prompts for an ${input:ID} declared in "inputs", stored encrypted). */
const vscode: SnippetBuilder = (input, need) => {
  const { name, http } = input;
  const inputId = `${name}-token`;
  const entry = http
    ? { type: "http", url: http.href, ...bearer(input, `\${input:${inputId}}`) }
    : { type: "stdio", command: need().command, args: need().args };
  const inputs = http && input.token
    ? {
      inputs: [{
        type: "promptString",
        id: inputId,
        description: `Bearer token of the wmcp server ${name}`,
        password: true,
      }],
    }
    : {};
  return {
    snippet: { servers: { [name]: entry }, ...inputs },
    file: ".vscode/mcp.json",
    notes: [
      'put this into .vscode/mcp.json in the workspace (or the user mcp.json: "MCP: Open User ' +
      'Configuration"), merging the entry into its "servers" object',
    ],
  };
};

/** Cursor's mcp.json (it expands ${env:NAME} in the url and headers). */
const cursor: SnippetBuilder = (input, need) => {
  const { name, http } = input;
  const entry = http
    ? { url: http.href, ...bearer(input, `\${env:${TOKEN_ENV}}`) }
    : { command: need().command, args: need().args };
  return {
    snippet: { mcpServers: { [name]: entry } },
    file: "~/.cursor/mcp.json",
    notes: [
      "put this into ~/.cursor/mcp.json (every project) or .cursor/mcp.json in the project, " +
      'merging the entry into its "mcpServers" object',
    ],
  };
};

/** The mcpServers form most hosts read (${VAR}, as Claude Code and this project's client expand it). */
const generic: SnippetBuilder = (input, need) => {
  const { name, http } = input;
  const entry = http
    ? { type: "http", url: http.href, ...bearer(input, `\${${TOKEN_ENV}}`) }
    : { command: need().command, args: need().args };
  return {
    snippet: { mcpServers: { [name]: entry } },
    file: "mcpServers",
    notes: [
      "put this into your host's MCP configuration file, merging the entry into its " +
      '"mcpServers" object (the form most hosts read; `wmcp tools list --config FILE --server ' +
      `${name}\` reads it too)`,
    ],
  };
};

/** Each host's snippet builder. */
const SNIPPETS: Readonly<Record<HostName, SnippetBuilder>> = {
  "claude-desktop": claudeDesktop,
  "claude-code": claudeCode,
  vscode,
  cursor,
  generic,
};

/** Builds one host's snippet in its documented format. */
export function hostSnippet(host: HostName, input: SnippetInput): HostSnippet {
  const need = (): StdioEntry => {
    if (input.stdio === undefined) throw new Error(`${host}: a stdio entry is needed`);
    return input.stdio;
  };
  return SNIPPETS[host](input, need);
}

/** The headers member that sends the token, spelled the host's way, when one is needed. */
function bearer(input: SnippetInput, token: string): { headers?: Record<string, string> } {
  return input.token ? { headers: { Authorization: `Bearer ${token}` } } : {};
}

function pathDirs(): string[] {
  return (envIfGranted("PATH") ?? "").split(":").filter((d) => d.startsWith("/"));
}

/**
 * The Deno binary for the snippet: the one running now (so the version is the one that printed
 * it), by a name on PATH that resolves to it when there is one (a stable name such as
 * /usr/local/bin/deno rather than the cache it links to), else by its own path. Absolute,
 * because a host starts servers with its own PATH.
 */
async function chooseDeno(): Promise<{ path: string; notes: string[] }> {
  const exec = denoPath();
  const candidates = pathDirs().map((d) => `${d}/deno`);
  const facts = await probePaths([exec, ...candidates]);
  const execReal = facts?.[0]?.real ?? exec;
  const onPath = facts?.slice(1).find((f) => f.kind === "file" && f.real === execReal);
  const path = onPath?.path ?? exec;
  const notes: string[] = [];
  if (path.includes("/_npx/")) {
    notes.push(
      `the command is the Deno binary that printed this, ${path}, which lives in npm's npx ` +
        "cache: if that cache is cleared the host cannot start the server; print the snippet " +
        "again then (or install Deno and print it with that one)",
    );
  }
  return { path, notes };
}

/** npx by absolute path, with a PATH for the bridge (npx is a `#!/usr/bin/env node` script). */
async function chooseNpx(why: string): Promise<
  { entry: { path: string; pathEnv?: string }; notes: string[] }
> {
  const candidates = pathDirs().map((d) => `${d}/npx`);
  const facts = await probePaths(candidates);
  const found = facts?.find((f) => f.kind === "file");
  if (found === undefined) {
    return {
      entry: { path: "npx" },
      notes: [
        `npx was not found on PATH (${why}): the host needs Node.js and npm`,
      ],
    };
  }
  const dir = found.path.slice(0, found.path.lastIndexOf("/"));
  const dirs = [dir, "/usr/local/bin", "/usr/bin", "/bin"].filter((d, i, a) => a.indexOf(d) === i);
  return { entry: { path: found.path, pathEnv: dirs.join(":") }, notes: [] };
}

function parseHttp(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--http takes an http:// or https:// URL, not ${JSON.stringify(value)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--http takes an http:// or https:// URL, not ${JSON.stringify(value)}`);
  }
  if (url.port === "0") {
    throw new UsageError(
      "--http needs the server's real URL: port 0 only asks the server to pick one (its ready line says which)",
    );
  }
  return url;
}

/** What `--token-file` names in the printed start line: the file the user creates. */
export const TOKEN_FILE_PLACEHOLDER = "TOKEN_FILE";

/**
 * The command line that starts the HTTP server the snippet points at, on the roots: `--host` the
 * URL's host (an IPv6 literal unbracketed, as the launcher and the server take it), and
 * `--token-file` when the host is not loopback (the server refuses to start without a token).
 */
function httpStartLine(
  start: { deno: string } | { npx: string },
  options: { url: URL; roots: readonly RootSpec[]; write: boolean; token: boolean },
): string {
  const { url, write } = options;
  const serve = moduleArg(SERVE_URL);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const config = isNpmPackage() ? [projectConfigFlag() ?? []].flat() : [];
  const roots = rootArgs({ roots: options.roots });
  const args = "npx" in start
    ? [start.npx, "-y", NPM_SPEC, "serve", "http", ...roots]
    : [start.deno, "run", ...launcherFlags(), ...config, serve, "http", ...roots];
  if (host !== "127.0.0.1") args.push("--host", host);
  args.push("--port", port);
  if (url.pathname !== "/mcp") args.push("--endpoint", url.pathname);
  if (write) args.push("--write");
  if (options.token) args.push("--token-file", TOKEN_FILE_PLACEHOLDER);
  return args.map(shellQuote).join(" ");
}

/** Where the token goes for this host's snippet (a non-loopback server requires one). */
function tokenNote(host: HostName, name: string): string {
  const first = `${HTTP_TOKEN_INTRO}`;
  switch (host) {
    case "claude-desktop":
      return `${first}: replace ${JSON.stringify(TOKEN_PLACEHOLDER)} in the entry's env ` +
        `${AUTH_HEADER_ENV} with the token (keep "Bearer "); mcp-remote sends ` +
        `Authorization:\${${AUTH_HEADER_ENV}}`;
    case "claude-code":
      return `${first}: set ${TOKEN_ENV} to the token in the environment Claude Code starts ` +
        `in; it expands \${${TOKEN_ENV}} in the entry's headers`;
    case "vscode":
      return `${first}: VS Code asks for it (input ${name}-token) when it starts the server`;
    case "cursor":
      return `${first}: set ${TOKEN_ENV} to the token in the environment Cursor starts in; it ` +
        `expands \${env:${TOKEN_ENV}} in the entry's headers`;
    case "generic":
      return `${first}: the entry's headers send Bearer \${${TOKEN_ENV}}; set ${TOKEN_ENV} ` +
        "where your host expands it (this project's client does), or write the token in";
  }
}

const HTTP_TOKEN_INTRO =
  "the server is not on loopback, so it requires a bearer token (--token-file or " + TOKEN_ENV +
  ")";

/** What `config print` was asked for, its flags checked (every bad one a UsageError). */
interface PrintRequest {
  host: HostName;
  name: string;
  http?: URL;
  /** The --root and --read-only-root values as given, in order (checked by checkedRoots). */
  roots: RootSpec[];
  write: boolean;
  /** How the entry starts wmcp (VIA; the flag's choices are checked by its declaration). */
  via: string;
}

/** Parses and checks `config print`'s flags, in the order their errors are reported. */
async function printRequest(argv: string[]): Promise<PrintRequest> {
  const { values } = await parseCommand(CONFIG_PRINT, argv);
  const roots = rootsOf(CONFIG_PRINT, argv);
  const host = values.host;
  if (host === undefined) throw new UsageError(`config print needs --host ${HOSTS.join("|")}`);
  const name = values.name ?? DEFAULT_SERVER_NAME;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
    throw new UsageError("--name takes 1 to 64 letters, digits, '-' or '_'");
  }
  const http = values.http === undefined ? undefined : parseHttp(values.http);
  if (http === undefined && roots.length === 0) {
    throw new UsageError("config print needs --root DIR (the directory to serve) or --http URL");
  }
  const write = values.write === true;
  if (write && roots.length === 0) {
    throw new UsageError(
      "--write with --http needs --root: it applies to the server config print says how to " +
        "start; a running server's write tools are set by its own --write",
    );
  }
  const via = values.via ?? (isNpmPackage() ? "npx" : "deno");
  return { host: host as HostName, name, http, roots, write, via };
}

/** A stdio server's snippet input (Deno running serve.ts, or npx running the package). */
async function stdioInput(
  req: PrintRequest,
  roots: readonly RootSpec[],
  notes: string[],
): Promise<SnippetInput> {
  const { name, write } = req;
  let input: SnippetInput;
  if (req.via === "npx") {
    const npx = await chooseNpx("the entry runs wmcp's npm package through npx");
    notes.push(...npx.notes);
    input = { name, stdio: npxEntry({ npx: npx.entry, roots, write }) };
  } else {
    const deno = await chooseDeno();
    notes.push(...deno.notes);
    input = { name, stdio: stdioEntry({ deno: deno.path, roots, write }) };
  }
  notes.push(servedNote(roots, write));
  return input;
}

/**
 * A running HTTP server's snippet input (Claude Desktop's through the bridge), with the token
 * note and, given roots, how to start that server.
 */
async function httpInput(
  req: PrintRequest,
  http: URL,
  roots: readonly RootSpec[],
  notes: string[],
): Promise<SnippetInput> {
  const { host, name, write } = req;
  const token = !isLoopbackUrlHost(http.hostname);
  const input: SnippetInput = { name, http, token };
  if (host === "claude-desktop") {
    const npx = await chooseNpx("the host needs it for the mcp-remote bridge");
    notes.push(...npx.notes);
    input.stdio = bridgeEntry(http, { npx: npx.entry, token });
  }
  if (token) notes.push(tokenNote(host, name));
  if (roots.length > 0 && http.protocol === "http:") {
    const start = req.via === "npx"
      ? { npx: (await chooseNpx("the start line runs it")).entry.path }
      : { deno: (await chooseDeno()).path };
    notes.push(
      `start the server with: ${httpStartLine(start, { url: http, roots, write, token })}`,
    );
    if (token) {
      notes.push(
        `${TOKEN_FILE_PLACEHOLDER} is a file you create holding the token (one line, at least ` +
          `16 characters, e.g. \`openssl rand -hex 32 > ${TOKEN_FILE_PLACEHOLDER}\`); or drop ` +
          `--token-file and set ${TOKEN_ENV} to the token`,
      );
    }
  } else if (roots.length > 0) {
    notes.push("wmcp serves plain HTTP: put a TLS-terminating proxy in front for an https URL");
  }
  return input;
}

/**
 * Runs `config print ARGS` (argv after `config print`): writes the snippet to stdout and notes
 * to stderr. Returns 0; every bad flag or root is a UsageError (exit 2).
 */
export async function configPrint(
  argv: string[],
  out: (text: string) => Promise<void>,
): Promise<number> {
  const req = await printRequest(argv);
  const notes: string[] = [];
  const roots = await checkedRoots(req.roots);
  for (const r of roots) {
    const broad = await broadRootNote(r);
    if (broad !== undefined) notes.push(broad);
  }
  const input = req.http === undefined
    ? await stdioInput(req, roots, notes)
    : await httpInput(req, req.http, roots, notes);
  // The entry starts this checkout's server in the sandbox, where Deno's cache is read-only: its
  // modules are transpiled here, once, instead of on every start (src/launch/warm.ts).
  if (roots.length > 0 && req.via !== "npx" && !(await cacheEntryModules())) {
    notes.push(
      "the server's modules could not be cached ahead (deno cache failed): each sandboxed start " +
        "transpiles them again; run `deno task -q install` or this command once more",
    );
  }
  const printed = hostSnippet(req.host, input);
  await out(JSON.stringify(printed.snippet, null, 2) + "\n");
  for (const n of [...printed.notes, ...notes]) errLine(`wmcp: ${n}`);
  return 0;
}
