/**
 * How `resources list|templates|read`, `prompts list|get` and `ping` write what they got, in each
 * output: mcp-json (the lossless envelope: every page, or the one raw result or error), json and
 * jsonl (derived views that say so), and pretty (a table, a resource's text, a prompt's messages,
 * the round trip). Server-supplied text reaches a terminal only through
 * src/client/terminal_text.ts (decision 0042); JSON only through `line` (terminalJson).
 */
import { CONTRACT_VERSION, type ListKind, type Page } from "../client/commands.ts";
import { PROMPTS_LIST, RESOURCE_TEMPLATES_LIST, RESOURCES_LIST } from "../client/requests.ts";
import { terminalLine, terminalSafe } from "../client/terminal_text.ts";
import { palette, stdoutColor } from "./colors.ts";
import { terminalColumns } from "./output.ts";
import { base64Bytes, type Block, blockText, type ClientOutput, line } from "./client_render.ts";
import { itemTable } from "./table.ts";

type Item = Record<string, unknown>;

/** How one list is shown: the request it shows (method, items' member), its views' names, its table. */
export interface ListView {
  /** The list request: its method (the envelope's operation) and the result member of its items. */
  kind: ListKind;
  /** The json view's count member (`resourceCount`). */
  countKey: string;
  /** The items in the pretty footer (`resources`). */
  noun: string;
  /** The table's header. */
  head: readonly string[];
  /** One item's cells. */
  row(item: Item): string[];
}

/** A string member of an item, or undefined. */
function text(item: Item, key: string): string | undefined {
  const v = item[key];
  return typeof v === "string" ? v : undefined;
}

/** The name people read: the title when there is one. */
function shownName(item: Item): string {
  return text(item, "title") ?? String(item.name ?? "");
}

/** A prompt's arguments: required names, then optional ones in brackets. */
function promptSignature(item: Item): string {
  const args = Array.isArray(item.arguments) ? item.arguments as Item[] : [];
  const named = args.filter((a) => a && typeof a === "object");
  return [
    ...named.filter((a) => a.required === true).map((a) => String(a.name)),
    ...named.filter((a) => a.required !== true).map((a) => `[${String(a.name)}]`),
  ].join(", ");
}

/** `resources list`. */
export const RESOURCES_VIEW: ListView = {
  kind: RESOURCES_LIST,
  countKey: "resourceCount",
  noun: "resources",
  head: ["URI", "MIME TYPE", "NAME"],
  row: (r) => [String(r.uri ?? ""), text(r, "mimeType") ?? "", shownName(r)],
};

/** `resources templates`. */
export const TEMPLATES_VIEW: ListView = {
  kind: RESOURCE_TEMPLATES_LIST,
  countKey: "resourceTemplateCount",
  noun: "resource templates",
  head: ["URI TEMPLATE", "MIME TYPE", "NAME"],
  row: (t) => [String(t.uriTemplate ?? ""), text(t, "mimeType") ?? "", shownName(t)],
};

/** `prompts list`. */
export const PROMPTS_VIEW: ListView = {
  kind: PROMPTS_LIST,
  countKey: "promptCount",
  noun: "prompts",
  head: ["PROMPT", "ARGUMENTS", "DESCRIPTION"],
  row: (p) => [
    String(p.name ?? ""),
    promptSignature(p),
    text(p, "description") ?? text(p, "title") ?? "",
  ],
};

/** A list in the chosen output: the mcp-json pages, json, jsonl (an item a line), or a table. */
export function renderPages(
  view: ListView,
  pages: Page[],
  meta: Record<string, unknown>,
  output: ClientOutput,
): string {
  if (output === "mcp-json") {
    return line({
      contractVersion: CONTRACT_VERSION,
      operation: view.kind.method,
      pages,
      metadata: { pageCount: pages.length, ...meta },
    });
  }
  const items = pages.flatMap((p) => p.mcpResult[view.kind.key] as unknown[]);
  if (output === "json") {
    return line({
      operation: view.kind.method,
      derived: "flattened from every page; not lossless (use --output mcp-json)",
      [view.kind.key]: items,
      metadata: { pageCount: pages.length, [view.countKey]: items.length, ...meta },
    });
  }
  if (output === "jsonl") return items.map((i) => line(i)).join("");
  const objects = items.map((i) => (i && typeof i === "object" ? i as Item : {}));
  return itemTable(view.head, objects.map(view.row), {
    palette: palette(stdoutColor()),
    columns: terminalColumns(),
  }) +
    `${items.length} ${view.noun}, ${pages.length} page(s), ${meta.era} ${meta.protocolVersion}\n`;
}

const DERIVED = "structured view; not lossless (use --output mcp-json)";

