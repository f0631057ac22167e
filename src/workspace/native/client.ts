/**
 * The server's side of the engine broker (decision 0054): one Unix-socket connection to the
 * broker the launcher started, made on first use (the broker may still be starting: connecting is
 * retried for CONNECT_MS), greeted with the launcher's token; then grep requests answered by the
 * files ripgrep found, cancelled when their search is. A query ripgrep cannot prefilter, or a
 * grep that gives no usable answer, reads every file (null); a broker that is gone fails the call
 * with IO_ERROR (and the launcher ends the server): never a silent fallback mid-call.
 *
 * @module
 */
import { WorkspaceError } from "../errors.ts";
import { rgPrefilter } from "../regex/rg.ts";
import type {
  EngineReport,
  PrefilterAnswer,
  PrefilterQuery,
  SearchPrefilter,
} from "./prefilter.ts";
import {
  type BrokerAnswer,
  type GrepRequest,
  type HelloAnswer,
  MAX_ANSWER_BYTES,
  MAX_LINES_CONTEXT,
  MAX_LINES_COUNT,
} from "./protocol.ts";

/**
 * The smallest maxMatches for which a grep asks for candidate lines (decision 0067). On the bench
 * tree, a word in 14,000 files (87,000 times) at maxMatches 500 took 1.7-2.7 s waiting for its
 * lines, against 36-250 ms reading named files until the cap.
 */
export const LINES_MIN_MATCHES = 1000;

/** How long the broker may take to listen (ms): the launcher no longer waits for it (--engine auto). */
export const CONNECT_MS = 30_000;
/** Pause between connection attempts (ms). */
const RETRY_MS = 20;

/** Where the broker listens and what to tell it. */
export interface NativeEngineOptions {
  /** The broker's socket path. */
  socket: string;
  /** The token the launcher gave the broker and this server. */
  token: string;
  /** Reports a grep that fell back to reading every file (logged by the server). */
  onFallback?: (why: string) => void;
}

type Pending = { resolve: (a: BrokerAnswer) => void; reject: (e: unknown) => void };

function gone(why: string): WorkspaceError {
  return new WorkspaceError("IO_ERROR", `the native search engine stopped: ${why}`);
}

/** The broker's client: a SearchPrefilter over one connection. */
export class NativeEngine implements SearchPrefilter {
  readonly #o: NativeEngineOptions;
  #connected?: Promise<{ conn: Deno.Conn; hello: HelloAnswer }>;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #dead?: WorkspaceError;
  #writer?: WritableStreamDefaultWriter<Uint8Array>;
  /** What the broker said it can do, once it said so. */
  #native?: boolean;

  /** A client; nothing connects before the first use. */
  constructor(o: NativeEngineOptions) {
    this.#o = o;
  }

  /** False for a query without a ripgrep form, or once the broker said it cannot run ripgrep. */
  accepts(q: PrefilterQuery): boolean {
    return this.#native !== false && rgPrefilter(q) !== null;
  }

  /** What serves search_text: native when the broker can run ripgrep. */
  async report(): Promise<EngineReport> {
    try {
      const { hello } = await this.#connect();
      return hello.native
        ? { search: "native", native: hello.engine }
        : { search: "builtin", reason: hello.reason };
    } catch (err) {
      return { search: "builtin", reason: (err as Error).message };
    }
  }

  /** The files a query can match in (see SearchPrefilter.files). */
  async files(q: PrefilterQuery, signal?: AbortSignal): Promise<PrefilterAnswer | null> {
    const pre = rgPrefilter(q);
    if (pre === null) return null;
    const { hello } = await this.#connect();
    if (!hello.native) return null;
    const id = this.#nextId++;
    const maxMatches = q.maxMatches ?? 0;
    const context = Math.max(q.contextLines ?? 0, 0);
    const request: GrepRequest = {
      type: "grep",
      id,
      base: q.base,
      pattern: pre.pattern,
      literal: pre.literal,
      ignoreCase: !q.caseSensitive,
      hidden: q.includeHidden,
      skipGit: q.respectGitignore,
      maxFileBytes: q.maxFileBytes,
      // Lines only for a search that asks for many matches (below LINES_MIN_MATCHES its cap
      // stops it early: the named files are read in walk order until then, where every candidate
      // line of a common word would cost more to wait for), and only when rg can give all the
      // context asked. Otherwise names only, and every named file is read (decision 0067).
      lines: maxMatches >= LINES_MIN_MATCHES && context <= MAX_LINES_CONTEXT
        ? { context, maxCount: Math.min(maxMatches, MAX_LINES_COUNT) }
        : null,
    };
    const answer = await this.#ask(request, signal);
    if (answer.type === "files") {
      const lines = new Map(answer.lines?.map((f) => [f.path, f.groups] as const));
      return { files: answer.paths, large: answer.large, lines };
    }
    if (answer.type === "error") this.#o.onFallback?.(`${answer.code}: ${answer.message}`);
    return null;
  }

