/**
 * The one way this project starts a child Deno: `deno run FLAGS MODULE ARGS` by the name run
 * permission is granted on (deno.ts), with the flags a Grants wrote, directly or through a
 * program that execs it (bubblewrap: sandboxed.ts); and the one supervisor, which forwards the
 * signals a user sends to the child (or to the process it names, such as a server inside
 * bubblewrap) and returns the child's exit code, 128 + N when signal N ended it.
 */
import { moduleArg, projectConfigFlag, selfDeno } from "./deno.ts";

/** How to start a child Deno. */
export interface DenoChild {
  /** Flags after `run`: permissions (Grants.flags()), `--quiet`, `--config=...`, and so on. */
  flags: readonly string[];
  /** The module to run. */
  module: URL;
  /** Its arguments. */
  args?: readonly string[];
  /** The Deno subcommand (default `run`; `cache` loads the module graph and runs nothing). */
  subcommand?: "run" | "cache";
  /** Extra environment variables (the rest is inherited unless clearEnv). */
  env?: Record<string, string>;
  /** Start with only `env` (default false). */
  clearEnv?: boolean;
  /** The working directory (default: this process's). */
  cwd?: string;
  /** Standard streams (default: all inherited). */
  stdin?: "inherit" | "null" | "piped";
  stdout?: "inherit" | "null" | "piped";
  stderr?: "inherit" | "null" | "piped";
  /** The binary to run instead of this Deno (an installed copy of it). */
  deno?: string;
  /**
   * A program that runs the Deno command line it is given (binary first) by exec'ing it, such as
   * bubblewrap: returns that program's own command line, program first.
   */
  via?: (deno: readonly string[]) => readonly [string, ...string[]];
}

/**
 * The argv of a child Deno (after the binary). The project's deno.json is named unless the flags
 * name a config (projectConfigFlag: under node_modules Deno would find none).
 */
export function denoArgs(
  c: Pick<DenoChild, "flags" | "module" | "args" | "subcommand">,
): string[] {
  const config = c.flags.some((f) => f === "--config" || f.startsWith("--config="))
    ? []
    : [projectConfigFlag() ?? []].flat();
  return [c.subcommand ?? "run", ...c.flags, ...config, moduleArg(c.module), ...(c.args ?? [])];
}

/** The Deno.Command of one child process (the one place this project constructs one). */
function processCommand(
  argv: readonly [string, ...string[]],
  c: Omit<DenoChild, "flags" | "module">,
): Deno.Command {
  const [program, ...args] = argv;
  return new Deno.Command(program, {
    args,
    env: c.env,
    clearEnv: c.clearEnv,
    cwd: c.cwd,
    stdin: c.stdin ?? "inherit",
    stdout: c.stdout ?? "inherit",
    stderr: c.stderr ?? "inherit",
  });
}

function command(c: DenoChild): Deno.Command {
  const deno = [c.deno ?? selfDeno(), ...denoArgs(c)] as const;
  return processCommand(c.via === undefined ? deno : c.via(deno), c);
}

/** Starts a child Deno. */
export function spawnDeno(c: DenoChild): Deno.ChildProcess {
  return command(c).spawn();
}

/** Runs a child Deno to its end and collects its piped output. */
export function outputOfDeno(c: DenoChild): Promise<Deno.CommandOutput> {
  return command({ stdin: "null", stdout: "piped", stderr: "null", ...c }).output();
}

/** Runs a program (not Deno) to its end: stdin closed, its output piped unless `c` says. */
export function outputOfProgram(
  argv: readonly [string, ...string[]],
  c: Omit<DenoChild, "flags" | "module" | "deno" | "via"> = {},
): Promise<Deno.CommandOutput> {
  return processCommand(argv, { stdin: "null", stdout: "piped", stderr: "piped", ...c }).output();
}

/**
 * Runs a launcher that execs this project's Deno (an installed `wmcp` script) to its end, stdin
 * closed, and collects its output.
 */
export function outputOfLauncher(
  launcher: string,
  args: readonly string[],
): Promise<Deno.CommandOutput> {
  return processCommand([launcher, ...args], { stdin: "null", stdout: "piped", stderr: "piped" })
    .output();
}

/**
 * Sends `sig` to `pid` through kill(1) (Deno.kill needs unscoped run permission): how a signal
 * reaches a process that is not this one's child, such as a server inside bubblewrap.
 */
