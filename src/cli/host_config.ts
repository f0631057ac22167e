/**
 * `config print --host H --root DIR [--write] [--http URL] [--name NAME]`: prints the snippet an
 * MCP host's own configuration format expects for serving one directory with wmcp (stdout: the
 * JSON to merge; stderr: which file it goes into and notes). The stdio command is this
 * checkout's serve launcher run by an absolute Deno binary, with an absolute, existing root and
 * the launcher's scoped permissions, so it serves exactly that directory from any start
 * directory and any PATH. Formats and sources: docs/decisions/0019-host-setup-and-root-refusal.md.
 */
import { parseArgs } from "node:util";
import denoConfig from "../../deno.json" with { type: "json" };
import { resolveFromInvocation, UsageError } from "../config.ts";
import { probePaths } from "./path_probe.ts";

/** The hosts `config print` knows the configuration format of. */
export const HOSTS = ["claude-desktop", "claude-code", "vscode", "cursor", "generic"] as const;

/** One of HOSTS. */
export type HostName = (typeof HOSTS)[number];

/** The stdio-to-HTTP bridge Claude Desktop runs for a remote server (its config file is stdio only). */
export const MCP_REMOTE = "mcp-remote@0.15.1";

/** The name a snippet gives the server unless --name says otherwise. */
export const DEFAULT_SERVER_NAME = "wmcp";

const CLI_URL = new URL("../../cli.ts", import.meta.url);

/** The launcher's permission flags, exactly as the serve:stdio task in deno.json grants them. */
export function launcherFlags(): string[] {
  const tokens = denoConfig.tasks["serve:stdio"].split(/\s+/);
  const run = tokens.indexOf("run");
  const cli = tokens.indexOf("cli.ts");
  if (
    tokens[0] !== "deno" || run !== 1 || cli < run ||
    tokens.slice(cli + 1).join(" ") !== "serve stdio"
  ) {
    throw new Error("deno.json's serve:stdio task is not `deno run FLAGS cli.ts serve stdio`");
  }
  return tokens.slice(run + 1, cli);
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
}

/** A printed snippet: the JSON, the file it goes into, and notes for stderr. */
export interface HostSnippet {
  snippet: Record<string, unknown>;
  file: string;
  notes: string[];
}

/** The stdio entry that runs this checkout's launcher on root (read-only unless write). */
export function stdioEntry(options: { deno: string; root: string; write: boolean }): StdioEntry {
  const cli = CLI_URL.protocol === "file:" ? decodeURIComponent(CLI_URL.pathname) : CLI_URL.href;
  const args = ["run", ...launcherFlags(), cli, "serve", "stdio", "--sandbox", "auto"];
  args.push("--root", options.root);
  if (options.write) args.push("--write");
  return { command: options.deno, args };
}

/** The mcp-remote bridge entry for Claude Desktop (npx absolute; PATH so its `env node` works). */
export function bridgeEntry(url: URL, npx: { path: string; pathEnv?: string }): StdioEntry {
  const args = ["-y", MCP_REMOTE, url.href];
  // mcp-remote refuses plain http to anything but localhost unless told.
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) args.push("--allow-http");
  const entry: StdioEntry = { command: npx.path, args };
  if (npx.pathEnv !== undefined) entry.env = { PATH: npx.pathEnv };
  return entry;
}

