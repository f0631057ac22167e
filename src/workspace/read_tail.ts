/**
 * read_file's `tailLines` (decision 0056): the last N lines of a file, read backwards from its end
 * one chunk at a time, so a long log is never read whole. Only what can be returned is read: the
 * scan stops once it has found the start of the N-th line from the end, reached the file's start,
 * or gathered more than maxBytes (no older line could fit). The bytes returned are judged as any
 * read's are (strict UTF-8, no NUL, else BINARY_FILE). A tail read that reached the file's first
 * byte (every file up to one chunk, 64 KiB) read it whole, so it is judged as a whole read is
 * (every byte checked) and carries the file's sha256 and line count.
 *
 * @module
 */
import { WorkspaceError } from "./errors.ts";
import type { CheckedFile } from "./containment.ts";
import { cutTextEnd, READ_CHUNK, sha256Hex, textCosts } from "./text.ts";
import { binaryError, countNewlines, hasNul } from "./read_window.ts";

/** What a tail read is asked for. */
export interface TailOptions {
  /** Lines wanted from the end (at least 1). */
  lines: number;
  /** The call's maxBytes: UTF-8 bytes of content at most. */
  maxBytes: number;
  /** JSON bytes of content at most: what the result's fixed fields leave of the budget. */
  maxJson: number;
  /** A file taken whole is hashed only when it is at most this size (maxHashBytes). */
  hashLimit: number;
  /** The file's workspace-relative path (for errors). */
  rel: string;
  /** Cancellation and the time budget, between chunks. */
  tick: () => Promise<void>;
}

/** The end of a file as a tail read found it. */
export interface Tail {
  content: string;
  /** Lines content holds; the last of them is the file's last line. */
  lines: number;
  /** The file's size (the fstat made at open; bytes appended since are not read). */
  size: number;
  /** Set when the file was read whole (and it is at most hashLimit): its lines and sha256. */
  whole?: { totalLines: number; sha256: string };
  /** What kept older lines out: the call's maxBytes or the result byte budget. */
  cut?: "maxBytes" | "maxResultBytes";
  /** The one line returned is longer than the room: only its end is returned. */
  lineTruncated?: boolean;
}

/** The file's end as read backwards: its bytes from `pos` on and the line starts found. */
interface Gathered {
  /** The bytes of [pos, size). */
  bytes: Uint8Array;
  pos: number;
  /** Offsets of line starts, latest first; the file's first line (0) once pos reached it. */
  starts: number[];
}

/** Fills buf[at, at + len) from the file at `position`; a file that shrank is CHANGED. */
function readFully(file: CheckedFile, buf: Uint8Array, at: number, len: number, pos: number) {
  let n = 0;
  while (n < len) {
    const got = file.readAtSync(buf, at + n, len - n, pos + n);
    if (got === 0) {
      throw new WorkspaceError("CHANGED_DURING_OPERATION", "the file shrank while it was read", {
        argument: "path",
      });
    }
    n += got;
  }
}

/** Reads backwards from the end until the wanted line starts are known, or no older one fits. */
async function gather(file: CheckedFile, o: TailOptions): Promise<Gathered> {
  const size = file.size;
  // Never more than maxBytes and one chunk: beyond that no older line can be returned.
  const buf = new Uint8Array(Math.min(size, o.maxBytes + READ_CHUNK + 1));
  const starts: number[] = [];
  let pos = size;
  // A final "\n" ends the last line; it does not start another.
  let scanEnd = size;
  while (pos > 0 && starts.length < o.lines && size - pos <= o.maxBytes) {
    await o.tick();
    const len = Math.min(READ_CHUNK, pos, buf.length - (size - pos));
    if (len === 0) break;
    const at = buf.length - (size - pos) - len;
    readFully(file, buf, at, len, pos - len);
    if (pos === size && buf[buf.length - 1] === 10) scanEnd = size - 1;
    for (let i = Math.min(scanEnd, pos) - 1; i >= pos - len; i--) {
      if (buf[at + (i - (pos - len))] === 10) {
        starts.push(i + 1);
        if (starts.length === o.lines) break;
      }
    }
    pos -= len;
  }
  if (pos === 0 && size > 0 && starts.length < o.lines) starts.push(0);
  return { bytes: buf.subarray(buf.length - (size - pos)), pos, starts };
}

