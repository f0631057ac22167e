/**
 * Glob matching for find_files and search_text: globs are translated to RE2 (re2js), so
 * matching is linear in the path's length whatever the pattern (no slash = match the base name).
 */
import { RE2JS } from "re2js";
import { WorkspaceError } from "./errors.ts";

/** Bounds on one glob pattern. */
export interface GlobLimits {
  /** Longest pattern (UTF-16 units). */
  maxGlobLength: number;
  /** Most alternatives one pattern's braces expand to ({a,b}{c,d} is 4). */
  maxGlobExpansions: number;
  /** Most characters of all of one pattern's brace alternatives together. */
  maxGlobExpandedLength: number;
  /** Most characters of all the globs of one argument together, after brace expansion. */
  maxGlobTotalLength: number;
  /** Largest compiled RE2 program (re2js programSize) of one argument's globs. */
  maxGlobProgram: number;
}

/** The defaults of GlobLimits. */
export const DEFAULT_GLOB_LIMITS: Readonly<GlobLimits> = Object.freeze({
  maxGlobLength: 4096,
  maxGlobExpansions: 1024,
  maxGlobExpandedLength: 65536,
  maxGlobTotalLength: 16384,
  maxGlobProgram: 65536,
});

type Tok =
  | { t: "lit"; ch: string }
  | { t: "any" }
  | { t: "star" }
  | { t: "globstar" }
  | { t: "sep" }
  | { t: "class"; ranges: Range[] };
type Range = [number, number];

const MAX_CP = 0x10ffff;
/** Deepest brace nesting parsed (bounds the parser's recursion). */
const MAX_BRACE_DEPTH = 32;
const SLASH = 0x2f;
const DOT = 0x2e;
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

/** A glob the translator refuses; compileGlobs turns it into INVALID_ARGUMENT. */
class GlobSyntaxError extends Error {
  constructor(message: string, readonly details: Record<string, unknown> = {}) {
    super(message);
  }
}

// ---- braces ---------------------------------------------------------------------------

type Piece = string | Piece[][]; // text, or alternatives (each a sequence of pieces)

