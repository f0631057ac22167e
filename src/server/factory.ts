/** The MCP server factory: one McpServer built from the operation registry, used by every transport. */
import { McpServer } from "@modelcontextprotocol/server";
import denoConfig from "../../deno.json" with { type: "json" };
import type { Workspace } from "../workspace/workspace.ts";
import { toWorkspaceError } from "../workspace/errors.ts";
import { availableOperations, runOperation } from "../operations/registry.ts";

/** Server name reported in serverInfo. */
export const SERVER_NAME = "wmcp";

/** A tools/call result as the SDK expects it. */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Wraps an operation result: structuredContent plus the same JSON as a text block. */
export function toolSuccess(result: Record<string, unknown>): ToolResult {
  return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
}

/** Wraps any failure as a tool error with the typed error object as structured detail. */
export function toolFailure(err: unknown): ToolResult {
  const error = toWorkspaceError(err).toJSON();
  return {
    content: [{ type: "text", text: JSON.stringify({ error }) }],
    structuredContent: { error },
    isError: true,
  };
}

/** Builds a server exposing the workspace's operations as tools (write tools only when writable). */
export function createServer(workspace: Workspace): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, version: denoConfig.version },
    { capabilities: { tools: {} } },
  );
  for (const op of availableOperations(workspace.writable)) {
    server.registerTool(
      op.name,
      {
        title: op.title,
        description: op.description,
        inputSchema: op.inputSchema,
        outputSchema: op.outputSchema,
        annotations: { title: op.title, ...op.annotations },
      },
      async (args: unknown, ctx) => {
        try {
          const result = await runOperation(
            { workspace, signal: ctx.mcpReq.signal },
            op.name,
            args,
          );
          return toolSuccess(result);
        } catch (err) {
          return toolFailure(err);
        }
      },
    );
  }
  return server;
}