/** Decodes bytes strictly: a NUL or an invalid sequence is BINARY_FILE. */
function decodeStrict(bytes: Uint8Array, rel: string): string {
  if (hasNul(bytes)) throw binaryError(rel);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw binaryError(rel);
  }
}

/** The last line alone is longer than maxBytes: its end, from a code point's first byte. */
function lastLineEnd(g: Gathered, o: TailOptions, size: number): Tail {
  let from = Math.max(0, g.bytes.length - o.maxBytes);
  // Skip the continuation bytes of the code point cut at the front (at most 3 in UTF-8: more is
  // not UTF-8, and the strict decoding below refuses it).
  for (let n = 0; n < 3 && from < g.bytes.length && (g.bytes[from] & 0xc0) === 0x80; n++) from++;
  const text = decodeStrict(g.bytes.subarray(from), o.rel);
  return {
    content: cutTextEnd(text, o.maxBytes, o.maxJson),
    lines: 1,
    size,
    cut: "maxBytes",
    lineTruncated: true,
  };
}

/** The whole file's line count and sha256 when the read reached its first byte, else undefined. */
function wholeOf(g: Gathered, o: TailOptions): Tail["whole"] {
  if (g.pos !== 0 || g.bytes.length > o.hashLimit) return undefined;
  // Judged as a whole read: every byte, not only those returned.
  decodeStrict(g.bytes, o.rel);
  const newlines = countNewlines(g.bytes);
  const n = g.bytes.length;
  const totalLines = n === 0 ? 0 : g.bytes[n - 1] === 10 ? newlines : newlines + 1;
  return { totalLines, sha256: sha256Hex(g.bytes) };
}

/** The tail of the gathered bytes: as many of the wanted lines as fit maxBytes and maxJson. */
function fit(g: Gathered, o: TailOptions, size: number): Tail {
  // The most lines whose bytes fit maxBytes.
  let k = g.starts.length;
  while (k > 0 && size - g.starts[k - 1] > o.maxBytes) k--;
  if (k === 0) return lastLineEnd(g, o, size);
  const text = decodeStrict(g.bytes.subarray(g.starts[k - 1] - g.pos), o.rel);
  let cut: Tail["cut"] = k < g.starts.length || (g.pos > 0 && k < o.lines) ? "maxBytes" : undefined;
  // Then the most of them whose JSON fits the budget's room: newest first, each line measured
  // once (linear in the text, whatever the room).
  let json = 0;
  let start = text.length;
  let taken = 0;
  while (taken < k) {
    // The line ending at `start` (its "\n" included) begins after the "\n" before it.
    const before = start - 2 < 0 ? -1 : text.lastIndexOf("\n", start - 2);
    const cost = textCosts(text.slice(before + 1, start)).json;
    if (json + cost > o.maxJson) break;
    json += cost;
    start = before + 1;
    taken++;
  }
  if (taken === 0) {
    const last = text.length - 2 < 0 ? -1 : text.lastIndexOf("\n", text.length - 2);
    const newest = text.slice(last + 1);
    const content = cutTextEnd(newest, o.maxBytes, o.maxJson);
    return { content, lines: 1, size, cut: "maxResultBytes", lineTruncated: true };
  }
  if (taken < k) cut = "maxResultBytes";
  const tail: Tail = { content: text.slice(start), lines: taken, size };
  if (cut !== undefined) tail.cut = cut;
  return tail;
}

/**
 * The last `o.lines` lines of an opened file, as many of them as fit maxBytes and maxJson
 * (older lines are dropped first). Cancellable between chunks.
 */
export async function readTail(file: CheckedFile, o: TailOptions): Promise<Tail> {
  const size = file.size;
  const g = await gather(file, o);
  const whole = wholeOf(g, o);
  const tail: Tail = size === 0 ? { content: "", lines: 0, size } : fit(g, o, size);
  if (whole) tail.whole = whole;
  return tail;
}
