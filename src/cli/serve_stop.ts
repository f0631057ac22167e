/**
 * `cli serve stop --pid-file F`: stops a running HTTP server and waits for it to exit. It
 * signals only a pid the pid file's own server proves it wrote (see src/server/pid_file.ts):
 * a pid <= 1, a non-loopback url, a file without a secret, writable by others or inside the
 * workspace it names, and a server that cannot answer the challenge are refused (exit 4).
 */
import { parseArgs } from "node:util";
import { resolveFromInvocation, UsageError } from "../config.ts";
import { checkPidFile, readPidFile } from "../server/pid_file.ts";

/** Exit codes of `serve stop`. */
export const EXIT_STOP = {
  stopped: 0,
  stillRunning: 1,
  usage: 2,
  notRunning: 3,
  refused: 4,
} as const;

async function alive(pid: number): Promise<boolean> {
  const r = await new Deno.Command("kill", {
    args: ["-0", String(pid)],
    stdout: "null",
    stderr: "null",
  }).output();
  return r.success;
}

/** Runs `serve stop`; returns the exit code and writes one JSON line describing what happened. */
export async function serveStop(
  args: string[],
  write: (line: string) => Promise<void>,
): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: { "pid-file": { type: "string" }, timeout: { type: "string", default: "15" } },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values["pid-file"] === undefined) throw new UsageError("serve stop needs --pid-file FILE");
  const timeoutMs = Number(values.timeout) * 1000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new UsageError("--timeout must be a positive number of seconds");
  }
  const pidFile = resolveFromInvocation(values["pid-file"]);
  const record = await readPidFile(pidFile);
  const check = record === null
    ? { status: "unreachable" as const }
    : await checkPidFile(pidFile, record);
  if (check.status === "refused") {
    // Nothing is signalled: the file is forged, copied, or not bound to the server it names.
    await write(
      JSON.stringify({
        event: "refused",
        pidFile,
        pid: record?.pid ?? null,
        reason: check.reason,
        message: check.message,
      }) + "\n",
    );
    return EXIT_STOP.refused;
  }
  if (record === null || check.status !== "proven") {
    // Never signal a pid we cannot prove is our server: it may have been reused.
    await write(JSON.stringify({ event: "not-running", pidFile, pid: record?.pid ?? null }) + "\n");
    return EXIT_STOP.notRunning;
  }
  const kill = await new Deno.Command("kill", {
    args: ["-TERM", "--", String(record.pid)],
    stderr: "piped",
  }).output();
  if (!kill.success) {
    throw new UsageError(
      `cannot signal pid ${record.pid}: ${new TextDecoder().decode(kill.stderr).trim()}`,
    );
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!(await alive(record.pid))) {
      await write(JSON.stringify({ event: "stopped", pid: record.pid, url: record.url }) + "\n");
      return EXIT_STOP.stopped;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await write(JSON.stringify({ event: "still-running", pid: record.pid, url: record.url }) + "\n");
  return EXIT_STOP.stillRunning;
}
