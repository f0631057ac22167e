/**
 * The stdio face of the fast path (fast_path.ts): a line filter between the request-cap framing
 * (stdio_lines.ts) and the SDK's stdio transport. The SDK pins a stdio connection's era on its
 * opening exchange; until a request the fast path recognises has gone to the SDK as that opening
 * (a valid 2026-07-28 envelope: the connection is then modern for good), every line goes to the
 * SDK, and a line without the modern claim first (an initialize, 2025-era traffic) turns the
 * fast path off for the connection. On a modern connection a request the fast path takes is
 * answered here, one JSON line on the output, and never reaches the SDK; every other line goes
 * on unchanged. A notifications/cancelled naming a request answered here aborts it (nothing is
 * sent for it, as the SDK sends nothing for a cancelled request); the end of the input and
 * close() abort them all, as the SDK's closing connection does.
 */
import { Buffer } from "node:buffer";
import { Transform } from "node:stream";
import type { FastCall, FastPath } from "./fast_path.ts";

/** Options of the stdio fast path. */
export interface StdioFastOptions {
  /** Writes one whole response line (with its newline) to the connection's output. */
  write: (line: string) => void;
}

/** The stdio fast path of one connection. */
export interface StdioFast {
  /** The line filter to place before the SDK's transport (for input that is a Node stream). */
  readonly filter: Transform;
  /**
   * Serves one line (without its newline) of input framed elsewhere (stdio_server.ts reads the
   * process's stdin directly): answered here, or handed to `forward` unchanged for the SDK.
   */
  serveLine(line: Uint8Array, forward: (line: Uint8Array) => void): void;
  /** The input ended: the requests being answered here are aborted, as the SDK's are. */
  ended(): void;
  /** Aborts the requests being answered here (the connection is closing). */
  close(): void;
  /** How many requests were answered here (for the differential tests). */
  taken(): number;
}

const NL = 10;
const NEWLINE = Buffer.of(NL);
/** Decodes a line as Buffer's toString("utf8") does: malformed bytes become U+FFFD, a BOM stays. */
const DECODER = new TextDecoder("utf-8", { ignoreBOM: true });

type State = "opening" | "modern" | "off";

function cancelledId(text: string): string | number | undefined {
  if (!text.includes("notifications/cancelled")) return undefined;
  try {
    const m = JSON.parse(text) as { method?: unknown; params?: { requestId?: unknown } };
    const id = m.method === "notifications/cancelled" ? m.params?.requestId : undefined;
    return typeof id === "string" || typeof id === "number" ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The `method` of a JSON-RPC line (undefined when it has none or does not parse). */
function methodOf(text: string): unknown {
  try {
    const m = JSON.parse(text) as { method?: unknown } | null;
    return Array.isArray(m) ? undefined : m?.method;
  } catch {
    return undefined;
  }
}

/** The stdio fast path of one connection: its era state, its calls in flight, its line buffer. */
class StdioFastConnection implements StdioFast {
  readonly #fast: FastPath;
  readonly #write: (line: string) => void;
  #state: State = "opening";
  readonly #inflight = new Map<string | number, AbortController>();
  /** Where the line being served goes when it is not answered here. */
  #forward: (line: Uint8Array) => void = () => {};
  #filter: Transform | undefined;
  /** The pieces of a line whose newline has not arrived yet (filter mode). */
  #pending: Buffer[] = [];
  #taken = 0;

  constructor(fast: FastPath, options: StdioFastOptions) {
    this.#fast = fast;
    this.#write = options.write;
  }

  get filter(): Transform {
    this.#filter ??= new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        this.#split(chunk);
        done();
      },
      flush: (done) => {
        if (this.#pending.length > 0) this.#filter!.push(Buffer.concat(this.#pending)); // no newline
        this.#pending = [];
        this.ended();
        done();
      },
    });
    return this.#filter;
  }

  serveLine(line: Uint8Array, forward: (line: Uint8Array) => void): void {
    this.#forward = forward;
    this.#serve(line);
  }

  ended(): void {
    // The input ended: the SDK closes the connection and aborts what it was serving; so here.
    for (const controller of this.#inflight.values()) controller.abort();
  }

  close(): void {
    for (const controller of this.#inflight.values()) controller.abort();
    this.#inflight.clear();
  }

  taken(): number {
    return this.#taken;
  }

  /** Serves each whole line of a chunk (filter mode); keeps the piece after its last newline. */
  #split(chunk: Buffer): void {
    this.#forward = (line) => void this.#filter!.push(Buffer.concat([line, NEWLINE]));
    let start = 0;
    while (start < chunk.length) {
      const end = chunk.indexOf(NL, start);
      if (end === -1) {
        this.#pending.push(chunk.subarray(start));
        break;
      }
      const piece = chunk.subarray(start, end);
      const line = this.#pending.length === 0 ? piece : Buffer.concat([...this.#pending, piece]);
      this.#pending = [];
      this.#serve(line);
      start = end + 1;
    }
  }

  /** One line without its newline: answered here, or forwarded to the SDK as it is. */
  #serve(line: Uint8Array): void {
    if (this.#state === "off") return this.#forward(line);
    const text = DECODER.decode(line);
    if (this.#state === "opening") return this.#opening(text, line);
    const cancelled = cancelledId(text);
    if (cancelled !== undefined) {
      const controller = this.#inflight.get(cancelled);
      if (controller !== undefined) return void controller.abort();
      return this.#forward(line);
    }
    const call = this.#fast.take(text, {});
    if (call === undefined || this.#inflight.has(call.id)) return this.#forward(line);
    this.#answer(call);
  }

  /** A line before the connection's era is known: it goes to the SDK, and may fix the era. */
  #opening(text: string, line: Uint8Array): void {
    // An `initialize` opens a 2025-era connection whatever else its text contains (a client may
    // put the modern envelope key anywhere in it): the SDK owns that connection.
    // (Parsed only when the text could spell the method, escapes included.)
    const mayInit = text.includes("initialize") || text.includes("\\u");
    if (mayInit && methodOf(text) === "initialize") {
      this.#state = "off";
      return this.#forward(line);
    }
    const call = this.#fast.take(text, {});
    if (call === undefined && !text.includes('"io.modelcontextprotocol/protocolVersion"')) {
      this.#state = "off"; // 2025-era traffic (or something the SDK will refuse): its connection
    } else if (call !== undefined && !text.includes('"server/discover"')) {
      this.#state = "modern"; // the SDK pins the modern era on this request
    }
    this.#forward(line);
  }

  /** Runs a taken call and writes its answer, unless it was cancelled meanwhile. */
  #answer(call: FastCall): void {
    const controller = new AbortController();
    this.#inflight.set(call.id, controller);
    this.#taken++;
    call.run(controller.signal).then((message) => {
      if (message !== null && !controller.signal.aborted) {
        this.#write(JSON.stringify(message) + "\n");
      }
    }).finally(() => {
      if (this.#inflight.get(call.id) === controller) this.#inflight.delete(call.id);
    });
  }
}

/** Creates the stdio fast path of one connection. */
export function createStdioFast(fast: FastPath, options: StdioFastOptions): StdioFast {
  return new StdioFastConnection(fast, options);
}
