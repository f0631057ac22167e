/**
 * The Deno permissions one CLI command needs, computed from its argv (see RUNTIME.md, "Permissions
 * per command"): read on the files and root it names, write on the root only with --write, the
 * credentials directory only where credentials are used, net only for commands that connect, run
 * only where a child is started. The router (router.ts) runs the command's work with exactly these.
 */

import type { EntryFacts } from "./entry_probe.ts";
import { Grants, isGrantable } from "../launch/grants.ts";
import { DECLARED } from "./commands.ts";

export { UngrantablePathError } from "../launch/grants.ts";

/** What the permission computation needs to know about this machine and this run. */
export interface PermissionContext {
  /** Absolute directory that relative paths on the command line are taken from. */
  invocationDir: string;
  /** The credentials' parent directory (~/.config/wmcp, or XDG_CONFIG_HOME/WMCP_CONFIG_DIR). */
  configDir?: string;
  /** The names of the Deno binary the command's own children run as (bundled server, probes). */
  deno: string[];
  /** src/workspace: the search engine's worker modules are read from there. */
  workerDir?: string;
  /** Real paths (links resolved) of named paths, where known: granted beside the spelled path. */
  realPaths?: Record<string, string>;
  /** The browser opener of `auth login` (xdg-open, open, or $WMCP_BROWSER). */
  browser?: string;
  /** The --config entry the command names, as the entry probe loaded it (entry_probe.ts). */
  configEntry?: EntryFacts;
}

/** What to grant one command, or `in-process` for commands that start no scoped child. */
export type CommandPlan =
  | { kind: "in-process" }
  | { kind: "child"; flags: string[]; paths: string[] };

/** Variables the output code may read (colour and terminal width decisions). */
export const DISPLAY_ENV = ["INIT_CWD", "NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS"] as const;

/** The commands whose permissions the router computes from their argv. */
const ROUTED: ReadonlySet<string> = new Set(["op", "tools", "server-info", "auth", "config"]);

/**
 * Flags of op, the client commands, auth and config that take a value (the rest are booleans),
 * read off their declarations (src/cli/commands.ts: plain data, so the router loads none of the
 * commands' work). tests/cli/router_scope_test.ts checks no routed command reads a name the
 * other way.
 */
export const VALUE_FLAGS: ReadonlySet<string> = new Set(
  [...DECLARED.values()].filter((d) => ROUTED.has(d.path[0])).flatMap((d) =>
    Object.entries(d.flags).filter(([, f]) => f.kind !== "bool").map(([name]) => name)
  ),
);

/** Argv split into flag values (last one wins, as node:util parseArgs does) and positionals. */
export function scanArgs(args: string[]): { values: Map<string, string[]>; positionals: string[] } {
  const values = new Map<string, string[]>();
  const positionals: string[] = [];
  const add = (k: string, v: string) => values.set(k, [...(values.get(k) ?? []), v]);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith("--") && a.length > 2) {
      const eq = a.indexOf("=");
      if (eq > 0) add(a.slice(2, eq), a.slice(eq + 1));
      else if (VALUE_FLAGS.has(a.slice(2)) && i + 1 < args.length) add(a.slice(2), args[++i]);
      else add(a.slice(2), "");
      continue;
    }
    positionals.push(a);
  }
  return { values, positionals };
}

/** `host:port` of an http(s) URL, for `--allow-net`; undefined when it is not one. */
function netPeer(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") return undefined;
    return `${u.hostname}:${u.port || (u.protocol === "https:" ? "443" : "80")}`;
  } catch {
    return undefined;
  }
}

