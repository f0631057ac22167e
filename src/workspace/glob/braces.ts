/**
 * Brace expansion of one glob, bounded (decision 0013): `{a,b}` alternatives, `{1..3}` and
 * `{a..e}` ranges, nesting at most MAX_BRACE_DEPTH, at most maxGlobExpansions alternatives and
 * maxGlobExpandedLength characters. Classes and escapes are carried through untouched.
 *
 * @module
 */
import { type GlobLimits, GlobSyntaxError } from "./limits.ts";
import { classEnd } from "./classes.ts";

/** Deepest brace nesting parsed (bounds the parser's recursion). */
const MAX_BRACE_DEPTH = 32;

type Piece = string | Piece[][]; // text, or alternatives (each a sequence of pieces)

/** State of one pattern's brace parse: brace results are memoized by position. */
interface BraceParse {
  s: string;
  limits: GlobLimits;
  memo: Map<number, { pieces: Piece[]; i: number } | undefined>;
}

/** Parses s[i..] into pieces, up to "," or "}" at this depth when inside braces. */
function parseBraces(
  p: BraceParse,
  i: number,
  depth: number,
): { seq: Piece[]; i: number } {
  const s = p.s;
  const seq: Piece[] = [];
  let text = "";
  while (i < s.length) {
    const c = s[i];
    if (depth > 0 && (c === "," || c === "}")) break;
    if (c === "\\") {
      text += s.slice(i, i + 2);
      i += 2;
    } else if (c === "[") {
      const end = classEnd(s, i);
      const stop = end === -1 ? i + 1 : end;
      text += s.slice(i, stop);
      i = stop;
    } else if (c === "{") {
      const brace = parseBrace(p, i, depth + 1);
      if (brace === undefined) {
        text += "{";
        i++;
      } else {
        if (text) seq.push(text);
        text = "";
        seq.push(...brace.pieces);
        i = brace.i;
      }
    } else {
      text += c;
      i++;
    }
  }
  if (text) seq.push(text);
  return { seq, i };
}

/** A brace group at s[i] ("{"): its pieces and the index after "}", or undefined (literal "{"). */
function parseBrace(
  p: BraceParse,
  i: number,
  depth: number,
): { pieces: Piece[]; i: number } | undefined {
  if (p.memo.has(i)) return p.memo.get(i);
  if (depth > MAX_BRACE_DEPTH) {
    throw new GlobSyntaxError(`its braces nest deeper than ${MAX_BRACE_DEPTH}`, {
      limit: MAX_BRACE_DEPTH,
    });
  }
  const s = p.s;
  const alts: Piece[][] = [];
  let j = i + 1;
  let result: { pieces: Piece[]; i: number } | undefined;
  for (;;) {
    const r = parseBraces(p, j, depth);
    alts.push(r.seq);
    j = r.i;
    if (j >= s.length) break; // no closing "}": a literal "{"
    if (s[j] === "}") {
      if (alts.length > 1) result = { pieces: [alts], i: j + 1 };
      else {
        const range = expandRange(s.slice(i + 1, j), p.limits);
        // "{a}" is not a group: literal braces around the (parsed) inside.
        result = range !== undefined
          ? { pieces: [range.map((r) => [r])], i: j + 1 }
          : { pieces: ["{", ...alts[0], "}"], i: j + 1 };
      }
      break;
    }
    j++; // ","
  }
  p.memo.set(i, result);
  return result;
}

/** "{1..3}", "{01..10}", "{a..e}": the range's members, or undefined when not a range. */
function expandRange(inner: string, limits: GlobLimits): string[] | undefined {
  let lo: number, hi: number, show: (n: number) => string;
  const num = /^(-?\d{1,9})\.\.(-?\d{1,9})$/.exec(inner);
  const chr = /^([a-zA-Z])\.\.([a-zA-Z])$/.exec(inner);
  if (num) {
    lo = Number(num[1]);
    hi = Number(num[2]);
    const padded = /^-?0\d/.test(num[1]) || /^-?0\d/.test(num[2]);
    const width = padded ? Math.max(num[1].length, num[2].length) : 0;
    show = (n) => String(n).padStart(width, "0");
  } else if (chr) {
    lo = chr[1].charCodeAt(0);
    hi = chr[2].charCodeAt(0);
    show = (n) => String.fromCharCode(n);
  } else return undefined;
  const n = Math.abs(hi - lo) + 1;
  if (n > limits.maxGlobExpansions) throw tooManyExpansions(limits);
  const step = lo <= hi ? 1 : -1;
  return Array.from({ length: n }, (_, k) => show(lo + k * step));
}

function tooManyExpansions(limits: GlobLimits): GlobSyntaxError {
  return new GlobSyntaxError(
    `its braces expand to more than ${limits.maxGlobExpansions} alternatives`,
    { limit: limits.maxGlobExpansions, name: "maxGlobExpansions" },
  );
}

/** How many strings a sequence expands to, saturating just above `cap`. */
function countSeq(seq: Piece[], cap: number): number {
  let n = 1;
  for (const p of seq) {
    if (typeof p === "string") continue;
    let sum = 0;
    for (const alt of p) sum = Math.min(cap + 1, sum + countSeq(alt, cap));
    n = Math.min(cap + 1, n * sum);
  }
  return n;
}

function expandSeq(seq: Piece[]): string[] {
  let out = [""];
  for (const p of seq) {
    if (typeof p === "string") out = out.map((s) => s + p);
    else {
      const alts = p.flatMap(expandSeq);
      out = out.flatMap((s) => alts.map((a) => s + a));
    }
  }
  return out;
}

/** Expands a pattern's braces, bounded by the limits. */
export function expandBraces(pattern: string, limits: GlobLimits): string[] {
  const { seq } = parseBraces({ s: pattern, limits, memo: new Map() }, 0, 0);
  if (countSeq(seq, limits.maxGlobExpansions) > limits.maxGlobExpansions) {
    throw tooManyExpansions(limits);
  }
  const out = expandSeq(seq);
  const total = out.reduce((n, s) => n + s.length, 0);
  if (total > limits.maxGlobExpandedLength) {
    throw new GlobSyntaxError(
      `its braces expand to ${total} characters, more than ${limits.maxGlobExpandedLength}`,
      { limit: limits.maxGlobExpandedLength, name: "maxGlobExpandedLength" },
    );
  }
  return out;
}
