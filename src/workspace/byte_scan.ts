/**
 * Byte-level scanning for search_text: a file's bytes are viewed as a one-byte (latin1) string,
 * one character per byte, and searched with V8's string search for the UTF-8 encoding of a
 * literal; only the lines around hits are decoded. A regex's prefilter searches bytes for its
 * required literal (regex/required_literal.ts) with these finders. Decision 0035.
 */
import { Buffer } from "node:buffer";
import { kmpFinder } from "./text.ts";

/** Finds the first hit at or after a byte offset of a byte string, or -1 (`check` may throw to stop). */
export type ByteFind = (bin: string, from: number, check?: () => void) => number;

/** A byte finder and the longest hit it can return (bytes). */
export interface ByteFinder {
  find: ByteFind;
  /** Longest hit in bytes. */
  pad: number;
}

/** Literals longer than this (in bytes) are scanned with KMP (linear) instead of indexOf. */
const KMP_FROM = 64;
/** Bytes one scan covers between two stop checks. */
const BYTE_WINDOW = 1 << 20;

const utf8Encoder = new TextEncoder();

/** The bytes of `b` as a string of one character per byte (U+0000 to U+00FF). */
export function byteString(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("latin1");
}

/** The UTF-8 encoding of a (well-formed) string, one character per byte. */
export function utf8ByteString(s: string): string {
  return byteString(utf8Encoder.encode(s));
}

/** True when the string has only ASCII characters. */
function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/**
 * Start positions one call of a finder whose cost per position grows with the literal (up to
 * `literalLength` steps each) may cover: about 4 million steps, a few milliseconds, between two
 * stop checks, whatever the literal's length; at most `cap`, at least 1024.
 */
export function windowFor(literalLength: number, cap: number = BYTE_WINDOW): number {
  return Math.max(1024, Math.min(cap, Math.floor((1 << 22) / Math.max(1, literalLength))));
}

/**
 * Runs `finder` (first hit at or after `from` in a string, or -1) over windows of `window`
 * start positions, each a slice with `pad` bytes of right context (a hit is at most `pad`
 * bytes long), calling `check` between windows: one uninterruptible call covers one window.
 */
function windowedBytes(
  finder: (s: string, from: number) => number,
  pad: number,
  window = BYTE_WINDOW,
): ByteFind {
  return (bin, from, check) => {
    if (bin.length - from <= window) return finder(bin, from);
    for (let s = from; s < bin.length; s += window) {
      if (s > from) check?.();
      const i = finder(bin.slice(s, Math.min(bin.length, s + window + pad)), 0);
      if (i !== -1 && i < window) return s + i;
    }
    return -1;
  };
}

/**
 * A byte finder for a literal: its UTF-8 encoding, exactly (caseSensitive), or for an ASCII
 * literal ignoring case as search_text's `i` flag does (ASCII letters in both cases, and the
 * only two non-ASCII characters that fold to ASCII letters: U+212A KELVIN SIGN for k and
 * U+017F LATIN SMALL LETTER LONG S for s). Null when bytes cannot decide (a case-insensitive
 * non-ASCII literal, or a string that is not well-formed UTF-16).
 */
export function literalByteFinder(literal: string, caseSensitive: boolean): ByteFinder | null {
  if (literal.length === 0 || !literal.isWellFormed()) return null;
  if (caseSensitive) {
    const needle = utf8ByteString(literal);
    if (needle.length > KMP_FROM) {
      const kmp = kmpFinder(needle);
      return { find: windowedBytes((s, from) => kmp(s, from), needle.length), pad: needle.length };
    }
    return {
      find: windowedBytes((s, from) => s.indexOf(needle, from), needle.length),
      pad: needle.length,
    };
  }
  if (!isAscii(literal)) return null;
  // No `i` flag: the case variants are spelled out, so no byte >= 0x80 is ever folded. The
  // longest hit (pad): a byte a character, three for a k (U+212A), two for an s (U+017F).
  let source = "";
  let pad = 0;
  for (const c of literal) {
    const lower = c.toLowerCase();
    const upper = c.toUpperCase();
    pad += lower === "k" ? 3 : lower === "s" ? 2 : 1;
    if (lower === "k") source += "(?:[kK]|\\xE2\\x84\\xAA)";
    else if (lower === "s") source += "(?:[sS]|\\xC5\\xBF)";
    else if (lower !== upper) source += `[${lower}${upper}]`;
    else source += "\\x" + c.charCodeAt(0).toString(16).padStart(2, "0");
  }
  // A fixed sequence of single-character atoms (k and s: two alternatives with different
  // first bytes): one path per start position, O(text x literal) at worst, so the window
  // shrinks as the literal grows (a 4,000-character literal over one 64 KiB chunk was one call
  // of about 100 ms, longer than a stopped worker has to acknowledge).
  const re = new RegExp(source, "g");
  // A window at least as long as the pad: a call scans at most twice its window.
  const find = windowedBytes(
    (s, from) => {
      re.lastIndex = from;
      const m = re.exec(s);
      return m ? m.index : -1;
    },
    pad,
    Math.max(windowFor(literal.length), pad),
  );
  return { find, pad };
}

/**
 * UTF-16 units in the UTF-8 bytes [from, to) (valid UTF-8, cut at code point boundaries): one
 * per code point, two for those outside the BMP (4-byte sequences).
 */
export function utf16Units(bytes: Uint8Array, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = bytes[i];
    if ((c & 0xc0) !== 0x80) n += c >= 0xf0 ? 2 : 1;
  }
  return n;
}
