/**
 * The one syntactic scan of RE2 pattern text wmcp needs (no compile): stepping over an escape, a
 * `\Q...\E` quote or a character class, so callers can find groups, bars and open quotes outside
 * them (query.ts: a `\Q` left open; byte_scan.ts: groups and top-level `|` for the prefilter).
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
