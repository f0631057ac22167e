/**
 * The Deno permissions one CLI command needs, computed from its argv (see RUNTIME.md, "Permissions
 * per command"): read on the files and root it names, write on the root only with --write, the
 * credentials directory only where credentials are used, net only for commands that connect, run
 * only where a child is started. The router (router.ts) runs the command's work with exactly these.
 */

import type { RootFlagName } from "../config.ts";
import type { EntryFacts } from "./entry_probe.ts";
import { Grants, isGrantable } from "../launch/grants.ts";
import { normalized } from "../workspace/roots.ts";
import { CLIENT_COMMANDS, DECLARED } from "./commands.ts";
import type { FlagKind } from "./declare.ts";

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

/** The client commands (`server-info`, `tools`, `resources`, `prompts`, `ping`). */
const CLIENT: ReadonlySet<string> = new Set(CLIENT_COMMANDS);

/** Whether a command is a client command (it connects to an MCP server). */
function isClient(command: string | undefined): boolean {
  return command !== undefined && CLIENT.has(command);
}

/** The commands whose permissions the router computes from their argv. */
const ROUTED: ReadonlySet<string> = new Set(["op", ...CLIENT_COMMANDS, "auth", "config"]);

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
  return normalized(path.startsWith("/") ? path : `${base === "/" ? "" : base}/${path}`);
}

/** The --config file and --server of a client command (absolute), when it names both. */
export function configTarget(
  argv: string[],
  invocationDir: string,
): { path: string; server: string } | undefined {
  const [command, ...rest] = argv;
  if (!isClient(command)) return undefined;
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
  if (command === "op") return opRootValues(values).map((r) => abs(r.value, invocationDir));
  if (isClient(command)) {
    const config = last("config");
    if (config !== undefined && config !== "" && config !== "-") {
      return [abs(config, invocationDir)];
    }
  }
  const bundled = bundledRoot(argv, invocationDir);
  return bundled === undefined ? [] : [bundled];
}

/**
 * `op`'s root values (`--root` ones, then `--read-only-root` ones; "." when neither is given, and
 * for an empty value, which op refuses itself): the order is op's own business, the grants are not.
 */
function opRootValues(values: Map<string, string[]>): { flag: string; value: string }[] {
  const of = (flag: string) =>
    (values.get(flag) ?? []).map((v) => ({ flag: `--${flag}`, value: v === "" ? "." : v }));
  const all = [...of("root"), ...of("read-only-root")];
  return all.length > 0 ? all : [{ flag: "--root", value: "." }];
}

/**
 * The workspace roots of `op NAME` (not `op list`, which opens none): each as given (`--root` or
 * `--read-only-root`, undefined when neither is given) and absolute. The router checks the
 * broad-root rule on each before the child starts.
 */
export function opRoots(
  argv: string[],
  invocationDir: string,
): { given: string | undefined; flag: RootFlagName; root: string }[] | undefined {
  const [command, ...rest] = argv;
  if (command !== "op") return undefined;
  const { values, positionals } = scanArgs(rest);
  if (positionals.length === 0 || positionals[0] === "list") return undefined;
  const given = [
    ...(values.get("root") ?? []).map((g) => ({ given: g, flag: "--root" as const })),
    ...(values.get("read-only-root") ?? []).map((g) => ({
      given: g,
      flag: "--read-only-root" as const,
    })),
  ];
  // An empty root is op's own usage error (it says why).
  if (given.some((g) => g.given.trim() === "")) return undefined;
  if (given.length === 0) {
    return [{ given: undefined, flag: "--root", root: abs(".", invocationDir) }];
  }
  return given.map((g) => ({ ...g, root: abs(g.given, invocationDir) }));
}

/**
 * The workspace root of the bundled server a client command starts (`tools`, `server-info`, ...
 * without --endpoint or --config), absolute; undefined when the command starts none.
 */
export function bundledRoot(argv: string[], invocationDir: string): string | undefined {
  const [command, ...rest] = argv;
  if (!isClient(command)) return undefined;
  const { values } = scanArgs(rest);
  if (values.has("endpoint") || values.has("config")) return undefined;
  const root = values.get("root")?.at(-1);
  // An empty --root is the client's own usage error (it says why); nothing to look at here.
  if (root !== undefined && root.trim() === "") return undefined;
  return abs(root ?? ".", invocationDir);
}

/**
 * The flag kinds that name a file the command itself opens (src/cli/declare.ts FlagKind): each
 * such flag given is granted read on its file (`-`, stdin, names none). The other kinds grant
 * nothing by themselves: a `dir` is a root handed on (op's workspace, granted by opPlan with
 * write under --write; the bundled server's and config print's are read by their own children),
 * a `url` a peer (net, by command below), and the rest are text.
 */
