/**
 * search_text's query matcher: one compiled form of (query, regex, caseSensitive,
 * wholeWord) that the search scans text with. The engine behind it is chosen here and
 * nowhere else: user regexes run on RE2 (re2js, linear time in the text), literal queries
 * on V8 (escaped literals, which have no backtracking choice points). Decision 0013.
 */
import { type Matcher, RE2JS, RE2JSException } from "re2js";
import { WorkspaceError } from "./errors.ts";
import { kmpFinder } from "./text.ts";
import { type ByteFind, literalByteFinder, requiredLiteral, windowFor } from "./byte_scan.ts";
import { skipRe2Token } from "./re2_syntax.ts";

/** Arguments that shape a query. */
export interface QueryArgs {
  query: string;
  regex?: boolean;
  caseSensitive?: boolean;
  wholeWord?: boolean;
}

/** A compiled query. */
export interface QueryMatcher {
  /**
   * True when matches cannot span or see line ends, so whole file text may be scanned at
   * once (literal queries); false when `find` must be given one line at a time (regexes).
   */
  readonly wholeText: boolean;
  /**
   * Index (UTF-16) of the first match in `text` at or after `from`, or -1. A long text is
   * scanned in windows of SCAN_WINDOW characters, with `check` (which throws to stop)
   * called between windows.
   */
  find(text: string, from: number, check?: () => void): number;
  /**
   * The first match in one line (its text without the "\n", a trailing "\r" kept), or -1:
   * what the line-by-line scans call.
   */
  findInLine(line: string, check?: () => void): number;
  /**
   * A byte-level plan, when bytes can decide (decision 0035): `find` searches a file's bytes
   * (one character per byte) for the UTF-8 of a literal. When `exact`, each hit is the
   * match of its line, at the hit's column; otherwise a line can match only if it holds a
   * hit, and `findInLine` decides it (a regex's required literal, a wholeWord literal).
   */
  readonly bytes?: { find: ByteFind; pad: number; exact: boolean };
}

/**
 * Longest regex (UTF-16 units). RE2 compilation is linear in the expanded pattern, and
 * counted repeats expand it: at this length a pattern of repeats compiles in at most a
 * couple of seconds (measured), and MAX_REGEX_PROGRAM then refuses it.
 */
export const MAX_REGEX_LENGTH = 4096;
/**
 * Largest compiled regex program (re2js programSize, about one instruction per matched
 * character position). RE2's fallback NFA costs O(line length x program size), so this
 * bounds the work per character.
 */
export const MAX_REGEX_PROGRAM = 5000;
/** Longest literal query (UTF-16 units). */
export const MAX_LITERAL_LENGTH = 4096;
/** Characters of text one literal scan covers between two stop checks. */
export const SCAN_WINDOW = 1 << 16;
/** Literal queries longer than this are scanned with KMP (linear) instead of indexOf. */
const KMP_FROM = 64;

/** A "word" character for wholeWord: a letter, a digit or underscore (any script). */
const WORD_CLASS = "\\p{L}\\p{N}_";

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * The V8 form of a literal query. The pattern is the escaped literal, optionally between a
 * one-character lookbehind and a one-character lookahead: no quantifier, no alternation,
 * so the backtracking engine has a single path at each start position (O(text x query)).
 */
function literalRegExp(args: QueryArgs): RegExp {
  const source = escapeRegExp(args.query);
  const word = `[${WORD_CLASS}]`;
  const body = args.wholeWord ? `(?<!${word})${source}(?!${word})` : source;
  return new RegExp(body, "gu" + (args.caseSensitive === false ? "i" : ""));
}