/** Index just past the class that opens at s[i] ("["), or -1 when it does not close. */
function classEnd(s: string, i: number): number {
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
function expandBraces(pattern: string, limits: GlobLimits): string[] {
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

// ---- tokens ----------------------------------------------------------------------------

/** Parses the class at s[i] ("[") into code point ranges (negation applied), or undefined. */
function parseClass(s: string, i: number): { ranges: Range[]; i: number } | undefined {
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

function mergeRanges(ranges: Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: Range[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

/** The code points (surrogates aside) not in the sorted, merged ranges. */
function complement(ranges: Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of [...ranges, [MAX_CP + 1, MAX_CP + 1] as Range]) {
    if (lo > next) out.push([next, lo - 1]);
    next = Math.max(next, hi + 1);
  }
  return subtract(out, [0xd800, 0xdfff]);
}

function subtract(ranges: Range[], [a, b]: Range): Range[] {
  const out: Range[] = [];
  for (const [lo, hi] of ranges) {
    if (hi < a || lo > b) out.push([lo, hi]);
    else {
      if (lo < a) out.push([lo, a - 1]);
      if (hi > b) out.push([b + 1, hi]);
    }
  }
  return out;
}

const EXTGLOB = /[?*+@!]\(/;

/** Tokenizes one brace-free glob. */
function tokenize(s: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === "\\") {
      if (i + 1 >= s.length) {
        toks.push({ t: "lit", ch: "\\" });
        i++;
      } else {
        const cp = s.codePointAt(i + 1)!;
        toks.push({ t: "lit", ch: String.fromCodePoint(cp) });
        i += cp > 0xffff ? 3 : 2;
      }
    } else if (EXTGLOB.test(s.slice(i, i + 2))) {
      throw new GlobSyntaxError(
        `extglob "${
          s.slice(i, i + 2)
        }...)" is not supported (escape the parenthesis as \\( to match it)`,
        { unsupported: "extglob" },
      );
    } else if (c === "*") {
      let j = i;
      while (s[j] === "*") j++;
      const wholeSegment = (i === 0 || s[i - 1] === "/") && (j === s.length || s[j] === "/");
      toks.push({ t: j - i >= 2 && wholeSegment ? "globstar" : "star" });
      i = j;
    } else if (c === "?") {
      toks.push({ t: "any" });
      i++;
    } else if (c === "/") {
      toks.push({ t: "sep" });
      i++;
    } else if (c === "[") {
      const cls = parseClass(s, i);
      if (cls === undefined) {
        toks.push({ t: "lit", ch: "[" });
        i++;
      } else {
        toks.push({ t: "class", ranges: cls.ranges });
        i = cls.i;
      }
    } else {
      const cp = s.codePointAt(i)!;
      toks.push({ t: "lit", ch: String.fromCodePoint(cp) });
      i += cp > 0xffff ? 2 : 1;
    }
  }
  return toks;
}

// ---- translation to RE2 ----------------------------------------------------------------

const hex = (cp: number) => `\\x{${cp.toString(16)}}`;

function classSource(ranges: Range[]): string {
  if (ranges.length === 0) return "[^\\x{0}-\\x{10ffff}]"; // matches nothing
  return "[" + ranges.map(([lo, hi]) => (lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`)).join("") +
    "]";
}

function tokSource(t: Tok, leading: boolean): string {
  switch (t.t) {
    case "lit":
      return RE2JS.quote(t.ch);
    case "any":
      return leading ? "[^/.]" : "[^/]";
    case "star":
      return "[^/]*";
    case "class": {
      let r = subtract(t.ranges, [SLASH, SLASH]);
      if (leading) r = subtract(r, [DOT, DOT]);
      return classSource(r);
    }
    default:
      throw new Error(`unexpected token ${t.t}`);
  }
}

/**
 * One path segment. With `restricted` the segment may not start with "." (dot: false and
 * the pattern's segment does not itself start with a literal "."): the token that matches
 * the first character excludes it; a star that matches nothing passes the rule on.
 */
function segmentSource(toks: Tok[], restricted: boolean): string {
  const plain = (ts: Tok[]) => ts.map((t) => tokSource(t, false)).join("");
  // A segment that is only "*" names something: it matches one character or more.
  if (toks.length === 1 && toks[0].t === "star") return restricted ? "[^/.][^/]*" : "[^/]+";
  if (!restricted || toks.length === 0) return plain(toks);
  const [first, ...rest] = toks;
  switch (first.t) {
    case "lit":
      return first.ch === "." ? classSource([]) : plain(toks);
    case "star":
      return `(?:[^/.][^/]*${plain(rest)}|${segmentSource(rest, true)})`;
    default:
      return tokSource(first, true) + plain(rest);
  }
}

/** The RE2 source of one brace-free glob over a whole path (or base name). */
function globSource(glob: string, dot: boolean): string {
  const toks = tokenize(glob);
  const segs: Tok[][] = [[]];
  for (const t of toks) {
    if (t.t === "sep") segs.push([]);
    else segs[segs.length - 1].push(t);
  }
  // "**/**" is "**".
  const isGlobstar = (s: Tok[]) => s.length === 1 && s[0].t === "globstar";
  const collapsed = segs.filter((s, k) => !(isGlobstar(s) && k > 0 && isGlobstar(segs[k - 1])));
  const seg = dot ? "[^/]+" : "[^/.][^/]*";
  const restrictedFor = (s: Tok[]) => !dot && !(s[0]?.t === "lit" && s[0].ch === ".");
  if (collapsed.length === 1 && isGlobstar(collapsed[0])) return `${seg}(?:/${seg})*/?`;
  let out = "";
  for (let k = 0; k < collapsed.length; k++) {
    const s = collapsed[k];
    const last = k === collapsed.length - 1;
    if (isGlobstar(s)) {
      out += last ? `(?:/${seg})*/?` : `(?:${seg}/)*`;
      continue;
    }
    out += segmentSource(s, restrictedFor(s));
    const nextIsTrailingGlobstar = k === collapsed.length - 2 && isGlobstar(collapsed[k + 1]);
    if (!last && !nextIsTrailingGlobstar) out += "/";
  }
  // As picomatch: a pattern that ends in a star also matches a directory written with "/".
  const final = toks[toks.length - 1];
  return final?.t === "star" ? out + "/?" : out;
}

// ---- compiled predicate ------------------------------------------------------------------

interface Unit {
  re: RE2JS;
  base: boolean;
}

/** Compiles one pattern: its RE2 source and mode (base name or path) and negation. */
function compileOne(
  pattern: string,
  dot: boolean,
  limits: GlobLimits,
): { source: string; base: boolean; negated: boolean; length: number } {
  if (pattern.length > limits.maxGlobLength) {
    throw new GlobSyntaxError(`it is longer than ${limits.maxGlobLength} characters`, {
      limit: limits.maxGlobLength,
      name: "maxGlobLength",
    });
  }
  let body = pattern;
  let negated = false;
  if (body.length > 1 && body[0] === "!" && body[1] !== "(") {
    negated = true;
    body = body.slice(1);
  }
  if (body.startsWith("./") && body.length > 2) body = body.slice(2);
  const base = !body.includes("/");
  const expanded = expandBraces(body, limits);
  const length = expanded.reduce((n, g) => n + g.length, 0);
  const sources = expanded.map((g) => globSource(g, dot));
  return {
    source: sources.length === 1 ? sources[0] : `(?:${sources.join("|")})`,
    base,
    negated,
    length,
  };
}

/** One argument's glob failure as INVALID_ARGUMENT. */
function globError(
  where: string,
  message: string,
  details: Record<string, unknown>,
): WorkspaceError {
  return new WorkspaceError("INVALID_ARGUMENT", `invalid glob in ${where}: ${message}`, {
    argument: where.split(" ")[0],
    details,
  });
}

/**
 * The cheap checks of one argument's globs, for the calling thread: no NUL or empty
 * pattern, each within maxGlobLength, all together within maxGlobTotalLength before
 * expansion. No parsing and no compilation (the engine job compiles).
 */
export function checkGlobs(
  patterns: readonly string[],
  options: { argument: string; limits?: Partial<GlobLimits> },
): void {
  const limits: GlobLimits = { ...DEFAULT_GLOB_LIMITS, ...options.limits };
  let total = 0;
  for (const [i, p] of patterns.entries()) {
    if (p.length === 0 || p.includes("\0")) {
      throw new WorkspaceError(
        "INVALID_ARGUMENT",
        `${options.argument} pattern ${i} is empty or has a NUL byte`,
        { argument: options.argument },
      );
    }
    if (p.length > limits.maxGlobLength) {
      throw globError(
        `${options.argument} (pattern ${i})`,
        `it is longer than ${limits.maxGlobLength} characters`,
        { pattern: i, limit: limits.maxGlobLength, name: "maxGlobLength" },
      );
    }
    total += p.length;
  }
  if (total > limits.maxGlobTotalLength) throw tooLong(options.argument, total, limits);
}

function tooLong(argument: string, total: number, limits: GlobLimits): WorkspaceError {
  return globError(
    argument,
    `its patterns come to ${total} characters, more than ${limits.maxGlobTotalLength}`,
    { limit: limits.maxGlobTotalLength, name: "maxGlobTotalLength" },
  );
}

/** Compiles RE2 source for one argument: any failure or an oversized program is INVALID_ARGUMENT. */
function compileRe2(source: string, argument: string, limits: GlobLimits): RE2JS {
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (err) {
    throw globError(argument, `it could not be compiled: ${(err as Error)?.message ?? err}`, {});
  }
  const size = re.programSize();
  if (size > limits.maxGlobProgram) {
    throw globError(
      argument,
      `its patterns compile to ${size} instructions, more than ${limits.maxGlobProgram}`,
      { limit: limits.maxGlobProgram, name: "maxGlobProgram", programSize: size },
    );
  }
  return re;
}

/** Compiles glob patterns into one predicate over base-relative paths; [] matches nothing. */
export function compileGlobs(
  patterns: readonly string[],
  options: { dot: boolean; argument: string; limits?: Partial<GlobLimits> },
): (relPath: string) => boolean {
  if (patterns.length === 0) return () => false;
  const limits: GlobLimits = { ...DEFAULT_GLOB_LIMITS, ...options.limits };
  checkGlobs(patterns, options);
  const baseSources: string[] = [];
  const pathSources: string[] = [];
  const negatedSources: { source: string; base: boolean }[] = [];
  let total = 0;
  for (const [i, p] of patterns.entries()) {
    try {
      const one = compileOne(p, options.dot, limits);
      total += one.length;
      if (total > limits.maxGlobTotalLength) throw tooLong(options.argument, total, limits);
      if (one.negated) negatedSources.push({ source: one.source, base: one.base });
      else (one.base ? baseSources : pathSources).push(one.source);
    } catch (err) {
      if (err instanceof WorkspaceError) throw err;
      const details = err instanceof GlobSyntaxError ? err.details : {};
      throw new WorkspaceError(
        "INVALID_ARGUMENT",
        `invalid glob in ${options.argument} (pattern ${i}): ${(err as Error)?.message ?? err}`,
        { argument: options.argument, details: { pattern: i, ...details } },
      );
    }
  }
  const negatedUnits: Unit[] = negatedSources.map((n) => ({
    re: compileRe2(n.source, options.argument, limits),
    base: n.base,
  }));
  const union = (sources: string[]) =>
    sources.length === 0
      ? undefined
      : compileRe2(sources.map((s) => `(?:${s})`).join("|"), options.argument, limits);
  const baseRe = union(baseSources);
  const pathRe = union(pathSources);
  return (relPath) => {
    const trimmed = relPath.endsWith("/") ? relPath.slice(0, -1) : relPath;
    const baseName = trimmed.slice(trimmed.lastIndexOf("/") + 1);
    if (baseRe?.testExact(baseName) || pathRe?.testExact(relPath)) return true;
    return negatedUnits.some((u) => !u.re.testExact(u.base ? baseName : relPath));
  };
}

/** True when a directory should be pruned by exclude globs (the directory or everything in it matches). */
export function excludesDir(isExcluded: (p: string) => boolean, relToBase: string): boolean {
  return isExcluded(relToBase) || isExcluded(relToBase + "/");
}
