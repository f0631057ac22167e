/**
 * `cli serve stop --pid-file F`: stops a running HTTP server and waits for it to exit. It
 * signals only a pid the pid file's own server proves it wrote (see src/server/pid_file.ts):
 * a pid <= 1, a non-loopback url, a file without a secret, writable by others or inside the
 * workspace it names, and a server that cannot answer the challenge are refused (exit 4); so is
 * a pid file owned by another user, a link, or anything but a small regular file. When this
 * process lacks the permissions the flags need (read on the pid file, net on loopback, run for
 * kill, sys=uid), it re-runs itself as a child with exactly those, as serve_launch.ts does.
 */
import { SERVE_STOP } from "./commands.ts";
import { parseCommand } from "./declare.ts";
import { resolveFromInvocation, UsageError } from "../config.ts";
import {
  checkPidFile,
  type PidFileCheck,
  type PidFileContents,
  PidFileError,
  readPidFile,
} from "../server/pid_file.ts";
import { mayRun, selfDeno } from "../launch/deno.ts";
import { spawnDeno } from "../launch/child.ts";
import { Grants, isGrantable } from "../launch/grants.ts";

const CLI_URL = new URL("../../cli.ts", import.meta.url);

/** The loopback names serve stop may reach (a pid file's url must be one of them). */
const LOOPBACK_NET = "127.0.0.1,localhost,[::1]";

/** The permission flags `serve stop --pid-file F` needs: exactly these and nothing else. */
export function stopPermissions(pidFile: string): string[] {
  if (!isGrantable(pidFile)) {
    throw new UsageError(`cannot grant a permission on a path with a comma: ${pidFile}`);
  }
  return new Grants().read(pidFile, "--pid-file").allow("net", LOOPBACK_NET.split(","))
    .allow("run", ["kill"]).allow("sys", ["uid"]).flags();
}

function granted(pidFile: string): boolean {
  const q = (d: Deno.PermissionDescriptor) => Deno.permissions.querySync(d).state === "granted";
  return q({ name: "read", path: pidFile }) && q({ name: "net", host: "127.0.0.1" }) &&
    q({ name: "net", host: "localhost" }) && q({ name: "net", host: "[::1]" }) &&
    q({ name: "run", command: "kill" }) &&
    q({ name: "sys", kind: "uid" });
}

/** The Deno binary to re-run as, when this process may run it; undefined otherwise. */
function selfExe(): string | undefined {
  // On Linux /proc/self/exe is the running Deno binary; elsewhere a stop runs in process.
  if (Deno.build.os !== "linux" || CLI_URL.protocol !== "file:") return undefined;
  return mayRun(selfDeno()) ? selfDeno() : undefined;
}

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
  const { values } = await parseCommand(SERVE_STOP, args);
  if (values["pid-file"] === undefined) throw new UsageError("serve stop needs --pid-file FILE");
  const timeout = values.timeout ?? "15";
  const timeoutMs = Number(timeout) * 1000;
  const pidFile = resolveFromInvocation(values["pid-file"]);
  const exe = granted(pidFile) ? undefined : selfExe();
  if (exe !== undefined) {
    // Re-run with exactly the permissions this stop needs; its JSON line and exit code are ours.
    const child = await spawnDeno({
      deno: exe,
      flags: ["--quiet", "--no-prompt", ...stopPermissions(pidFile)],
      module: CLI_URL,
      args: ["serve", "stop", "--pid-file", pidFile, "--timeout", timeout],
      stdin: "null",
    }).status;
    return child.code;
  }
  let record: PidFileContents | null = null;
  let check: PidFileCheck;
  try {
    record = await readPidFile(pidFile);
    check = record === null ? { status: "unreachable" } : await checkPidFile(pidFile, record);
  } catch (err) {
    if (!(err instanceof PidFileError)) throw err;
    check = { status: "refused", reason: "unusable", message: err.message };
  }
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
