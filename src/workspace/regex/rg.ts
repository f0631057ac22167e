/**
 * An RE2 pattern as a ripgrep prefilter (decision 0054): a pattern in ripgrep's syntax that matches
 * on every line where the RE2 pattern matches (a superset: the built-in engine then decides each
 * line), or null when that cannot be promised and the search reads every file. The pattern is
 * translated token by token where ripgrep's syntax means the same or more (preferred since ripgrep
 * gives candidate lines, decision 0067: a translated pattern's are few, a required literal's may be
 * many more), else its required literal (a fixed string every match contains): `\D \W \S` are ASCII
 * in RE2 and Unicode in ripgrep, so they become classes of code points (`[^0-9]`...); `\b \B`
 * become `(?-u:\b)`, ASCII boundaries, which bytes give alike; `\d \w \s` stay Unicode (more than
 * ASCII); `\Q...\E` becomes escaped text; classes pass when they hold nothing ripgrep reads
 * differently (a nested `[`, `&&`, `--`, `~~`, a negated Perl class). Anything else unknown gives
 * null.
 *
 * @module
 */
import { requiredLiteral } from "./required_literal.ts";
import { skipRe2Token } from "./syntax.ts";

/** A prefilter for ripgrep: its pattern, and whether it is a fixed string. */
export interface RgPrefilter {
  pattern: string;
  literal: boolean;
}

/** Characters ripgrep's parser treats as syntax (each may be escaped, no other may). */
const RG_META = new Set([..."\\.+*?()|[]{}^$#&-~"]);

/** Escapes that RE2 and ripgrep read alike. */
const SAME_ESCAPES = new Set([..."dwsnrtfvapPx"]);

/**
 * The end of a line as RE2 sees it: the built-in engine strips a line's trailing CR, and ripgrep
 * runs without --crlf (which took CR out of `.` and negated classes, so a lone CR in a line could
 * not be matched), so a line's end may be before one CR.
 */
const END = "(?:\\r?$)";

/**
 * Text anchors: RE2 runs on one line at a time (search_text), so they are line anchors there;
 * ripgrep sees the file, where `^` and `$` are the line anchors (END: `$`, after one CR maybe).
 */
const LINE_ANCHORS: Record<string, string> = { A: "^", z: END };

/**
 * RE2's negated ASCII classes, as ripgrep classes of code points: ripgrep's own `\D \W \S` are
 * Unicode (fewer matches), and `(?-u:\W)` would take one byte where RE2 takes one code point.
 */
const NEGATED_ASCII: Record<string, string> = {
  D: "[^0-9]",
  W: "[^0-9A-Za-z_]",
  S: "[^\\t\\n\\f\\r ]",
};

/** RE2's ASCII word boundaries: the same on bytes, since a non-ASCII code point is no word byte. */
const ASCII_BOUNDARY = new Set([..."bB"]);

function escapeForRg(s: string): string {
  let out = "";
  for (const ch of s) out += RG_META.has(ch) ? `\\${ch}` : ch;
  return out;
}

/** A class `[...]` (its RE2 text) in ripgrep's syntax, or null when ripgrep would read it otherwise. */
function translateClass(cls: string): string | null {
  const negated = cls.startsWith("[^");
  const body = cls.slice(negated ? 2 : 1, -1);
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === "\\") {
      const e = body[i + 1];
      if (e === undefined || e === "Q") return null;
      // A negated Perl class, or any Perl class in a negated class, matches less in ripgrep.
      if ("DWS".includes(e) || (negated && "dws".includes(e))) return null;
      if (/[0-9C]/.test(e)) return null;
      i++;
      continue;
    }
    if (c === "[") {
      if (!body.startsWith("[:", i)) return null;
      // POSIX classes are ASCII in both; a negated class around one is still the same set.
      const close = body.indexOf(":]", i + 2);
      if (close === -1) return null;
      i = close + 1;
      continue;
    }
    if ((c === "&" || c === "-" || c === "~") && body[i + 1] === c) return null;
  }
  return cls;
}

/** One escape at `i` of `p` (outside classes): its ripgrep form, or null. */
function translateEscape(p: string, i: number): { text: string; next: number } | null {
  const e = p[i + 1];
  if (e === undefined) return null;
  if (e === "Q") {
    const close = p.indexOf("\\E", i + 2);
    const body = p.slice(i + 2, close === -1 ? p.length : close);
    return { text: escapeForRg(body), next: close === -1 ? p.length : close + 2 };
  }
  if (e in NEGATED_ASCII) return { text: NEGATED_ASCII[e], next: i + 2 };
  if (ASCII_BOUNDARY.has(e)) return { text: `(?-u:\\${e})`, next: i + 2 };
  if (e in LINE_ANCHORS) return { text: LINE_ANCHORS[e], next: i + 2 };
  if (SAME_ESCAPES.has(e)) {
    // \p{...}, \x{...}: the braces belong to the escape.
    if ((e === "p" || e === "P" || e === "x") && p[i + 2] === "{") {
      const close = p.indexOf("}", i + 3);
      if (close === -1) return null;
      return { text: p.slice(i, close + 1), next: close + 1 };
    }
    if (e === "x") return { text: p.slice(i, i + 4), next: i + 4 };
    if (e === "p" || e === "P") return { text: p.slice(i, i + 3), next: i + 3 };
    return { text: p.slice(i, i + 2), next: i + 2 };
  }
  // Escaped punctuation is the character itself.
  if (/[\p{P}\p{S}\s]/u.test(e) && e.charCodeAt(0) < 128) {
    return { text: RG_META.has(e) ? `\\${e}` : e, next: i + 2 };
  }
  return null;
}

/** The RE2 pattern token by token in ripgrep's syntax, or null. */
export function translateForRg(p: string): string | null {
  let out = "";
  for (let i = 0; i < p.length;) {
    const c = p[i];
    if (c === "\\") {
      const t = translateEscape(p, i);
      if (t === null) return null;
      out += t.text;
      i = t.next;
      continue;
    }
    if (c === "[") {
      const end = skipRe2Token(p, i);
      if (end === -1 || end > p.length) return null;
      const cls = translateClass(p.slice(i, end));
      if (cls === null) return null;
      out += cls;
      i = end;
      continue;
    }
    out += c === "$" ? END : c;
    i++;
  }
  return out;
}

/** The ripgrep prefilter of a query (literal or RE2), or null when every file must be read. */
export function rgPrefilter(q: { query: string; regex: boolean }): RgPrefilter | null {
  if (!q.regex) return { pattern: q.query, literal: true };
  const translated = translateForRg(q.query);
  if (translated !== null) return { pattern: translated, literal: false };
  const literal = requiredLiteral(q.query);
  const usable = literal !== null && literal.length > 0 && !/[\r\n]/.test(literal);
  return usable ? { pattern: literal, literal: true } : null;
}
