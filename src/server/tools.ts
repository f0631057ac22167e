/**
 * The workspace tool table, built once at module scope from the operation registry: zod
 * schemas wrapped so their JSON Schema is computed once. The workspace server definition
 * (workspace_server.ts) turns these entries into tools; nothing is built per request.
 * A tool whose result sends a field as a content block instead (read_media's `data`,
 * content.ts) advertises and validates its structuredContent without that field. Output is
 * validated by the generated check first (generated/json_checks.js), by zod when it refuses.
 */
import { z } from "zod";
import { jsonSchemas, operationChecks, OPERATIONS } from "../operations/registry.ts";
import { checkedFirst } from "../operations/checks.ts";
import type { OperationDefinition } from "../operations/types.ts";
import { type CachedSchema, cachedSchema, passThrough } from "./definition.ts";
import { CONTENT_ONLY_FIELDS } from "./content.ts";

export type { CachedSchema } from "./definition.ts";

/** One workspace tool: the operation and its schemas (the wire Tool is built by compileDefinition). */
export interface ToolEntry {
  op: OperationDefinition;
  inputSchema: CachedSchema;
  /** The schema of the tool's structuredContent (the operation's output less content-only fields). */
  outputSchema: CachedSchema;
}

/** The output schema of an operation's MCP tool, as zod and JSON Schema. */
export function mcpOutput(
  op: OperationDefinition,
): { schema: z.ZodType; json: Record<string, unknown> } {
  const omit = CONTENT_ONLY_FIELDS[op.name];
  if (omit === undefined) return { schema: op.outputSchema, json: jsonSchemas(op).output };
  const mask: Record<string, true> = Object.fromEntries(omit.map((k) => [k, true]));
  const schema = (op.outputSchema as z.ZodObject).omit(mask as never);
  const json = z.toJSONSchema(schema, { target: "draft-2020-12", io: "output" });
  return { schema, json: json as Record<string, unknown> };
}

/** Every tool in registry order (write tools included; filter by mode). */
export const TOOL_TABLE: readonly ToolEntry[] = Object.freeze(OPERATIONS.map((op) => {
  const { input } = jsonSchemas(op);
  const output = mcpOutput(op);
  const vendor = op.inputSchema["~standard"].vendor;
  const check = operationChecks(op)?.output;
  const validate = output.schema["~standard"].validate;
  return Object.freeze({
    op,
    // Input: advertised as JSON Schema, validated by runOperation (typed INVALID_ARGUMENT).
    inputSchema: cachedSchema(input, passThrough, vendor),
    // Output: the generated check answers what it accepts; zod words every refusal (decision 0062).
    outputSchema: cachedSchema(
      output.json,
      check === undefined ? validate : checkedFirst(check, validate),
      vendor,
    ),
  });
}));

/** The tools of a mode: write tools only when writing is enabled. */
export function toolsFor(writable: boolean): ToolEntry[] {
  return TOOL_TABLE.filter((t) => writable || !t.op.needsWrite);
}
