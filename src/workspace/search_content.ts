/**
 * A file's content as search_text's scans see it: offsets into decoded text or into the bytes
 * (decision 0035), lines cut out around a hit, clipped to MAX_LINE_CHARS and copied so a result
 * keeps no whole file alive, and the context lines before and after a match.
 *
 * @module
 */
import { isAscii } from "node:buffer";
import { type ByteFind, byteString, utf16Units } from "./byte_scan.ts";
import { MAX_LINE_CHARS } from "./search_types.ts";

/** The window of at most MAX_LINE_CHARS a line is shown in, around column `at`. */
export function clip(line: string, at: number): { text: string; start: number; cutEnd: boolean } {
  if (line.length <= MAX_LINE_CHARS) return { text: line, start: 0, cutEnd: false };
  const start = Math.max(0, Math.min(at - 100, line.length - MAX_LINE_CHARS));
  const cutEnd = start + MAX_LINE_CHARS < line.length;
  return { text: line.slice(start, start + MAX_LINE_CHARS), start, cutEnd };
}

/** For pieces of a file: a U+FEFF inside the text is kept (only the file's first BOM is not text). */
const utf8Piece = new TextDecoder("utf-8", { ignoreBOM: true });

const enc = new TextEncoder();
// ignoreBOM: a line that starts with U+FEFF keeps it (the default decoder would drop it).
const dec = new TextDecoder("utf-8", { ignoreBOM: true });
/** A flat copy of a (short) string, so a result never keeps a whole file's text alive. */
function detach(s: string): string {
  return s.length < 16 ? s : dec.decode(enc.encode(s));
}

/** A clipped line's text that keeps nothing larger alive: copied unless it is a fresh line whole. */
export function own(c: Content, cl: { text: string; start: number; cutEnd: boolean }): string {
  return c.fresh && cl.start === 0 && !cl.cutEnd ? cl.text : detach(cl.text);
}

/** The line without a trailing "\r". */
export function stripCr(s: string): string {
  return s.endsWith("\r") ? s.slice(0, -1) : s;
}

/**
 * A file's content as the scans see it, by offsets: into the decoded text, or into the bytes
 * (decision 0035). `find` gives the next hit at or after an offset, `nl`/`lastNl` the next
 * "\n" at or after / the last at or before an offset, `line` the text of a range and `units`
 * its length in UTF-16 units. `base` is where the first line starts (after a byte order mark,
 * which is not text).
 */
export interface Content {
  length: number;
  base: number;
  /** `line` returns strings of their own (not slices of a whole file's text). */
  fresh: boolean;
  find(from: number): number;
  nl(from: number): number;
  lastNl(at: number): number;
  line(a: number, b: number): string;
  units(a: number, b: number): number;
}

/** A decoded file's content; `find` gives the matcher's hits in the text. */
export function textContent(text: string, find: (from: number) => number): Content {
  return {
    length: text.length,
    base: 0,
    fresh: false,
    find,
    nl: (from) => text.indexOf("\n", from),
    lastNl: (at) => (at < 0 ? -1 : text.lastIndexOf("\n", at)),
    line: (a, b) => text.slice(a, b),
    units: (a, b) => b - a,
  };
}

/**
 * Bytes one byte string covers: a file is searched a chunk at a time, so no string is larger
 * than this (plus a hit's length) and each dies young, whatever the file's size.
 */
const BYTE_CHUNK = 64 * 1024;

/** A file's content as its bytes, searched a chunk at a time with a byte finder (decision 0035). */
export function byteContent(
  bytes: Uint8Array,
  o: { find: ByteFind; pad: number; check: () => void },
): Content {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  // An ASCII file's bytes are its text (asked once, at the first hit).
  let ascii: boolean | undefined;
  const isAsciiFile = () => (ascii ??= isAscii(bytes));
  let chunkStart = -1;
  let chunk = "";
  const n = bytes.length;
  /** The byte string of the chunk holding `pos` (cached; a new chunk starts at `pos`). */
  const chunkAt = (pos: number) => {
    if (chunkStart === -1 || pos < chunkStart || pos >= chunkStart + BYTE_CHUNK) {
      chunkStart = pos;
      chunk = byteString(bytes.subarray(pos, Math.min(n, pos + BYTE_CHUNK + o.pad)));
    }
    return chunk;
  };
  return {
    length: n,
    base: bom,
    fresh: true,
    find: (from) => {
      for (let s = from; s < n;) {
        const str = chunkAt(s);
        // A hit starting in this chunk is whole in it (the pad covers the longest hit).
        const i = o.find(str, s - chunkStart, o.check);
        if (i !== -1 && i < BYTE_CHUNK) return chunkStart + i;
        s = chunkStart + BYTE_CHUNK;
        o.check();
      }
      return -1;
    },
    // Newlines are found in the chunk strings too (a string's indexOf is far cheaper per call
    // than a typed array's).
    nl: (from) => {
      for (let s = from; s < n;) {
        const str = chunkAt(s);
        const i = str.indexOf("\n", s - chunkStart);
        if (i !== -1) return chunkStart + i;
        s = chunkStart + str.length;
      }
      return -1;
    },
    lastNl: (at) => {
      if (at < 0) return -1;
      if (chunkStart !== -1 && at >= chunkStart && at < chunkStart + chunk.length) {
        const i = chunk.lastIndexOf("\n", at - chunkStart);
        if (i !== -1) return chunkStart + i;
        return chunkStart === 0 ? -1 : bytes.lastIndexOf(10, chunkStart - 1);
      }
      return bytes.lastIndexOf(10, at);
    },
    line: (a, b) =>
      isAsciiFile() ? byteString(bytes.subarray(a, b)) : utf8Piece.decode(bytes.subarray(a, b)),
    units: (a, b) => isAsciiFile() ? b - a : utf16Units(bytes, a, b),
  };
}

/**
 * Up to k lines before the line starting at lineStart (line lineNo), oldest first; the
 * numbers of those clipped go to `clipped`.
 */
export function linesBefore(
  c: Content,
  at: { lineStart: number; lineNo: number },
  k: number,
  clipped: number[],
): string[] {
  const out: string[] = [];
  let end = at.lineStart - 1; // the "\n" ending the previous line
  while (out.length < k && end >= c.base) {
    const nl = end - 1 < c.base ? -1 : c.lastNl(end - 1);
    const start = nl === -1 ? c.base : nl + 1;
    const cl = clip(stripCr(c.line(start, end)), 0);
    if (cl.cutEnd) clipped.unshift(at.lineNo - out.length - 1);
    out.unshift(own(c, cl));
    end = start - 1;
  }
  return out;
}

/**
 * Up to k lines after the line ending at lineEnd (index of its "\n" or the end; line
 * lineNo); the numbers of those clipped go to `clipped`.
 */
export function linesAfter(
  c: Content,
  at: { lineEnd: number; lineNo: number },
  k: number,
  clipped: number[],
): string[] {
  const out: string[] = [];
  let start = at.lineEnd + 1;
  while (out.length < k && start < c.length) {
    let end = c.nl(start);
    if (end === -1) end = c.length;
    const cl = clip(stripCr(c.line(start, end)), 0);
    if (cl.cutEnd) clipped.push(at.lineNo + out.length + 1);
    out.push(own(c, cl));
    start = end + 1;
  }
  return out;
}
