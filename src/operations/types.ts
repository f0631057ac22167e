/** The shape of one operation definition, read by every adapter. */
import type { z } from "zod";
import type { Workspace } from "../workspace/workspace.ts";

/** Progress as an operation reports it (mapped to notifications/progress by the MCP server). */
export interface OperationProgress {
  /** Work done so far (increases). */
  progress: number;
  /** Total work, when known. */
  total?: number;
  /** What is being done, in words. */
  message?: string;
}

/** What an operation runs with. */
export interface OperationContext {
  /**
   * The opened workspace; in an operation's run, the root its path arguments address (decision
   * 0064: runOperation routes a workspace of several roots).
   */
  workspace: Workspace;
  /**
   * In copy_path's run, the root its destination addresses (the workspace's own root when it has
   * one, or when both ends are in the same root).
   */
  destination?: Workspace;
  /** Aborts the operation (cancellation, timeout, shutdown). */
  signal?: AbortSignal;
  /** Receives progress, when the caller wants it. */
  onProgress?: (p: OperationProgress) => void;
}

/** Behaviour hints, as MCP tool annotations carry them. */
export interface OperationAnnotations {
  /** Changes nothing. */
  readOnlyHint: boolean;
  /** May delete or overwrite. */
  destructiveHint: boolean;
  /** Repeating it with the same arguments has no further effect. */
  idempotentHint: boolean;
  /** Never reaches outside the workspace. */
  openWorldHint: false;
}

/** A runtime schema of an operation's arguments or result (a zod schema underneath). */
export interface OperationSchema {
  /** Returns the value as the schema parses it, or throws when it does not match. */
  parse(value: unknown): unknown;
}

/**
 * An operation as the library shows it: its name (the MCP tool name and the CLI op name),
 * words, hints and schemas. Run it with runOperation; get its JSON Schemas with jsonSchemas.
 */
export interface Operation {
  /** The operation's (and MCP tool's) name. */
  readonly name: string;
  /** A short human title. */
  readonly title: string;
  /** What it does, for people and models. */
  readonly description: string;
  /** Behaviour hints. */
  readonly annotations: OperationAnnotations;
  /** Whether it needs a writable workspace (absent from listings otherwise). */
  readonly needsWrite: boolean;
  /** The schema of its arguments. */
  readonly inputSchema: OperationSchema;
  /** The schema of its result. */
  readonly outputSchema: OperationSchema;
}

/** One workspace operation: its name is the MCP tool name and the CLI op name. */
export interface OperationDefinition<
  I extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
> {
  /** The operation's (and MCP tool's) name. */
  name: string;
  /** A short human title. */
  title: string;
  /** What it does, for people and models. */
  description: string;
  /** The zod schema of its arguments. */
  inputSchema: I;
  /** The zod schema of its result. */
  outputSchema: O;
  /** Behaviour hints. */
  annotations: OperationAnnotations;
  /** Present only when writing is enabled. */
  needsWrite: boolean;
  /**
   * Which root a call runs on when the workspace has several (decision 0064,
   * src/operations/roots_route.ts): `path` (the default) the root its `path` argument addresses
   * (the first without one); `ends` the root of `source`, with `destination`'s root in
   * `ctx.destination`; `same-root-ends` as `ends`, the two in one root (else CROSS_DEVICE);
   * `own` the whole workspace, which the operation routes itself (or does not need).
   */
  roots?: "path" | "ends" | "same-root-ends" | "own";
  /**
   * The argument that caps the matches of an `allRoots: true` walk over every root
   * (src/operations/span_roots.ts); absent, the operation takes no allRoots.
   */
  spansRoots?: "maxResults" | "maxMatches";
  /** Runs it on validated input (use runOperation, which validates and locks). */
  run(ctx: OperationContext, input: z.output<I>): Promise<z.input<O>>;
}

/** Defines an operation with its input type inferred from its schema. */
export function defineOperation<I extends z.ZodType, O extends z.ZodType>(
  def: OperationDefinition<I, O>,
): OperationDefinition {
  return def as unknown as OperationDefinition;
}
