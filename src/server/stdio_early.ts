/**
 * First answers of the stdio entry (issue 21 §3): while the server's modules load (the SDK, zod
 * and the tools: about 250 ms), serve_stdio.ts answers a modern `tools/list` (first page) and
 * `server/discover` from precomputed JSON (first_answers.json, written by
 * scripts/first_answers.ts from this checkout's server and checked by its test). Nothing else is
 * imported here, so those answers come about as soon as Deno has started.
 *
 * Exactness: only requests whose answer is certain are taken, and only as a prefix of the input
 * (the first request not taken ends the early answers): the entry's flags are exactly `--root DIR`
 * and maybe `--write` (the default limits and page size), and each request has only the standard
 * members, an id the server echoes as it is, a well-formed 2026-07-28 envelope of the shapes
 * clients send, and no `__proto__` or escape in its text. Every byte read is then handed to the
 * server as if it had read it, the answered lines included: the server sees the connection as
 * it would have (its era pinned by the same first line), and its own answers to the lines
 * answered here are dropped (the {@linkcode Suppressor}).
 */
import FIRST from "./first_answers.json" with { type: "json" };
import { instructionsFor } from "./instructions.ts";
import { rootNameOf } from "../workspace/root_name.ts";
import {
  CAPABILITIES_KEY,
  CLIENT_INFO_KEY,
  FAST_PATH_REVISION,
  isEchoableId,
  PROTOCOL_KEY,
} from "./envelope.ts";

/** The methods answered early, in the order scripts/first_answers.ts asks them. */
export const FIRST_ANSWER_METHODS = ["tools/list", "server/discover"] as const;
/** The root name the stored instructions carry; the real one is put in at run time. */
export const ROOT_PLACEHOLDER = "ROOT";
/** The stored results, by mode and method. */
export type FirstAnswers = Record<
  "read-only" | "read-write",
  Record<string, Record<string, unknown>>
>;

/** Longest line looked at; bytes read before the handover, at most (more waits in the pipe). */
const MAX_LINE_BYTES = 64 * 1024;
const MAX_EARLY_BYTES = 1024 * 1024;
const READ_BYTES = 64 * 1024;
/** Event-loop turns the first read gets before firstSeen sets its timer (see there). */
const FIRST_READ_TURNS = 20;

type Plain = Record<string, unknown>;
type Id = string | number;

/** What stdin is to this module: Deno.stdin's read. */
export interface ByteSource {
  read(buffer: Uint8Array): Promise<number | null>;
}

/** The entry's first answers while the server loads. */
export interface EarlyStdio {
  /** Resolves when the first read's lines were seen, or after graceMs. */
  firstSeen(graceMs: number): Promise<void>;
  /** Ends the first answers: what the server takes over. */
  handover(): EarlyHandover;
}

/** What the server takes over: the input from its first byte, and the ids answered here. */
export interface EarlyHandover {
  input: ByteSource;
  suppressor: Suppressor;
}

function isPlain(v: unknown): v is Plain {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function keysWithin(v: Plain, allowed: readonly string[]): boolean {
  return Object.keys(v).every((k) => allowed.includes(k));
}

/** `{}`, or a plain object whose members are booleans named listChanged or empty objects. */
function capabilityShape(v: unknown): boolean {
  if (!isPlain(v)) return false;
  return Object.entries(v).every(([k, x]) =>
    k === "listChanged" ? typeof x === "boolean" : isPlain(x) && Object.keys(x).length === 0
  );
}

/** The envelope shapes clients send: exactly the three keys, of the usual forms. */
function envelopeTaken(meta: unknown): boolean {
  if (!isPlain(meta) || Object.keys(meta).length !== 3) return false;
  if (meta[PROTOCOL_KEY] !== FAST_PATH_REVISION) return false;
  const info = meta[CLIENT_INFO_KEY];
  if (!isPlain(info) || !keysWithin(info, ["name", "version", "title"])) return false;
  if (typeof info.name !== "string" || typeof info.version !== "string") return false;
  if (info.title !== undefined && typeof info.title !== "string") return false;
  const caps = meta[CAPABILITIES_KEY];
  if (!isPlain(caps) || !keysWithin(caps, ["roots", "sampling", "elicitation"])) return false;
  return Object.values(caps).every(capabilityShape);
}

/** The id and method of a line answered early, or undefined when the line is not one. */
export function earlyRequest(text: string): { id: Id; method: string } | undefined {
  if (text.includes("__proto__") || text.includes("\\")) return undefined;
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlain(m) || Object.keys(m).length !== 4 || m.jsonrpc !== "2.0") return undefined;
  const { id, method, params } = m;
  if (!isEchoableId(id)) return undefined;
  if (!FIRST_ANSWER_METHODS.includes(method as never)) return undefined;
  if (!isPlain(params) || Object.keys(params).length !== 1) return undefined;
  return envelopeTaken(params._meta) ? { id, method: method as string } : undefined;
}

