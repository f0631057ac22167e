/**
 * The client's stdio transport: the SDK's, subclassed, keeping what a failure message needs (the
 * child's pid, how it ended, a bounded tail of its stderr), and the words of such a failure.
 */
import { streams, writeBytesSync } from "../std_streams.ts";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { MAX_MESSAGE_BYTES } from "../workspace/message_limits.ts";
import { ClientError } from "./errors.ts";
import type { ShownFields, Target } from "./config_file.ts";
import { reapChild } from "../workarounds/deno_child_kill.ts";
import { terminalSafe } from "./terminal_text.ts";
import { type ChildExit, onStdioChildExit } from "../workarounds/sdk_stdio_exit.ts";

/** How many bytes of a stdio server's stderr are kept for a failure message. */
const STDERR_TAIL_BYTES = 4096;
/** How many of its last stderr lines a failure message quotes. */
const STDERR_TAIL_LINES = 12;
/**
 * How long a failure message waits for the rest of a child's stderr once it ended (ms): the
 * pipe usually ends with the child; a process the child left holding it (a grandchild) does not.
 */
const STDERR_END_WAIT_MS = 1000;

/**
 * The SDK's stdio transport, subclassed (a subclass makes the SDK probe `server/discover` in
 * place, on the one process, instead of on a disposable sibling), with what a failure message
 * needs: the child's pid, its exit code or signal, and a bounded tail of its stderr (which is
 * also passed through to ours with --server-logs).
 */
export class ChildTransport extends StdioClientTransport {
  /** The child's pid once spawned (kept after the SDK forgets it). */
  childPid: number | null = null;
  /** How the child ended, once it did on its own (not after we closed the connection). */
  exit: ChildExit | null = null;
  #closing = false;
  #ended = false;
  #tail = "";
  /** Settles when the child's stderr has ended (every byte of it seen here). */
  readonly #stderrEnded: Promise<void>;
  readonly #command: string;
  readonly #cwd: string | undefined;
  readonly #shown: ShownFields;

  constructor(
    target: Extract<Target, { kind: "stdio" }>,
    serverLogs: boolean,
    maxMessageBytes = MAX_MESSAGE_BYTES,
  ) {
    super({
      command: target.command,
      args: target.args,
      env: target.env === undefined ? undefined : { ...defaultEnv(), ...target.env },
      cwd: target.cwd,
      stderr: "pipe",
      // The largest response of any wmcp configuration (0022), or --max-message-bytes (0047).
      maxBufferSize: maxMessageBytes,
    });
    this.#command = target.command;
    this.#cwd = target.cwd;
    this.#shown = target.shown ?? {};
    const decoder = new TextDecoder();
    const logDecoder = new TextDecoder();
    const stderrEnded = Promise.withResolvers<void>();
    this.#stderrEnded = stderrEnded.promise;
    for (const event of ["end", "close", "error"]) this.stderr?.once(event, stderrEnded.resolve);
    this.stderr?.on("data", (chunk: Uint8Array | string) => {
      const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
      if (serverLogs) {
        try {
          // The server's words, shown as text: no terminal sequence of its gets through (0042).
          writeAll(
            new TextEncoder().encode(terminalSafe(logDecoder.decode(bytes, { stream: true }))),
          );
        } catch {
          // our stderr is gone: nothing to show it on
        }
      }
      this.#tail = (this.#tail + decoder.decode(bytes, { stream: true })).slice(
        -STDERR_TAIL_BYTES,
      );
    });
  }

  override async start(): Promise<void> {
    try {
      await super.start();
    } catch (err) {
      throw spawnError(err, this.#command, this.cwd, this.#shown);
    }
    this.childPid = this.pid;
    onStdioChildExit(this, (exit) => {
      this.#ended = true;
      if (!this.#closing) this.exit = exit;
    });
  }

  override close(): Promise<void> {
    this.#closing = true;
    return super.close();
  }

  /** The working directory the child was given. */
  get cwd(): string | undefined {
    return this.#cwd;
  }

  /**
   * Resolves once the child's stderr has ended, or after STDERR_END_WAIT_MS: what a failure
   * message quotes of it is then complete (the last bytes may still be in the pipe when the
   * child's exit is seen).
   */
  async stderrSettled(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#stderrEnded,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, STDERR_END_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }

  /** The last lines of the child's stderr (at most STDERR_TAIL_LINES, bounded in bytes). */
  stderrTail(): string[] {
    return this.#tail.split(/\r?\n/).filter((l) => l.trim() !== "").slice(-STDERR_TAIL_LINES);
  }

  /** Sends SIGKILL to the child if it is still there (deno_child_kill.ts). */
  kill(): void {
    if (this.childPid === null || this.#ended) return;
    this.#closing = true;
    reapChild(this.childPid);
  }
}

/** Writes all of bytes to our stderr. */
function writeAll(bytes: Uint8Array): void {
  writeBytesSync(streams().stderr, bytes);
}

/**
 * A spawn failure, in words: the command, and the OS reason (no such file, not executable). A
 * command or cwd that came from a `${VAR}` expansion is shown as its template and field name.
 */
function spawnError(
  err: unknown,
  command: string,
  cwd: string | undefined,
  shown: ShownFields,
): ClientError {
  const shownCommand = shown.command ?? JSON.stringify(command);
  const code = (err as { code?: unknown })?.code;
  let why = (err as Error)?.message ?? String(err);
  if (code === "ENOENT") {
    let cwdMissing = false;
    try {
      cwdMissing = cwd !== undefined && !Deno.statSync(cwd).isDirectory;
    } catch (e) {
      // Not readable here (our read permission) is not "missing": then the command is.
      cwdMissing = e instanceof Deno.errors.NotFound;
    }
    why = cwdMissing
      ? `its working directory ${shown.cwd ?? cwd} does not exist`
      : `${shownCommand} was not found (ENOENT)`;
  } else if (code === "EACCES") why = `${shownCommand} is not executable (EACCES)`;
  return new ClientError("transport", `cannot start the server: ${why}`, { cause: err });
}

/**
 * How a stdio server that ended on its own ended (during connect, or under a request), and what
 * it last said on stderr.
 */
export function diedMessage(t: ChildTransport, during: string): string {
  const how = t.exit?.signal
    ? `was killed by ${t.exit.signal}`
    : typeof t.exit?.code === "number"
    ? `exited with code ${t.exit.code}`
    : "closed the connection";
  const tail = t.stderrTail();
  return `the server ${how} ${during}` +
    (tail.length
      ? `; the last lines of its stderr:\n${tail.map((l) => `  ${l}`).join("\n")}`
      : "; it wrote nothing on stderr");
}

/** The environment a stdio child inherits: a short allow-list, never our secrets. */
function defaultEnv(): Record<string, string> {
  const keep = [
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "TMPDIR",
    "DENO_DIR",
    "XDG_CACHE_HOME",
  ];
  const out: Record<string, string> = {};
  for (const k of keep) {
    const v = Deno.env.get(k);
    if (v !== undefined) out[k] = v;
  }
  return out;
}
