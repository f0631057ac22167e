/**
 * The workspace tool table, built once at module scope from the operation registry: zod
 * schemas wrapped so their JSON Schema is computed once. The workspace server definition
 * (workspace_server.ts) turns these entries into tools; nothing is built per request.
 */
import { jsonSchemas, OPERATIONS } from "../operations/registry.ts";
import type { OperationDefinition } from "../operations/types.ts";
import { type CachedSchema, cachedSchema, passThrough } from "./definition.ts";

export type { CachedSchema } from "./definition.ts";

/** One workspace tool: the operation and its schemas (the wire Tool is built by compileDefinition). */
export interface ToolEntry {
  op: OperationDefinition;
  inputSchema: CachedSchema;
  outputSchema: CachedSchema;
}

/** Every tool in registry order (write tools included; filter by mode). */
export const TOOL_TABLE: readonly ToolEntry[] = Object.freeze(OPERATIONS.map((op) => {
  const { input, output } = jsonSchemas(op);
  const vendor = op.inputSchema["~standard"].vendor;
  return Object.freeze({
    op,
    // Input: advertised as JSON Schema, validated by runOperation (typed INVALID_ARGUMENT).
    inputSchema: cachedSchema(input, passThrough, vendor),
    outputSchema: cachedSchema(output, op.outputSchema["~standard"].validate, vendor),
  });
}));

/** The tools of a mode: write tools only when writing is enabled. */
export function toolsFor(writable: boolean): ToolEntry[] {
  return TOOL_TABLE.filter((t) => writable || !t.op.needsWrite);
}