/** The received result of an envelope, or undefined when none arrived (a failure). */
function resultOf(envelope: Record<string, unknown>): Item | undefined {
  return envelope.mcpResult as Item | undefined;
}

/** Text that ends with a newline (empty text stays empty). */
const withNewline = (s: string) => (s === "" || s.endsWith("\n") ? s : s + "\n");

/**
 * One content of a resources/read result for people: text escaped, a blob as a note with its
 * MIME type and size (never its bytes), anything else as its JSON.
 */
function contentText(c: Item): string {
  const mime = text(c, "mimeType");
  if (typeof c.text === "string") return withNewline(terminalSafe(c.text));
  if (typeof c.blob === "string") {
    return `[blob${mime ? ` ${terminalLine(mime)}` : ""}, ${base64Bytes(c.blob)} bytes]\n`;
  }
  return line(c);
}

/**
 * `resources read` in the chosen output: the envelope, the contents as sent (json: one object,
 * jsonl: a content a line), or for people each content's text; with several contents each under
 * a line naming its URI and MIME type.
 */
export function renderRead(envelope: Record<string, unknown>, output: ClientOutput): string {
  if (output === "mcp-json") return line(envelope);
  const r = resultOf(envelope);
  // No result arrived: a derived view has nothing to derive; the error on stderr says why.
  if (!r) return "";
  const contents = r.contents as unknown[];
  if (output === "json") {
    return line({
      operation: "resources/read",
      derived: DERIVED,
      contents,
      metadata: envelope.metadata,
    });
  }
  if (output === "jsonl") return contents.map((c) => line(c)).join("");
  const c = palette(stdoutColor());
  if (contents.length === 0) return c.dim("(no contents)") + "\n";
  const objects = contents.map((i) => (i && typeof i === "object" ? i as Item : {}));
  return objects.map((item) => {
    if (objects.length === 1) return contentText(item);
    const mime = text(item, "mimeType");
    const about = `--- ${terminalLine(String(item.uri ?? ""))}${
      mime ? ` (${terminalLine(mime)})` : ""
    }`;
    return `${c.dim(about)}\n${contentText(item)}`;
  }).join("");
}

/**
 * One prompt message's content for people: a text block's text, an embedded resource's text under
 * its note, a link as its URI, anything else as a note (blockText, as a call's blocks show).
 */
function messageText(content: unknown): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks.map((b) => {
    const block = (b && typeof b === "object" ? b : {}) as Block & Item;
    if (block.type === "resource" && typeof block.resource?.text === "string") {
      return `${blockText(block)}\n${withNewline(terminalSafe(block.resource.text))}`;
    }
    if (block.type === "resource_link" && typeof block.uri === "string") {
      return `[resource_link ${terminalLine(block.uri)}]\n`;
    }
    return withNewline(blockText(block));
  }).join("");
}

/**
 * `prompts get` in the chosen output: the envelope, the description and messages as sent (json:
 * one object, jsonl: a message a line), or for people the description, then each message under
 * its role.
 */
export function renderPrompt(envelope: Record<string, unknown>, output: ClientOutput): string {
  if (output === "mcp-json") return line(envelope);
  const r = resultOf(envelope);
  if (!r) return "";
  const messages = r.messages as unknown[];
  if (output === "json") {
    return line({
      operation: "prompts/get",
      derived: DERIVED,
      description: r.description ?? null,
      messages,
      metadata: envelope.metadata,
    });
  }
  if (output === "jsonl") return messages.map((m) => line(m)).join("");
  const c = palette(stdoutColor());
  const parts: string[] = [];
  if (typeof r.description === "string") parts.push(c.dim(terminalLine(r.description)) + "\n");
  for (const m of messages) {
    const message = (m && typeof m === "object" ? m : {}) as Item;
    parts.push(
      `${c.bold(`${terminalLine(String(message.role ?? "?"))}:`)}\n${messageText(message.content)}`,
    );
  }
  return parts.join("\n");
}

/**
 * `ping` in the chosen output: the envelope, one JSON line, or the round trip for people (and the
 * method sent, when it was not ping).
 */
export function renderPing(envelope: Record<string, unknown>, output: ClientOutput): string {
  if (output === "mcp-json") return line(envelope);
  if (!resultOf(envelope)) return "";
  const meta = envelope.metadata as Item;
  if (output === "json" || output === "jsonl") {
    return line({ operation: "ping", derived: DERIVED, metadata: meta });
  }
  // The 2026-07-28 revision has no ping: its round trip is server/discover (requests.ts).
  const via = meta.method === "ping" ? "" : `${meta.method}, `;
  return `ping: answered in ${meta.roundTripMs} ms (${via}${meta.era} ${meta.protocolVersion})\n`;
}
