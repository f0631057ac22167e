/**
 * What wmcp knows of RE2 pattern text without compiling it: stepping over one token (an escape, a
 * `\Q...\E` quote, a character class), over a group, and the questions asked of a pattern's shape
 * (a `\Q` left open, a top-level `|`, which unsupported construct it names). Callers: the wholeWord
 * wrapper (line_finder.ts), the required-literal scan (required_literal.ts), the error wording
 * (compile.ts).
 *
 * @module
 */

/**
 * Index just past the token starting at `i`: an escape (two characters), a `\Q...\E` quote, a
 * character class (`]` right after `[` or `[^` is literal; escapes and `[:name:]` are skipped), or
 * one character; -1 when a `\Q` there is never closed.
 */
export function skipRe2Token(p: string, i: number): number {
  const c = p[i];
  if (c === "\\") {
    if (p[i + 1] !== "Q") return i + 2;
    const close = p.indexOf("\\E", i + 2);
    return close === -1 ? -1 : close + 2;
  }
  if (c !== "[") return i + 1;
  i++;
  if (p[i] === "^") i++;
  if (p[i] === "]") i++;
  while (i < p.length && p[i] !== "]") {
    if (p[i] === "\\") i += 2;
    else if (p.startsWith("[:", i)) {
      const close = p.indexOf(":]", i + 2);
      i = close === -1 ? i + 1 : close + 2;
    } else i++;
  }
  return i + 1;
}

/** Index just past the group starting at i, or -1 when it does not close. */
export function skipGroup(p: string, i: number): number {
  let depth = 0;
  while (i < p.length) {
    const c = p[i];
    if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i + 1;
    i = skipRe2Token(p, i);
    if (i === -1) return -1;
  }
  return -1;
}

/** True when the pattern has a "|" outside every group, class and quote. */
export function hasTopLevelBar(p: string): boolean {
  let i = 0;
  while (i < p.length) {
    const c = p[i];
    if (c === "|") return true;
    if (c === "(") {
      i = skipGroup(p, i);
      if (i === -1) return true; // cannot tell: treat as unsafe
      continue;
    }
    i = skipRe2Token(p, i);
    if (i === -1) return false;
  }
  return false;
}

/**
 * True when `pattern` (a valid RE2 pattern) ends inside an unterminated \Q...: its quote
 * must be closed with \E before anything is appended. A syntactic scan, no compile.
 */
export function endsInQuote(pattern: string): boolean {
  for (let i = 0; i < pattern.length;) {
    i = skipRe2Token(pattern, i);
    if (i === -1) return true;
  }
  return false;
}

/** What RE2 does not support, named from the pattern when it can be told. */
export function unsupportedHint(pattern: string): string | undefined {
  if (/\(\?<?[=!]/.test(pattern)) return "lookaround assertions ((?=, (?!, (?<=, (?<!)";
  if (/\\[1-9]|\\k</.test(pattern)) return "backreferences (\\1, \\k<name>)";
  if (/\(\?>/.test(pattern)) return "atomic groups ((?>...))";
  if (/[*+?}]\+/.test(pattern)) return "possessive quantifiers (*+, ++, ?+)";
  if (/\\u[0-9a-fA-F{]/.test(pattern)) return "\\uXXXX escapes (write \\x{XXXX})";
  if (/\\c[A-Za-z]/.test(pattern)) return "\\cX control escapes (write \\x{..})";
  if (/\\Z/.test(pattern)) return "\\Z (write $ or \\z)";
  return undefined;
}
