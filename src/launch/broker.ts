/**
 * The engine broker, from the launcher's side (decision 0054): with `--engine auto|native` the
 * server launcher starts the broker (src/launch/broker/main.ts) beside the server, outside its
 * sandbox, as a child Deno granted run on bwrap, read on the rg and find candidates, and
 * read/write/net on its private socket directory only. The token goes to its stdin, which stays
 * open: when the launcher goes, the broker goes. The server learns the socket and the token from
 * its environment (ENGINE_ENV) and may use that one socket; or, when the broker cannot run
 * ripgrep, the reason. A broker that exits while the server runs takes the server with it.
 *
 * @module
 */
import { Grants } from "./grants.ts";
import { outputOfProgram, spawnDeno } from "./child.ts";
import { projectFile } from "./project.ts";
import { FIND_CANDIDATES, RG_CANDIDATES } from "./broker/programs.ts";
import {
  ENGINE_CHOICES,
  ENGINE_ENV,
  type EngineChoice,
  SOCKET_NAME,
} from "../workspace/native/protocol.ts";

export { ENGINE_CHOICES, ENGINE_ENV, type EngineChoice };

/** How long the broker may take to say it is ready (ms). */
const READY_MS = 30_000;
/** How long a broker asked to stop has before it is killed (ms). */
const STOP_MS = 2_000;

/** A running broker. */
export interface Broker {
  /** Its private directory, which the server's sandbox mounts. */
  dir: string;
  /** The socket the server connects to. */
  socket: string;
  /** What the server must say first. */
  token: string;
  /** Its process id. */
  pid: number;
  /**
   * rg's --debug log names the large files, so greps run no find (its start checked); undefined
   * when the broker said ready before its checks (earlyReady).
   */
  largeLog?: boolean;
  /** Settles with the broker's exit code when it exits, whenever that is. */
  exited: Promise<number>;
  /** Ends it: its stdin closes (it exits on its own), then SIGKILL after STOP_MS. */
  stop(): Promise<void>;
}

/** The environment the server gets for a broker, or for why there is none. */
export function engineEnv(engine: Broker | { reason: string } | undefined): Record<string, string> {
  if (engine === undefined) return {};
  if ("reason" in engine) return { [ENGINE_ENV.reason]: engine.reason };
  return { [ENGINE_ENV.socket]: engine.socket, [ENGINE_ENV.token]: engine.token };
}

function randomHex(bytes: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}

/** The broker's grants: run on bwrap; its directory; the programs it may find. */
function brokerFlags(dir: string, socket: string): string[] {
  const grants = new Grants()
    .allow("run", ["bwrap"])
    .allow("read", [dir, ...RG_CANDIDATES, ...FIND_CANDIDATES], "the engine broker's files")
    .allow("write", [dir], "the engine broker's directory")
    .allow("net", [`unix:${socket}`], "the engine broker's socket");
  return ["--quiet", "--no-prompt", ...grants.flags()];
}

/**
 * Runs a program under bwrap over the host's tree as it is (no network, an environment of PATH
 * only): how the launcher, which holds run on bwrap and no write permission, makes and removes
 * the broker's directory. No new rights: bwrap can run any program already.
 */
function onHost(program: string, ...args: string[]): Promise<Deno.CommandOutput> {
  return outputOfProgram(
    ["bwrap", "--unshare-all", "--die-with-parent", "--bind", "/", "/", "--", program, ...args],
    { clearEnv: true, env: { PATH: "/usr/bin:/bin" } },
  );
}

/**
 * Makes the broker's directory (0700) before the broker runs, so the server's sandbox, which
 * mounts it, starts beside the broker instead of after it (onHost). `mkdir` without `-p` fails on
 * a name that exists, and the broker checks the directory again (`--dir-made`). Undefined when
 * made; else why not (the broker then makes it itself, and the launcher waits for it).
 */
