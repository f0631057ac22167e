/**
 * The engine broker (decision 0054): a Deno process the server launcher starts beside the server,
 * outside the server's sandbox, holding run permission on bwrap and read/write/net on its own
 * socket, nothing else. `main.ts [--early-ready] [--dir-made] --dir DIR --root ROOT`, the token
 * on the first line of stdin.
 *
 * It creates DIR (0700; an existing one is refused), or, with `--dir-made`, takes the one the
 * launcher made (a directory, 0700, empty, or it refuses; decision 0066), listens on
 * DIR/engine.sock, checks that rg runs in its sandbox and how its --debug log reads, says `ready`
 * on stdout, accepts the first connection that says the token, and stops listening (the socket
 * file is removed). With `--early-ready` (the launcher's `--engine auto`) it says `ready` once it
 * listens, as soon as rg and find are found, and the checks run while the server starts: their
 * verdict is the hello answer, which the first connection waits for (a native engine that cannot
 * run is then the server's to report, with its reason, as the built-in engine serving). It
 * answers that connection's greps (session.ts) until it closes. It exits, killing every grep,
 * when stdin ends (the launcher stops it, or is gone), never by itself while the launcher runs and
 * not on a signal the launcher's process group gets (the launcher acts on those), and removes DIR
 * on the way out.
 *
 * @module
 */
import { type BrokerAnswer, SOCKET_NAME } from "../../workspace/native/protocol.ts";
import { BrokerSession, readLines } from "./session.ts";
import { FORWARDED } from "../child.ts";
import { FIND_CANDIDATES, largeFromDebug, RG_CANDIDATES, rgArgs, sandboxArgs } from "./programs.ts";

/** How long `rg --version` in its sandbox may take (ms). */
const SELF_CHECK_MS = 10_000;

/** How long the first connection has to say hello (ms). */
const HELLO_MS = 10_000;

function argValue(args: string[], name: string): string {
  const i = args.indexOf(name);
  const v = i === -1 ? undefined : args[i + 1];
  if (v === undefined || !v.startsWith("/")) {
    throw new Error(`broker: ${name} ABSOLUTE_PATH is required`);
  }
  return v;
}

/** The first candidate that is a file, by its real path; undefined when none is. */
function firstFile(candidates: readonly string[]): string | undefined {
  for (const c of candidates) {
    try {
      if (Deno.statSync(c).isFile) return Deno.realPathSync(c);
    } catch { /* not there, or not ours to read */ }
  }
  return undefined;
}

type Hello = BrokerAnswer & { type: "hello" };

/** Runs a program in its sandbox over `root`, killed after SELF_CHECK_MS; its output. */
async function sandboxedOutput(
  root: string,
  program: string,
  args: string[],
): Promise<Deno.CommandOutput> {
  const child = new Deno.Command("bwrap", {
    args: sandboxArgs({ root, program, args }),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), SELF_CHECK_MS);
  try {
    return await child.output();
  } finally {
    clearTimeout(timer);
  }
}

/** Whether rg runs in its sandbox here: the hello answer (with rg's version, or why not). */
async function selfCheck(
  root: string,
  rg: string | undefined,
  find: string | undefined,
): Promise<Hello> {
  if (rg === undefined) {
    return {
      type: "hello",
      native: false,
      reason: `ripgrep is not installed (looked for ${RG_CANDIDATES.join(", ")})`,
    };
  }
  if (find === undefined) {
    return {
      type: "hello",
      native: false,
      reason: `find is not installed (${FIND_CANDIDATES[0]})`,
    };
  }
  try {
    const out = await sandboxedOutput(root, rg, ["--version"]);
    if (out.signal !== null) {
      return { type: "hello", native: false, reason: "rg did not answer in its sandbox" };
    }
    const text = new TextDecoder().decode(out.stdout).split("\n")[0].trim();
    if (out.success && text.startsWith("ripgrep ")) {
      return { type: "hello", native: true, engine: text };
    }
    const why = new TextDecoder().decode(out.stderr).trim().slice(0, 300);
    return { type: "hello", native: false, reason: `rg did not run in its sandbox: ${why}` };
  } catch (err) {
    return {
      type: "hello",
      native: false,
      reason: `bwrap could not run: ${(err as Error).message}`,
    };
  }
}

/**
 * Whether rg's --debug log names the files --max-filesize skips in the form largeFromDebug reads:
 * rg runs, as a grep would, in its sandbox over a probe directory in the broker's own directory
 * holding one file over the limit. False (find lists large files) when it does not, or fails.
 */
async function probeLargeLog(dir: string, rg: string): Promise<boolean> {
  const probe = `${dir}/probe`;
  try {
    Deno.mkdirSync(probe, { mode: 0o700 });
    Deno.writeTextFileSync(`${probe}/large.txt`, "xx\n");
    const request = {
      type: "grep" as const,
      id: 0,
      base: ".",
      pattern: "x",
      literal: true,
      ignoreCase: false,
      hidden: false,
      skipGit: false,
      maxFileBytes: 1,
      lines: null,
    };
    const out = await sandboxedOutput(probe, rg, rgArgs(request, { debug: true }));
    const log = largeFromDebug(new TextDecoder().decode(out.stderr));
    return out.code === 1 && log.trusted && log.large.length === 1 && log.large[0] === "large.txt";
  } catch {
    return false;
  } finally {
    try {
      Deno.removeSync(probe, { recursive: true });
    } catch { /* gone */ }
  }
}

