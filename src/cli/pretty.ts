/**
 * Results for people on a terminal: the text a model reads (src/server/content.ts renders it),
 * made safe for a terminal and styled: read_file's header dim, search hits grep-style with the
 * match highlighted, directories marked, diffs coloured, errors as one line.
 */
import { RE2JS } from "re2js";
import { CONTENT_ONLY_FIELDS, errorText, renderContent, shownPath } from "../server/content.ts";
import { getOperation } from "../operations/registry.ts";
import type { ErrorObject } from "../workspace/errors.ts";
import type { SearchMatch } from "../workspace/search.ts";
import { type Palette, palette } from "./colors.ts";
import { terminalLine, terminalSafe } from "../client/terminal_text.ts";

type Result = Record<string, unknown>;

/** Options of prettyResult. */
export interface PrettyOptions {
  /** Styles (identity when colour is off). */
  palette?: Palette;
  /** The call's arguments (search_text's query, to find how long each match is). */
  args?: Record<string, unknown>;
}

// Text from elsewhere reaches a terminal only through these (src/client/terminal_text.ts).
export { terminalJson, terminalLine, terminalSafe } from "../client/terminal_text.ts";

const withNewline = (s: string) => (s === "" || s.endsWith("\n") ? s : s + "\n");

/** One operation's typed result as people read it (ends with a newline). */
export function prettyResult(tool: string, typed: object, options: PrettyOptions = {}): string {
  const result = typed as Result;
  const c = options.palette ?? palette(false);
  const blocks = renderContent(tool, result);
  const first = blocks[0];
  const text = first?.type === "text" ? first.text : JSON.stringify(result, null, 2);
  switch (tool) {
    case "read_file": {
      const cut = text.indexOf("\n");
      return withNewline(
        c.dim(terminalSafe(text.slice(0, cut))) + "\n" +
          terminalSafe(text.slice(cut + 1)),
      );
    }
    case "read_media":
      // The summary line only: the bytes are for programs (--output json).
      return withNewline(terminalSafe(text));
    case "search_text":
      return withNewline(searchLines(text, result, options.args ?? {}, c));
    case "list_directory":
    case "find_files":
      return withNewline(terminalSafe(text).split("\n").map((l) => entryLine(l, c)).join("\n"));
    case "edit_file":
      return withNewline(
        terminalSafe(text).split("\n").map((l, i) => i === 0 ? l : diffLine(l, c))
          .join("\n"),
      );
    case "get_file_info":
    case "workspace_info":
      return withNewline(
        terminalSafe(text).split("\n").map((l) => l.replace(/^([a-z]+):/, (k) => c.dim(k)))
          .join("\n"),
      );
    default:
      return withNewline(terminalSafe(text));
  }
}

/**
 * A tools/call result's structuredContent as people read it, when the tool is named like a
 * wmcp operation and its structuredContent has that operation's result shape (fields MCP
 * carries in a content block filled in); else undefined (show the content blocks).
 */
export function prettyToolResult(
  tool: string,
  structured: unknown,
  options: PrettyOptions = {},
): string | undefined {
  const op = getOperation(tool);
  if (!op || typeof structured !== "object" || structured === null) return undefined;
  const filled: Result = { ...structured as Result };
  for (const field of CONTENT_ONLY_FIELDS[tool] ?? []) filled[field] ??= "";
  if (!op.outputSchema.safeParse(filled).success) return undefined;
  try {
    return prettyResult(tool, filled, options);
  } catch {
    return undefined;
  }
}

/** A line of a unified diff, coloured: + green, - red, @@ cyan, file headers bold. */
export function diffLine(line: string, c: Palette): string {
  if (line.startsWith("+++ ") || line.startsWith("--- ")) return c.bold(line);
  if (line.startsWith("@@")) return c.cyan(line);
  if (line.startsWith("+")) return c.green(line);
  if (line.startsWith("-")) return c.red(line);
  if (line.startsWith("\\") || line.startsWith("=")) return c.dim(line);
  return line;
}

