/**
 * What a model reads of a tool result: one renderer per tool turns the typed result into
 * content blocks (file text as text, grep-style hits, one entry per line, image and audio
 * blocks), and one function words a typed error as the sentence an error result carries.
 * structuredContent keeps the typed result; nothing here changes it except read_media's
 * `data`, which travels once, in its media block.
 */
import { jsonBytes } from "../workspace/budget.ts";
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { ErrorObject } from "../workspace/errors.ts";
import type { SearchMatch } from "../workspace/search.ts";

/** One content block of a tools/call result. */
export type ContentBlock = CallToolResult["content"][number];

/** The `_meta` key of an error result that carries the typed error object for programs. */
export const ERROR_META_KEY = "wmcp/error";

/** URI prefix of read_media's embedded resource: workspace-relative, no machine path. */
export const MEDIA_URI_PREFIX = "wmcp://workspace/";

/** Fields of a typed result that MCP sends in a content block instead of structuredContent. */
export const CONTENT_ONLY_FIELDS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  read_media: Object.freeze(["data"]),
});

type Result = Record<string, unknown>;

const str = (v: unknown): string => String(v);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Image types hosts accept in an `image` block (the Claude API takes only these four). */
export const IMAGE_BLOCK_TYPES: readonly string[] = Object.freeze([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
]);

/** Audio types sent as an `audio` block (the common ones hosts take); others go as a resource. */
export const AUDIO_BLOCK_TYPES: readonly string[] = Object.freeze([
  "audio/wav",
  "audio/mpeg",
  "audio/ogg",
  "audio/flac",
  "audio/x-flac",
  "audio/aac",
  "audio/webm",
  "audio/mp4",
]);

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