/** The ready line once the checks are done: their verdict, and why not native. */
function readyEvent(c: { hello: Hello; largeFromRg: boolean }) {
  const { hello, largeFromRg } = c;
  return hello.native
    ? { event: "ready", native: true, largeFromRg }
    : { event: "ready", native: false, largeFromRg, reason: hello.reason };
}

/**
 * The directory the launcher made for this broker (`--dir-made`, so the server's sandbox could be
 * started with it before this broker ran): a directory itself, not a link, 0700 and empty, or
 * the broker refuses to start. The launcher made it with a fresh random name and `mkdir`, which
 * fails on an existing name; this check is the broker's own.
 */
function assertPrivateDir(dir: string): void {
  const info = Deno.lstatSync(dir);
  const mode = (info.mode ?? 0) & 0o777;
  if (!info.isDirectory || info.isSymlink || mode !== 0o700) {
    throw new Error(`broker: ${dir} is not a private directory (mode ${mode.toString(8)})`);
  }
  for (const _ of Deno.readDirSync(dir)) throw new Error(`broker: ${dir} is not empty`);
}

/** Reads the first line of stdin (the token), then resolves when stdin ends. */
async function stdinToken(): Promise<{ token: string; ended: Promise<void> }> {
  const reader = Deno.stdin.readable.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (text.length > 4096) break;
  }
  const token = text.split("\n")[0];
  const ended = (async () => {
    while (!(await reader.read()).done) { /* the launcher sends nothing more */ }
  })();
  return { token, ended };
}

/** Runs the broker; resolves with its exit code. */
export async function main(args: string[]): Promise<number> {
  // Its life is the launcher's: it ends when its stdin closes (the launcher stopped it, or died).
  // A signal sent to the launcher's process group (Ctrl-C, a closed terminal, `kill -- -PGID`)
  // reaches it too, and is the launcher's to act on: it stops the server, then this broker.
  // Ending here on such a signal would make the launcher report a broker that died, and the
  // default action of SIGHUP or SIGQUIT would leave its directory behind. The set is the one the
  // launcher forwards to the server.
  for (const sig of FORWARDED) Deno.addSignalListener(sig, () => {});
  const dir = argValue(args, "--dir");
  const root = argValue(args, "--root");
  const early = args.includes("--early-ready");
  const made = args.includes("--dir-made");
  const { token, ended } = await stdinToken();
  if (token.length < 32) throw new Error("broker: no token on stdin");
  if (made) assertPrivateDir(dir);
  else Deno.mkdirSync(dir, { mode: 0o700 });
  const socket = `${dir}/${SOCKET_NAME}`;
  let listener: Deno.Listener | undefined;
  let session: BrokerSession | undefined;
  const cleanup = () => {
    session?.close();
    try {
      listener?.close();
    } catch { /* closed */ }
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* gone */ }
  };
  try {
    listener = Deno.listen({ transport: "unix", path: socket });
    const rg = firstFile(RG_CANDIDATES);
    const find = firstFile(FIND_CANDIDATES);
    const checks = Promise.all([
      selfCheck(root, rg, find),
      rg === undefined ? false : probeLargeLog(dir, rg),
    ]).then(([hello, largeFromRg]) => ({ hello, largeFromRg }));
    // Early, only what is known without running anything (rg and find are there); else the
    // checks' verdict.
    const ready = early && rg !== undefined && find !== undefined
      ? { event: "ready", native: true }
      : readyEvent(await checks);
    console.log(JSON.stringify(ready));
    const o = { root, rg: rg ?? "", find: find ?? "", token, socket };
    // The session's end is not the broker's: the launcher says when (stdin), after the server.
    void serve(listener, o, checks, (s) => (session = s)).catch(() => {});
    await ended;
    return 0;
  } finally {
    cleanup();
  }
}

/**
 * Accepts connections until one says the token, then serves it to its end. Nothing is read before
 * the checks are done (a connection made meanwhile waits in the listener's backlog): the hello
 * answer is their verdict.
 */
async function serve(
  listener: Deno.Listener,
  o: { root: string; rg: string; find: string; token: string; socket: string },
  checks: Promise<{ hello: Hello; largeFromRg: boolean }>,
  onSession: (s: BrokerSession) => void,
): Promise<void> {
  const { hello, largeFromRg } = await checks;
  for await (const conn of listener) {
    const writer = conn.writable.getWriter();
    const encoder = new TextEncoder();
    let greeted = false;
    // The server is connected: no one else may, before it reads the hello answer.
    const shut = () => {
      greeted = true;
      clearTimeout(timer);
      listener.close();
      try {
        Deno.removeSync(o.socket);
      } catch { /* gone */ }
      onSession(session);
    };
    const session = new BrokerSession(
      {
        root: o.root,
        rg: o.rg,
        find: o.find,
        largeFromRg,
        token: o.token,
        hello,
        greeted: shut,
      },
      (a) => void writer.write(encoder.encode(JSON.stringify(a) + "\n")).catch(() => {}),
    );
    const timer = setTimeout(() => greeted || conn.close(), HELLO_MS);
    const served = readLines(conn.readable, (line) => session.line(line)).catch(() => {});
    await served;
    clearTimeout(timer);
    session.close();
    try {
      conn.close();
    } catch { /* closed */ }
    if (greeted) return;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