/** What RE2 does not support, named from the pattern when it can be told. */
function unsupportedHint(pattern: string): string | undefined {
  if (/\(\?<?[=!]/.test(pattern)) return "lookaround assertions ((?=, (?!, (?<=, (?<!)";
  if (/\\[1-9]|\\k</.test(pattern)) return "backreferences (\\1, \\k<name>)";
  if (/\(\?>/.test(pattern)) return "atomic groups ((?>...))";
  if (/[*+?}]\+/.test(pattern)) return "possessive quantifiers (*+, ++, ?+)";
  if (/\\u[0-9a-fA-F{]/.test(pattern)) return "\\uXXXX escapes (write \\x{XXXX})";
  if (/\\c[A-Za-z]/.test(pattern)) return "\\cX control escapes (write \\x{..})";
  if (/\\Z/.test(pattern)) return "\\Z (write $ or \\z)";
  return undefined;
}

function invalid(message: string, details: Record<string, unknown>): WorkspaceError {
  return new WorkspaceError("INVALID_ARGUMENT", message, {
    argument: "query",
    details: { syntax: "RE2", ...details },
  });
}

function compileRe2(pattern: string, flags: number, original: string): RE2JS {
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern, flags);
  } catch (err) {
    if (!(err instanceof RE2JSException)) {
      // RangeError (stack, memory) or anything else while compiling: the pattern is refused.
      throw invalid(`query could not be compiled: ${(err as Error)?.message ?? err}`, {
        reason: String((err as Error)?.message ?? err),
      });
    }
    const hint = unsupportedHint(original);
    const reason = (err as Error).message.replace(/^error parsing regexp: /, "");
    throw invalid(
      `query is not a valid RE2 regular expression: ${reason}` +
        (hint ? `; RE2 syntax has no ${hint}` : ""),
      hint ? { reason, unsupported: hint } : { reason },
    );
  }
  const size = re.programSize();
  if (size > MAX_REGEX_PROGRAM) {
    throw invalid(
      `query compiles to a program of ${size} instructions; the limit is ${MAX_REGEX_PROGRAM} ` +
        "(counted repeats such as {1000} expand the program)",
      { limit: MAX_REGEX_PROGRAM, name: "MAX_REGEX_PROGRAM", programSize: size },
    );
  }
  return re;
}

/**
 * True when `pattern` (a valid RE2 pattern) ends inside an unterminated \Q...: its quote
 * must be closed with \E before anything is appended. A syntactic scan, no compile.
 */
function endsInQuote(pattern: string): boolean {
  for (let i = 0; i < pattern.length;) {
    i = skipRe2Token(pattern, i);
    if (i === -1) return true;
  }
  return false;
}

/** An RE2 line matcher: finds the first match in one line (no "\n"), or -1. */
function re2LineFinder(args: QueryArgs, flags: number): (line: string, from: number) => number {
  const pattern = args.query;
  if (!args.wholeWord) {
    const re = compileRe2(pattern, flags, pattern);
    const m: Matcher = re.matcher("");
    return (line, from) => {
      // test() runs the DFA without captures; the matcher only runs on lines that match.
      if (!re.test(line)) return -1;
      m.resetMatcherInput(line);
      return m.find(from) ? m.start() : -1;
    };
  }
  // wholeWord: RE2 has no lookarounds, so the boundaries are consumed instead: a non-word
  // character (or the line's start/end) on each side, the query's own match in group 1.
  // One search finds the leftmost start whose match has some end at a word boundary, as
  // the lookaround form did, in one linear pass; "^" is the first alternative, so it is
  // preferred when the query matches at 0, and "^" never matches when the search starts
  // inside the line (from > 0), where the character before `from` is consumed instead.
  // A "\Q" left open by the query is closed first so it cannot swallow the suffix. One
  // compile; the query alone is compiled again only to word an error.
  const closed = endsInQuote(pattern) ? pattern + "\\E" : pattern;
  let re: RE2JS;
  try {
    re = compileRe2(
      `(?-i:^|[^${WORD_CLASS}])(${closed})(?-i:[^${WORD_CLASS}]|$)`,
      flags,
      pattern,
    );
  } catch (err) {
    compileRe2(pattern, flags, pattern); // the query's own error, when it has one
    throw err;
  }
  const m: Matcher = re.matcher("");
  // From position 1 the consumed boundary is character 0, where "^" would be preferred:
  // that rare case uses a second form without "^" (compiled when first needed).
  let noStart: Matcher | undefined;
  return (line, from) => {
    if (!re.test(line)) return -1;
    const prev = from === 0 ? 0 : from > 1 && isLowSurrogate(line, from - 1) ? from - 2 : from - 1;
    let matcher = m;
    if (prev === 0 && from > 0) {
      noStart ??= compileRe2(
        `(?-i:[^${WORD_CLASS}])(${closed})(?-i:[^${WORD_CLASS}]|$)`,
        flags,
        pattern,
      ).matcher("");
      matcher = noStart;
    }
    matcher.resetMatcherInput(line);
    return matcher.find(prev) ? matcher.start(1) : -1;
  };
}

function isLowSurrogate(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff;
}

