/**
 * The required literal of an RE2 pattern: a string every match contains, found by a conservative
 * syntactic scan of the top level (no compile). search_text's byte prefilter searches a file for
 * it and runs RE2 only on the lines that hold it (decision 0035).
 *
 * @module
 */
import { utf8Length } from "../budget.ts";
import { hasTopLevelBar, skipGroup, skipRe2Token } from "./syntax.ts";

const SPECIAL = new Set([..."\\.+*?()|[]{}^$"]);

/** A step's verdict besides the next index: stop scanning (the runs so far hold) or give up. */
const STOP = -1;
const GIVE_UP = -2;

/** The literal runs of one pattern's top level: those closed and the one being read. */
class Runs {
  readonly closed: string[] = [];
  #run = "";

  constructor(readonly pattern: string) {}

  /** Closes the run being read. */
  end(): void {
    if (this.#run.length > 0) this.closed.push(this.#run);
    this.#run = "";
  }

  /** Appends characters known to be required (all but the last of a quote). */
  append(s: string): void {
    this.#run += s;
  }

  /**
   * A literal character whose token ends at `next`: what follows decides whether it is
   * required. Returns the index after its quantifier, or STOP at a "{".
   */
  literal(ch: string, next: number): number {
    const p = this.pattern;
    const q = p[next];
    if (q === "?" || q === "*") {
      this.end();
      next++;
      if (p[next] === "?") next++;
      return next;
    }
    if (q === "{") return STOP;
    this.#run += ch;
    if (q === "+") {
      this.end();
      next++;
      if (p[next] === "?") next++;
    }
    return next;
  }

  /** The index after a quantifier at i (none: i), or STOP at a "{". */
  quantifier(i: number): number {
    const p = this.pattern;
    const q = p[i];
    if (q === "?" || q === "*" || q === "+") {
      i++;
      if (p[i] === "?") i++;
      return i;
    }
    return q === "{" ? STOP : i;
  }

  /** The longest closed run (in UTF-8 bytes; the first of equals), or null. */
  longest(): string | null {
    let best: string | null = null;
    for (const r of this.closed) if (best === null || utf8Length(r) > utf8Length(best)) best = r;
    return best;
  }
}

/**
 * A literal string that every match of an RE2 pattern contains (the longest one found by a
 * conservative syntactic scan of the top level), or null when none can be proven: any
 * top-level alternation, flag group or `{` gives up; groups, classes, escapes other than
 * escaped punctuation, `.` and anchors end a run; a character followed by `?`, `*` or `{` is
 * dropped, one followed by `+` ends its run. Only for patterns RE2 compiled.
 */
export function requiredLiteral(pattern: string): string | null {
  const runs = new Runs(pattern);
  for (let i = 0; i < pattern.length;) {
    i = step(runs, i);
    if (i === GIVE_UP) return null;
    // A "{" after a character (or an unexpected token) stops the scan: the character before
    // it was not added, and the runs so far are all required.
    if (i === STOP) break;
  }
  runs.end();
  // A top-level "|" after the point where the scan stopped would make every run optional.
  if (hasTopLevelBar(pattern)) return null;
  return runs.longest();
}

/** Reads the token at i: the index after it, STOP or GIVE_UP. */
function step(runs: Runs, i: number): number {
  const p = runs.pattern;
  const c = p[i];
  if (c === "|") return GIVE_UP;
  if (c === "\\") return escapeStep(runs, i);
  if (c === "[") {
    runs.end();
    return runs.quantifier(skipRe2Token(p, i));
  }
  if (c === "(") {
    if (p[i + 1] === "?" && p[i + 2] !== ":" && p[i + 2] !== "P") {
      // A flag group ((?i), (?s:...)) may change how literals match: give up.
      return GIVE_UP;
    }
    runs.end();
    const after = skipGroup(p, i);
    return after === -1 ? GIVE_UP : runs.quantifier(after);
  }
  if (c === "." || c === "^" || c === "$") {
    runs.end();
    return runs.quantifier(i + 1);
  }
  if (c === ")" || c === "?" || c === "*" || c === "+" || c === "{" || c === "}") {
    // Not expected at this point in a pattern RE2 compiled; stop without guessing.
    return STOP;
  }
  const ch = String.fromCodePoint(p.codePointAt(i)!);
  return runs.literal(ch, i + ch.length);
}

/** Reads the escape at i ("\"): a quote, escaped punctuation (literal) or anything else (ends the run). */
function escapeStep(runs: Runs, i: number): number {
  const p = runs.pattern;
  const e = p[i + 1];
  if (e === "Q") {
    // \Q...\E: every character literal (the last one may take a quantifier).
    const close = p.indexOf("\\E", i + 2);
    const body = p.slice(i + 2, close === -1 ? p.length : close);
    const after = close === -1 ? p.length : close + 2;
    if (body.length === 0) return after;
    const chars = Array.from(body);
    runs.append(chars.slice(0, -1).join(""));
    return runs.literal(chars[chars.length - 1], after);
  }
  if (e !== undefined && SPECIAL.has(e) || e === "/" || e === "-" || e === "#") {
    return runs.literal(e!, i + 2);
  }
  // Classes (\d, \pL), assertions (\b, \A), escapes of characters (\x, \n): end the run.
  runs.end();
  return runs.quantifier(escapeEnd(p, e, i + 2));
}

/** The index after the operands of escape `\e` whose operands start at i (\p{..}, \xHH, octal). */
function escapeEnd(p: string, e: string | undefined, i: number): number {
  if (e === "p" || e === "P" || e === "x") {
    if (p[i] === "{") {
      const close = p.indexOf("}", i);
      return close === -1 ? p.length : close + 1;
    }
    return e === "x" ? i + 2 : i + 1;
  }
  if (e !== undefined && e >= "0" && e <= "7") {
    while (i < p.length && p[i] >= "0" && p[i] <= "7") i++;
  }
  return i;
}
