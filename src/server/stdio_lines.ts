/**
 * The stdio server's inbound framing: splits stdin into lines under the request cap before the
 * SDK sees them. A line within the cap is handed on whole, in one chunk (after the `__proto__`
 * workaround of proto_key.ts); a line over it is dropped as it streams (never held whole) and
 * reported with the JSON-RPC id found in it, so that one request fails and the connection stays
 * open. The SDK's own buffer cap would instead close the whole connection (decision 0022).
 */
import { Buffer } from "node:buffer";
import { Transform } from "node:stream";
import { exposeProtoKey } from "../workarounds/proto_key.ts";

/** A request id as JSON-RPC allows it. */
export type MessageId = string | number;

/** What the filter reports for a line over the cap. */
export interface OversizeLine {
  /** The top-level `"id"` of the message (string or number), when it has one. */
  id: MessageId | undefined;
  /** Bytes of the line, without its newline. */
  size: number;
}

/** Options of the stdio line filter. */
export interface StdioLineOptions {
  /** Largest line (bytes, without the newline) handed on. */
  maxLineBytes: number;
  /** Called once per line over the cap, when its end has arrived. */
  onOversize: (line: OversizeLine) => void;
}

const NL = 10;
const QUOTE = 34;
const BACKSLASH = 92;
/** Longest id value kept while scanning (bytes); a longer one is not answered. */
const MAX_ID_BYTES = 1024;

/**
 * Finds the top-level `"id"` member of one JSON object streamed through it in pieces, keeping
 * only a few bytes of state (the value of the id, at most MAX_ID_BYTES).
 */
class IdScanner {
  #depth = 0;
  #inString = false;
  #escaped = false;
  #expectKey = false;
  #key: number[] | null = null;
  #lastKeyIsId = false;
  #value: number[] | null = null;
  #found: MessageId | undefined;
  #done = false;

  feed(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length && !this.#done; i++) this.#byte(bytes[i]);
  }

