/**
 * Byte-level scanning for search_text: a file's bytes are viewed as a one-byte (latin1) string,
 * one character per byte, and searched with V8's string search for the UTF-8 encoding of a
 * literal; only the lines around hits are decoded. Also the required literal of an RE2 pattern
 * (a string every match must contain), the prefilter that lets RE2 run only on candidate lines.
 * Decision 0035.
 */
import { Buffer } from "node:buffer";
import { kmpFinder } from "./text.ts";
import { utf8Length } from "./budget.ts";
import { skipRe2Token } from "./re2_syntax.ts";

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

const SPECIAL = new Set([..."\\.+*?()|[]{}^$"]);

/**
 * A literal string that every match of an RE2 pattern contains (the longest one found by a
 * conservative syntactic scan of the top level), or null when none can be proven: any
 * top-level alternation, flag group or `{` gives up; groups, classes, escapes other than
 * escaped punctuation, `.` and anchors end a run; a character followed by `?`, `*` or `{` is
 * dropped, one followed by `+` ends its run. Only for patterns RE2 compiled.
 */
export function requiredLiteral(pattern: string): string | null {
  const runs: string[] = [];
  let run = "";
  const end = () => {
    if (run.length > 0) runs.push(run);
    run = "";
  };
  // A literal character at i: what follows decides whether it is required.
  const push = (ch: string, next: number): number => {
    const q = pattern[next];
    if (q === "?" || q === "*") {
      end();
      next++;
      if (pattern[next] === "?") next++;
      return next;
    }
    if (q === "{") return -1;
    run += ch;
    if (q === "+") {
      end();
      next++;
      if (pattern[next] === "?") next++;
    }
    return next;
  };
  const skipQuantifier = (i: number): number => {
    const q = pattern[i];
    if (q === "?" || q === "*" || q === "+") {
      i++;
      if (pattern[i] === "?") i++;
      return i;
    }
    return q === "{" ? -1 : i;
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === "|") return null;
    if (c === "\\") {
      const e = pattern[i + 1];
      if (e === "Q") {
        // \Q...\E: every character literal (the last one may take a quantifier).
        const close = pattern.indexOf("\\E", i + 2);
        const body = pattern.slice(i + 2, close === -1 ? pattern.length : close);
        const after = close === -1 ? pattern.length : close + 2;
        if (body.length === 0) {
          i = after;
          continue;
        }
        const chars = Array.from(body);
        run += chars.slice(0, -1).join("");
        i = push(chars[chars.length - 1], after);
        if (i === -1) break;
        continue;
      }
      if (e !== undefined && SPECIAL.has(e) || e === "/" || e === "-" || e === "#") {
        i = push(e!, i + 2);
        if (i === -1) break;
        continue;
      }
      // Classes (\d, \pL), assertions (\b, \A), escapes of characters (\x, \n): end the run.
      end();
      i += 2;
      if (e === "p" || e === "P") {
        if (pattern[i] === "{") {
          const close = pattern.indexOf("}", i);
          i = close === -1 ? pattern.length : close + 1;
        } else i++;
      } else if (e === "x") {
        if (pattern[i] === "{") {
          const close = pattern.indexOf("}", i);
          i = close === -1 ? pattern.length : close + 1;
        } else i += 2;
      } else if (e !== undefined && e >= "0" && e <= "7") {
        while (i < pattern.length && pattern[i] >= "0" && pattern[i] <= "7") i++;
      }
      i = skipQuantifier(i);
      if (i === -1) break;
      continue;
    }
    if (c === "[") {
      end();
      i = skipRe2Token(pattern, i);
      i = skipQuantifier(i);
      if (i === -1) break;
      continue;
    }
    if (c === "(") {
      if (pattern[i + 1] === "?" && pattern[i + 2] !== ":" && pattern[i + 2] !== "P") {
        // A flag group ((?i), (?s:...)) may change how literals match: give up.
        return null;
      }
      end();
      i = skipGroup(pattern, i);
      if (i === -1) return null;
      i = skipQuantifier(i);
      if (i === -1) break;
      continue;
    }
    if (c === "." || c === "^" || c === "$") {
      end();
      i = skipQuantifier(i + 1);
      if (i === -1) break;
      continue;
    }
    if (c === ")" || c === "?" || c === "*" || c === "+" || c === "{" || c === "}") {
      // Not expected at this point in a pattern RE2 compiled; stop without guessing.
      break;
    }
    const cp = pattern.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    i = push(ch, i + ch.length);
    if (i === -1) break;
  }
  // A "{" after a character (or an unexpected token) stops the scan: the character before
  // it was not added, and the runs so far are all required.
  end();
  // A top-level "|" after the point where the scan stopped would make every run optional.
  if (hasTopLevelBar(pattern)) return null;
  let best: string | null = null;
  for (const r of runs) if (best === null || utf8Length(r) > utf8Length(best)) best = r;
  return best;
}

/** Index just past the group starting at i, or -1 when it does not close. */
function skipGroup(p: string, i: number): number {
  let depth = 0;
  while (i < p.length) {
    const c = p[i];
    if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i + 1;
    i = skipRe2Token(p, i);
    if (i === -1) return -1;
  }
  return -1;
}

/** True when the pattern has a "|" outside every group, class and quote. */
function hasTopLevelBar(p: string): boolean {
  let i = 0;
  while (i < p.length) {
    const c = p[i];
    if (c === "|") return true;
    if (c === "(") {
      i = skipGroup(p, i);
      if (i === -1) return true; // cannot tell: treat as unsafe
      continue;
    }
    i = skipRe2Token(p, i);
    if (i === -1) return false;
  }
  return false;
}
