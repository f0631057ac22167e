/**
 * search_text's query matcher: one compiled form of (query, regex, caseSensitive,
 * wholeWord) that the search scans text with. The engine behind it is chosen here and
 * nowhere else: user regexes run on RE2 (regex/, re2js, linear time in the text), literal
 * queries on V8 (escaped literals, which have no backtracking choice points). Decision 0013.
 */
import { WorkspaceError } from "./errors.ts";
import { kmpFinder } from "./text.ts";
import { type ByteFind, literalByteFinder, windowFor } from "./byte_scan.ts";
import { checkRegexLength, MAX_REGEX_LENGTH } from "./regex/compile.ts";
import { re2LineFinder, WORD_CLASS } from "./regex/line_finder.ts";
import { requiredLiteral } from "./regex/required_literal.ts";

export { MAX_REGEX_LENGTH, MAX_REGEX_PROGRAM } from "./regex/compile.ts";

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

/** Longest literal query (UTF-16 units). */
export const MAX_LITERAL_LENGTH = 4096;
/** Characters of text one literal scan covers between two stop checks. */
export const SCAN_WINDOW = 1 << 16;
/** Literal queries longer than this are scanned with KMP (linear) instead of indexOf. */
const KMP_FROM = 64;

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

/** The regex matcher: RE2, given one line at a time (as search_text reads them). */
function regexMatcher(args: QueryArgs): QueryMatcher {
  const pattern = args.query;
  checkRegexLength(pattern);
  const findInLine = re2LineFinder(pattern, {
    ignoreCase: args.caseSensitive === false,
    wholeWord: !!args.wholeWord,
  });
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
