/**
 * Runs the CLI's `main(argv)` (what cli.ts's router runs, in a child with the command's
 * permissions or in process) in this test's own process, with its standard streams captured
 * through src/std_streams.ts and the environment and invocation directory of one run set and
 * restored. The result has the shape of a real run's (tests/_support/cli.ts).
 *
 * For tests of what a command answers (help, usage errors, suggestions, rendering, argument
 * checks), not of the process boundary. What only a real child shows stays tested through real
 * children: the router's permissions and path probe, signals, a closed stdout pipe, exit through
 * Deno.exit, what reaches a real terminal. Decision 0052.
 *
 * Runs are serialised (the streams and the environment are this process's): concurrent callers
 * queue. Under this test's permissions, not the command's: the permissions main gives up in
 * process (`Deno.permissions.revokeSync`, before a client or a server launcher runs) are recorded
 * in the result, not applied, so the test keeps its own; a check of what a command may touch
 * belongs to a real run.
 */
import { main } from "../../src/cli/main.ts";
import { route } from "../../src/cli/router.ts";
import { type OutStream, withStreams } from "../../src/std_streams.ts";
import type { CliResult } from "./cli.ts";
import { TEST_CONFIG_DIR } from "../client/_client.ts";

/** How to run main in process. */
export interface InProcessOptions {
  /** Environment variables set for the run (and restored after). */
  env?: Record<string, string>;
  /** The invocation directory (INIT_CWD of the run); default the test's working directory. */
  cwd?: string;
  /** What the captured stdout says when asked whether it is a terminal (default false). */
  stdoutIsTerminal?: boolean;
  /**
   * What stdin says when asked whether it is a terminal (default false). True makes a client run
   * interactive (it may sign in); nothing is read from the test's stdin unless the run prompts.
   */
  stdinIsTerminal?: boolean;
  /**
   * Run cli.ts's router (`route(argv)`, src/cli/router.ts) instead of `main(argv)`: for what the
   * router answers before it starts the command's child (a path it cannot grant, a missing root).
   * Its path and entry probes are still real children; a command it routes to a child would run
   * there, with output not captured: use it where the router answers itself.
   */
  router?: boolean;
}

/** What one run in process produced: a real run's fields, and the permissions it gave up. */
export interface InProcessResult extends CliResult {
  revoked: Deno.PermissionDescriptor[];
}

/** Variables a run never inherits from the test process (a run sets them through `env`). */
const UNSET = ["WMCP_TOKEN", "WMCP_PROG", "FORCE_COLOR", "NO_COLOR", "TERM"];

/** A stream that keeps what is written to it. */
class Capture implements OutStream {
  readonly #chunks: Uint8Array[] = [];
  constructor(readonly terminal = false) {}
  write(bytes: Uint8Array): Promise<number> {
    return Promise.resolve(this.writeSync(bytes));
  }
  writeSync(bytes: Uint8Array): number {
    this.#chunks.push(bytes.slice());
    return bytes.length;
  }
  isTerminal(): boolean {
    return this.terminal;
  }
  text(): string {
    const dec = new TextDecoder();
    return this.#chunks.map((c) => dec.decode(c, { stream: true })).join("") + dec.decode();
  }
}

/** Sets env for the duration of fn, then puts back what was there. */
async function withEnv<T>(env: Record<string, string | undefined>, fn: () => Promise<T>) {
  const before = new Map(Object.keys(env).map((k) => [k, Deno.env.get(k)]));
  const set = (k: string, v: string | undefined) =>
    v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
  for (const [k, v] of Object.entries(env)) set(k, v);
  try {
    return await fn();
  } finally {
    for (const [k, v] of before) set(k, v);
  }
}

let queue: Promise<unknown> = Promise.resolve();

/** Runs `main(args)` in this process; resolves with its exit code and captured output. */
export function runInProcess(
  args: string[],
  options: InProcessOptions = {},
): Promise<InProcessResult> {
  const run = queue.then(() => once(args, options));
  queue = run.catch(() => {});
  return run;
}

async function once(args: string[], options: InProcessOptions): Promise<InProcessResult> {
  const stdout = new Capture(options.stdoutIsTerminal ?? false);
  const stderr = new Capture();
  const env: Record<string, string | undefined> = Object.fromEntries(
    UNSET.map((k) => [k, undefined]),
  );
  Object.assign(
    env,
    { INIT_CWD: options.cwd ?? Deno.cwd(), WMCP_CONFIG_DIR: TEST_CONFIG_DIR },
    options.env,
  );
  const started = performance.now();
  const revoked: Deno.PermissionDescriptor[] = [];
  const permissions = Deno.permissions as { revokeSync: Deno.Permissions["revokeSync"] };
  permissions.revokeSync = (desc) => {
    revoked.push(desc);
    return Deno.permissions.querySync(desc);
  };
  let code: number;
  try {
    code = await withEnv(
      env,
      () =>
        withStreams(
          { stdout, stderr, stdinIsTerminal: () => options.stdinIsTerminal ?? false },
          () => (options.router ? route : main)([...args]),
        ),
    );
  } finally {
    delete (permissions as Partial<typeof permissions>).revokeSync;
  }
  return {
    revoked,
    code,
    signal: null,
    stdout: stdout.text(),
    stderr: stderr.text(),
    ms: performance.now() - started,
  };
}