  /** Closes the connection (the broker then ends). */
  close(): void {
    this.#fail(gone("closed"));
    this.#connected?.then(({ conn }) => conn.close(), () => {}).catch(() => {});
  }

  #ask(request: GrepRequest, signal?: AbortSignal): Promise<BrokerAnswer> {
    if (this.#dead) return Promise.reject(this.#dead);
    if (signal?.aborted) {
      return Promise.reject(new WorkspaceError("CANCELLED", "the operation was cancelled"));
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#pending.delete(request.id);
        void this.#send({ type: "cancel", id: request.id });
        reject(new WorkspaceError("CANCELLED", "the operation was cancelled"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => signal?.removeEventListener("abort", onAbort);
      this.#pending.set(request.id, {
        resolve: (a) => (done(), resolve(a)),
        reject: (e) => (done(), reject(e)),
      });
      this.#send(request).catch((err) => {
        this.#pending.delete(request.id);
        done();
        reject(gone((err as Error).message));
      });
    });
  }

  async #send(message: object): Promise<void> {
    await this.#connect();
    await this.#writer!.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  }

  #connect(): Promise<{ conn: Deno.Conn; hello: HelloAnswer }> {
    if (this.#dead) return Promise.reject(this.#dead);
    this.#connected ??= this.#open();
    return this.#connected;
  }

  async #open(): Promise<{ conn: Deno.Conn; hello: HelloAnswer }> {
    const conn = await connectWithin(this.#o.socket, CONNECT_MS);
    // The connection never keeps the server alive: a server whose clients are gone exits.
    conn.unref();
    this.#writer = conn.writable.getWriter();
    const hello = new Promise<HelloAnswer>((resolve, reject) => {
      this.#pending.set(-1, {
        resolve: (a) => a.type === "hello" ? resolve(a) : reject(gone("no hello")),
        reject,
      });
    });
    void this.#read(conn);
    await this.#writer.write(
      new TextEncoder().encode(JSON.stringify({ type: "hello", token: this.#o.token }) + "\n"),
    );
    const answer = await hello;
    this.#native = answer.native;
    return { conn, hello: answer };
  }

  async #read(conn: Deno.Conn): Promise<void> {
    const decoder = new TextDecoder();
    // The pieces of the answer line being read: each chunk is searched for its end once (an
    // answer with lines is megabytes long; searching the whole of it per chunk was quadratic).
    const pieces: string[] = [];
    let size = 0;
    try {
      for await (const chunk of conn.readable) {
        let text = decoder.decode(chunk, { stream: true });
        let nl;
        while ((nl = text.indexOf("\n")) !== -1) {
          pieces.push(text.slice(0, nl));
          const line = pieces.join("");
          pieces.length = 0;
          size = 0;
          this.#answer(JSON.parse(line) as BrokerAnswer);
          text = text.slice(nl + 1);
        }
        if (text !== "") pieces.push(text);
        size += text.length;
        if (size > MAX_ANSWER_BYTES * 2) throw new Error("an answer passed the cap");
      }
      this.#fail(gone("the broker closed the connection"));
    } catch (err) {
      this.#fail(gone((err as Error).message));
    }
  }

  #answer(a: BrokerAnswer): void {
    const id = a.type === "hello" ? -1 : a.id;
    const p = this.#pending.get(id);
    if (p === undefined) return;
    this.#pending.delete(id);
    p.resolve(a);
  }

  #fail(err: WorkspaceError): void {
    this.#dead ??= err;
    for (const p of this.#pending.values()) p.reject(this.#dead);
    this.#pending.clear();
  }
}

/** Connects to a Unix socket, retrying while it is not there yet, for at most `ms`. */
async function connectWithin(path: string, ms: number): Promise<Deno.Conn> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await Deno.connect({ transport: "unix", path });
    } catch (err) {
      const waiting = err instanceof Deno.errors.NotFound ||
        err instanceof Deno.errors.ConnectionRefused;
      if (!waiting || Date.now() >= deadline) {
        throw gone(`cannot connect to ${path}: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }
}
