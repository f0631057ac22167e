/** Typed domain errors: every failure of a workspace operation is one of these codes. */
import { fsErrorKind } from "./fs/types.ts";

/** Every error code a workspace operation can report. */
export const ERROR_CODES = [
  "INVALID_ARGUMENT",
  "OUTSIDE_WORKSPACE",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "NOT_A_DIRECTORY",
  "IS_A_DIRECTORY",
  "DIRECTORY_NOT_EMPTY",
  "SPECIAL_FILE",
  "HARD_LINKED",
  "SYMLINK_LOOP",
  "AMBIGUOUS_PATH",
  "CHANGED_DURING_OPERATION",
  "BINARY_FILE",
  "TOO_LARGE",
  "CONFLICT",
  "NO_MATCH",
  "AMBIGUOUS_MATCH",
  "READ_ONLY",
  "CONFIRMATION_REQUIRED",
  "CROSS_DEVICE",
  "PERMISSION_DENIED",
  "CANCELLED",
  "TIME_BUDGET_EXCEEDED",
  "UNKNOWN_OPERATION",
  "NO_ROOT",
  "IO_ERROR",
] as const;

/** One of ERROR_CODES. */
export type ErrorCode = typeof ERROR_CODES[number];

/** Options of a WorkspaceError beyond its code and message. */
export interface WorkspaceErrorOptions {
  /** Name of the offending argument (e.g. "path", "destination", "edits[1].oldText"). */
  argument?: string;
  /** Extra structured detail (candidate line numbers, limits, ...). */
  details?: Record<string, unknown>;
  /** The underlying error, if any. */
  cause?: unknown;
}

/** The JSON shape of an error, identical in CLI output and MCP tool errors. */
export interface ErrorObject {
  /** Stable machine-readable code. */
  code: ErrorCode;
  /** One sentence saying what went wrong. */
  message: string;
  /** The offending argument, when one is to blame. */
  argument?: string;
  /** Structured detail. */
  details?: Record<string, unknown>;
}

/** A failure of a workspace operation, with a stable code. */
export class WorkspaceError extends Error {
  /** Stable machine-readable code. */
  readonly code: ErrorCode;
  /** The offending argument, when one is to blame. */
  readonly argument?: string;
  /** Structured detail. */
  readonly details?: Record<string, unknown>;

  /** A failure with a stable code, a message and optional argument, details and cause. */
  constructor(code: ErrorCode, message: string, options: WorkspaceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "WorkspaceError";
    this.code = code;
    this.argument = options.argument;
    this.details = options.details;
  }

  /** The JSON form shared by every adapter. */
  toJSON(): ErrorObject {
    const out: ErrorObject = { code: this.code, message: this.message };
    if (this.argument !== undefined) out.argument = this.argument;
    if (this.details !== undefined) out.details = this.details;
    return out;
  }
}

/** Maps any thrown value to a WorkspaceError (Deno and Node fs errors get their own codes). */
export function toWorkspaceError(err: unknown, argument?: string): WorkspaceError {
  if (err instanceof WorkspaceError) return err;
  const opts = { argument, cause: err };
  const kind = fsErrorKind(err);
  if (kind === "NotFound") {
    return new WorkspaceError("NOT_FOUND", "no such file or directory", opts);
  }
  if (kind === "AlreadyExists") {
    return new WorkspaceError("ALREADY_EXISTS", "the path already exists", opts);
  }
  if (kind === "NotADirectory") {
    return new WorkspaceError("NOT_A_DIRECTORY", "a path component is not a directory", opts);
  }
  if (kind === "IsADirectory") {
    return new WorkspaceError("IS_A_DIRECTORY", "the path is a directory", opts);
  }
  if (kind === "FilesystemLoop") {
    return new WorkspaceError("SYMLINK_LOOP", "too many levels of symbolic links", opts);
  }
  if (kind === "PermissionDenied" || kind === "NotCapable") {
    return new WorkspaceError("PERMISSION_DENIED", "permission denied", opts);
  }
  if (err instanceof Error && err.name === "AbortError") {
    return new WorkspaceError("CANCELLED", "the operation was cancelled", opts);
  }
  const code = (err as { code?: string } | null)?.code;
  if (code === "EXDEV") {
    return new WorkspaceError("CROSS_DEVICE", "cannot move across file systems", opts);
  }
  if (code === "ENOTEMPTY") {
    return new WorkspaceError("DIRECTORY_NOT_EMPTY", "the directory is not empty", opts);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new WorkspaceError("IO_ERROR", message, opts);
}
