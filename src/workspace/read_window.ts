/**
 * read_file's line window: what each chunk of a file's bytes adds to the requested line range,
 * decoded as strict UTF-8 (a NUL or an invalid sequence is BINARY_FILE) and cut on whole lines
 * under the call's maxBytes and the content's share of the result budget. A file checked whole
 * (at most maxHashBytes) has every byte decoded, before and after the range too; a larger one
 * only the range (decision 0038). read.ts does the opening, reading and the result around it.
 */
import { WorkspaceError } from "./errors.ts";
import { cutText, textCosts } from "./text.ts";

/** True when bytes contain a NUL. */
export function hasNul(bytes: Uint8Array): boolean {
  return bytes.indexOf(0) !== -1;
}

/** Number of "\n" bytes in bytes. */
export function countNewlines(bytes: Uint8Array): number {
  let n = 0;
  let i = -1;
  while ((i = bytes.indexOf(10, i + 1)) !== -1) n++;
  return n;
}

/** Number of "\n" in text. */
function countNewlinesText(text: string): number {
  let n = 0;
  let i = -1;
  while ((i = text.indexOf("\n", i + 1)) !== -1) n++;
  return n;
}

/** The refusal of a file that is not UTF-8 text. */
export function binaryError(rel: string): WorkspaceError {
  return new WorkspaceError(
    "BINARY_FILE",
    `${rel} is not UTF-8 text; use read_media to read it as base64`,
    { argument: "path", details: { suggestion: "read_media" } },
  );
}

/** What a LineWindow is asked for. */
export interface WindowOptions {
  /** First line of the range (1-based). */
  start: number;
  /** Last line of the range (Infinity: to the end). */
  end: number;
  /** The call's maxBytes: UTF-8 bytes of content at most. */
  maxBytes: number;
  /** JSON bytes of content at most: what the result's fixed fields leave of the budget. */
  maxJson: number;
  /** The file's workspace-relative path (for the BINARY_FILE refusal). */
  rel: string;
  /** The file is checked whole: every byte is decoded, before and after the range too. */
  whole: boolean;
}

/** The line range of one read_file, filled chunk by chunk (consume), then finished. */
export class LineWindow {
  /** Line of the next byte. */
  lineNo = 1;
  /** The content taken so far. */
  out = "";
  /** Last line (partly) in out; 0 when none. */
  lastIncluded = 0;
  /** What cut the range, once it was cut. */
  cut: "maxBytes" | "maxResultBytes" | undefined;
  /** The line a continuation starts at, once the range was cut. */
  nextStartLine: number | undefined;
  /** The last line in out was cut at maxBytes (it is longer than maxBytes on its own). */
  lineTruncated = false;
  readonly #o: WindowOptions;
  readonly #decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  #outBytes = 0;
  #outJson = 0;
  /** Offset in out where the current line started (0: before any taken line end). */
  #lineStartInOut = 0;

  /** A window on options' range, nothing taken yet. */
  constructor(options: WindowOptions) {
    this.#o = options;
  }

  /**
   * Takes what one chunk adds to the range; false once the range is complete and, if it was cut,
   * the next line is known to exist: the rest of the file need not be read.
   */
  consume(chunk: Uint8Array): boolean {
    const { start, end, whole } = this.#o;
    let pos = 0;
    while (pos < chunk.length) {
      if (this.lineNo < start) pos = this.#skipToStart(chunk, pos);
      else if (this.cut === undefined && this.lineNo <= end && whole) {
        pos = this.#takeLines(chunk, pos);
      } else if (this.cut === undefined && this.lineNo <= end) pos = this.#takeSegment(chunk, pos);
      else if (whole) pos = this.#checkRest(chunk, pos);
      else if (this.nextStartLine !== undefined && this.lineNo < this.nextStartLine) {
        pos = this.#skipCutLine(chunk, pos);
      } else return false; // Done: the range is complete and, if cut, the next line exists.
    }
    return true;
  }

