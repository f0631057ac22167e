/**
 * The `wmcp` router (cli.ts): reads just enough of argv to know the command and the paths it
 * names, computes that command's Deno permissions (command_permissions.ts) and runs the work in
 * a child `deno run <those flags> src/cli/scoped_main.ts ARGS`, with stdio inherited, SIGINT and
 * SIGTERM forwarded and the child's exit code returned. `serve` (its own launcher), help, version
 * and unknown commands run in process. A router that may not run Deno (cli.ts started with
 * narrower flags) runs everything in process under the permissions it was given.
 */
import {
  commandPermissions,
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

/** Waits for the child, forwarding SIGINT/SIGTERM to it; returns its exit code. */
async function supervise(child: Deno.ChildProcess): Promise<number> {
  const forward = (sig: Deno.Signal) => () => {
    try {
      child.kill(sig);
    } catch {
      // already exited
    }
  };
  const onInt = forward("SIGINT");
  const onTerm = forward("SIGTERM");
  Deno.addSignalListener("SIGINT", onInt);
  Deno.addSignalListener("SIGTERM", onTerm);
  try {
    const status = await child.status;
    return status.signal !== null ? 128 + signalNumber(status.signal) : status.code;
  } finally {
    Deno.removeSignalListener("SIGINT", onInt);
    Deno.removeSignalListener("SIGTERM", onTerm);
  }
}

function signalNumber(sig: Deno.Signal): number {
  return ({ SIGINT: 2, SIGKILL: 9, SIGTERM: 15, SIGHUP: 1, SIGQUIT: 3, SIGPIPE: 13 } as Record<
    string,
    number
  >)[sig] ?? 1;
}

/** Real paths of `paths` (links resolved), learned by the path probe child. */
async function realPaths(paths: string[]): Promise<Record<string, string>> {
  if (paths.length === 0) return {};
  const { probePaths } = await import("./path_probe.ts");
  const facts = await probePaths(paths);
  const out: Record<string, string> = {};
  for (const f of facts ?? []) if (f.real !== undefined) out[f.path] = f.real;
  return out;
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
        plan = commandPermissions(argv, { ...ctx, realPaths: await realPaths(named) });
      }
    }
  } catch (err) {
    if (!(err instanceof UngrantablePathError)) throw err;
    console.error(JSON.stringify({ error: { code: "USAGE", message: err.message } }));
    return 2;
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
