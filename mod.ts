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
 * Serve it over MCP from your own program: {@linkcode createHttpHandler} (a
 * `(Request) => Promise<Response>` for Deno.serve or any fetch-style server),
 * {@linkcode startStdioServer} (stdio, or any pair of Node streams) or
 * {@linkcode createServerFactory} (a fresh SDK `McpServer` per connection, for your own
 * transport). Talk to any MCP server with {@linkcode connect}. Runnable programs: examples/.
 *
 * @module
 */
export {
  type RootsFrom,
  type RootSpec,
  Workspace,
  type WorkspaceOptions,
} from "./src/workspace/workspace.ts";
export type { EngineMode } from "./src/workspace/engine/pool.ts";
export type {
  EngineReport,
  PrefilterAnswer,
  PrefilterQuery,
  SearchPrefilter,
} from "./src/workspace/native/prefilter.ts";
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
  OPERATIONS,
  parseInput,
} from "./src/operations/public.ts";
export { type OperationJsonSchemas, runOperation } from "./src/operations/registry.ts";
export type {
  Operation,
  OperationAnnotations,
  OperationContext,
  OperationProgress,
  OperationSchema,
} from "./src/operations/types.ts";
export { createHttpHandler, type HttpHandler, type HttpHandlerOptions } from "./src/server/http.ts";
export {
  createServerFactory,
  DEFAULT_PAGE_SIZE,
  type ServerFactory,
  type ServerFactoryOptions,
} from "./src/server/factory.ts";
export {
  startStdioServer,
  type StdioServer,
  type StdioServerOptions,
} from "./src/server/stdio_server.ts";
export {
  connect,
  type ConnectOptions,
  type ConnectTarget,
  type ListedTool,
  type McpClient,
  type ToolCallOptions,
  type ToolResult,
} from "./src/client/api.ts";
export { ClientError, type FailureClass } from "./src/client/errors.ts";
export type { FsDirEntry, FsInfo, FsKind, WorkspaceFs } from "./src/workspace/fs/types.ts";
export { denoFs } from "./src/workspace/fs/deno.ts";
export { nodeFs } from "./src/workspace/fs/node.ts";
