/**
 * One connection to the engine broker: the server's requests, one JSON line each, checked
 * (protocol.ts checkRequest) before anything runs; the first must be hello with the launcher's
 * token. Each grep runs ripgrep in its sandbox (rg.ts) with its output bounded; a cancel, or the
 * connection closing, kills the greps in flight. At most MAX_RUNNING greps run at once; the
 * others wait their turn in order.
 *
 * @module
 */
import {
  type BrokerAnswer,
  checkRequest,
  type GrepRequest,
  MAX_ANSWER_BYTES,
  MAX_REQUEST_LINE,
} from "../../workspace/native/protocol.ts";
import {
  findLargeArgs,
  largeFromDebug,
  notPlainArgs,
  outputPaths,
  rgArgs,
  rgLinesArgs,
  sandboxArgs,
} from "./programs.ts";
import { type LinesRead, LinesReader } from "./lines.ts";

/** Greps running at once; the rest wait. */
export const MAX_RUNNING = 2;
/**
 * How long after its start a grep's processes are left before a cancel kills them (ms): bwrap
 * sets its program's parent-death signal only after it has forked, so one killed earlier can
 * leave the program running on its own (measured here: of 40 bwraps killed within 5 ms of their
 * start, most left a process behind). A cancelled grep's run ends at once; its processes are
 * killed once this has passed.
 */
export const KILL_GRACE_MS = 100;
/** Most stderr kept from one grep (bytes), for its error message. */
const MAX_STDERR = 16 * 1024;
/**
 * Most bytes of paths on one command line of the plain-text check (notPlainArgs): half of Linux's
 * smallest ARG_MAX (2 MiB; the environment is empty).
 */
const MAX_ARGV_BYTES = 1024 * 1024;

/** What a session needs: the workspace, the programs, the token, and where answers go. */
export interface SessionOptions {
  /** The workspace root's real path (the programs' whole view of the file system). */
  root: string;
  /** rg's absolute path. */
  rg: string;
  /** find's absolute path (GNU find). */
  find: string;
  /**
   * rg's --debug log names the files over maxFileBytes (the broker's start checked it: main.ts
   * probeLargeLog), so no find runs beside it; else find lists them.
   */
  largeFromRg?: boolean;
  /** The token the server must say first. */
  token: string;
  /** The hello answer: whether greps can run at all. */
  hello: BrokerAnswer & { type: "hello" };
  /**
   * Called once the token was said, before the hello answer is sent: whatever must hold by the
   * time the server reads it (no one else can connect) is done here.
   */
  greeted?: () => void;
}

/** One grep in flight or waiting: its request and, once started, its processes. */
interface Job {
  request: GrepRequest;
  children: Deno.ChildProcess[];
  /** When its processes were started (performance.now()), once they were. */
  startedAt?: number;
  cancelled: boolean;
  /** Settles when the grep is cancelled: its run stops waiting for the processes' output. */
  stopped: Promise<void>;
  stop: () => void;
}

/** How one program of a grep ended. */
interface Ended {
  code: number;
  out: { bytes: Uint8Array; over: boolean };
  err: string;
  /** Its stderr passed its cap. */
  errOver?: boolean;
  /** rg's --debug log, read once (largeFromDebug), when it names the large files. */
  log?: ReturnType<typeof largeFromDebug>;
}

