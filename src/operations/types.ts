/** The shape of one operation definition, read by every adapter. */
import type { z } from "zod";
import type { Workspace } from "../workspace/workspace.ts";

/** Progress as an operation reports it (mapped to notifications/progress by the MCP server). */
export interface OperationProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** What an operation runs with. */
export interface OperationContext {
  /** The opened workspace. */
  workspace: Workspace;
  /** Aborts the operation (cancellation, timeout, shutdown). */
  signal?: AbortSignal;
  /** Receives progress, when the caller wants it. */
  onProgress?: (p: OperationProgress) => void;
}

/** Behaviour hints, as MCP tool annotations carry them. */
export interface OperationAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: false;
}

/** One workspace operation: its name is the MCP tool name and the CLI op name. */
export interface OperationDefinition<
  I extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
> {
  name: string;
  title: string;
  description: string;
  inputSchema: I;
  outputSchema: O;
  annotations: OperationAnnotations;
  /** Present only when writing is enabled. */
  needsWrite: boolean;
  run(ctx: OperationContext, input: z.output<I>): Promise<z.input<O>>;
}

/** Defines an operation with its input type inferred from its schema. */
export function defineOperation<I extends z.ZodType, O extends z.ZodType>(
  def: OperationDefinition<I, O>,
): OperationDefinition {
  return def as unknown as OperationDefinition;
}
