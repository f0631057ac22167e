/**
 * The MCP tool table, built once at module scope from the operation registry: zod
 * schemas wrapped so their JSON Schema is computed once, and the wire definitions
 * tools/list pages through. The per-request server factory only registers from here.
 */
import type { z } from "zod";
import { jsonSchemas, OPERATIONS } from "../operations/registry.ts";
import type { OperationDefinition } from "../operations/types.ts";

/** A Standard Schema that validates with zod and returns a frozen, precomputed JSON Schema. */
export interface CachedSchema {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: z.ZodType["~standard"]["validate"];
    readonly jsonSchema: {
      readonly input: () => Record<string, unknown>;
      readonly output: () => Record<string, unknown>;
    };
  };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Lets any value through: the operation registry validates, so errors are typed the same everywhere. */
const passThrough: z.ZodType["~standard"]["validate"] = (value) => ({ value });

function cachedSchema(
  schema: z.ZodType,
  json: Record<string, unknown>,
  validate: z.ZodType["~standard"]["validate"],
): CachedSchema {
  const frozen = deepFreeze(structuredClone(json));
  const std = schema["~standard"];
  return Object.freeze({
    "~standard": Object.freeze({
      version: 1 as const,
      vendor: std.vendor,
      validate,
      jsonSchema: Object.freeze({ input: () => frozen, output: () => frozen }),
    }),
  });
}

/** One tool, ready to register and to list. */
export interface ToolEntry {
  op: OperationDefinition;
  inputSchema: CachedSchema;
  outputSchema: CachedSchema;
  /** The Tool object as tools/list sends it. */
  definition: Readonly<Record<string, unknown>>;
}

/** Every tool in registry order (write tools included; filter by mode). */
export const TOOL_TABLE: readonly ToolEntry[] = Object.freeze(OPERATIONS.map((op) => {
  const { input, output } = jsonSchemas(op);
  return Object.freeze({
    op,
    // Input: advertised as JSON Schema, validated by runOperation (typed INVALID_ARGUMENT).
    inputSchema: cachedSchema(op.inputSchema, input, passThrough),
    outputSchema: cachedSchema(op.outputSchema, output, op.outputSchema["~standard"].validate),
    definition: deepFreeze({
      name: op.name,
      title: op.title,
      description: op.description,
      inputSchema: structuredClone(input),
      outputSchema: structuredClone(output),
      annotations: { title: op.title, ...op.annotations },
    }),
  });
}));

/** The tools of a mode: write tools only when writing is enabled. */
export function toolsFor(writable: boolean): ToolEntry[] {
  return TOOL_TABLE.filter((t) => writable || !t.op.needsWrite);
}
