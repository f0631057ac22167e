/**
 * A child Deno inside the kernel sandbox: bubblewrap (the argv src/sandbox/bwrap.ts builds for a
 * plan) runs a one-line shell that announces its pid and execs `deno run FLAGS MODULE ARGS`, the
 * binary named by its real path (what the sandbox binds). The child's stderr passes through with
 * the announcement taken out (src/sandbox/status_stream.ts), and the signals supervised go to the
 * inner Deno by that pid (a signal to bwrap would end it abruptly). The result says whether the
 * child ran, or why bubblewrap could not start it; what to do then is the caller's.
 *
 * The project directory, `node_modules/` included, is read-only inside: the child Deno of a
 * checkout uses `node_modules/` as it finds it and never sets it up (readOnlyNodeModules).
 */
import { bwrapArgs, type SandboxPlan } from "../sandbox/bwrap.ts";
import { ANNOUNCE_AND_EXEC, pipeStderr } from "../sandbox/status_stream.ts";
import { denoPath } from "./deno.ts";
import { type DenoChild, type HeldSignals, killPid, spawnHeld, supervise } from "./child.ts";

/**
 * The sandboxed Deno's `node_modules/` mode for a project at `projectDir`: used as it is, never
 * written. With the project's `nodeModulesDir: "auto"` every Deno run checks `node_modules/`
 * against the lockfile and repairs what it finds missing, and a `deno cache` in the project (the
 * one `config print` and install run, src/launch/warm.ts) redoes its `.bin` links, each removed
 * before it is created again. A sandboxed server whose npm modules loaded in such a moment tried
 * to create the link itself and ended on EROFS ("failed to symlink ... Read-only file system"):
 * after the stdio entry's first answers (its npm modules load then), the client saw only
 * "Connection closed". The launcher, outside, completes `node_modules/` first.
 *
 * Not under a `node_modules/` directory (the npm package, decision 0046): there Deno runs no
 * TypeScript in that mode (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING), and the package's own
 * `deno cache` runs once, when it is installed or first run.
 */
export function readOnlyNodeModules(projectDir: string): string[] {
  return projectDir.split("/").includes("node_modules") ? [] : ["--node-modules-dir=manual"];
}

/** The child Deno to start in the sandbox (its streams: stdin and stdout inherited). */
export type SandboxedChild = Pick<DenoChild, "flags" | "module" | "args" | "env">;

/** How a sandboxed start ended. */
export type SandboxedRun =
  /** The child ran, or a supervised signal stopped it: its exit code (128 + N by signal N). */
  | { kind: "ended"; code: number }
  /** bwrap could not be started at all (`spawn`), or could not set the sandbox up or start Deno in it (`setup`). */
  | { kind: "unavailable"; stage: "spawn" | "setup"; why: string };

/** The exit codes of a shell whose `exec` failed (not found, not executable, or no loader). */
const EXEC_FAILED = new Set([126, 127]);

/** Why bwrap could not be started at all (spawn failed), in the words the old probe used. */
function spawnFailure(err: unknown): string {
  if (err instanceof Deno.errors.NotFound) {
    return "bwrap (Debian package bubblewrap) is not on PATH";
  }
  if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
    return `this process may not run bwrap (${(err as Error).message})`;
  }
  return `bwrap could not be started: ${(err as Error).message}`;
}

/** The bwrap command line that runs `deno` (binary first) inside the sandbox of `plan`. */
function inBwrap(plan: SandboxPlan, deno: readonly string[]): readonly [string, ...string[]] {
  return ["bwrap", ...bwrapArgs(plan, ["/bin/sh", "-c", ANNOUNCE_AND_EXEC, ...deno])];
}

/**
 * Runs `c` inside the sandbox of `plan`, supervising `signals` (held from before the spawn) and
 * sending them to the inner Deno once it has announced its pid; SIGTERM goes the same way when
 * `stop` settles.
 */
export async function runSandboxedDeno(
  plan: SandboxPlan,
  c: SandboxedChild,
  signals: readonly Deno.Signal[],
  stop?: Promise<unknown>,
): Promise<SandboxedRun> {
  let started: { child: Deno.ChildProcess; held: HeldSignals };
  try {
    started = spawnHeld({
      ...c,
      flags: [...readOnlyNodeModules(plan.projectDir), ...c.flags],
      deno: denoPath(),
      via: (deno) => inBwrap(plan, deno),
      stdin: "inherit",
      stdout: "inherit",
      stderr: "piped",
    }, signals);
  } catch (err) {
    return { kind: "unavailable", stage: "spawn", why: spawnFailure(err) };
  }
  const { child, held } = started;
  let innerPid: number | undefined;
  const early: string[] = [];
  const errWriter = Deno.stderr;
  const stderrDone = pipeStderr(child.stderr, {
    to: (b) => errWriter.write(b),
    onChildPid: (pid) => (innerPid = pid),
    onEarlyLine: (line) => early.push(line),
  }).catch(() => {});
  const { code, signalled } = await supervise(child, {
    held,
    signals,
    stop,
    redirect: { pid: () => innerPid, send: (pid, sig) => void killPid(pid, sig) },
  });
  await stderrDone;
  // Stopped by a supervised signal (while bwrap was still setting up, or later): the caller
  // ends too; nothing is restarted, least of all outside the sandbox.
  if (signalled) return { kind: "ended", code };
  // Started: the child's own exit code. A shell whose exec failed (126/127, its message already
  // on stderr) never ran the child, which would have read stdin.
  if (innerPid !== undefined && !EXEC_FAILED.has(code)) return { kind: "ended", code };
  const why = innerPid !== undefined
    ? `Deno could not be started inside it (exit code ${code})`
    : early.map((l) => l.replace(/^bwrap: /, "")).join("; ").slice(0, 500) ||
      `bwrap exited with code ${code}`;
  return { kind: "unavailable", stage: "setup", why };
}
