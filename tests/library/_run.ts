/** Helpers of the library tests: the repository root, and a bounded child `deno` run. */

/** The repository root (a directory path, with a trailing slash). */
export const ROOT = new URL("../../", import.meta.url).pathname;

/** What a finished child printed and how it ended. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `deno ARGS` in cwd with a time limit (killed after timeoutMs; generous by default). */
export async function runDeno(
  args: string[],
  options: { cwd: string; timeoutMs?: number; env?: Record<string, string> },
): Promise<RunResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: options.cwd,
    env: { NO_COLOR: "1", ...options.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // already exited
    }
  }, options.timeoutMs ?? 120_000);
  try {
    const out = await child.output();
    const decode = (b: Uint8Array) => new TextDecoder().decode(b);
    return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
  } finally {
    clearTimeout(timer);
  }
}
