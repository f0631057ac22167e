/**
 * The `wmcp` router (cli.ts): reads just enough of argv to know the command and the paths it
 * names, computes that command's Deno permissions (command_permissions.ts) and runs the work in
 * a child `deno run <those flags> src/cli/scoped_main.ts ARGS`, with stdio inherited, SIGHUP,
 * SIGINT, SIGQUIT, SIGTERM, SIGUSR1 and SIGUSR2 forwarded and the child's exit code returned (128+N
 * when a signal ended it). `serve` (its own launcher), help, version
 * and unknown commands run in process. A router that may not run Deno (cli.ts started with
 * narrower flags) runs everything in process under the permissions it was given.
 */
import type { PathFacts } from "./path_probe.ts";
import { probeEntry } from "./entry_probe.ts";
import {
  bundledRoot,
  commandPermissions,
  configTarget,
  namedPaths,
  type PermissionContext,
  UngrantablePathError,
} from "./command_permissions.ts";

const PROJECT_URL = new URL("../../", import.meta.url);
const SCOPED_MAIN = new URL("./scoped_main.ts", import.meta.url);

function envIfGranted(name: string): string | undefined {
  if (Deno.permissions.querySync({ name: "env", variable: name }).state !== "granted") {
    return undefined;
  }
  return Deno.env.get(name);
}

/** The running Deno binary, by the name the tasks and the launcher grant run permission on. */
function selfDeno(): string {
  return Deno.build.os === "linux" ? "/proc/self/exe" : Deno.execPath();
}

function mayRun(command: string): boolean {
  return Deno.permissions.querySync({ name: "run", command }).state === "granted";
}

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

/** Signals the router passes on to its child (those a Deno process may listen to and a user sends). */
const FORWARDED: Deno.Signal[] = ["SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGUSR1", "SIGUSR2"];

/** Waits for the child, forwarding FORWARDED signals to it; returns its exit code. */
async function supervise(child: Deno.ChildProcess): Promise<number> {
  const listeners = FORWARDED.map((sig) => {
    const forward = () => {
      try {
        child.kill(sig);
      } catch {
        // already exited
      }
    };
    Deno.addSignalListener(sig, forward);
    return [sig, forward] as const;
  });
  try {
    const status = await child.status;
    return status.signal !== null ? signalExitCode(status.signal) : status.code;
  } finally {
    for (const [sig, forward] of listeners) Deno.removeSignalListener(sig, forward);
  }
}

/** Signal numbers on Linux (signal(7)); macOS numbers differ where listed in DARWIN. */
const LINUX_SIGNALS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGILL: 4,
  SIGTRAP: 5,
  SIGABRT: 6,
  SIGIOT: 6,
  SIGBUS: 7,
  SIGFPE: 8,
  SIGKILL: 9,
  SIGUSR1: 10,
  SIGSEGV: 11,
  SIGUSR2: 12,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
  SIGSTKFLT: 16,
  SIGCHLD: 17,
  SIGCONT: 18,
  SIGSTOP: 19,
  SIGTSTP: 20,
  SIGTTIN: 21,
  SIGTTOU: 22,
  SIGURG: 23,
  SIGXCPU: 24,
  SIGXFSZ: 25,
  SIGVTALRM: 26,
  SIGPROF: 27,
  SIGWINCH: 28,
  SIGIO: 29,
  SIGPOLL: 29,
  SIGPWR: 30,
  SIGSYS: 31,
};
const DARWIN_SIGNALS: Record<string, number> = {
  ...LINUX_SIGNALS,
  SIGEMT: 7,
  SIGBUS: 10,
  SIGSYS: 12,
  SIGURG: 16,
  SIGSTOP: 17,
  SIGTSTP: 18,
  SIGCONT: 19,
  SIGCHLD: 20,
  SIGIO: 23,
  SIGPOLL: 23,
  SIGWINCH: 28,
  SIGINFO: 29,
  SIGUSR1: 30,
  SIGUSR2: 31,
  SIGSTKFLT: 0,
  SIGPWR: 0,
};

/** The shell's exit code for a child ended by `sig`: 128 + its number (1 when unknown). */
export function signalExitCode(sig: Deno.Signal): number {
  const n = (Deno.build.os === "darwin" ? DARWIN_SIGNALS : LINUX_SIGNALS)[sig];
  return n ? 128 + n : 1;
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
  if (PROJECT_URL.protocol !== "file:" || !mayRun(self)) return await inProcess(argv);
  const base = invocationDir();
  const project = decodeURIComponent(PROJECT_URL.pathname);
  const ctx: PermissionContext = {
    invocationDir: base,
    configDir: configDir(),
    deno: Deno.build.os === "linux" ? [self, Deno.execPath()] : [Deno.execPath()],
    workerDir: `${project}src/workspace`,
    browser: envIfGranted("WMCP_BROWSER") ?? (Deno.build.os === "darwin" ? "open" : "xdg-open"),
  };
  let plan;
  try {
    plan = commandPermissions(argv, ctx);
    if (plan.kind === "child") {
      const named = namedPaths(argv, base);
      if (named.length > 0) {
        const facts = await pathFacts(named);
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
  const child = new Deno.Command(self, {
    args: [
      "run",
      ...plan.flags,
      `--config=${project}deno.json`,
      decodeURIComponent(SCOPED_MAIN.pathname),
      ...argv,
    ],
    env: { INIT_CWD: base },
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  return await supervise(child);
}
