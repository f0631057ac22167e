/**
 * search_text's query matcher: one compiled form of (query, regex, caseSensitive,
 * wholeWord) that the search scans text with. The engine behind it is chosen here and
 * nowhere else.
 */
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
   * once (literal queries); false when `find` must be given one line at a time.
   */
  readonly wholeText: boolean;
  /** Index of the first match in `text` at or after `from`, or -1. */
  find(text: string, from: number): number;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

function buildRegExp(args: QueryArgs): RegExp {
  const source = args.regex ? args.query : escapeRegExp(args.query);
  const flags = "g" + (args.caseSensitive === false ? "i" : "");
  const attempt = (unicode: boolean) => {
    const word = unicode ? "[\\p{L}\\p{N}_]" : "\\w";
    const body = args.wholeWord ? `(?<!${word})(?:${source})(?!${word})` : source;
    return new RegExp(body, flags + (unicode ? "u" : ""));
  };
  try {
    return attempt(true);
  } catch {
    try {
      return attempt(false);
    } catch (err) {
      throw new WorkspaceError(
        "INVALID_ARGUMENT",
        `query is not a valid regular expression: ${(err as Error).message}`,
        { argument: "query" },
      );
    }
  }
}

/** Compiles a query; INVALID_ARGUMENT when it is not a valid pattern. */
export function compileQuery(args: QueryArgs): QueryMatcher {
  if (!args.regex && args.caseSensitive !== false && !args.wholeWord) {
    const literal = args.query;
    return { wholeText: true, find: (text, from) => text.indexOf(literal, from) };
  }
  const re = buildRegExp(args);
  return {
    wholeText: !args.regex,
    find(text, from) {
      re.lastIndex = from;
      const m = re.exec(text);
      return m ? m.index : -1;
    },
  };
}
