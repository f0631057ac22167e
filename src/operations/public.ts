/**
 * The operation registry as the library exports it: the same table and functions as
 * registry.ts, typed with the library's Operation (no zod types in the public surface).
 */
import {
  availableOperations as availableDefinitions,
  getOperation as getDefinition,
  jsonSchemas as jsonSchemasOf,
  type OperationJsonSchemas,
  OPERATIONS as DEFINITIONS,
  parseInput as parseDefinitionInput,
} from "./registry.ts";
import type { Operation, OperationDefinition } from "./types.ts";
import { WorkspaceError } from "../workspace/errors.ts";

/**
 * Every operation, in the order every adapter lists them.
 *
 * @example
 * ```ts
 * import { OPERATIONS } from "@wmcp/wmcp";
 * console.log(OPERATIONS.map((op) => op.name).join(", "));
 * ```
 */
export const OPERATIONS: readonly Operation[] = DEFINITIONS;

/**
 * The operations available in a mode: write operations only when writing is enabled.
 *
 * @example
 * ```ts
 * import { availableOperations } from "@wmcp/wmcp";
 * const readOnly = availableOperations(false).map((op) => op.name);
 * ```
 */
export function availableOperations(writable: boolean): Operation[] {
  return availableDefinitions(writable);
}

/**
 * Looks an operation up by exact (case-sensitive) name.
 *
 * @example
 * ```ts
 * import { getOperation } from "@wmcp/wmcp";
 * console.log(getOperation("read_file")?.annotations.readOnlyHint); // true
 * ```
 */
export function getOperation(name: string): Operation | undefined {
  return getDefinition(name);
}

/**
 * The JSON Schemas (2020-12) of an operation's arguments and result, as MCP serves them.
 *
 * @example
 * ```ts
 * import { getOperation, jsonSchemas } from "@wmcp/wmcp";
 * const { input } = jsonSchemas(getOperation("find_files")!);
 * ```
 */
export function jsonSchemas(op: Operation): OperationJsonSchemas {
  return jsonSchemasOf(definitionOf(op));
}

/**
 * Validates raw arguments against an operation's input schema and returns them parsed
 * (defaults filled in); a mismatch throws WorkspaceError INVALID_ARGUMENT naming the argument.
 *
 * @example
 * ```ts
 * import { getOperation, parseInput } from "@wmcp/wmcp";
 * const args = parseInput(getOperation("read_file")!, { path: "README.md" });
 * ```
 */
export function parseInput(op: Operation, raw: unknown): unknown {
  return parseDefinitionInput(definitionOf(op), raw);
}

/** The registry's definition of an operation given by the library (UNKNOWN_OPERATION if none). */
function definitionOf(op: Operation): OperationDefinition {
  const def = getDefinition(op.name);
  if (def === undefined) {
    throw new WorkspaceError("UNKNOWN_OPERATION", `no operation named ${JSON.stringify(op.name)}`);
  }
  return def;
}