export async function makePrivateDir(dir: string): Promise<string | undefined> {
  try {
    const out = await onHost("mkdir", "-m", "0700", "--", dir);
    if (out.success) return undefined;
    return new TextDecoder().decode(out.stderr).trim().slice(0, 300) || `exit ${out.code}`;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Reads the broker's first stdout line: its ready event. */
async function readyLine(stdout: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  // The rest of its stdout (nothing is expected) is drained so it never blocks.
  (async () => {
    while (!(await reader.read()).done) { /* drained */ }
  })().catch(() => {});
  return text.split("\n")[0];
}

/**
 * Starts the broker for the workspace at `root` (an absolute path) and waits until it listens:
 * the broker, or why the native engine cannot serve (its reason; the broker has ended then).
 * `dir` names its directory instead of a fresh random one (tests: a socket path their
 * permissions name; it must not exist). With `earlyReady` the broker is ready once it listens and
 * rg and find are found; whether rg runs in its sandbox is then said by its hello answer, to the
 * server, which serves with the built-in engine and that reason when it does not (`--engine auto`:
 * the check is off a server's cold start). Without it (`--engine native`, which must refuse to
 * start without the engine) the broker is ready only once rg has run in its sandbox. With
 * `noWait` (`--engine auto`) the launcher makes the directory (makePrivateDir) and returns as
 * soon as the broker is spawned: the server starts beside it, connects once it listens (its
 * client retries, CONNECT_MS) and learns the checks' verdict from the hello answer; a broker that
 * exits takes the server with it, as at any time. noWait implies earlyReady: where the directory
 * cannot be made so, the launcher waits for an early ready.
 */
export async function startBroker(
  root: string,
  options: { dir?: string; earlyReady?: boolean; noWait?: boolean } = {},
): Promise<Broker | { reason: string }> {
  const dir = options.dir ?? `/tmp/wmcp-engine-${randomHex(16)}`;
  const socket = `${dir}/${SOCKET_NAME}`;
  const token = randomHex(32);
  // noWait: the directory first, then nothing to wait for (the server retries its connection);
  // where it cannot be made first, early ready.
  const made = options.noWait === true && (await makePrivateDir(dir)) === undefined;
  const flags = [
    ...(options.earlyReady || options.noWait ? ["--early-ready"] : []),
    ...(made ? ["--dir-made"] : []),
  ];
  let child: Deno.ChildProcess;
  try {
    child = spawnDeno({
      flags: brokerFlags(dir, socket),
      module: projectFile("src/launch/broker/main.ts"),
      args: [...flags, "--dir", dir, "--root", root],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    });
  } catch (err) {
    // The directory made for it, which no broker came to take.
    if (made) await onHost("rmdir", "--", dir).catch(() => {});
    return { reason: `the engine broker could not start: ${(err as Error).message}` };
  }
  const writer = child.stdin.getWriter();
  const exited = child.status.then((s) => s.code);
  const stop = async () => {
    await writer.close().catch(() => {});
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch { /* ended */ }
    }, STOP_MS);
    await exited;
    clearTimeout(timer);
  };
  await writer.write(new TextEncoder().encode(token + "\n")).catch(() => {});
  if (made) {
    // Its ready line (nothing else is expected) is read and dropped, so it never blocks.
    void readyLine(child.stdout).catch(() => {});
    return { dir, socket, token, pid: child.pid, exited, stop };
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<string>((r) => (timer = setTimeout(() => r(""), READY_MS)));
  const line = await Promise.race([readyLine(child.stdout), exited.then(() => ""), timeout]);
  // Not left to hold the event loop for READY_MS (a library caller's process would wait on it).
  clearTimeout(timer);
  let ready: { event?: string; native?: boolean; reason?: string; largeFromRg?: boolean } = {};
  try {
    ready = JSON.parse(line);
  } catch { /* no ready line */ }
  if (ready.event !== "ready") {
    await stop();
    return { reason: "the engine broker did not start" };
  }
  if (ready.native !== true) {
    await stop();
    return { reason: ready.reason ?? "ripgrep cannot run here" };
  }
  const largeLog = ready.largeFromRg === undefined ? undefined : ready.largeFromRg === true;
  return { dir, socket, token, pid: child.pid, largeLog, exited, stop };
}
