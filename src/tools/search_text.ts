/**
 * search_text: matching lines of the text files below a directory, a literal or an RE2 regex.
 * For models, grep-style lines and a summary; for people, the same lines with the match lit.
 */
import { z } from "zod";
import { compileRe2 } from "../workspace/regex/compile.ts";
import {
  defineOperation,
  defineTool,
  type PrettyContext,
  type Styles,
  type ToolResult,
  type ToolUnit,
} from "./unit.ts";
import { bound, dirArg, globList, READ } from "./args.ts";
import { plural, quoted, shownPath, str, truncationHint } from "./text.ts";
import { searchText } from "../workspace/search.ts";
import type { SearchMatch } from "../workspace/search_types.ts";

const operation = defineOperation({
  name: "search_text",
  title: "Search file contents",
  description:
    "Search the contents of text files below a directory for a literal string (default) or an RE2-syntax regular expression (regex: true; linear time, no lookarounds or backreferences), line by line. Returns one match per matching line with path, line, column (1-based, UTF-16 units), the line's text (long lines clipped around the match) and optional context lines; plus filesSearched, filesMatched, skipped-file counts (binary, too large, unreadable) and truncated=true with the reason when maxMatches or the visited cap stopped it. include/exclude are globs on paths relative to `path` (no '/' = base name). Honors .gitignore unless respectGitignore is false. Binary files are skipped.",
  inputSchema: z.strictObject({
    query: z.string().min(1).describe("Text to find, or a regular expression when regex is true."),
    regex: z.boolean().default(false),
    caseSensitive: z.boolean().default(true),
    wholeWord: z.boolean().default(false).describe(
      "Match only where the query is not part of a longer word.",
    ),
    path: dirArg,
    allRoots: z.boolean().default(false).describe(
      "Walk every root (workspace_info lists them) in order, each from its top; leave path out. The maxMatches cap, the visited count and the time budget are the whole call's. Paths in roots after the first are shown absolute.",
    ),
    include: globList("Only search files matching one of these globs.").default([]),
    exclude: globList("Skip files and directories matching these globs.").default([]),
    respectGitignore: z.boolean().default(true),
    includeHidden: z.boolean().default(false),
    contextLines: z.int().min(0).max(10).default(0).describe(
      "Lines of context before and after each match.",
    ),
    maxMatches: bound(
      "Most matching lines to return (default and maximum: the workspace's maxMatches).",
    )
      .optional(),
    maxFileBytes: bound(
      "Skip files larger than this (default and maximum: the workspace's maxSearchFileBytes).",
    )
      .optional(),
  }),
  outputSchema: z.object({
    matches: z.array(z.object({
      path: z.string(),
      line: z.int(),
      column: z.int(),
      text: z.string(),
      textStartColumn: z.int().optional(),
      before: z.array(z.string()).optional(),
      after: z.array(z.string()).optional(),
      clippedLines: z.array(z.int()).optional().describe(
        "Line numbers (the match's or its context's) whose text was cut before the line's end.",
      ),
    })),
    filesSearched: z.int(),
    filesMatched: z.int(),
    filesSkipped: z.object({ binary: z.int(), tooLarge: z.int(), unreadable: z.int() }),
    visited: z.int(),
    truncated: z.boolean(),
    truncatedReason: z.enum(["maxMatches", "maxVisited", "maxDepth", "maxResultBytes"]).optional(),
  }),
  annotations: READ,
  needsWrite: false,
  spansRoots: "maxMatches",
  run: (ctx, input) =>
    searchText(ctx.workspace, input, {
      signal: ctx.signal,
      onProgress: ctx.onProgress &&
        ((p) =>
          ctx.onProgress!({
            progress: p.filesSearched,
            message: `${p.filesSearched} files searched, ${p.matches} matches`,
          })),
    }),
});

/**
 * A line of file text in a search result: as is, or as a JSON string when it has a control
 * character other than tab, a line separator, or starts with `"`.
 */
function shownLine(text: string): string {
  return /(?!\t)[\p{Cc}\u2028\u2029]/u.test(text) ||
      text.startsWith('"')
    ? quoted(text)
    : text;
}

/**
 * Per file, every line to print (a match wins over context), keyed by line number; and
 * whether any printed line was clipped.
 */
function linesByFile(matches: SearchMatch[]) {
  let anyClipped = false;
  const files = new Map<string, Map<number, string>>();
  for (const m of matches) {
    let lines = files.get(m.path);
    if (!lines) files.set(m.path, lines = new Map());
    const path = shownPath(m.path, { search: true });
    const cutEnd = (n: number) => m.clippedLines?.includes(n) ? "…" : "";
    const ctx = (n: number, text: string) => {
      if (cutEnd(n)) anyClipped = true;
      if (!lines!.has(n)) lines!.set(n, `${path}-${n}- ${shownLine(text)}${cutEnd(n)}`);
    };
    (m.before ?? []).forEach((t, i) => ctx(m.line - (m.before!.length - i), t));
    const cutStart = (m.textStartColumn ?? 1) > 1 ? "…" : "";
    if (cutStart || cutEnd(m.line)) anyClipped = true;
    lines.set(
      m.line,
      `${path}:${m.line}:${m.column}: ${cutStart}${shownLine(m.text)}${cutEnd(m.line)}`,
    );
    (m.after ?? []).forEach((t, i) => ctx(m.line + 1 + i, t));
  }
  return { files, anyClipped };
}