const FILE_KINDS: ReadonlySet<FlagKind> = new Set(["path", "secret-file"]);

/**
 * The flags naming a file that any command of this family reads (op, the client commands, auth):
 * FILE_KINDS in their declarations, in declaration order. Taken over the family, as VALUE_FLAGS
 * is, so a flag another member declares is still checked as a path before the child says it is
 * not this one's.
 */
function fileFlags(family: readonly string[]): string[] {
  const names = [...DECLARED.values()].filter((d) => family.includes(d.path[0])).flatMap((d) =>
    Object.entries(d.flags).filter(([, f]) => FILE_KINDS.has(f.kind)).map(([name]) => name)
  );
  return [...new Set(names)];
}

/** The file flags of op, of the client commands (`config` apart: see clientPlan), and of auth. */
const FILE_FLAGS = {
  op: fileFlags(["op"]),
  client: fileFlags(CLIENT_COMMANDS).filter((f) => f !== "config"),
  auth: fileFlags(["auth"]),
};

/** One command's plan while it is built: its argv's values, the grants and the paths named. */
class Plan {
  readonly grants = new Grants(["read", "write"]);
  readonly paths: string[] = [];

  constructor(readonly values: Map<string, string[]>, readonly ctx: PermissionContext) {}

  /** The last value of a flag (the one the command reads). */
  last(flag: string): string | undefined {
    return this.values.get(flag)?.at(-1);
  }

  /** Whether a flag is given. */
  has(flag: string): boolean {
    return this.values.has(flag);
  }

  /** Read (and write) on a path the command line names, as spelled and by its real path. */
  named(flag: string, value: string | undefined, o: { write?: boolean } = {}): this {
    if (value === undefined || value === "" || value === "-") return this;
    const p = abs(value, this.ctx.invocationDir);
    this.grants.path(p, {
      what: flag,
      spelled: value,
      write: o.write,
      real: this.ctx.realPaths?.[p],
    });
    this.paths.push(p);
    return this;
  }

  /** Read on the file each of `flags` names (the FILE_KINDS flags of a command). */
  files(flags: readonly string[]): this {
    for (const flag of flags) this.named(`--${flag}`, this.last(flag));
    return this;
  }

  /**
   * A path the command does not name but is granted (credentials, invocation and worker
   * directories): the same check as named ones, by what it is.
   */
  fixed(what: string, path: string | undefined, o: { write?: boolean } = {}): this {
    if (path !== undefined) this.grants.path(path, { what, write: o.write });
    return this;
  }

  /** The scoped child's plan. */
  finish(): CommandPlan {
    return {
      kind: "child",
      flags: ["--quiet", "--no-prompt", ...this.grants.flags()],
      paths: this.paths,
    };
  }
}

/**
 * Whether argv only asks for help or the version (answered in process). `tools call NAME
 * --help` lists NAME's arguments as the server lists them: it connects like the call it
 * describes, so it gets that call's permissions.
 */
function answeredInProcess(
  command: string | undefined,
  rest: string[],
  positionals: string[],
  plan: Plan,
): boolean {
  const words = positionals.filter((p) => !p.startsWith("-"));
  const wantsVersion = rest.includes("-V") || plan.has("version");
  const wantsHelp = plan.has("help") || rest.includes("-h");
  const toolHelp = command === "tools" && words[0] === "call" && words[1] !== undefined;
  return wantsVersion || (wantsHelp && !toolHelp);
}

/** `op`: the display variables; for an operation its roots (written with --write) and files. */
function opPlan(plan: Plan, positionals: string[]): CommandPlan {
  plan.grants.allow("env", DISPLAY_ENV);
  if (positionals[0] === "list") return plan.finish();
  // Read on every root; write on the --root ones, only with --write (decision 0064).
  for (const r of opRootValues(plan.values)) {
    plan.named(r.flag, r.value, { write: r.flag === "--root" && plan.has("write") });
  }
  plan.fixed("the search worker directory", plan.ctx.workerDir);
  plan.files(FILE_FLAGS.op);
  // No net, no run, no sys: an operation touches the workspace and nothing else.
  return plan.finish();
}

/**
 * An HTTP server's client: net (the endpoint's peer alone with --no-auth), and unless
 * --no-auth the sign-in's needs (the credentials directory, owner checked by uid).
 */
function remoteGrants(plan: Plan): void {
  // `--no-auth`: no sign-in, so no credentials, and the endpoint's host is the only peer.
  const noAuth = plan.has("no-auth");
  // Stored sign-ins: read and refreshed in the credentials directory (owner checked: uid).
  if (!noAuth && !plan.has("no-auth-store")) {
    plan.fixed("the credentials directory", plan.ctx.configDir, { write: true });
  }
  if (!noAuth) plan.grants.allow("sys", ["uid"]);
  // An authorization server may live on any host the resource server names.
  const peer = noAuth && plan.has("endpoint") ? netPeer(plan.last("endpoint")) : undefined;
  plan.grants.allow("net", peer === undefined ? "all" : [peer]);
}

