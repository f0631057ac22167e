/**
 * A user regex as a line matcher on RE2: the first match in one line, with wholeWord expressed
 * without lookarounds (the boundaries consumed, the query's match in group 1). Decision 0013.
 *
 * @module
 */
import type { Matcher } from "re2js";
import { compileRegex, type Re2Program } from "./compile.ts";
import { endsInQuote } from "./syntax.ts";

/**
 * A "word" character for wholeWord: a letter, a digit or underscore (any script). The same class
 * text in RE2 and in V8's `u` mode.
 */
export const WORD_CLASS = "\\p{L}\\p{N}_";

/** How a line finder matches. */
export interface LineFinderOptions {
  /** RE2's `(?i)`. */
  ignoreCase: boolean;
  /** Only matches with a non-word character (or the line's edge) on both sides. */
  wholeWord: boolean;
}

/** Finds the first match in one line (no "\n") at or after `from`: its start, or -1. */
export type LineFind = (line: string, from: number) => number;

/** An RE2 line matcher for the user regex `pattern`; INVALID_ARGUMENT when it does not compile. */
export function re2LineFinder(pattern: string, o: LineFinderOptions): LineFind {
  if (!o.wholeWord) {
    const re = compileRegex(pattern, o.ignoreCase, pattern);
    const m: Matcher = re.matcher("");
    return (line, from) => {
      // test() runs the DFA without captures; the matcher only runs on lines that match.
      if (!re.test(line)) return -1;
      m.resetMatcherInput(line);
      return m.find(from) ? m.start() : -1;
    };
  }
  return wholeWordFinder(pattern, o.ignoreCase);
}

/**
 * wholeWord: RE2 has no lookarounds, so the boundaries are consumed instead: a non-word
 * character (or the line's start/end) on each side, the query's own match in group 1.
 * One search finds the leftmost start whose match has some end at a word boundary, as
 * the lookaround form did, in one linear pass; "^" is the first alternative, so it is
 * preferred when the query matches at 0, and "^" never matches when the search starts
 * inside the line (from > 0), where the character before `from` is consumed instead.
 * A "\Q" left open by the query is closed first so it cannot swallow the suffix. One
 * compile; the query alone is compiled again only to word an error.
 */
function wholeWordFinder(pattern: string, ignoreCase: boolean): LineFind {
  const closed = endsInQuote(pattern) ? pattern + "\\E" : pattern;
  let re: Re2Program;
  try {
    re = compileRegex(
      `(?-i:^|[^${WORD_CLASS}])(${closed})(?-i:[^${WORD_CLASS}]|$)`,
      ignoreCase,
      pattern,
    );
  } catch (err) {
    compileRegex(pattern, ignoreCase, pattern); // the query's own error, when it has one
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
      noStart ??= compileRegex(
        `(?-i:[^${WORD_CLASS}])(${closed})(?-i:[^${WORD_CLASS}]|$)`,
        ignoreCase,
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