/** The regex matcher: RE2, given one line at a time (as search_text reads them). */
function regexMatcher(args: QueryArgs): QueryMatcher {
  const pattern = args.query;
  if (pattern.length > MAX_REGEX_LENGTH) {
    throw invalid(
      `query is ${pattern.length} characters; regexes are limited to ${MAX_REGEX_LENGTH}`,
      { limit: MAX_REGEX_LENGTH },
    );
  }
  const flags = args.caseSensitive === false ? RE2JS.CASE_INSENSITIVE : 0;
  const findInLine = re2LineFinder(args, flags);
  const find = (line: string, from: number) => (from > line.length ? -1 : findInLine(line, from));
  // Every match contains the pattern's required literal, and matches never span lines: only
  // lines holding it can match (found on bytes; case-insensitive only for ASCII literals).
  const literal = requiredLiteral(pattern);
  const byteFind = literal !== null && utf8Bytes(literal) >= MIN_PREFILTER_BYTES &&
      !/[\r\n]/.test(literal)
    ? literalByteFinder(literal, args.caseSensitive !== false)
    : null;
  return {
    wholeText: false,
    find,
    findInLine: (line) => find(line.endsWith("\r") ? line.slice(0, -1) : line, 0),
    ...(byteFind ? { bytes: { ...byteFind, exact: false } } : {}),
  };
}

/**
 * The cheap checks of a query, for the calling thread: lengths only, no compilation (the
 * engine job compiles, and reports a bad pattern as INVALID_ARGUMENT).
 */
export function checkQuery(args: QueryArgs): void {
  const limit = args.regex ? MAX_REGEX_LENGTH : MAX_LITERAL_LENGTH;
  if (args.query.length > limit) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `query is ${args.query.length} characters; ${
        args.regex ? "regexes" : "literal queries"
      } are limited to ${limit}`,
      {
        argument: "query",
        details: { limit, name: args.regex ? "MAX_REGEX_LENGTH" : "MAX_LITERAL_LENGTH" },
      },
    );
  }
}

/**
 * Runs `finder` over windows of SCAN_WINDOW start positions, each given `pad` characters
 * of context on the right (a whole match plus a lookahead) and 2 on the left (a
 * lookbehind), calling `check` between windows. A text that fits one window is scanned
 * directly.
 */
function windowed(
  finder: (text: string, from: number) => number,
  pad: number,
  window = SCAN_WINDOW,
): QueryMatcher["find"] {
  return (text, from, check) => {
    if (text.length - from <= window) return finder(text, from);
    for (let s = from; s < text.length; s += window) {
      if (s > from) check?.();
      const lo = Math.max(0, s - 2);
      const hi = Math.min(text.length, s + window + pad);
      const i = finder(text.slice(lo, hi), s - lo);
      if (i !== -1 && (lo + i < s + window || hi === text.length)) return lo + i;
    }
    return -1;
  };
}

/** Shortest required literal (UTF-8 bytes) worth a byte prefilter for a regex. */
const MIN_PREFILTER_BYTES = 2;

function utf8Bytes(s: string): number {
  return new TextEncoder().encode(s).length;
}

/** A literal matcher's whole-text find, with its line form and byte plan. */
function literalMatcher(args: QueryArgs, find: QueryMatcher["find"]): QueryMatcher {
  const byteFind = literalByteFinder(args.query, args.caseSensitive !== false);
  return {
    wholeText: true,
    find,
    findInLine: (line, check) => find(line, 0, check),
    // wholeWord needs the characters around a hit: bytes only pick the candidate lines.
    ...(byteFind ? { bytes: { ...byteFind, exact: !args.wholeWord } } : {}),
  };
}

/** Compiles a query; INVALID_ARGUMENT when it is not a valid pattern. */
export function compileQuery(args: QueryArgs): QueryMatcher {
  if (args.regex) return regexMatcher(args);
  const literal = args.query;
  if (args.caseSensitive !== false && !args.wholeWord) {
    // indexOf is fastest for short queries; its worst case is O(text x query), so long
    // queries use KMP. Both run in windows so a stop is seen between them.
    const finder = literal.length > KMP_FROM
      ? kmpFinder(literal)
      : (text: string, from: number) => text.indexOf(literal, from);
    return literalMatcher(args, windowed(finder, literal.length));
  }
  const re = literalRegExp(args);
  const finder = (text: string, from: number) => {
    re.lastIndex = from;
    const m = re.exec(text);
    return m ? m.index : -1;
  };
  // Case folding may change a match's UTF-16 length; the pad covers twice the query. V8's
  // scan is O(window x query) here, so the window shrinks as the query grows.
  const window = windowFor(literal.length, SCAN_WINDOW);
  return literalMatcher(args, windowed(finder, 2 * literal.length + 4, window));
}