  /** At the end of a file checked whole: its last bytes must end a UTF-8 sequence. */
  finish(): void {
    if (!this.#o.whole) return;
    try {
      this.#decoder.decode();
    } catch {
      throw binaryError(this.#o.rel);
    }
  }

  /** Decodes bytes as the next part of the file (streaming); BINARY_FILE on a NUL or bad UTF-8. */
  #decode(bytes: Uint8Array): string {
    if (hasNul(bytes)) throw binaryError(this.#o.rel);
    try {
      return this.#decoder.decode(bytes, { stream: true });
    } catch {
      throw binaryError(this.#o.rel);
    }
  }

  /**
   * Before the range: skips to the first byte of line `start`, examining only what the
   * whole-file check needs. Returns the position reached.
   */
  #skipToStart(chunk: Uint8Array, pos: number): number {
    let p = pos;
    while (this.lineNo < this.#o.start) {
      const nl = chunk.indexOf(10, p);
      if (nl === -1) {
        p = chunk.length;
        break;
      }
      this.lineNo++;
      p = nl + 1;
    }
    if (this.#o.whole) this.#decode(chunk.subarray(pos, p));
    return p;
  }

  /**
   * In the range of a file that is checked whole anyway: the lines of this chunk up to the
   * range's end decoded in one call, then taken in one piece when they fit (else line by line,
   * as #takeSegment does). The same bytes are decoded either way.
   */
  #takeLines(chunk: Uint8Array, pos: number): number {
    let p = pos;
    for (let l = this.lineNo; l <= this.#o.end; l++) {
      const nl = chunk.indexOf(10, p);
      if (nl === -1) {
        p = chunk.length;
        break;
      }
      p = nl + 1;
    }
    const text = this.#decode(chunk.subarray(pos, p));
    const { utf8: b, json: j } = textCosts(text);
    if (this.#outBytes + b <= this.#o.maxBytes && this.#outJson + j <= this.#o.maxJson) {
      this.#appendLines(text, b, j);
    } else this.#takeByLine(text);
    return p;
  }

  /** Appends decoded text that fits whole (b UTF-8 and j JSON bytes), counting its lines. */
  #appendLines(text: string, b: number, j: number): void {
    const lastNl = text.lastIndexOf("\n");
    const k = lastNl === -1 ? 0 : countNewlinesText(text);
    this.out += text;
    this.#outBytes += b;
    this.#outJson += j;
    this.lastIncluded = lastNl === text.length - 1 ? this.lineNo + k - 1 : this.lineNo + k;
    this.lineNo += k;
    if (lastNl !== -1) this.#lineStartInOut = this.out.length - (text.length - lastNl - 1);
  }

  /** Takes decoded text one line segment at a time until the range is cut. */
  #takeByLine(text: string): void {
    for (let i = 0; i < text.length;) {
      const nl = text.indexOf("\n", i);
      const e = nl === -1 ? text.length : nl + 1;
      if (this.cut === undefined) this.#take(text.slice(i, e));
      i = e;
      if (nl !== -1) {
        this.lineNo++;
        this.#lineStartInOut = this.out.length;
      }
    }
  }

  /** In the range: one segment of the current line. Returns the position after it. */
  #takeSegment(chunk: Uint8Array, pos: number): number {
    const nl = chunk.indexOf(10, pos);
    const segEnd = nl === -1 ? chunk.length : nl + 1;
    this.#take(this.#decode(chunk.subarray(pos, segEnd)));
    if (nl !== -1) {
      this.lineNo++;
      this.#lineStartInOut = this.out.length;
    }
    return segEnd;
  }

  /** After the range of a file that is hashed whole: checks and counts the rest of the chunk. */
  #checkRest(chunk: Uint8Array, pos: number): number {
    const rest = chunk.subarray(pos);
    this.#decode(rest);
    this.lineNo += countNewlines(rest);
    return chunk.length;
  }

  /** The rest of a line cut short: skipped to learn whether another line follows. */
  #skipCutLine(chunk: Uint8Array, pos: number): number {
    const nl = chunk.indexOf(10, pos);
    if (nl === -1) return chunk.length;
    this.lineNo++;
    return nl + 1;
  }

  /** Takes one decoded segment of line lineNo (the range's line), or cuts the range. */
  #take(text: string): void {
    const { maxBytes, maxJson } = this.#o;
    const { utf8: b, json: j } = textCosts(text);
    if (this.#outBytes + b <= maxBytes && this.#outJson + j <= maxJson) {
      this.out += text;
      this.#outBytes += b;
      this.#outJson += j;
      this.lastIncluded = this.lineNo;
      return;
    }
    this.cut = this.#outBytes + b > maxBytes ? "maxBytes" : "maxResultBytes";
    this.nextStartLine = this.lineNo;
    if (this.#lineStartInOut > 0) {
      // Drop the part of this line already taken from an earlier chunk: whole lines only.
      this.out = this.out.slice(0, this.#lineStartInOut);
      this.lastIncluded = this.lineNo - 1;
    } else {
      // A single line larger than the room: return its first bytes, cut on a code point,
      // and say so; continuing means the next line (never the same one again).
      this.out += cutText(text, maxBytes - this.#outBytes, maxJson - this.#outJson);
      this.lastIncluded = this.lineNo;
      this.lineTruncated = true;
      this.nextStartLine = this.lineNo + 1;
    }
  }
}