/** Reads a stream to its end, keeping at most `cap` bytes; true in `over` when it had more. */
async function readCapped(
  stream: ReadableStream<Uint8Array>,
  cap: number,
  onOver: () => void,
): Promise<{ bytes: Uint8Array; over: boolean }> {
  const parts: Uint8Array[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of stream) {
    if (over) continue;
    if (size + chunk.length > cap) {
      over = true;
      onOver();
      continue;
    }
    parts.push(chunk);
    size += chunk.length;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { bytes, over };
}

/** Hands a stream to a lines reader as it comes; `over` (and a kill) once its names pass the cap. */
async function streamTo(
  stream: ReadableStream<Uint8Array>,
  reader: LinesReader,
  onOver: () => void,
): Promise<{ bytes: Uint8Array; over: boolean }> {
  for await (const chunk of stream) {
    if (reader.over) continue;
    reader.push(chunk);
    if (reader.over) onOver();
  }
  return { bytes: new Uint8Array(0), over: reader.over };
}

/**
 * The answer to a grep whose programs ended: rg, and find unless rg's --debug log named the large
 * files (`find` undefined).
 */
function answerOf(
  r: GrepRequest,
  rg: Ended,
  find: Ended | undefined,
  read?: LinesRead | null,
): BrokerAnswer {
  if (read === null) {
    return {
      type: "error",
      id: r.id,
      code: "failed",
      message: "rg's lines were not in the expected form (a file name holding a newline?)",
    };
  }
  if (rg.out.over || rg.errOver || find?.out.over) {
    return { type: "error", id: r.id, code: "limit", message: "the answer passed the cap" };
  }
  const log = find === undefined && rg.log ? rg.log : { large: [], other: rg.err };
  // rg: 0 files found, 1 none, 2 an error, which --no-messages limits to the pattern's or the
  // sandbox's (a file rg cannot read is one the walk cannot read either).
  const rgOk = rg.code === 0 || rg.code === 1 || (rg.code === 2 && log.other.trim() === "");
  // find: 0, or 1 after a directory it could not read (its files are not listed, nor read).
  const findOk = find === undefined ||
    ((find.code === 0 || find.code === 1) && !find.err.startsWith("bwrap:"));
  if (rgOk && findOk) {
    const large = find === undefined ? log.large : outputPaths(find.out.bytes);
    if (read === undefined) {
      return { type: "files", id: r.id, paths: outputPaths(rg.out.bytes), large };
    }
    const lines = [...read.lines].map(([path, groups]) => ({ path, groups }));
    return { type: "files", id: r.id, paths: read.paths, large, lines };
  }
  const failed = rgOk ? find! : { ...rg, err: log.other };
  const message = failed.err.trim().slice(0, 2000) || `exit code ${failed.code}`;
  const pattern = !rgOk && rg.code === 2 && !log.other.startsWith("bwrap:") &&
    /regex|pattern|parse/i.test(log.other);
  return { type: "error", id: r.id, code: pattern ? "pattern" : "failed", message };
}

/** One connection's requests and greps. */
export class BrokerSession {
  readonly #o: SessionOptions;
  readonly #send: (a: BrokerAnswer) => void;
  readonly #jobs = new Map<number, Job>();
  readonly #waiting: Job[] = [];
  #running = 0;
  #greeted = false;
  #closed = false;

  /** A session answering through `send`. */
  constructor(o: SessionOptions, send: (a: BrokerAnswer) => void) {
    this.#o = o;
    this.#send = send;
  }

  /**
   * Handles one request line; false when the connection must close (a bad first line, a line
   * that is not a request).
   */
  line(text: string): boolean {
    let request;
    try {
      request = checkRequest(JSON.parse(text));
    } catch (err) {
      const id = idOf(text);
      if (!this.#greeted || id === undefined) return false;
      this.#send({ type: "error", id, code: "request", message: (err as Error).message });
      return true;
    }
    if (!this.#greeted) {
      if (request.type !== "hello" || !sameToken(request.token, this.#o.token)) return false;
      this.#greeted = true;
      this.#o.greeted?.();
      this.#send(this.#o.hello);
      return true;
    }
    if (request.type === "cancel") this.#cancel(request.id);
    else if (request.type === "grep") this.#grep(request);
    return true;
  }

  /** The connection is gone: every grep is killed, none starts. */
  close(): void {
    this.#closed = true;
    this.#waiting.length = 0;
    for (const id of [...this.#jobs.keys()]) this.#cancel(id);
  }

  #grep(request: GrepRequest): void {
    if (!this.#o.hello.native) {
      this.#send({ type: "error", id: request.id, code: "failed", message: this.#o.hello.reason });
      return;
    }
    if (this.#jobs.has(request.id)) {
      this.#send({ type: "error", id: request.id, code: "request", message: "id in use" });
      return;
    }
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const job: Job = { request, children: [], cancelled: false, stopped, stop };
    this.#jobs.set(request.id, job);
    this.#waiting.push(job);
    this.#next();
  }

  #cancel(id: number): void {
    const job = this.#jobs.get(id);
    if (job === undefined) return;
    job.cancelled = true;
    job.stop();
    this.#jobs.delete(id);
    const i = this.#waiting.indexOf(job);
    if (i !== -1) this.#waiting.splice(i, 1);
    const kill = () => {
      for (const child of job.children) {
        try {
          child.kill("SIGKILL");
        } catch { /* already ended */ }
      }
    };
    const wait = job.startedAt === undefined
      ? 0
      : job.startedAt + KILL_GRACE_MS - performance.now();
    if (wait <= 0) kill();
    else setTimeout(kill, wait);
  }

  #next(): void {
    while (!this.#closed && this.#running < MAX_RUNNING && this.#waiting.length > 0) {
      const job = this.#waiting.shift()!;
      this.#running++;
      this.#run(job).finally(() => {
        this.#running--;
        this.#next();
      });
    }
  }

  async #run(job: Job): Promise<void> {
    const r = job.request;
    if (job.cancelled) return;
    const { rg, find, largeFromRg } = this.#o;
    let ended: [Ended, Ended | undefined] | undefined;
    // Asked for lines: rg's output is read as it streams (lines.ts), not kept whole.
    const reader = r.lines ? new LinesReader({ maxCount: r.lines.maxCount }) : undefined;
    let read: LinesRead | null | undefined;
    try {
      const rgRun = reader
        ? this.#program(job, rg, rgLinesArgs(r, { debug: largeFromRg }), largeFromRg, reader)
        : this.#program(job, rg, rgArgs(r, { debug: largeFromRg }), largeFromRg);
      // A cancelled grep's processes are killed; its run ends then, whatever holds their output.
      ended = await Promise.race([
        Promise.all([
          rgRun,
          largeFromRg ? undefined : this.#program(job, find, findLargeArgs(r)),
        ]),
        job.stopped.then(() => undefined),
      ]);
      if (ended === undefined) return;
      // A --debug log that cannot be trusted (a name with a newline, another ripgrep's form):
      // find lists the large files for this request instead.
      if (ended[1] === undefined && !ended[0].out.over && !ended[0].errOver) {
        const log = largeFromDebug(ended[0].err);
        ended = [{ ...ended[0], log }, undefined];
        if (!log.trusted && (ended[0].code === 0 || ended[0].code === 1)) {
          const found = await Promise.race([
            this.#program(job, find, findLargeArgs(r)),
            job.stopped.then(() => undefined),
          ]);
          if (found === undefined) return;
          ended = [{ ...ended[0], err: log.other, log: undefined }, found];
        }
      }
      if (reader) {
        read = reader.end();
        if (read !== null && read.lines.size > 0) {
          const kept = await Promise.race([this.#plain(job, read), job.stopped.then(() => false)]);
          if (job.cancelled) return;
          if (!kept) read.lines.clear();
        }
      }
    } catch (err) {
      for (const child of job.children) {
        try {
          child.kill("SIGKILL");
        } catch { /* ended */ }
      }
      this.#finish(job, { type: "error", id: r.id, code: "failed", message: String(err) });
      return;
    }
    this.#finish(job, answerOf(r, ...ended, read));
  }

  /**
   * Keeps the lines of the files that are plain text: rg, in its sandbox, names those of them that
   * hold a NUL or a byte that is not ASCII, and their lines go (the server reads those files, and
   * decides binary and decoding as for any read). False when that could not be told (every file's
   * lines go then).
   */
  async #plain(job: Job, read: LinesRead): Promise<boolean> {
    const encoder = new TextEncoder();
    const chunks: string[][] = [[]];
    let bytes = 0;
    for (const p of read.lines.keys()) {
      const size = encoder.encode(p).length + 3;
      if (bytes + size > MAX_ARGV_BYTES && chunks[chunks.length - 1].length > 0) {
        chunks.push([]);
        bytes = 0;
      }
      chunks[chunks.length - 1].push(p);
      bytes += size;
    }
    // rg searches the files of one command line in parallel; the command lines run one by one.
    for (const chunk of chunks) {
      const ended = await this.#program(job, this.#o.rg, notPlainArgs(chunk));
      if (job.cancelled || ended.out.over || (ended.code !== 0 && ended.code !== 1)) return false;
      for (const p of outputPaths(ended.out.bytes)) read.lines.delete(p);
    }
    return true;
  }

  /**
   * Runs one program of a grep in its sandbox, its output capped; its stderr too, at the answer's
   * cap when it carries rg's --debug log (`log`), else at MAX_STDERR (an error message).
   */
  async #program(
    job: Job,
    program: string,
    args: string[],
    log = false,
    reader?: LinesReader,
  ): Promise<Ended> {
    job.startedAt ??= performance.now();
    const child = new Deno.Command("bwrap", {
      args: sandboxArgs({ root: this.#o.root, program, args }),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    job.children.push(child);
    const kill = () => {
      try {
        child.kill("SIGKILL");
      } catch { /* ended */ }
    };
    const [out, err, status] = await Promise.all([
      reader
        ? streamTo(child.stdout, reader, kill)
        : readCapped(child.stdout, MAX_ANSWER_BYTES, kill),
      readCapped(child.stderr, log ? MAX_ANSWER_BYTES : MAX_STDERR, log ? kill : () => {}),
      child.status,
    ]);
    const errOver = log && err.over;
    return { code: status.code, out, err: new TextDecoder().decode(err.bytes), errOver };
  }

  #finish(job: Job, answer: BrokerAnswer): void {
    if (job.cancelled || this.#closed) return;
    this.#jobs.delete(job.request.id);
    this.#send(answer);
  }
}

/** The id of a request line that did not check out, when it has a usable one. */
function idOf(text: string): number | undefined {
  try {
    const id = (JSON.parse(text) as { id?: unknown })?.id;
    return Number.isSafeInteger(id) && (id as number) >= 0 ? id as number : undefined;
  } catch {
    return undefined;
  }
}

/** Compares two tokens in time independent of where they differ. */
function sameToken(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Splits a byte stream into lines of at most MAX_REQUEST_LINE characters; `onLine` returning false,
 * or a longer line, ends the reading (the caller closes the connection).
 */
export async function readLines(
  stream: ReadableStream<Uint8Array>,
  onLine: (line: string) => boolean,
): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = pending.indexOf("\n")) !== -1) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (!onLine(line)) return;
    }
    if (pending.length > MAX_REQUEST_LINE) return;
  }
}