function abs(path: string, base: string): string {
  const joined = path.startsWith("/") ? path : `${base === "/" ? "" : base}/${path}`;
  const out: string[] = [];
  for (const part of joined.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return `/${out.join("/")}`;
}

/** The --config file and --server of a client command (absolute), when it names both. */
export function configTarget(
  argv: string[],
  invocationDir: string,
): { path: string; server: string } | undefined {
  const [command, ...rest] = argv;
  if (command !== "tools" && command !== "server-info") return undefined;
  const { values } = scanArgs(rest);
  const config = values.get("config")?.at(-1);
  const server = values.get("server")?.at(-1);
  if (config === undefined || config === "" || config === "-" || !server) return undefined;
  return { path: abs(config, invocationDir), server };
}

/** The absolute paths a command names that are worth resolving (links) before granting. */
export function namedPaths(argv: string[], invocationDir: string): string[] {
  const [command, ...rest] = argv;
  const { values } = scanArgs(rest);
  const last = (k: string) => values.get(k)?.at(-1);
  if (command === "op") {
    const root = last("root");
    return [abs(root === undefined || root === "" ? "." : root, invocationDir)];
  }
  if (command === "tools" || command === "server-info") {
    const config = last("config");
    if (config !== undefined && config !== "" && config !== "-") {
      return [abs(config, invocationDir)];
    }
  }
  const bundled = bundledRoot(argv, invocationDir);
  return bundled === undefined ? [] : [bundled];
}

/**
 * The workspace root of `op NAME` (not `op list`, which opens none): as given (`--root`, or
 * undefined) and absolute. The router checks the broad-root rule on it before the child starts.
 */
export function opRoot(
  argv: string[],
  invocationDir: string,
): { given: string | undefined; root: string } | undefined {
  const [command, ...rest] = argv;
  if (command !== "op") return undefined;
  const { values, positionals } = scanArgs(rest);
  if (positionals.length === 0 || positionals[0] === "list") return undefined;
  const given = values.get("root")?.at(-1);
  // An empty --root is op's own usage error (it says why).
  if (given !== undefined && given.trim() === "") return undefined;
  return { given, root: abs(given ?? ".", invocationDir) };
}

/**
 * The workspace root of the bundled server a client command starts (`tools`, `server-info`
 * without --endpoint or --config), absolute; undefined when the command starts none.
 */
export function bundledRoot(argv: string[], invocationDir: string): string | undefined {
  const [command, ...rest] = argv;
  if (command !== "tools" && command !== "server-info") return undefined;
  const { values } = scanArgs(rest);
  if (values.has("endpoint") || values.has("config")) return undefined;
  const root = values.get("root")?.at(-1);
  // An empty --root is the client's own usage error (it says why); nothing to look at here.
  if (root !== undefined && root.trim() === "") return undefined;
  return abs(root ?? ".", invocationDir);
}

/** The plan for argv: which permissions the command's scoped child gets. */
export function commandPermissions(argv: string[], ctx: PermissionContext): CommandPlan {
  const [command, ...rest] = argv;
  const { values, positionals } = scanArgs(rest);
  const last = (k: string) => values.get(k)?.at(-1);
  const has = (k: string) => values.has(k);
  const base = ctx.invocationDir;
  const grants = new Grants(["read", "write"]);
  const paths: string[] = [];
  const named = (flag: string, value: string | undefined, o: { write?: boolean } = {}) => {
    if (value === undefined || value === "" || value === "-") return;
    const p = abs(value, base);
    grants.path(p, { what: flag, spelled: value, write: o.write, real: ctx.realPaths?.[p] });
    paths.push(p);
  };
  // Paths the command does not name but is granted (credentials, invocation and worker
  // directories): the same check as named ones, by what they are.
  const fixed = (what: string, path: string | undefined, o: { write?: boolean } = {}) => {
    if (path !== undefined) grants.path(path, { what, write: o.write });
  };
  const finish = (): CommandPlan => ({
    kind: "child",
    flags: ["--quiet", "--no-prompt", ...grants.flags()],
    paths,
  });
  const words = positionals.filter((p) => !p.startsWith("-"));
  const wantsVersion = rest.includes("-V") || has("version");
  const wantsHelp = has("help") || rest.includes("-h");
  // `tools call NAME --help` lists NAME's arguments as the server lists them: it connects like
  // the call it describes, so it gets that call's permissions. Every other help runs in process.
  const toolHelp = command === "tools" && words[0] === "call" && words[1] !== undefined;
  if (wantsVersion || (wantsHelp && !toolHelp)) return { kind: "in-process" };

  if (command === "op") {
    grants.allow("env", DISPLAY_ENV);
    if (positionals[0] === "list") return finish();
    const root = last("root");
    named("--root", root === undefined || root === "" ? "." : root, { write: has("write") });
    fixed("the search worker directory", ctx.workerDir);
    named("--arguments-file", last("arguments-file"));
    // No net, no run, no sys: an operation touches the workspace and nothing else.
    return finish();
  }

  if (command === "tools" || command === "server-info") {
    named("--arguments-file", last("arguments-file"));
    named("--input-responses-file", last("input-responses-file"));
    named("--client-secret-file", last("client-secret-file"));
    if (command === "tools" && positionals[0] === "run") named("tools run", positionals[1]);
    grants.allow("env", "all");
    // The config entry, when the router could load it first: stdio gets run on its command and
    // read on its cwd only; HTTP gets net and the credentials, and neither run nor read.
    const entry = has("config") && ctx.configEntry !== undefined && "kind" in ctx.configEntry
      ? ctx.configEntry
      : undefined;
    const remote = has("endpoint") || (has("config") && entry?.kind !== "stdio");
    if (has("config")) named("--config", last("config"));
    if (remote) {
      // `--no-auth`: no sign-in, so no credentials, and the endpoint's host is the only peer.
      const noAuth = has("no-auth");
      // Stored sign-ins: read and refreshed in the credentials directory (owner checked: uid).
      if (!noAuth && !has("no-auth-store")) {
        fixed("the credentials directory", ctx.configDir, { write: true });
      }
      if (!noAuth) grants.allow("sys", ["uid"]);
      // An authorization server may live on any host the resource server names.
      const peer = noAuth && has("endpoint") ? netPeer(last("endpoint")) : undefined;
      grants.allow("net", peer === undefined ? "all" : [peer]);
    }
    if (entry?.kind === "stdio") {
      // Started in its cwd (checked to exist: read there). Run on exactly its command where a
      // Deno flag can name it as the client spawns it: an absolute path, or a bare name looked up
      // on this PATH (not when the entry sets its own PATH); else any command.
      fixed("the server's working directory", entry.cwd ?? base);
      const c = entry.command;
      const exact = isGrantable(c) && !entry.pathEnv && (c.startsWith("/") || !c.includes("/"));
      // `kill` too: the client SIGKILLs a server that ignores SIGTERM (Deno.kill would need
      // unscoped run; src/workarounds/deno_child_kill.ts).
      grants.allow("run", exact ? [c, "kill"] : "all");
    } else if (entry?.kind === "http") {
      // The sign-in may open a browser (as `auth login` does).
      if (ctx.browser) grants.allow("run", [ctx.browser], "the browser opener");
    } else if (has("config")) {
      // Not loaded before the child (no --server, unreadable or invalid: the client says why):
      // the entry may be a stdio server started in the invocation directory, any command.
      fixed("the invocation directory", base);
      grants.allow("run", "all");
    } else if (!has("endpoint")) {
      // The bundled server: this Deno running `serve.ts stdio` (its own launcher scopes it).
      grants.allow("run", [...ctx.deno, "kill"], "the Deno binary");
    }
    return finish();
  }

  if (command === "auth") {
    fixed("the credentials directory", ctx.configDir, { write: true });
    named("--config", last("config"));
    named("--client-secret-file", last("client-secret-file"));
    // `auth status` only reads the store: no network, no browser.
    const status = positionals[0] === "status";
    grants.allow("env", "all");
    if (!status) grants.allow("net", "all");
    if (ctx.browser && !status && !has("no-browser")) {
      grants.allow("run", [ctx.browser], "the browser opener");
    }
    grants.allow("sys", ["uid"]);
    return finish();
  }

  if (command === "config") {
    // Prints a snippet; learns about paths only through its probe child (this Deno).
    grants.allow("env", "all").allow("run", ctx.deno, "the Deno binary");
    return finish();
  }

  // serve (its launcher scopes the server), completion (static text; main.ts drops the router's
  // env and run grants before it), help, version and unknown commands: no child.
  return { kind: "in-process" };
}
