/**
 * The `wmcp` router (cli.ts): reads just enough of argv to know the command and the paths it
 * names, computes that command's Deno permissions (command_permissions.ts) and runs the work in
 * a child `deno run <those flags> src/cli/scoped_main.ts ARGS`, with stdio inherited, SIGHUP,
 * SIGINT, SIGQUIT, SIGTERM, SIGUSR1 and SIGUSR2 forwarded and the child's exit code returned (128+N
 * when a signal ended it). `serve` (its own launcher), `completion`, help, version
 * and unknown commands run in process. A router that may not run Deno (cli.ts started with
 * narrower flags) runs everything in process under the permissions it was given.
 */
import type { PathFacts } from "./path_probe.ts";
import { cannotRunSelf, denoNames, mayRun, selfDeno } from "../launch/deno.ts";
import { spawnDeno, supervise } from "../launch/child.ts";
import { projectPath } from "../launch/project.ts";
import { probeEntry } from "./entry_probe.ts";
import {
  bundledRoot,
  commandPermissions,
  configTarget,
  namedPaths,
  opRoot,
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
  console.error(JSON.stringify({ error: { code: "USAGE", message } }));
  return 2;
}

/** Runs the CLI for argv: in a child with the command's permissions, or in process. */
export async function route(argv: string[]): Promise<number> {
  const self = selfDeno();
  // Undefined when the project is not on a local file system.
  const workerDir = projectPath("src/workspace");
  if (workerDir === undefined || !mayRun(self)) {
    // Off Linux the tasks' /proc/self/exe grants nothing: say why the command may be denied.
    const cannot = Deno.build.os === "linux" ? undefined : cannotRunSelf();
    if (cannot !== undefined) console.error(`wmcp: note: ${cannot}; running in this process`);
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
  let plan;
  try {
    plan = commandPermissions(argv, ctx);
    if (plan.kind === "child") {
      const named = namedPaths(argv, base);
      // `op NAME`'s root under the servers' broad-root rule, checked here as the serve launcher
      // checks it (the child gets no HOME): $HOME is probed beside it, links resolved.
      const op = opRoot(argv, base);
      const home = envIfGranted("HOME");
      const probeHome = op !== undefined && home?.startsWith("/") === true;
      if (named.length > 0) {
        const facts = await pathFacts(probeHome ? [...named, home!] : named);
        if (op !== undefined) {
          try {
            refuseBroadRoot({
              given: op.given,
              root: op.root,
              rootReal: facts.get(op.root)?.real,
              home,
              homeReal: probeHome ? facts.get(home!)?.real : undefined,
            });
          } catch (err) {
            if (!(err instanceof UsageError)) throw err;
            return usage(err.message);
          }
        }
        // The bundled server's root: a missing one is the same usage error `op` gives (exit 2),
        // said before any server is started.
        const root = bundledRoot(argv, base);
        const rf = root === undefined ? undefined : facts.get(root);
        if (rf !== undefined && rf.kind !== "directory") {
          return usage(
            rf.kind === undefined
              ? `cannot open the workspace: workspace root ${root} does not exist or cannot be read`
              : `cannot open the workspace: workspace root ${root} is not a directory`,
          );
        }
        const real: Record<string, string> = {};
        for (const f of facts.values()) if (f.real !== undefined) real[f.path] = f.real;
        // A --config entry loaded first (read on that file only) narrows run, net and read.
        const target = configTarget(argv, base);
        const configEntry = target === undefined ? undefined : await probeEntry(
          { ...target, read: [...new Set([target.path, real[target.path] ?? target.path])] },
          { deno: self, invocationDir: base },
        );
        plan = commandPermissions(argv, { ...ctx, realPaths: real, configEntry });
      }
    }
  } catch (err) {
    if (!(err instanceof UngrantablePathError)) throw err;
    return usage(err.message);
  }
  if (plan.kind === "in-process") return await inProcess(argv);
  const child = spawnDeno({
    flags: plan.flags,
    module: SCOPED_MAIN,
    args: argv,
    env: { INIT_CWD: base },
  });
  return (await supervise(child)).code;
}
