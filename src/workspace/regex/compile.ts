/**
 * Compiling RE2 through re2js, the only place wmcp calls RE2JS.compile: the primitive every pattern
 * goes through (program or failure, with the program's size), and search_text's user regexes with
 * their limits and their INVALID_ARGUMENT wording (decision 0013). Globs word their own errors
 * (globs.ts).
 *
 * @module
 */
import { RE2JS, RE2JSException } from "re2js";
import { WorkspaceError } from "../errors.ts";
import { unsupportedHint } from "./syntax.ts";

/** A compiled RE2 program (re2js). */
export type Re2Program = RE2JS;

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

/** What one compile gave: the program and its size, or what was thrown instead. */
export type Compiled =
  | { ok: true; re: RE2JS; size: number }
  | {
    ok: false;
    /** True when RE2 refused the syntax (RE2JSException), false for anything else thrown. */
    syntax: boolean;
    /** The thrown error's message (or the thrown value), as text. */
    message: string;
  };

/** Compiles RE2 source (`ignoreCase`: RE2's `(?i)`, Unicode simple folding); never throws. */
export function compileRe2(source: string, ignoreCase = false): Compiled {
  let re: RE2JS;
  try {
    re = RE2JS.compile(source, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    return {
      ok: false,
      syntax: err instanceof RE2JSException,
      message: String((err as Error)?.message ?? err),
    };
  }
  return { ok: true, re, size: re.programSize() };
}

/** A literal string as RE2 source that matches exactly it. */
export function quoteRe2(s: string): string {
  return RE2JS.quote(s);
}

function invalid(message: string, details: Record<string, unknown>): WorkspaceError {
  return new WorkspaceError("INVALID_ARGUMENT", message, {
    argument: "query",
    details: { syntax: "RE2", ...details },
  });
}

/** A user regex (the query) over MAX_REGEX_LENGTH is INVALID_ARGUMENT, before any compile. */
export function checkRegexLength(pattern: string): void {
  if (pattern.length > MAX_REGEX_LENGTH) {
    throw invalid(
      `query is ${pattern.length} characters; regexes are limited to ${MAX_REGEX_LENGTH}`,
      { limit: MAX_REGEX_LENGTH },
    );
  }
}

/**
 * Compiles RE2 source made from the user regex `original` (the query itself, or the query inside
 * a wrapper), within MAX_REGEX_PROGRAM: INVALID_ARGUMENT on `query` otherwise, naming RE2 syntax
 * the original uses but RE2 lacks.
 */
export function compileRegex(source: string, ignoreCase: boolean, original: string): RE2JS {
  const c = compileRe2(source, ignoreCase);
  if (!c.ok && !c.syntax) {
    // RangeError (stack, memory) or anything else while compiling: the pattern is refused.
    throw invalid(`query could not be compiled: ${c.message}`, { reason: c.message });
  }
  if (!c.ok) {
    const hint = unsupportedHint(original);
    const reason = c.message.replace(/^error parsing regexp: /, "");
    throw invalid(
      `query is not a valid RE2 regular expression: ${reason}` +
        (hint ? `; RE2 syntax has no ${hint}` : ""),
      hint ? { reason, unsupported: hint } : { reason },
    );
  }
  if (c.size > MAX_REGEX_PROGRAM) {
    throw invalid(
      `query compiles to a program of ${c.size} instructions; the limit is ${MAX_REGEX_PROGRAM} ` +
        "(counted repeats such as {1000} expand the program)",
      { limit: MAX_REGEX_PROGRAM, name: "MAX_REGEX_PROGRAM", programSize: c.size },
    );
  }
  return c.re;
}
