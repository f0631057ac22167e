/**
 * wmcp: safe, typed access to one workspace directory, as a library.
 *
 * Open a workspace, then run any operation by name through the same registry the
 * CLI and the MCP servers use:
 *
 * ```ts
 * import { runOperation, Workspace } from "@wmcp/wmcp";
 * const workspace = await Workspace.open({ root: ".", writable: false });
 * const listing = await runOperation({ workspace }, "list_directory", { path: "." });
 * ```
 *
 * @module
 */
export { Workspace, type WorkspaceOptions } from "./src/workspace/workspace.ts";
export { DEFAULT_LIMITS, type Limits } from "./src/workspace/limits.ts";
export {
  ERROR_CODES,
  type ErrorCode,
  type ErrorObject,
  WorkspaceError,
} from "./src/workspace/errors.ts";
export {
  availableOperations,
  getOperation,
  jsonSchemas,
  type OperationJsonSchemas,
  OPERATIONS,
  parseInput,
  runOperation,
} from "./src/operations/registry.ts";
export type {
  OperationAnnotations,
  OperationContext,
  OperationDefinition,
  OperationProgress,
} from "./src/operations/types.ts";