/** The summary line: counts, skipped files, and what to do about truncation or clipping. */
function summaryLine(r: ToolResult, matches: number, anyClipped: boolean): string {
  const skipped = r.filesSkipped as Record<string, number>;
  const skips = Object.entries(skipped).filter(([, n]) => n > 0).map(([k, n]) =>
    `${n} ${k === "tooLarge" ? "too large" : k}`
  );
  let summary = matches === 0
    ? "No matches"
    : `${plural(matches, "matching line")} in ${plural(r.filesMatched as number, "file")}`;
  summary += ` (${plural(r.filesSearched as number, "file")} searched${
    skips.length ? `; skipped: ${skips.join(", ")}` : ""
  })`;
  if (r.truncated === true) summary += `; ${truncationHint(str(r.truncatedReason), "search")}`;
  if (anyClipped) {
    summary +=
      "; long lines were clipped (…): read_file with startLine and endLine shows one whole";
  }
  return `${summary}.`;
}

/**
 * grep-style lines: `path:line:col: text` for matches, `path-line- text` for context; `…` at
 * each end where a long line was clipped; `--` between groups; the summary last.
 */
function text(r: ToolResult): string {
  const matches = r.matches as SearchMatch[];
  const { files, anyClipped } = linesByFile(matches);
  const out: string[] = [];
  let first = true;
  for (const lines of files.values()) {
    let prev: number | undefined;
    for (const n of [...lines.keys()].sort((a, b) => a - b)) {
      if (!first && (prev === undefined || n > prev + 1)) out.push("--");
      first = false;
      out.push(lines.get(n)!);
      prev = n;
    }
  }
  out.push(summaryLine(r, matches.length, anyClipped));
  return out.join("\n");
}

/** How long the match starting at `at` in `text` is (0 when it cannot be told). */
export function matchLength(args: Record<string, unknown>, text: string, at: number): number {
  const query = typeof args.query === "string" ? args.query : "";
  if (query === "" || at < 0 || at >= text.length) return 0;
  if (args.regex !== true) {
    const seg = text.slice(at, at + query.length);
    const same = args.caseSensitive === false
      ? seg.toLowerCase() === query.toLowerCase()
      : seg === query;
    return same ? seg.length : 0;
  }
  const compiled = compileRe2(query, args.caseSensitive === false);
  if (!compiled.ok) return 0;
  const m = compiled.re.matcher(text);
  return m.find(at) && m.start() === at ? m.end() - at : 0;
}

/** One match line for people: path magenta, numbers green, the match highlighted. */
function hitLine(
  l: string,
  prefix: RegExpExecArray,
  m: SearchMatch,
  args: Record<string, unknown>,
  c: Styles,
): string {
  const body = l.slice(prefix[0].length);
  const head = `${c.magenta(prefix[1])}:${c.green(prefix[2])}:${c.green(prefix[3])}: `;
  const lead = body.startsWith("…") ? "…" : "";
  const rest = body.slice(lead.length);
  if (!rest.startsWith(m.text)) return head + body; // shown quoted: no highlight
  const at = m.column - (m.textStartColumn ?? 1);
  const len = matchLength(args, m.text, at);
  if (at < 0 || len <= 0) return head + body;
  return head + lead + rest.slice(0, at) + c.match(rest.slice(at, at + len)) +
    rest.slice(at + len);
}

/** The grep-style lines styled: hits lit (hitLine); context lines, `--` and the summary dim. */
function pretty(t: string, result: ToolResult, { palette: c, args }: PrettyContext): string {
  const byPrefix = new Map<string, SearchMatch>();
  for (const m of (result.matches ?? []) as SearchMatch[]) {
    byPrefix.set(`${shownPath(m.path, { search: true })}:${m.line}:${m.column}: `, m);
  }
  const lines = t.split("\n");
  return lines.map((l, i) => {
    if (i === lines.length - 1) return c.dim(l); // the summary
    if (l === "--") return c.dim(l);
    const prefix = /^(.*?):(\d+):(\d+): /.exec(l);
    const m = prefix ? byPrefix.get(prefix[0]) : undefined;
    if (!prefix || !m) return c.dim(l); // a context line (path-N- text)
    return hitLine(l, prefix, m, args, c);
  }).join("\n");
}

/** search_text as one unit. */
export const searchTextTool: ToolUnit = defineTool({
  operation,
  text,
  pretty,
  examples: ["query=TODO", `query='fn\\s+main' regex:=true include:='["*.rs"]'`],
});
