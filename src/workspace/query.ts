/**
 * search_text's query matcher: one compiled form of (query, regex, caseSensitive,
 * wholeWord) that the search scans text with. The engine behind it is chosen here and
 * nowhere else: user regexes run on RE2 (re2js, linear time in the text), literal queries
 * on V8 (escaped literals, which have no backtracking choice points). Decision 0013.
 */
import { type Matcher, RE2JS } from "re2js";
import { WorkspaceError } from "./errors.ts";

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
  /** Index (UTF-16) of the first match in `text` at or after `from`, or -1. */
  find(text: string, from: number): number;
}

/** Longest regex (UTF-16 units) compiled; RE2 compilation is linear but not free. */
export const MAX_REGEX_LENGTH = 64 * 1024;

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
  try {
    return RE2JS.compile(pattern, flags);
  } catch (err) {
    const hint = unsupportedHint(original);
    const reason = (err as Error).message.replace(/^error parsing regexp: /, "");
    throw invalid(
      `query is not a valid RE2 regular expression: ${reason}` +
        (hint ? `; RE2 syntax has no ${hint}` : ""),
      hint ? { reason, unsupported: hint } : { reason },
    );
  }
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
  // the lookaround form did, in one linear pass. A "\Q" left open by the query is closed
  // first so it cannot swallow the suffix.
  compileRe2(pattern, flags, pattern);
  let closed = pattern;
  try {
    RE2JS.compile(pattern + "\\E", flags);
    closed = pattern + "\\E";
  } catch { /* not inside \Q: a stray \E is an error, so the pattern is kept as is */ }
  const right = `(?:${closed})(?-i:[^${WORD_CLASS}]|$)`;
  const anywhere = compileRe2(`(?-i:^|[^${WORD_CLASS}])${right}`, flags, pattern);
  const m: Matcher = anywhere.matcher("");
  const atLineStart = compileRe2(`^${right}`, flags, pattern);
  const nonWordAt0 = RE2JS.compile(`^[^${WORD_CLASS}]`);
  // From inside a line the left boundary is the character just before `from`, which the
  // search must consume, so "^" is left out there.
  let inside: { re: RE2JS; m: Matcher } | undefined;
  return (line, from) => {
    if (from === 0) {
      if (!anywhere.test(line)) return -1;
      m.resetMatcherInput(line);
      if (!m.find(0)) return -1;
      // The match starts at the consumed boundary character, or at 0 through "^" (the
      // first alternative, so preferred when the query matches there).
      const q = m.start();
      if (q === 0 && (!nonWordAt0.test(line) || atLineStart.test(line))) return 0;
      return q + (line.codePointAt(q)! > 0xffff ? 2 : 1);
    }
    if (inside === undefined) {
      const re = compileRe2(
        `(?-i:[^${WORD_CLASS}])(${closed})(?-i:[^${WORD_CLASS}]|$)`,
        flags,
        pattern,
      );
      inside = { re, m: re.matcher("") };
    }
    inside.m.resetMatcherInput(line);
    const prev = from > 1 && isLowSurrogate(line, from - 1) ? from - 2 : from - 1;
    return inside.m.find(prev) ? inside.m.start(1) : -1;
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
  return {
    wholeText: false,
    find: (line, from) => (from > line.length ? -1 : findInLine(line, from)),
  };
}

/** Compiles a query; INVALID_ARGUMENT when it is not a valid pattern. */
export function compileQuery(args: QueryArgs): QueryMatcher {
  if (args.regex) return regexMatcher(args);
  if (args.caseSensitive !== false && !args.wholeWord) {
    const literal = args.query;
    return { wholeText: true, find: (text, from) => text.indexOf(literal, from) };
  }
  const re = literalRegExp(args);
  return {
    wholeText: true,
    find(text, from) {
      re.lastIndex = from;
      const m = re.exec(text);
      return m ? m.index : -1;
    },
  };
}
