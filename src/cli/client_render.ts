/**
 * How the client commands write what they got: server-info, the tools list, one tool and a call's
 * result in each output (mcp-json, json, jsonl, pretty), and an error line. Server-supplied text reaches a terminal only
 * through src/client/terminal_text.ts (terminalSafe, terminalLine, terminalJson; decision 0042).
 */
import { errLine, streams, writeTextSync } from "../std_streams.ts";
import type { ClientError } from "../client/errors.ts";
import { CONTRACT_VERSION, flatten, type ToolsPage } from "../client/commands.ts";
import { terminalColumns } from "./output.ts";
import { palette, stderrColor, stdoutColor } from "./colors.ts";
import { redacted } from "../client/redaction.ts";
import { errorLine, prettyToolResult, serverInfoText } from "./pretty.ts";
import { terminalJson, terminalLine, terminalSafe } from "../client/terminal_text.ts";
import { toolTable } from "./table.ts";

/** Output formats of the client commands. */
export type ClientOutput = "mcp-json" | "json" | "jsonl" | "pretty";

/** A warning on stderr, one line (it may quote a server: a tool's name, an error message). */
export function warn(message: string): void {
  errLine(`wmcp: warning: ${terminalLine(redacted(message))}`);
}

/** One JSON line (safe for a terminal: see terminalJson). */
export const line = (v: unknown): string => terminalJson(JSON.stringify(v)) + "\n";

/** server-info in the chosen output (rows for people, else one JSON line). */
export function renderServerInfo(info: Record<string, unknown>, output: ClientOutput): string {
  return output === "pretty" ? serverInfoText(info, palette(stdoutColor())) : line(
    output === "mcp-json"
      ? { contractVersion: CONTRACT_VERSION, operation: "server-info", ...info }
      : info,
  );
}

/** tools show in every JSON output: one envelope line (for people, client_cli.ts renders help). */
export function renderShow(
  tool: Record<string, unknown>,
  pages: ToolsPage[],
  meta: Record<string, unknown>,
): string {
  return line({
    contractVersion: CONTRACT_VERSION,
    operation: "tools/show",
    tool,
    metadata: { ...meta, pageCount: pages.length },
  });
}

/** The tools list in the chosen output (mcp-json pages, json, jsonl, or a table). */
export function renderList(
  pages: ToolsPage[],
  meta: Record<string, unknown>,
  output: ClientOutput,
  headers: boolean,
): string {
  const listed = flatten(pages, { headers });
  if (output === "mcp-json") {
    return line({
      contractVersion: CONTRACT_VERSION,
      operation: "tools/list",
      pages,
      metadata: { pageCount: pages.length, ...meta },
    });
  }
  const kept = listed.filter((t) => {
    if (t.problems.length === 0) return true;
    warn(
      `leaving tool ${JSON.stringify(t.tool.name)} out of the inventory: ${t.problems.join("; ")}`,
    );
    return false;
  });
  if (output === "json") {
    return line({
      operation: "tools/list",
      derived: "flattened from every page; not lossless (use --output mcp-json)",
      tools: kept.map((t) => t.tool),
      metadata: { pageCount: pages.length, toolCount: kept.length, ...meta },
    });
  }
  if (output === "jsonl") return kept.map((t) => line(t.tool)).join("");
  const rows = kept.map((t) => ({ ...t.tool, name: String(t.tool.name) }));
  return toolTable(rows, { palette: palette(stdoutColor()), columns: terminalColumns() }) +
    `${kept.length} tools, ${pages.length} page(s), ${meta.era} ${meta.protocolVersion}\n`;
}

/** A content block as a derived view reports it. */
export type Block = {
  type?: string;
  text?: string;
  data?: string;
  mimeType?: string;
  resource?: { uri?: string; mimeType?: string; blob?: string; text?: string };
};

/** Bytes of a base64 payload (without decoding it). */
export function base64Bytes(b64: string): number {
  const pad = b64.endsWith("==") ? 2 : b64.endsWith("=") ? 1 : 0;
  return Math.floor(b64.length * 3 / 4) - pad;
}

/** A binary block (image, audio, embedded resource blob) described without its payload. */
function mediaOf(c: Block): Record<string, unknown> | undefined {
  const payload = c.data ?? c.resource?.blob;
  if (typeof payload !== "string") return undefined;
  return {
    type: c.type,
    mimeType: c.mimeType ?? c.resource?.mimeType,
    ...(c.resource?.uri === undefined ? {} : { uri: c.resource.uri }),
    bytes: base64Bytes(payload),
  };
}

/**
 * One content block for people: a text block's text (escaped), anything else one note with its
 * type, MIME type and URI and, for a binary payload, its size (`[image image/png, 70 bytes]`).
 */
export function blockText(c: Block): string {
  if (c.type === "text") return terminalSafe(String(c.text));
  const m = mediaOf(c);
  // A note is one line: the server's MIME type and URI cannot break it.
  const about = [c.mimeType ?? c.resource?.mimeType, c.resource?.uri].filter(Boolean).map((v) =>
    terminalLine(String(v))
  );
  return `[${terminalLine(String(c.type))}${about.length ? ` ${about.join(" ")}` : ""}${
    m ? `, ${m.bytes} bytes` : ""
  }]`;
}

/** One call's result in the chosen output (the envelope, a derived view, or text). */
export function renderCall(
  envelope: Record<string, unknown>,
  output: ClientOutput,
  call?: { name: string; args: Record<string, unknown> },
): string {
  if (output === "mcp-json") return line(envelope);
  const r = envelope.mcpResult as Record<string, unknown> | undefined;
  // No result arrived (timeout, cancellation, transport or JSON-RPC error): a derived view has
  // nothing to derive (it would claim isError: false); the error on stderr reports the failure.
  if (!r) return "";
  const blocks = Array.isArray(r.content) ? r.content as Block[] : [];
  const texts = blocks.filter((c) => c.type === "text").map((c) => c.text);
  const media = blocks.map(mediaOf).filter((m) => m !== undefined);
  if (output === "json" || output === "jsonl") {
    // A wmcp server puts the typed error in _meta["wmcp/error"]; other servers only word it.
    const typed = (r._meta as Record<string, unknown> | undefined)?.["wmcp/error"];
    return line({
      operation: "tools/call",
      derived: "structured view; not lossless (use --output mcp-json)",
      isError: r.isError === true,
      ...(r.isError === true ? { error: typed ?? { message: texts.join("\n") } } : {}),
      structuredContent: r.structuredContent ?? null,
      text: texts,
      ...(media.length > 0 ? { media } : {}),
      metadata: envelope.metadata,
    });
  }
  const styles = palette(stdoutColor());
  if (call && r.isError !== true) {
    // A result shaped like a wmcp operation's: shown as `op` shows it (hits, entries, diffs).
    const shown = prettyToolResult(call.name, r.structuredContent, {
      palette: styles,
      args: call.args,
    });
    if (shown !== undefined) return shown;
  }
  const parts = blocks.map(blockText);
  if (r.structuredContent !== undefined && parts.length === 0) {
    parts.push(terminalJson(JSON.stringify(r.structuredContent, null, 2)));
  }
  const text = parts.join("\n") + "\n";
  return r.isError === true ? styles.red(text.trimEnd()) + "\n" : text;
}

/** A client error on stderr: one line, coloured for people or JSON. */
export function reportError(e: ClientError, output: ClientOutput): void {
  const text = output === "pretty"
    ? errorLine(e.failure, e.message, palette(stderrColor()))
    : line({ error: e.toJSON() });
  writeTextSync(streams().stderr, text);
}
