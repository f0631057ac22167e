/**
 * The shape of one tool: its operation (schemas, words for models, hints, run), the text a model
 * reads of its result, the text people read, and its example command lines. Every file beside
 * this one but the shared helpers exports one such unit; mod.ts lists them.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { defineOperation, type OperationDefinition } from "../operations/types.ts";

/** A typed result as the renderers read it. */
export type ToolResult = Record<string, unknown>;

/** One content block of a tools/call result. */
export type ContentBlock = CallToolResult["content"][number];

/** One style: wraps text in its codes, or returns it as is when colour is off. */
export type Style = (text: string) => string;

/** The styles a tool's text for people uses (src/cli/colors.ts's Palette has them all). */
export interface Styles {
  dim: Style;
  bold: Style;
  red: Style;
  green: Style;
  blue: Style;
  magenta: Style;
  cyan: Style;
  /** The highlighted part of a search hit. */
  match: Style;
}

/** What a tool's text for people is drawn with. */
export interface PrettyContext {
  /** Styles (identity when colour is off). */
  palette: Styles;
  /** The call's arguments (search_text's query, to find how long each match is). */
  args: Record<string, unknown>;
}

/** Options of a tool's own content blocks. */
export interface ContentOptions {
  /** Whether the client's revision has audio blocks (2025-03-26 and later). */
  audio: boolean;
}

/** One tool, everything about it in one value. */
export interface ToolUnit {
  /** The operation the registry lists: name, title, description, zod schemas, hints, run. */
  readonly operation: OperationDefinition;
  /** The text a model reads of a successful result (the one text block). */
  readonly text: (result: ToolResult) => string;
  /**
   * The content blocks, when they are more than the text block (read_media: its summary line
   * from `text`, then the payload once as an image, audio or resource block).
   */
  readonly content?: (result: ToolResult, options: ContentOptions) => ContentBlock[];
  /** Fields of the result MCP sends only in a content block, never in structuredContent. */
  readonly contentOnly?: readonly string[];
  /**
   * The text people read on a terminal: the model's text (already terminal-safe) styled line
   * by line; absent, the text as it is.
   */
  readonly pretty?: (text: string, result: ToolResult, context: PrettyContext) => string;
  /** Example command lines: the words after `PROG op NAME` (empty for none). */
  readonly examples: readonly string[];
}

/** Defines a tool; its operation's input type is inferred from the schema given to it. */
export function defineTool(unit: ToolUnit): ToolUnit {
  return unit;
}

export { defineOperation };
