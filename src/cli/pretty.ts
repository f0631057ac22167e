/**
 * Results for people on a terminal: the text a model reads (src/server/content.ts renders it),
 * made safe for a terminal and styled by the tool's own unit (src/tools/<name>.ts: read_file's
 * header dim, search hits grep-style with the match highlighted, directories marked, diffs
 * coloured); errors as one line, the tool table's columns, server-info.
 */
import { CONTENT_ONLY_FIELDS, errorText, renderContent } from "../server/content.ts";
import { getOperation } from "../operations/registry.ts";
import { toolUnit } from "../tools/mod.ts";
import type { ErrorObject } from "../workspace/errors.ts";
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
// The diff colours and search_text's match length live with their tools; kept importable here.
export { diffLine } from "../tools/styled.ts";
export { matchLength } from "../tools/search_text.ts";

const withNewline = (s: string) => (s === "" || s.endsWith("\n") ? s : s + "\n");

/** One operation's typed result as people read it (ends with a newline). */
export function prettyResult(tool: string, typed: object, options: PrettyOptions = {}): string {
  const result = typed as Result;
  const c = options.palette ?? palette(false);
  const blocks = renderContent(tool, result);
  const first = blocks[0];
  const text = first?.type === "text" ? first.text : JSON.stringify(result, null, 2);
  const safe = terminalSafe(text);
  const pretty = toolUnit(tool)?.pretty;
  return withNewline(
    pretty ? pretty(safe, result, { palette: c, args: options.args ?? {} }) : safe,
  );
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