/**
 * The root and mode of entry flags the stored answers are for: `--root /ABS/DIR [--write]` only
 * (as the launcher passes them into its sandbox).
 */
export function earlyFlags(
  args: readonly string[],
): { root: string; writable: boolean } | undefined {
  let root: string | undefined;
  let writable = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--write" && !writable) writable = true;
    else if (a === "--root" && root === undefined && i + 1 < args.length) root = args[++i];
    else if (a.startsWith("--root=") && root === undefined) root = a.slice(7);
    else return undefined;
  }
  // A relative root is the invocation directory's, which only the server knows (INIT_CWD).
  return root?.startsWith("/") ? { root, writable } : undefined;
}

/**
 * Drops the server's own answers to the lines answered early: for each id, the one line equal to
 * the answer given (so a later request that reuses the id keeps its answer), checked only while
 * some are left (a line then costs one JSON.parse; none after).
 */
export class Suppressor {
  readonly #answers: Map<Id, string>;

  constructor(answers: Iterable<[Id, string]>) {
    this.#answers = new Map(answers);
  }

  /** Whether the server's output line (one JSON-RPC message with its newline) is to be dropped. */
  drop(line: string): boolean {
    if (this.#answers.size === 0) return false;
    let id: unknown;
    try {
      id = (JSON.parse(line) as { id?: unknown }).id;
    } catch {
      return false;
    }
    if (this.#answers.get(id as Id) !== line) return false;
    return this.#answers.delete(id as Id);
  }
}

/** One read's bytes (copied) or the end of the input. */
type Piece = Uint8Array | null;

/**
 * The entry's stdin until the server takes it over: read in a loop, every chunk kept in order,
 * the whole lines of the input's prefix answered when they can be.
 */
class EarlyInput implements EarlyStdio {
  readonly #stdin: ByteSource;
  readonly #answer: (text: string, given: [Id, string][]) => [Id, string] | undefined;
  readonly #kept: Piece[] = [];
  #keptBytes = 0;
  /** The pending read, if one is running. */
  #reading: Promise<void> | undefined;
  #handedOver = false;
  #answering = true;
  #line: Uint8Array[] = [];
  #lineBytes = 0;
  readonly #answered: [Id, string][] = [];
  readonly #firstSeen = Promise.withResolvers<void>();
  #seen = false;
  readonly #turn: () => Promise<unknown>;

  constructor(
    stdin: ByteSource,
    answer: (text: string, given: [Id, string][]) => [Id, string] | undefined,
    turn: () => Promise<unknown>,
  ) {
    this.#stdin = stdin;
    this.#answer = answer;
    this.#turn = turn;
    void this.#firstSeen.promise.then(() => (this.#seen = true));
    this.#reading = this.#loop();
  }

  /**
   * Resolves once the first read's lines were seen (answered, or the answers ended), the input
   * ended, or `graceMs` passed: the server's modules load after it, because loading them holds
   * the event loop and a read then waits for the whole load.
   *
   * A host writes its first request as it starts the server, so the read usually has it by the
   * first turn of the event loop. The timer is set only if FIRST_READ_TURNS turns (an async lstat
   * each) did not bring it: Deno 2.9 loads its timers' module on the first setTimeout, about 12 ms
   * that would otherwise come before the first answer.
   */
  async firstSeen(graceMs: number): Promise<void> {
    for (let i = 0; i < FIRST_READ_TURNS && !this.#seen; i++) await this.#turn();
    if (this.#seen) return;
    await Promise.race([
      this.#firstSeen.promise,
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        void this.#firstSeen.promise.then(() => clearTimeout(timer));
      }),
    ]);
  }

  /** The server's input from the first byte on, and the answers already given. */
  handover(): EarlyHandover {
    this.#handedOver = true;
    this.#answering = false;
    const suppressor = new Suppressor(this.#answered);
    return { input: { read: (b) => this.#read(b) }, suppressor };
  }

  async #loop(): Promise<void> {
    const buffer = new Uint8Array(READ_BYTES);
    try {
      while (!this.#handedOver && this.#keptBytes < MAX_EARLY_BYTES) {
        let n: number | null;
        try {
          n = await this.#stdin.read(buffer);
        } catch {
          n = null; // stdin closed under the read: its end
        }
        if (n === null) return void this.#kept.push(null);
        const chunk = buffer.slice(0, n);
        this.#kept.push(chunk);
        this.#keptBytes += n;
        if (this.#answering) this.#scan(chunk);
        this.#firstSeen.resolve();
      }
    } finally {
      this.#reading = undefined;
      this.#firstSeen.resolve();
    }
  }

  /** Answers the whole lines of a chunk while every line before them was answered. */
  #scan(chunk: Uint8Array): void {
    let start = 0;
    while (this.#answering && start < chunk.length) {
      const end = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
      this.#line.push(piece);
      this.#lineBytes += piece.length;
      if (this.#lineBytes > MAX_LINE_BYTES) this.#answering = false;
      if (end === -1) return;
      const given = this.#answering
        ? this.#answer(decodeLine(this.#line, this.#lineBytes), this.#answered)
        : undefined;
      if (given === undefined) this.#answering = false;
      else this.#answered.push(given);
      this.#line = [];
      this.#lineBytes = 0;
      start = end + 1;
    }
  }

  /** The server's read: what was kept first, then stdin itself. */
  async #read(buffer: Uint8Array): Promise<number | null> {
    while (this.#kept.length === 0 && this.#reading !== undefined) await this.#reading;
    const piece = this.#kept.shift();
    if (piece === undefined) return await this.#stdin.read(buffer);
    if (piece === null) {
      this.#kept.unshift(null); // the end stays the end
      return null;
    }
    if (piece.length > buffer.length) this.#kept.unshift(piece.subarray(buffer.length));
    const n = Math.min(piece.length, buffer.length);
    buffer.set(piece.subarray(0, n));
    return n;
  }
}

function decodeLine(parts: Uint8Array[], size: number): string {
  const all = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(all);
}

/** The answer line of an early request: the stored result, as the server writes it. */
function answerLine(result: Plain, id: Id): string {
  return JSON.stringify({ result, jsonrpc: "2.0", id }) + "\n";
}

/**
 * Starts answering early when the flags are the stored answers' (else undefined: the server
 * reads stdin itself). `write` sends one answer line.
 */
export function startEarlyStdio(
  args: readonly string[],
  stdin: ByteSource,
  write: (line: string) => void,
): EarlyStdio | undefined {
  const flags = earlyFlags(args);
  if (flags === undefined) return undefined;
  let rootName: string;
  try {
    if (!Deno.statSync(flags.root).isDirectory) return undefined;
    rootName = rootNameOf(Deno.realPathSync(flags.root));
  } catch {
    return undefined; // the server says what is wrong with the root
  }
  const stored = (FIRST as FirstAnswers)[flags.writable ? "read-write" : "read-only"];
  const results: Record<string, Plain> = {};
  for (const [method, result] of Object.entries(stored)) {
    results[method] = "instructions" in result
      ? { ...result, instructions: instructionsFor(rootName, flags.writable) }
      : result;
  }
  // A turn of the event loop for firstSeen: an async lstat of the root (already allowed).
  const root = flags.root;
  return new EarlyInput(stdin, (text, given) => {
    const request = earlyRequest(text);
    // A repeated id ends the answers too: its answer could not be told from the other's.
    if (request === undefined || given.some(([id]) => id === request.id)) return undefined;
    const line = answerLine(results[request.method], request.id);
    write(line);
    return [request.id, line];
  }, () => Deno.lstat(root).catch(() => undefined));
}
