/**
 * The one way tests launch the wmcp CLI (cli.ts) as a real child process: `cliArgv` is the only
 * place that knows how the command line is built, so a change to how cli.ts is started (a
 * router, an installed command) is made here once.
 */

/** Absolute path of cli.ts. */
export const CLI = new URL("../../cli.ts", import.meta.url).pathname;

/** The `deno` argv running cli.ts with the given Deno flags and CLI arguments. */
export function cliArgv(denoFlags: readonly string[], args: readonly string[]): string[] {
  return ["run", ...denoFlags, CLI, ...args];
}

/** How to run one CLI child. */
export interface CliOptions {
  /** Working directory of the child (default: the test's). */
  cwd?: string;
  /** Environment of the child: added to ours, or all of it with clearEnv. */
  env?: Record<string, string>;
  /** Start from an empty environment (only `env`). */
  clearEnv?: boolean;
  /** Text fed to stdin (else stdin is closed). */
  stdin?: string;
  /** The child is killed and the run throws after this long (default 60 s). */
  timeoutMs?: number;
}

/** What one CLI run produced. */
export interface CliResult {
  code: number;
  signal: Deno.Signal | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit, in ms. */
  ms: number;
}

/** A running CLI child. */
export interface SpawnedCli {
  child: Deno.ChildProcess;
  /** Resolves when the child exited and its output was read (rejects after a watchdog kill). */
  done: Promise<CliResult>;
}

/** Starts `deno run DENO_FLAGS cli.ts ARGS`; a watchdog kills it after timeoutMs. */
export function spawnCli(
  denoFlags: readonly string[],
  args: readonly string[],
  options: CliOptions = {},
): SpawnedCli {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: cliArgv(denoFlags, args),
    cwd: options.cwd,
    env: options.env,
    clearEnv: options.clearEnv,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const w = child.stdin.getWriter();
    w.write(new TextEncoder().encode(options.stdin)).then(() => w.close()).catch(() => {});
  }
  // The output is read through readers the watchdog can cancel: a child the router started
  // (with the command's grants) may outlive a killed router and hold the pipes open.
  const stdout = collect(child.stdout.getReader());
  const stderr = collect(child.stderr.getReader());
  let killed = false;
  const watchdog = setTimeout(() => {
    killed = true;
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    child.status.then(() => {
      stdout.cancel();
      stderr.cancel();
    });
  }, options.timeoutMs ?? 60_000);
  const done = Promise.all([child.status, stdout.text, stderr.text]).then(([status, out, err]) => {
    clearTimeout(watchdog);
    const r: CliResult = {
      code: status.code,
      signal: status.signal,
      stdout: out,
      stderr: err,
      ms: performance.now() - started,
    };
    if (killed) throw new Error(`cli ${args.join(" ")} did not exit in time: ${JSON.stringify(r)}`);
    return r;
  }, (err) => {
    clearTimeout(watchdog);
    throw err;
  });
  return { child, done };
}

/** A stream read to its end as text, or as far as it got when cancelled. */
function collect(reader: ReadableStreamDefaultReader<Uint8Array>) {
  const chunks: Uint8Array[] = [];
  const text = (async () => {
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
      }
    } catch { /* cancelled */ }
    return new TextDecoder().decode(concat(chunks));
  })();
  return { text, cancel: () => void reader.cancel().catch(() => {}) };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Runs `deno run DENO_FLAGS cli.ts ARGS` to completion. */
export function runCli(
  denoFlags: readonly string[],
  args: readonly string[],
  options: CliOptions = {},
): Promise<CliResult> {
  return spawnCli(denoFlags, args, options).done;
}

/** Quotes one argument for `sh -c` (single quotes; a quote inside is closed, escaped, reopened). */
export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** How to run one CLI child on a pseudo-terminal. */
export interface PtyOptions {
  /** Environment of the child: added to ours, or all of it with clearEnv. */
  env?: Record<string, string>;
  /** Start from an empty environment (only `env`). */
  clearEnv?: boolean;
  /** Types Ctrl-C (the terminal sends SIGINT) once this holds for the screen so far. */
  interruptWhen?: (screen: string) => boolean;
  /** The child is killed and the run throws after this long (default 60 s). */
  timeoutMs?: number;
}

/** What one CLI run on a pseudo-terminal produced. */
export interface PtyResult {
  /** The exit code of the command (`script -e` passes it on). */
  code: number;
  /** Everything the terminal showed (stdout and stderr), "\r\n" turned into "\n". */
  screen: string;
}

/**
 * Runs `deno run DENO_FLAGS cli.ts ARGS` on a pseudo-terminal (`script -qec`): stdin, stdout and
 * stderr are the terminal. With interruptWhen, Ctrl-C is typed (once) when the screen matches.
 *
 * `script` runs the command through `$SHELL -c` (`/bin/sh` when SHELL is unset, as on CI); dash
 * stays as the command's parent and dies of the Ctrl-C itself, so `script` would report 130
 * whatever the command did. `exec` puts the command in the shell's place.
 */
export async function runCliOnPty(
  denoFlags: readonly string[],
  args: readonly string[],
  options: PtyOptions = {},
): Promise<PtyResult> {
  const command = "exec " +
    [Deno.execPath(), ...cliArgv(denoFlags, args)].map(shellQuote).join(" ");
  const child = new Deno.Command("script", {
    args: ["-qec", command, "/dev/null"],
    env: options.env,
    clearEnv: options.clearEnv,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let killed = false;
  const watchdog = setTimeout(() => {
    killed = true;
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, options.timeoutMs ?? 60_000);
  const stdin = child.stdin.getWriter();
  let screen = "";
  let typed = false;
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      screen += value;
      if (!typed && options.interruptWhen?.(screen)) {
        typed = true;
        await stdin.write(new Uint8Array([3])).catch(() => {});
      }
    }
    const status = await child.status;
    await child.stderr.cancel().catch(() => {});
    if (killed) throw new Error(`cli ${args.join(" ")} on a pty did not exit in time: ${screen}`);
    // The terminal turns each "\n" into "\r\n"; progress redraws keep their bare "\r".
    return { code: status.code, screen: screen.replaceAll("\r\n", "\n") };
  } finally {
    clearTimeout(watchdog);
    await stdin.close().catch(() => {});
  }
}
