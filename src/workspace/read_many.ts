/**
 * read_files (decision 0056): several text files in one call, each read as read_file reads it
 * (the same range or tail for every path), under one result byte budget and one time budget for
 * the whole call. A path that fails gets its own typed error in its place and the others are read
 * on; only cancellation ends the whole call. Paths are read one after another, in the order given.
 *
 * @module
 */
import type { Workspace } from "./workspace.ts";
import { type ErrorObject, toWorkspaceError, WorkspaceError } from "./errors.ts";
import { jsonBytes } from "./budget.ts";
import { namingRoots, rebased, rootFor, shownPrefix } from "./roots.ts";
import {
  checkedMaxBytes,
  checkTailArgs,
  readFile,
  type ReadFileResult,
  type ReadOptions,
} from "./read.ts";

/** Most paths one read_files call takes. */
export const MAX_READ_FILES = 100;

/** Arguments of readFiles: the paths, and read_file's range arguments for each of them. */
export interface ReadFilesArgs {
  paths: string[];
  startLine?: number;
  endLine?: number;
  tailLines?: number;
  maxBytes?: number;
}

/** One path's place in a read_files result: its read_file result, or its typed error. */
export type ReadFilesEntry = ReadFileResult | { path: string; error: ErrorObject };

/** Result of readFiles. */
export interface ReadFilesResult {
  files: ReadFilesEntry[];
  /** True when the result budget cut a file's content or left paths unread (their entries say so). */
  truncated: boolean;
  truncatedReason?: "maxResultBytes";
}

/** Bytes of the result around its entries. */
const ENVELOPE_BYTES = 64;
/** Least room a read is started with (less: the path is reported unread). */
const MIN_READ_ROOM = 1024;

/** The entry of a path the result budget left no room for. */
function unread(path: string): { path: string; error: ErrorObject } {
  return {
    path,
    error: {
      code: "TOO_LARGE",
      message: "not read: maxResultBytes was spent",
      details: { reason: "maxResultBytes" },
    },
  };
}

/** A failed read as its entry; `path` in the error becomes `paths[i]`. */
function failed(path: string, i: number, err: unknown): { path: string; error: ErrorObject } {
  const e = toWorkspaceError(err).toJSON();
  if (e.argument === "path") e.argument = `paths[${i}]`;
  return { path, error: e };
}

/** Refuses an empty or oversized list of paths (INVALID_ARGUMENT). */
function checkPaths(paths: readonly string[]): void {
  if (paths.length === 0 || paths.length > MAX_READ_FILES) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `paths must hold 1 to ${MAX_READ_FILES} paths, got ${paths.length}`,
      { argument: "paths", details: { limit: MAX_READ_FILES } },
    );
  }
}

/**
 * Reads each path as read_file would, in order, under the workspace's maxResultBytes for the
 * whole result and its maxOperationMs for the whole call. Every path gets exactly one entry.
 */
export async function readFiles(
  ws: Workspace,
  args: ReadFilesArgs,
  options: ReadOptions = {},
): Promise<ReadFilesResult> {
  checkPaths(args.paths);
  // The call's own arguments are refused once, not once per path.
  checkedMaxBytes(ws, args);
  if (args.tailLines !== undefined) checkTailArgs(args);
  const limit = ws.limits.maxResultBytes;
  const started = performance.now();
  // Every path's "not read" entry is reserved up front, so the result always fits; paths whose
  // entries alone would not fit are refused before anything is read.
  const reserved = args.paths.map((p) => jsonBytes(unread(p)) + 1);
  let used = ENVELOPE_BYTES + reserved.reduce((a, b) => a + b, 0);
  if (used > limit) {
    throw new WorkspaceError(
      "TOO_LARGE",
      `the ${args.paths.length} paths given need ${used} bytes of the result even unread, over ` +
        `maxResultBytes (${limit}): ask for fewer or shorter paths`,
      { argument: "paths", details: { size: used, limit, reason: "maxResultBytes" } },
    );
  }
  const out: ReadFilesResult = { files: [], truncated: false };
  for (const [i, path] of args.paths.entries()) {
    used -= reserved[i];
    const room = limit - used;
    let entry: ReadFilesEntry | undefined;
    if (room >= MIN_READ_ROOM + jsonBytes(path)) {
      const left = ws.limits.maxOperationMs - (performance.now() - started);
      // Each path is read on the root it addresses (decision 0064); a later root's path is shown
      // absolute, which the read's room leaves space for.
      const root = rootFor(ws, path);
      const prefix = shownPrefix(ws, root);
      const shown = prefix === undefined ? 0 : jsonBytes(prefix) + 1;
      const o = { ...options, maxOperationMs: left };
      entry = await readOne(root, { ...args, path, i }, o, room - shown, ws);
      if (prefix !== undefined && !("error" in entry)) entry = rebased(entry, prefix, prefix);
      if (jsonBytes(entry) + 1 > room) entry = undefined;
    }
    if (
      entry === undefined ||
      ("truncatedReason" in entry && entry.truncatedReason === "maxResultBytes")
    ) {
      out.truncated = true;
      out.truncatedReason = "maxResultBytes";
    }
    entry ??= unread(path);
    used += jsonBytes(entry) + 1;
    out.files.push(entry);
  }
  return out;
}

/** One path's entry: its read, or its error (cancellation ends the whole call). */
async function readOne(
  ws: Workspace,
  a: ReadFilesArgs & { path: string; i: number },
  options: ReadOptions,
  room: number,
  all: Workspace,
): Promise<ReadFilesEntry> {
  try {
    if ((options.maxOperationMs ?? 1) <= 0) {
      throw new WorkspaceError(
        "TIME_BUDGET_EXCEEDED",
        `not read: the call ran longer than maxOperationMs (${ws.limits.maxOperationMs} ms)`,
        { details: { limit: ws.limits.maxOperationMs } },
      );
    }
    const { path, startLine, endLine, tailLines, maxBytes } = a;
    return await readFile(ws, { path, startLine, endLine, tailLines, maxBytes }, {
      ...options,
      resultBytes: room,
    });
  } catch (err) {
    if (err instanceof WorkspaceError && err.code === "CANCELLED") throw err;
    if (options.signal?.aborted) {
      throw new WorkspaceError("CANCELLED", "the operation was cancelled");
    }
    return failed(a.path, a.i, namingRoots(all, toWorkspaceError(err)));
  }
}