export async function killPid(pid: number, sig: Deno.Signal): Promise<void> {
  try {
    await processCommand(["kill", `-${sig.slice(3)}`, String(pid)], {
      stdout: "piped",
      stderr: "null",
    }).output();
  } catch {
    // kill(1) unavailable: the caller falls back to its child
  }
}

/** Signals passed on to a supervised child (those a Deno process may listen to and a user sends). */
export const FORWARDED: readonly Deno.Signal[] = [
  "SIGHUP",
  "SIGINT",
  "SIGQUIT",
  "SIGTERM",
  "SIGUSR1",
  "SIGUSR2",
];

/** How a child is supervised. */
export interface SuperviseOptions {
  /** The signals to forward (default FORWARDED). */
  signals?: readonly Deno.Signal[];
  /**
   * Where a signal goes instead of the child, when this names a pid (a server inside bubblewrap:
   * a signal to bwrap would end it abruptly); `send` delivers it.
   */
  redirect?: { pid: () => number | undefined; send: (pid: number, sig: Deno.Signal) => void };
  /**
   * Signals held since before the child was spawned (holdSignals): released once supervision
   * listens, and each one caught is forwarded then, as if it arrived now.
   */
  held?: HeldSignals;
  /**
   * When this settles, the child is sent SIGTERM the way a forwarded signal goes (a process it
   * depends on ended: the engine broker). Not counted as `signalled`.
   */
  stop?: Promise<unknown>;
}

/** Signals caught while no child is supervised yet (holdSignals). */
export interface HeldSignals {
  readonly caught: readonly Deno.Signal[];
  /** Stops holding (supervise calls it once its own listeners are in place). */
  release(): void;
}

/**
 * Holds `signals` from now until a supervise takes over: between spawning a child and
 * supervising it a SIGTERM would otherwise end this process by the default action, leaving the
 * child unsupervised. Call before the spawn; pass the result to supervise as `held`.
 */
export function holdSignals(signals: readonly Deno.Signal[] = FORWARDED): HeldSignals {
  const caught: Deno.Signal[] = [];
  const listeners = signals.map((sig) => {
    const hold = () => void caught.push(sig);
    Deno.addSignalListener(sig, hold);
    return [sig, hold] as const;
  });
  let released = false;
  return {
    caught,
    release() {
      if (released) return;
      released = true;
      for (const [sig, hold] of listeners) Deno.removeSignalListener(sig, hold);
    },
  };
}

/**
 * Starts a child Deno with `signals` held from just before the spawn (holdSignals), so a signal
 * that arrives before supervise listens is forwarded then; released again when the spawn throws.
 */
export function spawnHeld(
  c: DenoChild,
  signals: readonly Deno.Signal[] = FORWARDED,
): { child: Deno.ChildProcess; held: HeldSignals } {
  const held = holdSignals(signals);
  try {
    return { child: spawnDeno(c), held };
  } catch (err) {
    held.release();
    throw err;
  }
}

/**
 * Waits for `child`, forwarding signals to it; returns its exit code (128 + N when signal N ended
 * it) and whether a forwarded signal arrived meanwhile.
 */
export async function supervise(
  child: Deno.ChildProcess,
  options: SuperviseOptions = {},
): Promise<{ code: number; signalled: boolean }> {
  let signalled = false;
  const deliver = (sig: Deno.Signal) => {
    const target = options.redirect?.pid();
    if (target !== undefined) return options.redirect!.send(target, sig);
    try {
      child.kill(sig);
    } catch {
      // already exited
    }
  };
  let supervising = true;
  const stopNow = () => supervising && deliver("SIGTERM");
  options.stop?.then(stopNow, stopNow);
  const listeners = (options.signals ?? FORWARDED).map((sig) => {
    const forward = () => {
      signalled = true;
      deliver(sig);
    };
    Deno.addSignalListener(sig, forward);
    return [sig, forward] as const;
  });
  if (options.held !== undefined) {
    // Ours are listening: stop holding, then deliver what arrived before the child existed.
    options.held.release();
    for (const sig of options.held.caught) listeners.find(([s]) => s === sig)?.[1]();
  }
  try {
    const status = await child.status;
    return {
      code: status.signal !== null ? signalExitCode(status.signal) : status.code,
      signalled,
    };
  } finally {
    supervising = false;
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
