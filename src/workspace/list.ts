/**
 * list_directory: a deterministic, paged listing of one directory tree. Arguments and the
 * cursor are checked on the calling thread; the walk runs as an engine job, and the page is
 * cut where the result byte budget ends (the cursor then continues from there).
 */
import type { WorkspaceContext } from "./context.ts";
import { WorkspaceError } from "./errors.ts";
import type { Resolved } from "./path_policy.ts";
import { requireExisting } from "./containment.ts";
import { VERIFIED, Walker, type WalkStats } from "./walk.ts";
import { type EntryType, iso, sha256Hex } from "./text.ts";
import { jsonBytes, ResultBudget } from "./budget.ts";
import type { Checkpoint, JobSpec } from "./engine/protocol.ts";
import { jobSpec } from "./engine/spec.ts";
import { fsOfKind } from "./fs/runtime.ts";

/** Arguments of listDirectory. */
export interface ListDirectoryArgs {
  path?: string;
  depth?: number;
  includeHidden?: boolean;
  limit?: number;
  cursor?: string;
}

/** One listed entry. */
export interface ListEntry {
  path: string;
  type: EntryType;
  size: number | null;
  mtime: string | null;
}

/** Result of listDirectory. */
export interface ListDirectoryResult {
  path: string;
  entries: ListEntry[];
  total: number;
  nextCursor?: string;
  truncated: boolean;
  truncatedReason?: "maxVisited" | "maxResultBytes";
}

/** Resolves a path that must be an existing directory (links followed). */
export async function resolveDirectory(
  ws: WorkspaceContext,
  path: string,
  argument: string,
): Promise<Resolved> {
  const r = await ws.policy.resolve(path, { argument, followLeaf: true });
  const info = requireExisting(r, argument);
  if (!info.isDirectory) {
    throw new WorkspaceError("NOT_A_DIRECTORY", `${argument} ${r.rel} is not a directory`, {
      argument,
    });
  }
  return r;
}

function listingKey(rel: string, depth: number, hidden: boolean): string {
  return sha256Hex(`${rel}\0${depth}\0${hidden}`).slice(0, 16);
}

function encodeCursor(offset: number, key: string): string {
  return btoa(JSON.stringify({ v: 1, o: offset, k: key })).replaceAll("=", "");
}

function decodeCursor(cursor: string, key: string): number {
  const bad = () =>
    new WorkspaceError(
      "INVALID_ARGUMENT",
      "cursor is not valid for this listing; start again without it",
      {
        argument: "cursor",
      },
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(atob(cursor));
  } catch {
    throw bad();
  }
  const c = parsed as { v?: unknown; o?: unknown; k?: unknown };
  if (c?.v !== 1 || c.k !== key || !Number.isSafeInteger(c.o) || (c.o as number) < 0) throw bad();
  return c.o as number;
}

/** Lists entries below a directory up to a depth, sorted, paged by an opaque cursor. */
export async function listDirectory(
  ws: WorkspaceContext,
  args: ListDirectoryArgs,
  signal?: AbortSignal,
): Promise<ListDirectoryResult> {
  const depth = args.depth ?? 1;
  const includeHidden = args.includeHidden ?? false;
  const limit = args.limit ?? ws.limits.maxListEntries;
  if (limit > ws.limits.maxListEntries) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `limit ${limit} exceeds this workspace's limit of ${ws.limits.maxListEntries}`,
      {
        argument: "limit",
        details: { limit: ws.limits.maxListEntries },
      },
    );
  }
  const dir = await resolveDirectory(ws, args.path ?? ".", "path");
  const key = listingKey(dir.rel, depth, includeHidden);
  const offset = args.cursor === undefined ? 0 : decodeCursor(args.cursor, key);
  const page = await ws.engine.run<ListPage>(
    jobSpec(ws, { op: "list", dir, args: { depth, includeHidden, limit, offset } }),
    { signal },
  );
  const result: ListDirectoryResult = {
    path: dir.rel,
    entries: page.entries,
    total: page.total,
    truncated: page.truncatedReason !== undefined,
  };
  if (page.truncatedReason) result.truncatedReason = page.truncatedReason;
  if (page.nextOffset !== undefined) result.nextCursor = encodeCursor(page.nextOffset, key);
  return result;
}

/** What a list job returns: one page, the listing's size, and where the next page starts. */
interface ListPage {
  entries: ListEntry[];
  total: number;
  nextOffset?: number;
  truncatedReason?: "maxVisited" | "maxResultBytes";
}

/** What a list job is given: the listing's shape and the page asked for. */
interface ListJobArgs {
  depth: number;
  includeHidden: boolean;
  limit: number;
  offset: number;
}

/** The listing itself, as an engine job: walk (sizes and times from the walk's lstat), then cut one page. */
export async function listJob(spec: JobSpec, cp: Checkpoint): Promise<ListPage> {
  const a = spec.args as unknown as ListJobArgs;
  const stats: WalkStats = { visited: 0, unreadable: 0, capped: false };
  const all = await listAll(spec, a, cp, stats);
  if (a.offset > all.length) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      "cursor points past the end of this listing (it changed); start again",
      { argument: "cursor" },
    );
  }
  return cutPage(spec, a, all, stats.capped ? "maxVisited" : undefined);
}

/** Every entry of the walk, each accepted once the walk re-verified its directory. */
async function listAll(
  spec: JobSpec,
  a: ListJobArgs,
  cp: Checkpoint,
  stats: WalkStats,
): Promise<ListEntry[]> {
  const all: ListEntry[] = [];
  let pending: ListEntry[] = [];
  const walker = new Walker({
    fs: fsOfKind(spec.fs),
    root: spec.root,
    base: spec.base,
    maxDepth: a.depth,
    includeHidden: a.includeHidden,
    respectGitignore: false,
    maxVisited: spec.limits.maxVisited,
    checkpoint: cp,
  }, stats);
  for (const e of walker.entries()) {
    if (e === VERIFIED) {
      for (const x of pending) all.push(x);
      pending = [];
      continue;
    }
    const t = cp.tick();
    if (t) await t;
    cp.counters.filesSearched = stats.visited;
    pending.push({
      path: e.rel,
      type: e.type,
      size: e.info === null ? null : e.info.size,
      mtime: e.info === null ? null : iso(e.info.mtime),
    });
  }
  walker.verifyCurrent();
  for (const x of pending) all.push(x);
  return all;
}

/** The page of `all` from the offset, cut at the limit or where the byte budget ends. */
function cutPage(
  spec: JobSpec,
  a: ListJobArgs,
  all: ListEntry[],
  capped: ListPage["truncatedReason"],
): ListPage {
  // The fixed fields: path, total, a cursor.
  const budget = new ResultBudget(spec.limits.maxResultBytes, 512 + jsonBytes(spec.base.rel));
  const end = Math.min(all.length, a.offset + a.limit);
  const entries: ListEntry[] = [];
  let truncatedReason = capped;
  for (let i = a.offset; i < end; i++) {
    if (!budget.takeItem(all[i])) {
      truncatedReason = "maxResultBytes";
      break;
    }
    entries.push(all[i]);
  }
  if (entries.length === 0 && end > a.offset) {
    throw new WorkspaceError(
      "TOO_LARGE",
      `one entry alone is larger than this workspace's maxResultBytes (${spec.limits.maxResultBytes})`,
      { details: { limit: spec.limits.maxResultBytes } },
    );
  }
  const page: ListPage = { entries, total: all.length };
  const next = a.offset + entries.length;
  if (next < all.length) page.nextOffset = next;
  if (truncatedReason) page.truncatedReason = truncatedReason;
  return page;
}