/** A list_directory or find_files line: directories bold blue, notes in brackets dim. */
function entryLine(line: string, c: Palette): string {
  if (
    line.startsWith("[") || line.startsWith("No matches") || /^\(.* has no entries\)$/.test(line)
  ) {
    return c.dim(line);
  }
  if (line.endsWith("/")) return c.bold(c.blue(line));
  const note = / \((\d+ bytes|symlink|special file)\)$/.exec(line);
  if (!note) return line;
  const name = line.slice(0, note.index);
  return (note[1] === "symlink" ? c.cyan(name) : name) + c.dim(note[0]);
}

/**
 * search_text's grep-style lines: `path:line:col: text` with the path magenta, the numbers
 * green and the match highlighted; context lines and the summary dim.
 */
function searchLines(text: string, result: Result, args: Record<string, unknown>, c: Palette) {
  const byPrefix = new Map<string, SearchMatch>();
  for (const m of (result.matches ?? []) as SearchMatch[]) {
    byPrefix.set(`${shownPath(m.path, { search: true })}:${m.line}:${m.column}: `, m);
  }
  const lines = terminalSafe(text).split("\n");
  return lines.map((l, i) => {
    if (i === lines.length - 1) return c.dim(l); // the summary
    if (l === "--") return c.dim(l);
    const prefix = /^(.*?):(\d+):(\d+): /.exec(l);
    const m = prefix ? byPrefix.get(prefix[0]) : undefined;
    if (!prefix || !m) return c.dim(l); // a context line (path-N- text)
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
  }).join("\n");
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
  try {
    const flags = args.caseSensitive === false ? RE2JS.CASE_INSENSITIVE : 0;
    const m = RE2JS.compile(query, flags).matcher(text);
    return m.find(at) && m.start() === at ? m.end() - at : 0;
  } catch {
    return 0;
  }
}

/** A tool (or operation) as the table shows it. */
export interface ToolRow {
  name: string;
  title?: string;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean };
  inputSchema?: unknown;
}

/** read-only, destructive or writes, from MCP's annotations (destructiveHint defaults to true). */
export function accessOf(t: ToolRow): "read-only" | "destructive" | "writes" {
  if (t.annotations?.readOnlyHint === true) return "read-only";
  return t.annotations?.destructiveHint === false ? "writes" : "destructive";
}

/** The argument signature of an input schema: required names, then optional ones in brackets. */
export function signatureOf(inputSchema: unknown): string {
  const s = (inputSchema ?? {}) as { properties?: Record<string, unknown>; required?: unknown };
  const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
  const names = Object.keys(s.properties ?? {});
  return [
    ...names.filter((n) => required.has(n)),
    ...names.filter((n) => !required.has(n)).map((n) => `[${n}]`),
  ].join(", ");
}

/** The error line people read: `error (CODE): message`, "error" in red when colour is on. */
export function errorLine(code: string, message: string, c: Palette): string {
  return `${c.red(c.bold("error"))} (${terminalLine(code)}): ${
    terminalLine(message.replace(/\s*\n\s*/g, " "))
  }\n`;
}

/** A typed workspace error as one line (the sentence a model reads, its code up front). */
export function workspaceErrorLine(error: ErrorObject, c: Palette): string {
  const sentence = errorText(error);
  return errorLine(error.code, sentence.slice(error.code.length + 2), c);
}

/** server-info for people: name and version, protocol, capabilities, instructions. */
export function serverInfoText(info: Record<string, unknown>, c: Palette): string {
  const server = (info.serverInfo ?? {}) as Record<string, unknown>;
  const caps = Object.keys((info.capabilities ?? {}) as Record<string, unknown>);
  const rows: [string, unknown][] = [
    ["server", [server.name, server.version].filter((v) => v !== undefined).join(" ") || "-"],
    ["title", server.title],
    ["protocol", `${info.protocolVersion} (${info.era})`],
    [
      "supported",
      Array.isArray(info.supportedVersions) ? info.supportedVersions.join(", ") : undefined,
    ],
    ["capabilities", caps.join(", ") || "-"],
    ["instructions", info.instructions],
  ];
  return rows.filter(([, v]) => v !== undefined && v !== null).map(([k, v]) =>
    // Instructions are a block of text; every other row is one line.
    `${c.dim(`${k}:`)} ${
      k === "instructions" ? terminalSafe(String(v)) : terminalLine(String(v))
    }\n`
  ).join("");
}