/** A --config entry the entry probe loaded. */
type LoadedEntry = Extract<EntryFacts, { kind: string }>;

/**
 * What a client command may run: a loaded stdio entry's command (and `kill`), the browser
 * opener for a loaded HTTP entry, anything for an entry not loaded, or the bundled server.
 */
function runGrants(plan: Plan, entry: LoadedEntry | undefined): void {
  const { ctx } = plan;
  if (entry?.kind === "stdio") {
    // Started in its cwd (checked to exist: read there). Run on exactly its command where a
    // Deno flag can name it as the client spawns it: an absolute path, or a bare name looked up
    // on this PATH (not when the entry sets its own PATH); else any command.
    plan.fixed("the server's working directory", entry.cwd ?? ctx.invocationDir);
    const c = entry.command;
    const exact = isGrantable(c) && !entry.pathEnv && (c.startsWith("/") || !c.includes("/"));
    // `kill` too: the client SIGKILLs a server that ignores SIGTERM (Deno.kill would need
    // unscoped run; src/workarounds/deno_child_kill.ts).
    plan.grants.allow("run", exact ? [c, "kill"] : "all");
  } else if (entry?.kind === "http") {
    // The sign-in may open a browser (as `auth login` does).
    if (ctx.browser) plan.grants.allow("run", [ctx.browser], "the browser opener");
    // The entry's pre-registered client secret, read as --client-secret-file's is.
    plan.fixed("the config entry's oauth.clientSecretFile", entry.secretFile);
  } else if (plan.has("config")) {
    // Not loaded before the child (no --server, unreadable or invalid: the client says why):
    // the entry may be a stdio server started in the invocation directory, any command.
    plan.fixed("the invocation directory", ctx.invocationDir);
    plan.grants.allow("run", "all");
  } else if (!plan.has("endpoint")) {
    // The bundled server: this Deno running `serve.ts stdio` (its own launcher scopes it).
    plan.grants.allow("run", [...ctx.deno, "kill"], "the Deno binary");
  }
}

/** The client commands: their files, env, and what reaching the server needs. */
function clientPlan(plan: Plan, command: string, positionals: string[]): CommandPlan {
  plan.files(FILE_FLAGS.client);
  if (command === "tools" && positionals[0] === "run") plan.named("tools run", positionals[1]);
  plan.grants.allow("env", "all");
  // The config entry, when the router could load it first: stdio gets run on its command and
  // read on its cwd only; HTTP gets net and the credentials, and neither run nor read.
  const loaded = plan.ctx.configEntry;
  const entry = plan.has("config") && loaded !== undefined && "kind" in loaded ? loaded : undefined;
  const remote = plan.has("endpoint") || (plan.has("config") && entry?.kind !== "stdio");
  if (plan.has("config")) plan.named("--config", plan.last("config"));
  if (remote) remoteGrants(plan);
  runGrants(plan, entry);
  return plan.finish();
}

/** `auth login|status|logout`: the credentials directory, their files, net and the browser. */
function authPlan(plan: Plan, positionals: string[]): CommandPlan {
  const { ctx } = plan;
  plan.fixed("the credentials directory", ctx.configDir, { write: true });
  plan.files(FILE_FLAGS.auth);
  // `auth status` only reads the store: no network, no browser.
  const status = positionals[0] === "status";
  plan.grants.allow("env", "all");
  if (!status) plan.grants.allow("net", "all");
  if (ctx.browser && !status && !plan.has("no-browser")) {
    plan.grants.allow("run", [ctx.browser], "the browser opener");
  }
  plan.grants.allow("sys", ["uid"]);
  return plan.finish();
}

/** The plan for argv: which permissions the command's scoped child gets. */
export function commandPermissions(argv: string[], ctx: PermissionContext): CommandPlan {
  const [command, ...rest] = argv;
  const { values, positionals } = scanArgs(rest);
  const plan = new Plan(values, ctx);
  if (answeredInProcess(command, rest, positionals, plan)) return { kind: "in-process" };
  if (command === "op") return opPlan(plan, positionals);
  if (isClient(command)) {
    return clientPlan(plan, command, positionals);
  }
  if (command === "auth") return authPlan(plan, positionals);
  if (command === "config") {
    // Prints a snippet; learns about paths only through its probe child (this Deno).
    plan.grants.allow("env", "all").allow("run", ctx.deno, "the Deno binary");
    return plan.finish();
  }
  // serve (its launcher scopes the server), completion (static text; main.ts drops the router's
  // env and run grants before it), help, version and unknown commands: no child.
  return { kind: "in-process" };
}
