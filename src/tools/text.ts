/**
 * What several tools' text for models shares: how a path is shown (the one place that decides
 * it), counts in words, entry lines, truncation hints and `key: value` rows.
 */

/** A value as text. */
export const str = (v: unknown): string => String(v);

/** `1 file`, `2 files`. */
export const plural = (n: number, one: string, many = `${one}s`): string =>
  `${n} ${n === 1 ? one : many}`;

/** C0 and C1 controls, DEL, and the Unicode line and paragraph separators. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;
/** Starts or ends like a quoted name, a trailer or an entry's suffix, or with white space. */
const EDGE = /^["[(\s]|[)\s]$/;
/** In a search line: `:` or `-` plus digits ending at `:`, `-` or the end, like `:12:` or `-3-`. */
const LINE_NUMBER_LIKE = /[:-]\d+(?=[:-]|$)/;

/**
 * A path as a text block shows it: as is, unless it could be misread or could forge a line
 * (a control character, a line separator, a leading `"`, `[` or `(`, a trailing `)`, white
 * space at either end; in search lines also `:` or `-` plus digits before `:`, `-` or the
 * end), then as a JSON string (in double quotes, with JSON escapes).
 */
export function shownPath(path: string, options: { search?: boolean } = {}): string {
  const odd = CONTROL.test(path) || EDGE.test(path) ||
    (options.search === true && LINE_NUMBER_LIKE.test(path));
  return odd ? quoted(path) : path;
}

/** A path of a result as text shows it (see shownPath). */
export const shown = (v: unknown): string => shownPath(str(v));

/** JSON string quoting that also escapes DEL, C1 controls and U+2028/2029 (still valid JSON). */
export function quoted(s: string): string {
  return JSON.stringify(s).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** One entry of a listing or a find: `dir/`, `dir/ (N bytes total)`, `name (N bytes)`... */
export function entryLine(e: {
  path: string;
  type: string;
  size?: number | null;
  totalSize?: number | null;
  totalSizePartial?: string;
}): string {
  const path = shownPath(e.path);
  switch (e.type) {
    case "directory":
      return `${path}/${directoryTotal(e)}`;
    case "symlink":
      return `${path} (symlink)`;
    case "other":
      return `${path} (special file)`;
    default:
      return typeof e.size === "number" ? `${path} (${e.size} bytes)` : path;
  }
}

/** A listed directory's total when sizes were asked for: ` (N bytes total)`, or marked partial. */
function directoryTotal(e: { totalSize?: number | null; totalSizePartial?: string }): string {
  if (e.totalSize === undefined) return "";
  if (e.totalSize === null) return ` (total unknown: ${e.totalSizePartial ?? "not summed"})`;
  if (e.totalSizePartial === undefined) return ` (${e.totalSize} bytes total)`;
  return ` (at least ${e.totalSize} bytes total, partial: ${e.totalSizePartial})`;
}

/** What to do about a truncated search or find, naming the argument to change. */
export function truncationHint(reason: string, what: "search" | "find"): string {
  const narrow = what === "search" ? "narrow `path` or `include`" : "narrow `path` or the pattern";
  switch (reason) {
    case "maxMatches":
    case "maxResults":
      return `truncated at ${reason}: pass a larger ${reason} (up to the workspace's ${reason}, ` +
        `see workspace_info) or ${narrow} to see the rest`;
    case "maxResultBytes":
      return `truncated at the result byte budget (maxResultBytes): ${narrow}${
        what === "search" ? " or lower contextLines" : ""
      }`;
    default:
      return `truncated (${reason}): ${narrow}`;
  }
}

/** `key: value` lines, leaving out rows whose value is undefined or null. */
export function keyValues(rows: [string, unknown][]): string {
  return rows.filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => `${k}: ${v}`)
    .join("\n");
}