function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** POSIX shell single-quoting. */
function shellQuote(s: string): string {
  return /^[A-Za-z0-9_\/.,:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Builds one host's snippet in its documented format. */
export function hostSnippet(host: HostName, input: SnippetInput): HostSnippet {
  const { name, stdio, http } = input;
  const need = (): StdioEntry => {
    if (stdio === undefined) throw new Error(`${host}: a stdio entry is needed`);
    return stdio;
  };
  switch (host) {
    case "claude-desktop": {
      const e = need();
      const entry: Record<string, unknown> = { command: e.command, args: e.args };
      if (e.env) entry.env = e.env;
      const notes = [
        "put this into claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, " +
        "Windows: %APPDATA%\\Claude\\; Settings > Developer > Edit Config opens it), merging the " +
        'entry into its "mcpServers" object; then quit and restart Claude Desktop',
      ];
      if (http) {
        notes.push(
          "Claude Desktop's config file takes only stdio servers: this entry runs the mcp-remote " +
            `bridge (${MCP_REMOTE}, from npm through npx) over stdio, which forwards to ${http.href}`,
        );
      }
      return {
        snippet: { mcpServers: { [name]: entry } },
        file: "claude_desktop_config.json",
        notes,
      };
    }
    case "claude-code": {
      const entry = http
        ? { type: "http", url: http.href }
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
    }
    case "vscode": {
      const entry = http
        ? { type: "http", url: http.href }
        : { type: "stdio", command: need().command, args: need().args };
      return {
        snippet: { servers: { [name]: entry } },
        file: ".vscode/mcp.json",
        notes: [
          'put this into .vscode/mcp.json in the workspace (or the user mcp.json: "MCP: Open User ' +
          'Configuration"), merging the entry into its "servers" object',
        ],
      };
    }
    case "cursor": {
      const entry = http ? { url: http.href } : { command: need().command, args: need().args };
      return {
        snippet: { mcpServers: { [name]: entry } },
        file: "~/.cursor/mcp.json",
        notes: [
          "put this into ~/.cursor/mcp.json (every project) or .cursor/mcp.json in the project, " +
          'merging the entry into its "mcpServers" object',
        ],
      };
    }
    case "generic": {
      const entry = http
        ? { type: "http", url: http.href }
        : { command: need().command, args: need().args };
      return {
        snippet: { mcpServers: { [name]: entry } },
        file: "mcpServers",
        notes: [
          "put this into your host's MCP configuration file, merging the entry into its " +
          '"mcpServers" object (the form most hosts read; `cli tools list --config FILE --server ' +
          `${name}\` reads it too)`,
        ],
      };
    }
  }
}

function envIfGranted(name: string): string | undefined {
  if (Deno.permissions.querySync({ name: "env", variable: name }).state !== "granted") {
    return undefined;
  }
  return Deno.env.get(name);
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
  const exec = Deno.execPath();
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
async function chooseNpx(): Promise<
  { entry: { path: string; pathEnv?: string }; notes: string[] }
> {
  const candidates = pathDirs().map((d) => `${d}/npx`);
  const facts = await probePaths(candidates);
  const found = facts?.find((f) => f.kind === "file");
  if (found === undefined) {
    return {
      entry: { path: "npx" },
      notes: [
        "npx was not found on PATH: the host needs Node.js and npm for the mcp-remote bridge",
      ],
    };
  }
  const dir = found.path.slice(0, found.path.lastIndexOf("/"));
  const dirs = [dir, "/usr/local/bin", "/usr/bin", "/bin"].filter((d, i, a) => a.indexOf(d) === i);
  return { entry: { path: found.path, pathEnv: dirs.join(":") }, notes: [] };
}

/** The root: absolute (relative to the invocation directory), links resolved, an existing directory. */
async function checkedRoot(given: string): Promise<string> {
  const abs = resolveFromInvocation(given);
  const [facts] = (await probePaths([abs])) ?? [inProcessFacts(abs)];
  if (facts.real === undefined) {
    throw new UsageError(`--root ${given}: cannot use ${abs}: ${facts.error ?? "unknown error"}`);
  }
  if (facts.kind !== "directory") {
    throw new UsageError(`--root ${given}: ${facts.real} is not a directory`);
  }
  return facts.real;
}

function inProcessFacts(path: string): { real?: string; kind?: string; error?: string } {
  try {
    return {
      real: Deno.realPathSync(path),
      kind: Deno.statSync(path).isDirectory ? "directory" : "file",
    };
  } catch (err) {
    return { error: (err as Error).message };
  }
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

/** The command line that starts the HTTP server the snippet points at, on root. */
function httpStartLine(deno: string, url: URL, root: string, write: boolean): string {
  const cli = CLI_URL.protocol === "file:" ? decodeURIComponent(CLI_URL.pathname) : CLI_URL.href;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const args = [deno, "run", ...launcherFlags(), cli, "serve", "http", "--root", root];
  if (host !== "127.0.0.1") args.push("--host", host);
  args.push("--port", port);
  if (url.pathname !== "/mcp") args.push("--endpoint", url.pathname);
  if (write) args.push("--write");
  return args.map(shellQuote).join(" ");
}

/**
 * Runs `config print ARGS` (argv after `config print`): writes the snippet to stdout and notes
 * to stderr. Returns 0; every bad flag or root is a UsageError (exit 2).
 */
export async function configPrint(
  argv: string[],
  out: (text: string) => Promise<void>,
): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        host: { type: "string" },
        root: { type: "string" },
        write: { type: "boolean" },
        http: { type: "string" },
        name: { type: "string" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const host = values.host;
  if (host === undefined || !(HOSTS as readonly string[]).includes(host)) {
    throw new UsageError(`config print needs --host ${HOSTS.join("|")}`);
  }
  const name = values.name ?? DEFAULT_SERVER_NAME;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
    throw new UsageError("--name takes 1 to 64 letters, digits, '-' or '_'");
  }
  const http = values.http === undefined ? undefined : parseHttp(values.http);
  if (http === undefined && values.root === undefined) {
    throw new UsageError("config print needs --root DIR (the directory to serve) or --http URL");
  }
  const write = values.write === true;
  const notes: string[] = [];
  const root = values.root === undefined ? undefined : await checkedRoot(values.root);
  const home = envIfGranted("HOME");
  if (root === "/" || (home !== undefined && root === (await probePaths([home]))?.[0]?.real)) {
    notes.push(
      `warning: --root ${root} serves ${
        root === "/" ? "the whole file system" : "your whole home directory"
      }`,
    );
  }
  let input: SnippetInput;
  if (http === undefined) {
    const deno = await chooseDeno();
    notes.push(...deno.notes);
    input = { name, stdio: stdioEntry({ deno: deno.path, root: root!, write }) };
    notes.push(
      `the server serves ${root} ${write ? "read-write (the write tools are on)" : "read-only"}`,
    );
  } else {
    input = { name, http };
    if (host === "claude-desktop") {
      const npx = await chooseNpx();
      notes.push(...npx.notes);
      input.stdio = bridgeEntry(http, npx.entry);
    }
    if (root !== undefined && http.protocol === "http:") {
      const deno = await chooseDeno();
      notes.push(`start the server with: ${httpStartLine(deno.path, http, root, write)}`);
    } else if (root !== undefined) {
      notes.push("wmcp serves plain HTTP: put a TLS-terminating proxy in front for an https URL");
    }
  }
  const printed = hostSnippet(host as HostName, input);
  await out(JSON.stringify(printed.snippet, null, 2) + "\n");
  for (const n of [...printed.notes, ...notes]) console.error(`wmcp: ${n}`);
  return 0;
}
