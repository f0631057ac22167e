/**
 * What a model reads of a tool result: each tool's renderer (its unit in src/tools/) turns the
 * typed result into content blocks (file text as text, grep-style hits, one entry per line,
 * image and audio blocks), bounded here by maxResultBytes; and one function words a typed error
 * as the sentence an error result carries.
 * structuredContent keeps the typed result; nothing here changes it except read_media's
 * `data`, which travels once, in its media block.
 */
import { jsonBytes, jsonBytesAtMost } from "../workspace/budget.ts";
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { ErrorObject } from "../workspace/errors.ts";
import { TOOLS, toolUnit } from "../tools/mod.ts";
import type { ContentBlock } from "../tools/unit.ts";

export type { ContentBlock } from "../tools/unit.ts";
// Where a path's spelling and read_media's blocks are decided, kept importable from here.
export { shownPath } from "../tools/text.ts";
export {
  AUDIO_BLOCK_TYPES,
  IMAGE_BLOCK_TYPES,
  MEDIA_URI_PREFIX,
  mediaUri,
} from "../tools/read_media.ts";

/** The `_meta` key of an error result that carries the typed error object for programs. */
export const ERROR_META_KEY = "wmcp/error";

/** Fields of a typed result that MCP sends in a content block instead of structuredContent. */
export const CONTENT_ONLY_FIELDS: Readonly<Record<string, readonly string[]>> = Object.freeze(
  Object.fromEntries(
    TOOLS.filter((t) => t.contentOnly !== undefined).map((t) => [
      t.operation.name,
      Object.freeze([...t.contentOnly!]),
    ]),
  ),
);

type Result = Record<string, unknown>;

const str = (v: unknown): string => String(v);

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
  // The bound first (its cost is one multiplication): a search's multi-megabyte text took 30-50
  // ms to measure exactly, and under a large limit it fits by the bound alone.
  if (jsonBytesAtMost(text) <= maxBytes || jsonBytes(text) <= maxBytes) return text;
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
  const unit = toolUnit(tool);
  if (unit?.content) return unit.content(result, { audio: options.audio !== false });
  const text = unit ? unit.text(result) : JSON.stringify(result);
  if (options.maxTextBytes === undefined) return [{ type: "text", text }];
  return [{ type: "text", text: boundedText(text, options.maxTextBytes, result.nextCursor) }];
}
