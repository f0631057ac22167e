/**
 * Glob bracket expressions: `[abc]`, `[a-z]`, `[!a]`/`[^a]` (negated), `[[:alpha:]]` (POSIX
 * classes, ASCII), escapes inside; where a class ends, and its code point ranges.
 *
 * @module
 */
import { complement, mergeRanges, type Range } from "../regex/classes.ts";
import { GlobSyntaxError } from "./limits.ts";

const POSIX: Record<string, Range[]> = {
  alnum: [[0x30, 0x39], [0x41, 0x5a], [0x61, 0x7a]],
  alpha: [[0x41, 0x5a], [0x61, 0x7a]],
  blank: [[0x09, 0x09], [0x20, 0x20]],
  cntrl: [[0x00, 0x1f], [0x7f, 0x7f]],
  digit: [[0x30, 0x39]],
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [[0x21, 0x2f], [0x3a, 0x40], [0x5b, 0x60], [0x7b, 0x7e]],
  space: [[0x09, 0x0d], [0x20, 0x20]],
  upper: [[0x41, 0x5a]],
  word: [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]],
  xdigit: [[0x30, 0x39], [0x41, 0x46], [0x61, 0x66]],
};

/** Index just past the class that opens at s[i] ("["), or -1 when it does not close. */
export function classEnd(s: string, i: number): number {
  let j = i + 1;
  if (s[j] === "!" || s[j] === "^") j++;
  if (s[j] === "]") j++;
  while (j < s.length) {
    if (s[j] === "\\") j += 2;
    else if (s[j] === "[" && s[j + 1] === ":") {
      const close = s.indexOf(":]", j + 2);
      j = close === -1 ? j + 1 : close + 2;
    } else if (s[j] === "]") return j + 1;
    else j++;
  }
  return -1;
}

/** Parses the class at s[i] ("[") into code point ranges (negation applied), or undefined. */
export function parseClass(s: string, i: number): { ranges: Range[]; i: number } | undefined {
  const end = classEnd(s, i);
  if (end === -1) return undefined;
  let j = i + 1;
  let negated = false;
  if (s[j] === "!" || s[j] === "^") {
    negated = true;
    j++;
  }
  const ranges: Range[] = [];
  const readChar = (): number => {
    if (s[j] === "\\" && j + 1 < end - 1) j++;
    const cp = s.codePointAt(j)!;
    j += cp > 0xffff ? 2 : 1;
    return cp;
  };
  while (j < end - 1) {
    if (s[j] === "[" && s[j + 1] === ":") {
      const close = s.indexOf(":]", j + 2);
      if (close !== -1 && close < end) {
        const name = s.slice(j + 2, close);
        const cls = POSIX[name];
        if (!cls) throw new GlobSyntaxError(`unknown character class [:${name}:]`);
        ranges.push(...cls);
        j = close + 2;
        continue;
      }
    }
    const lo = readChar();
    if (s[j] === "-" && j + 1 < end - 1) {
      j++;
      const hi = readChar();
      if (hi < lo) {
        throw new GlobSyntaxError(
          `character range ${String.fromCodePoint(lo)}-${String.fromCodePoint(hi)} is out of order`,
        );
      }
      ranges.push([lo, hi]);
    } else ranges.push([lo, lo]);
  }
  const merged = mergeRanges(ranges);
  return { ranges: negated ? complement(merged) : merged, i: end };
}
