/**
 * One brace-free glob as RE2 source over a whole path (or a base name): tokens (literals, `?`,
 * `*`, `**`, `/`, classes; extglobs refused), then segments, with the dot rule (`dot: false`)
 * expressed without lookaheads: the token that would match a segment's first character
 * excludes ".". Decision 0013.
 *
 * @module
 */
import { quoteRe2 } from "../regex/compile.ts";
import { classSource, type Range, subtract } from "../regex/classes.ts";
import { parseClass } from "./classes.ts";
import { GlobSyntaxError } from "./limits.ts";

type Tok =
  | { t: "lit"; ch: string }
  | { t: "any" }
  | { t: "star" }
  | { t: "globstar" }
  | { t: "sep" }
  | { t: "class"; ranges: Range[] };

const SLASH = 0x2f;
const DOT = 0x2e;

const EXTGLOB = /[?*+@!]\(/;

/** Tokenizes one brace-free glob. */
function tokenize(s: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === "\\") {
      if (i + 1 >= s.length) {
        toks.push({ t: "lit", ch: "\\" });
        i++;
      } else {
        const cp = s.codePointAt(i + 1)!;
        toks.push({ t: "lit", ch: String.fromCodePoint(cp) });
        i += cp > 0xffff ? 3 : 2;
      }
    } else if (EXTGLOB.test(s.slice(i, i + 2))) {
      throw new GlobSyntaxError(
        `extglob "${
          s.slice(i, i + 2)
        }...)" is not supported (escape the parenthesis as \\( to match it)`,
        { unsupported: "extglob" },
      );
    } else if (c === "*") {
      let j = i;
      while (s[j] === "*") j++;
      const wholeSegment = (i === 0 || s[i - 1] === "/") && (j === s.length || s[j] === "/");
      toks.push({ t: j - i >= 2 && wholeSegment ? "globstar" : "star" });
      i = j;
    } else if (c === "?") {
      toks.push({ t: "any" });
      i++;
    } else if (c === "/") {
      toks.push({ t: "sep" });
      i++;
    } else if (c === "[") {
      const cls = parseClass(s, i);
      if (cls === undefined) {
        toks.push({ t: "lit", ch: "[" });
        i++;
      } else {
        toks.push({ t: "class", ranges: cls.ranges });
        i = cls.i;
      }
    } else {
      const cp = s.codePointAt(i)!;
      toks.push({ t: "lit", ch: String.fromCodePoint(cp) });
      i += cp > 0xffff ? 2 : 1;
    }
  }
  return toks;
}

function tokSource(t: Tok, leading: boolean): string {
  switch (t.t) {
    case "lit":
      return quoteRe2(t.ch);
    case "any":
      return leading ? "[^/.]" : "[^/]";
    case "star":
      return "[^/]*";
    case "class": {
      let r = subtract(t.ranges, [SLASH, SLASH]);
      if (leading) r = subtract(r, [DOT, DOT]);
      return classSource(r);
    }
    default:
      throw new Error(`unexpected token ${t.t}`);
  }
}

/**
 * One path segment. With `restricted` the segment may not start with "." (dot: false and
 * the pattern's segment does not itself start with a literal "."): the token that matches
 * the first character excludes it; a star that matches nothing passes the rule on.
 */
function segmentSource(toks: Tok[], restricted: boolean): string {
  const plain = (ts: Tok[]) => ts.map((t) => tokSource(t, false)).join("");
  // A segment that is only "*" names something: it matches one character or more.
  if (toks.length === 1 && toks[0].t === "star") return restricted ? "[^/.][^/]*" : "[^/]+";
  if (!restricted || toks.length === 0) return plain(toks);
  const [first, ...rest] = toks;
  switch (first.t) {
    case "lit":
      return first.ch === "." ? classSource([]) : plain(toks);
    case "star":
      return `(?:[^/.][^/]*${plain(rest)}|${segmentSource(rest, true)})`;
    default:
      return tokSource(first, true) + plain(rest);
  }
}

/** The RE2 source of one brace-free glob over a whole path (or base name). */
export function globSource(glob: string, dot: boolean): string {
  const toks = tokenize(glob);
  const segs: Tok[][] = [[]];
  for (const t of toks) {
    if (t.t === "sep") segs.push([]);
    else segs[segs.length - 1].push(t);
  }
  // "**/**" is "**".
  const isGlobstar = (s: Tok[]) => s.length === 1 && s[0].t === "globstar";
  const collapsed = segs.filter((s, k) => !(isGlobstar(s) && k > 0 && isGlobstar(segs[k - 1])));
  const seg = dot ? "[^/]+" : "[^/.][^/]*";
  const restrictedFor = (s: Tok[]) => !dot && !(s[0]?.t === "lit" && s[0].ch === ".");
  if (collapsed.length === 1 && isGlobstar(collapsed[0])) return `${seg}(?:/${seg})*/?`;
  let out = "";
  for (let k = 0; k < collapsed.length; k++) {
    const s = collapsed[k];
    const last = k === collapsed.length - 1;
    if (isGlobstar(s)) {
      out += last ? `(?:/${seg})*/?` : `(?:${seg}/)*`;
      continue;
    }
    out += segmentSource(s, restrictedFor(s));
    const nextIsTrailingGlobstar = k === collapsed.length - 2 && isGlobstar(collapsed[k + 1]);
    if (!last && !nextIsTrailingGlobstar) out += "/";
  }
  // As picomatch: a pattern that ends in a star also matches a directory written with "/".
  const final = toks[toks.length - 1];
  return final?.t === "star" ? out + "/?" : out;
}