  id(): MessageId | undefined {
    if (!this.#done && this.#value !== null) this.#finish();
    return this.#found;
  }

  #keep(b: number): void {
    if (this.#value !== null) {
      if (this.#value.length >= MAX_ID_BYTES) this.#done = true;
      else this.#value.push(b);
    }
  }

  #finish(): void {
    this.#done = true;
    try {
      const v = JSON.parse(new TextDecoder().decode(new Uint8Array(this.#value ?? [])));
      if (typeof v === "string" || (typeof v === "number" && Number.isFinite(v))) this.#found = v;
    } catch {
      // not a usable id
    }
  }

  #byte(b: number): void {
    if (this.#inString) {
      this.#keep(b);
      if (this.#escaped) this.#escaped = false;
      else if (b === BACKSLASH) this.#escaped = true;
      else if (b === QUOTE) {
        this.#inString = false;
        if (this.#key !== null) {
          this.#lastKeyIsId = this.#key.length === 2 && this.#key[0] === 105 &&
            this.#key[1] === 100;
          this.#key = null;
        }
        return;
      }
      if (this.#key !== null && this.#key.length < 3) this.#key.push(b);
      return;
    }
    switch (b) {
      case QUOTE:
        this.#inString = true;
        this.#keep(b);
        if (this.#depth === 1 && this.#expectKey) {
          this.#key = [];
          this.#expectKey = false;
        }
        return;
      case 123: // {
      case 91: // [
        this.#keep(b);
        this.#depth++;
        if (this.#depth === 1) this.#expectKey = b === 123;
        return;
      case 125: // }
      case 93: // ]
        if (this.#depth === 1 && this.#value !== null) return this.#finish();
        this.#keep(b);
        this.#depth--;
        return;
      case 44: // ,
        if (this.#depth === 1) {
          if (this.#value !== null) return this.#finish();
          this.#expectKey = true;
          return;
        }
        this.#keep(b);
        return;
      case 58: // :
        if (this.#depth === 1 && this.#lastKeyIsId && this.#value === null) {
          this.#value = [];
          this.#lastKeyIsId = false;
          return;
        }
        this.#lastKeyIsId = false;
        this.#keep(b);
        return;
      case 32:
      case 9:
      case 13:
        return;
      default:
        this.#keep(b);
    }
  }
}

/** Options of a {@linkcode LineFramer}: the cap, the oversize report and where lines go. */
export interface LineFramerOptions extends StdioLineOptions {
  /** Receives each whole line within the cap, without its newline (a view: copy to keep it). */
  onLine: (line: Uint8Array) => void;
}

const PROTO = Buffer.from("__proto__");

/** Whether `line` holds the bytes of `__proto__` (then the workaround of proto_key.ts applies). */
function holdsProto(line: Uint8Array): boolean {
  return Buffer.from(line.buffer, line.byteOffset, line.byteLength).includes(PROTO);
}

/**
 * Splits a byte stream into lines under the request cap without any stream machinery: `push`
 * each chunk as it is read (the chunk's buffer may be reused afterwards: what a line keeps across
 * chunks is copied), `end` at the end of the input. A line within `maxLineBytes` goes to `onLine`
 * whole (after the `__proto__` workaround); a line over it is dropped as it streams (never held
 * whole) and reported through `onOversize` with its JSON-RPC id once its end has arrived.
 */
export class LineFramer {
  readonly #maxLineBytes: number;
  readonly #onOversize: (line: OversizeLine) => void;
  readonly #onLine: (line: Uint8Array) => void;
  /** Copies of the pieces of the current line seen in earlier chunks. */
  #parts: Uint8Array[] = [];
  #size = 0;
  /** Set while a line over the cap streams by. */
  #scanner: IdScanner | null = null;

  constructor(options: LineFramerOptions) {
    this.#maxLineBytes = options.maxLineBytes;
    this.#onOversize = options.onOversize;
    this.#onLine = options.onLine;
  }

  /** Frames one chunk: every line it completes is handed on before this returns. */
  push(chunk: Uint8Array): void {
    let start = 0;
    while (start < chunk.length) {
      const end = chunk.indexOf(NL, start);
      if (end === -1) {
        this.#take(chunk.subarray(start), true);
        return;
      }
      if (this.#parts.length === 0 && this.#scanner === null && end - start <= this.#maxLineBytes) {
        this.#emit(chunk.subarray(start, end)); // the common case: a whole line in one chunk
      } else {
        this.#take(chunk.subarray(start, end), false);
        this.#finishLine();
      }
      start = end + 1;
    }
  }

  /** The end of the input: the last line without its newline, if any (never parsed as a line). */
  end(): Uint8Array | undefined {
    const rest = this.#scanner === null && this.#size > 0 ? this.#joined() : undefined;
    this.#parts = [];
    this.#size = 0;
    this.#scanner = null;
    return rest === undefined ? undefined : exposed(rest);
  }

  #take(piece: Uint8Array, keep: boolean): void {
    this.#size += piece.length;
    if (this.#scanner !== null) return this.#scanner.feed(piece);
    this.#parts.push(keep ? piece.slice() : piece);
    if (this.#size <= this.#maxLineBytes) return;
    // Over the cap: from here on only the id is looked for; the bytes are let go.
    this.#scanner = new IdScanner();
    for (const p of this.#parts) this.#scanner.feed(p);
    this.#parts = [];
  }

  #finishLine(): void {
    if (this.#scanner !== null) {
      this.#onOversize({ id: this.#scanner.id(), size: this.#size });
      this.#scanner = null;
    } else this.#emit(this.#joined());
    this.#parts = [];
    this.#size = 0;
  }

  #joined(): Uint8Array {
    return this.#parts.length === 1 ? this.#parts[0] : Buffer.concat(this.#parts, this.#size);
  }

  #emit(line: Uint8Array): void {
    this.#onLine(exposed(line));
  }
}

/** The line after the `__proto__` workaround (proto_key.ts); most lines are returned as they are. */
function exposed(line: Uint8Array): Uint8Array {
  if (!holdsProto(line)) return line;
  const text = Buffer.from(line.buffer, line.byteOffset, line.byteLength).toString("utf8");
  return Buffer.from(exposeProtoKey(text), "utf8");
}

/**
 * A newline-delimited stream filter for the stdio server (for a caller's own Node streams):
 * whole lines within `maxLineBytes` pass, one chunk each with its newline; a line over it is
 * dropped and reported through `onOversize`. The process's own stdin is read without streams
 * (stdio_server.ts drives a {@linkcode LineFramer} directly).
 */
export function stdioLineFilter(options: StdioLineOptions): Transform {
  const lines: Uint8Array[] = [];
  const framer = new LineFramer({ ...options, onLine: (line) => lines.push(line) });
  const handOn = (t: Transform) => {
    for (const line of lines) t.push(Buffer.concat([line, NEWLINE]));
    lines.length = 0;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      framer.push(chunk);
      handOn(this);
      done();
    },
    flush(done) {
      // A last line without its newline is handed on as it is (the SDK never parses it).
      const rest = framer.end();
      if (rest !== undefined) this.push(Buffer.from(rest));
      done();
    },
  });
}

const NEWLINE = Buffer.of(NL);