/** JSON string quoting that also escapes DEL, C1 controls and U+2028/2029 (still valid JSON). */
function quoted(s: string): string {
  return JSON.stringify(s).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

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

/** The workspace-relative URI of a read_media resource block. */
export function mediaUri(path: string): string {
  return MEDIA_URI_PREFIX + path.split("/").map(encodeURIComponent).join("/");
}

/**
 * The sentence of an error result: `"<CODE>: <message>"`, with what a model needs to act on
 * worded in (the argument to blame, the limit, the candidate lines, how to confirm).
 */
export function errorText(error: ErrorObject): string {
  const d = (error.details ?? {}) as Record<string, unknown>;
  let s = error.message;
  const add = (part: string) => (s += part);
  if (error.argument !== undefined && !s.includes(error.argument)) {
    add(` (argument \`${error.argument}\`)`);
  }
  switch (error.code) {
    case "CONFIRMATION_REQUIRED":
      // A person declined or cancelled (details.action): say so, and do not suggest a bypass.
      if (d.action === undefined && !s.includes("confirm: true")) {
        add("; pass confirm: true to proceed");
      }
      break;
    case "TOO_LARGE":
      if (d.limit !== undefined && !s.includes(str(d.limit))) add(`; the limit is ${d.limit}`);
      break;
    case "AMBIGUOUS_MATCH":
    case "NO_MATCH":
      if (Array.isArray(d.candidates) && d.candidates.length > 0 && !/lines? /.test(s)) {
        add(`; candidate lines: ${d.candidates.join(", ")}`);
      }
      break;
  }
  return `${error.code}: ${s}${/[.!?]$/.test(s) ? "" : "."}`;
}

/** The error result every error path of a tool call returns (no structuredContent). */
export function errorResult(error: ErrorObject): CallToolResult {
  return {
    content: [{ type: "text", text: errorText(error) }],
    isError: true,
    _meta: { [ERROR_META_KEY]: error },
  };
}

/** The typed result as MCP's structuredContent: the result without its content-only fields. */
export function structuredFor(tool: string, result: Result): Result {
  const omit = CONTENT_ONLY_FIELDS[tool];
  if (omit === undefined) return result;
  return Object.fromEntries(Object.entries(result).filter(([k]) => !omit.includes(k)));
}

/** Options of renderContent. */
export interface RenderOptions {
  /** Whether the client's revision has audio blocks (2025-03-26 and later); default true. */
  audio?: boolean;
  /**
   * Most bytes the text block may take as a JSON string (the workspace's maxResultBytes), so a
   * result is at most twice that plus its envelope (decision 0022); default unbounded.
   */
  maxTextBytes?: number;
}

/**
 * A text block cut to at most maxBytes of JSON at a line boundary, ending with a line that says
 * so and names the next-page cursor when there is one; the text itself when it fits.
 */
export function boundedText(text: string, maxBytes: number, cursor?: unknown): string {
  if (jsonBytes(text) <= maxBytes) return text;
  const note = `[the text was cut at maxResultBytes (${maxBytes} bytes of JSON); ` +
    "structuredContent holds the whole page" +
    (typeof cursor === "string" ? `; the next page's cursor is ${cursor}` : "") + "]";
  // The note with the string's quotes, then whole lines while they fit: each costs its escaped
  // bytes plus the two of its `\n`, which jsonBytes(line) counts as its quotes.
  let used = jsonBytes(note);
  const kept: string[] = [];
  for (const line of text.split("\n")) {
    const size = jsonBytes(line);
    if (used + size > maxBytes) break;
    used += size;
    kept.push(line);
  }
  return [...kept, note].join("\n");
}

/** The content blocks of a successful call of a tool, written for a model. */
export function renderContent(
  tool: string,
  result: Result,
  options: RenderOptions = {},
): ContentBlock[] {
  if (tool === "read_media") return mediaBlocks(result, options.audio !== false);
  const render = TEXT_RENDERERS[tool];
  const text = render ? render(result) : JSON.stringify(result);
  if (options.maxTextBytes === undefined) return [{ type: "text", text }];
  return [{ type: "text", text: boundedText(text, options.maxTextBytes, result.nextCursor) }];
}

/** A path of a result as text shows it (see shownPath). */
const p = (v: unknown): string => shownPath(str(v));

const TEXT_RENDERERS: Record<string, (r: Result) => string> = {
  read_file: readFileText,
  search_text: searchText,
  list_directory: listText,
  find_files: findText,
  get_file_info: fileInfoText,
  workspace_info: workspaceInfoText,
  write_file: writeFileText,
  edit_file: editFileText,
  create_directory: createDirectoryText,
  move_path: (r) =>
    `Moved ${r.type} ${p(r.source)} to ${p(r.destination)}${
      r.overwritten ? " (replacing what was there)" : ""
    }.`,
  delete_path: (r) => `Deleted ${r.type} ${p(r.path)}.`,
};

function readFileText(r: Result): string {
  const start = r.startLine as number;
  const end = r.endLine as number;
  const parts = [p(r.path)];
  const range = end < start ? "no lines" : `lines ${start}-${end}`;
  parts.push(typeof r.totalLines === "number" ? `${range} of ${r.totalLines}` : range);
  parts.push(`${r.size} bytes`);
  if (typeof r.sha256 === "string") parts.push(`sha256 ${r.sha256}`);
  else parts.push("sha256 and total lines not computed (file over maxHashBytes)");
  if (r.truncated === true) {
    const next = typeof r.nextStartLine === "number"
      ? `continue with startLine ${r.nextStartLine}`
      : undefined;
    const raise = r.truncatedReason === "maxBytes"
      ? "raise maxBytes (up to the workspace's maxReadBytes, see workspace_info)"
      : undefined;
    parts.push(
      `truncated (${r.truncatedReason})` +
        (next || raise ? `: ${[next, raise].filter(Boolean).join(", or ")}` : ""),
    );
  }
  if (r.lineTruncated === true) {
    parts.push(
      `the last line was cut (${
        r.truncatedReason === "maxBytes" ? "raise maxBytes to see more of it, or " : ""
      }use read_media for the file's raw bytes)`,
    );
  }
  return `[${parts.join(", ")}]\n${r.content}`;
}

type Match = SearchMatch;

/**
 * grep-style lines: `path:line:col: text` for matches, `path-line- text` for context; `…` at
 * each end where a long line was clipped.
 */
function searchText(r: Result): string {
  const matches = r.matches as Match[];
  const out: string[] = [];
  let anyClipped = false;
  // Per file, every line to print (a match wins over context), in line order.
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
  const skipped = r.filesSkipped as Record<string, number>;
  const skips = Object.entries(skipped).filter(([, n]) => n > 0).map(([k, n]) =>
    `${n} ${k === "tooLarge" ? "too large" : k}`
  );
  let summary = matches.length === 0
    ? "No matches"
    : `${plural(matches.length, "matching line")} in ${plural(r.filesMatched as number, "file")}`;
  summary += ` (${plural(r.filesSearched as number, "file")} searched${
    skips.length ? `; skipped: ${skips.join(", ")}` : ""
  })`;
  if (r.truncated === true) summary += `; ${truncationHint(str(r.truncatedReason), "search")}`;
  if (anyClipped) {
    summary +=
      "; long lines were clipped (…): read_file with startLine and endLine shows one whole";
  }
  out.push(`${summary}.`);
  return out.join("\n");
}

function truncationHint(reason: string, what: "search" | "find"): string {
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

function entryLine(e: { path: string; type: string; size?: number | null }): string {
  const path = shownPath(e.path);
  switch (e.type) {
    case "directory":
      return `${path}/`;
    case "symlink":
      return `${path} (symlink)`;
    case "other":
      return `${path} (special file)`;
    default:
      return typeof e.size === "number" ? `${path} (${e.size} bytes)` : path;
  }
}

function listText(r: Result): string {
  const entries = r.entries as { path: string; type: string; size: number | null }[];
  const out = entries.map(entryLine);
  if (entries.length === 0) out.push(`(${p(r.path)} has no entries)`);
  if (typeof r.nextCursor === "string" || r.truncated === true) {
    let trailer = `${entries.length} of ${r.total} entries`;
    if (r.truncated === true) trailer += `, truncated (${r.truncatedReason})`;
    if (typeof r.nextCursor === "string") {
      trailer += `; for the next page call list_directory again with cursor: ${r.nextCursor}`;
    }
    out.push(`[${trailer}]`);
  }
  return out.join("\n");
}

function findText(r: Result): string {
  const matches = r.matches as { path: string; type: string }[];
  const out = matches.map(entryLine);
  if (matches.length === 0) {
    out.push(`No matches (${plural(r.visited as number, "entry", "entries")} visited).`);
  }
  if (r.truncated === true) {
    out.push(
      `[${plural(matches.length, "match", "matches")}; ${
        truncationHint(str(r.truncatedReason), "find")
      }]`,
    );
  }
  return out.join("\n");
}

function keyValues(rows: [string, unknown][]): string {
  return rows.filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => `${k}: ${v}`)
    .join("\n");
}

const pairs = (o: unknown) =>
  Object.entries(o as Record<string, unknown>).map(([k, v]) => `${k}=${v}`).join(", ");

function fileInfoText(r: Result): string {
  const link = r.symlink as { status: string; target?: string; targetType?: string } | undefined;
  return keyValues([
    ["path", p(r.path)],
    ["type", r.type],
    ["size", `${r.size} bytes`],
    ["mode", r.mode],
    ["modified", r.mtime],
    ["accessed", r.atime],
    ["created", r.birthtime],
    ["changed", r.ctime],
    ["links", r.nlink],
    [
      "symlink",
      link &&
      `${link.status}${link.target === undefined ? "" : ` -> ${p(link.target)}`}${
        link.targetType === undefined ? "" : ` (${link.targetType})`
      }`,
    ],
  ]);
}

function workspaceInfoText(r: Result): string {
  return keyValues([
    ["root", p(r.root)],
    ["mode", r.mode],
    ["limits", pairs(r.limits)],
    ["permissions", pairs(r.permissions)],
    ["containment", pairs(r.containment)],
    ["engine", pairs(r.engine)],
  ]);
}

function writeFileText(r: Result): string {
  const skipped = r.previousSha256Skipped as { limit: number } | undefined;
  return `${r.created ? "Created" : "Replaced"} ${p(r.path)} (${r.size} bytes, sha256 ${r.sha256})${
    typeof r.previousSha256 === "string" ? `; the previous sha256 was ${r.previousSha256}` : ""
  }${skipped ? `; the previous file was over maxHashBytes and not hashed` : ""}.`;
}

function editFileText(r: Result): string {
  const head = !r.changed
    ? `${p(r.path)} is unchanged (${plural(r.replacements as number, "replacement")}).`
    : `${r.dryRun ? "Dry run, nothing written: would edit" : "Edited"} ${p(r.path)}: ${
      plural(r.replacements as number, "replacement")
    }, sha256 ${r.sha256Before} -> ${r.sha256After}${
      r.truncated === true ? "; the diff was cut at maxResultBytes" : ""
    }.`;
  return r.diff ? `${head}\n${r.diff}` : head;
}

function createDirectoryText(r: Result): string {
  const made = r.createdPaths as string[];
  if (!r.created) return `${p(r.path)} already exists as a directory; nothing was created.`;
  return `Created ${made.map(p).join(", ")}${
    r.truncated === true ? " (list cut at maxResultBytes)" : ""
  }.`;
}

function mediaBlocks(r: Result, audio: boolean): ContentBlock[] {
  const mimeType = str(r.mimeType);
  const data = str(r.data);
  const line: ContentBlock = {
    type: "text",
    text: `${p(r.path)}: ${mimeType}, ${r.size} bytes, sha256 ${r.sha256}`,
  };
  if (IMAGE_BLOCK_TYPES.includes(mimeType)) return [line, { type: "image", data, mimeType }];
  if (audio && AUDIO_BLOCK_TYPES.includes(mimeType)) {
    return [line, { type: "audio", data, mimeType }];
  }
  return [line, {
    type: "resource",
    resource: { uri: mediaUri(str(r.path)), mimeType, blob: data },
  }];
}
