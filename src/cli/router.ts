/**
 * The `wmcp` router (cli.ts): reads just enough of argv to know the command and the paths it
 * names, computes that command's Deno permissions (command_permissions.ts) and runs the work in
 * a child `deno run <those flags> src/cli/scoped_main.ts ARGS`, with stdio inherited, SIGHUP,
 * SIGINT, SIGQUIT, SIGTERM, SIGUSR1 and SIGUSR2 forwarded and the child's exit code returned (128+N
 * when a signal ended it). `serve` (its own launcher), `completion`, help, version
 * and unknown commands run in process. A router that may not run Deno (cli.ts started with
 * narrower flags) runs everything in process under the permissions it was given.
 */
import { errLine } from "../std_streams.ts";
import type { PathFacts } from "./path_probe.ts";
import { cannotRunSelf, denoNames, mayRun, selfDeno } from "../launch/deno.ts";
import { spawnDeno, supervise } from "../launch/child.ts";
import { projectPath } from "../launch/project.ts";
import { probeEntry } from "./entry_probe.ts";
import {
  bundledRoot,
  commandPermissions,
  type CommandPlan,
  configTarget,
  namedPaths,
  opRoots,
  type PermissionContext,
  UngrantablePathError,
} from "./command_permissions.ts";

import { envIfGranted, refuseBroadRoot, UsageError } from "../config.ts";

const SCOPED_MAIN = new URL("./scoped_main.ts", import.meta.url);

/** The credentials' parent directory, as src/client/auth/store.ts finds it (no import of it). */
function configDir(): string | undefined {
  const absolute = (v: string | undefined) =>
    v && v.startsWith("/") ? v.replace(/\/+$/, "") : undefined;
  const override = absolute(envIfGranted("WMCP_CONFIG_DIR"));
  if (override) return override;
  const xdg = absolute(envIfGranted("XDG_CONFIG_HOME"));
  if (xdg) return `${xdg}/wmcp`;
  const home = absolute(envIfGranted("HOME"));
  return home ? `${home}/.config/wmcp` : undefined;
}

function invocationDir(): string {
  return envIfGranted("INIT_CWD") ?? Deno.cwd();
}

async function inProcess(argv: string[]): Promise<number> {
  const { main } = await import("./main.ts");
  return await main(argv);
}

/** What the path probe learned of `paths` (links resolved, kind), by path. */
async function pathFacts(paths: string[]): Promise<Map<string, PathFacts>> {
  if (paths.length === 0) return new Map();
  const { probePaths } = await import("./path_probe.ts");
  const facts = await probePaths(paths);
  return new Map((facts ?? []).map((f) => [f.path, f]));
}

function usage(message: string): number {
  errLine(JSON.stringify({ error: { code: "USAGE", message } }));
  return 2;
}

/**
 * The roots argv names, checked before any child starts: each of `op NAME`'s under the servers'
 * broad-root rule (the child gets no HOME: $HOME is probed beside it, links resolved), and the
 * bundled server's as an existing directory. A usage message, or undefined when they pass.
 */
function refusedRoot(
  argv: string[],
  base: string,
  facts: Map<string, PathFacts>,
  home: { path?: string; probed: boolean },
): string | undefined {
  for (const op of opRoots(argv, base) ?? []) {
    try {
      refuseBroadRoot({
        given: op.given,
        flag: op.flag,
        root: op.root,
        rootReal: facts.get(op.root)?.real,
        home: home.path,
        homeReal: home.probed ? facts.get(home.path!)?.real : undefined,
      });
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      return err.message;
    }
  }
  // The bundled server's root: a missing one is the same usage error `op` gives (exit 2),
  // said before any server is started.
  const root = bundledRoot(argv, base);
  const rf = root === undefined ? undefined : facts.get(root);
  if (rf === undefined || rf.kind === "directory") return undefined;
  return rf.kind === undefined
    ? `cannot open the workspace: workspace root ${root} does not exist or cannot be read`
    : `cannot open the workspace: workspace root ${root} is not a directory`;
}

/**
 * The plan again once the paths argv names are known (`first` when it names none): their real paths (the path probe) and a
 * --config entry loaded first (read on that file only), which narrows run, net and read. A
 * usage message instead when a root is refused.
 */
async function planWithFacts(
  argv: string[],
  ctx: PermissionContext,
  first: CommandPlan,
  self: string,
): Promise<CommandPlan | string> {
  const base = ctx.invocationDir;
  const named = namedPaths(argv, base);
  if (named.length === 0) return first;
  const path = envIfGranted("HOME");
  const home = {
    path,
    probed: opRoots(argv, base) !== undefined && path?.startsWith("/") === true,
  };
  const facts = await pathFacts(home.probed ? [...named, path!] : named);
  const refused = refusedRoot(argv, base, facts, home);
  if (refused !== undefined) return refused;
  const real: Record<string, string> = {};
  for (const f of facts.values()) if (f.real !== undefined) real[f.path] = f.real;
  const target = configTarget(argv, base);
  const configEntry = target === undefined ? undefined : await probeEntry(
    { ...target, read: [...new Set([target.path, real[target.path] ?? target.path])] },
    { deno: self, invocationDir: base },
  );
  return commandPermissions(argv, { ...ctx, realPaths: real, configEntry });
}

/** Runs the CLI for argv: in a child with the command's permissions, or in process. */
export async function route(argv: string[]): Promise<number> {
  const self = selfDeno();
  // Undefined when the project is not on a local file system.
  const workerDir = projectPath("src/workspace");
  if (workerDir === undefined || !mayRun(self)) {
    // Off Linux the tasks' /proc/self/exe grants nothing: say why the command may be denied.
    const cannot = Deno.build.os === "linux" ? undefined : cannotRunSelf();
    if (cannot !== undefined) errLine(`wmcp: note: ${cannot}; running in this process`);
    return await inProcess(argv);
  }
  const base = invocationDir();
  const ctx: PermissionContext = {
    invocationDir: base,
    configDir: configDir(),
    deno: denoNames(),
    workerDir,
    browser: envIfGranted("WMCP_BROWSER") ?? (Deno.build.os === "darwin" ? "open" : "xdg-open"),
  };
  let plan: CommandPlan | string;
  try {
    plan = commandPermissions(argv, ctx);
    if (plan.kind === "child") plan = await planWithFacts(argv, ctx, plan, self);
  } catch (err) {
    if (!(err instanceof UngrantablePathError)) throw err;
    return usage(err.message);
  }
  if (typeof plan === "string") return usage(plan);
  if (plan.kind === "in-process") return await inProcess(argv);
  const child = spawnDeno({
    flags: plan.flags,
    module: SCOPED_MAIN,
    args: argv,
    env: { INIT_CWD: base },
  });
  return (await supervise(child)).code;
}
