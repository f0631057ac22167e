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

/**
 * A newline-delimited stream filter for the stdio server: whole lines within `maxLineBytes`
 * pass, one chunk each; a line over it is dropped and reported through `onOversize`.
 */
export function stdioLineFilter(options: StdioLineOptions): Transform {
  const { maxLineBytes, onOversize } = options;
  let parts: Buffer[] = [];
  let size = 0;
  let scanner: IdScanner | null = null; // set while a line over the cap streams by
  const emit = (t: Transform): void => {
    const line = parts.length === 1 ? parts[0] : Buffer.concat(parts, size);
    parts = [];
    size = 0;
    if (!line.includes("__proto__")) return void t.push(Buffer.concat([line, Buffer.of(NL)]));
    t.push(Buffer.from(exposeProtoKey(line.toString("utf8")) + "\n", "utf8"));
  };
  const take = (piece: Buffer): void => {
    size += piece.length;
    if (scanner !== null) return scanner.feed(piece);
    parts.push(piece);
    if (size <= maxLineBytes) return;
    // Over the cap: from here on only the id is looked for; the bytes are let go.
    scanner = new IdScanner();
    for (const p of parts) scanner.feed(p);
    parts = [];
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      let start = 0;
      while (start < chunk.length) {
        const end = chunk.indexOf(NL, start);
        if (end === -1) {
          take(chunk.subarray(start));
          break;
        }
        take(chunk.subarray(start, end));
        if (scanner !== null) {
          onOversize({ id: scanner.id(), size });
          scanner = null;
          parts = [];
          size = 0;
        } else emit(this);
        start = end + 1;
      }
      done();
    },
    flush(done) {
      // A last line without its newline is handed on as it is (the SDK never parses it).
      if (scanner === null && size > 0) {
        this.push(Buffer.from(exposeProtoKey(Buffer.concat(parts, size).toString("utf8"))));
      }
      done();
    },
  });
}
