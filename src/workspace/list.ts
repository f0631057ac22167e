/**
 * list_directory: a deterministic, paged listing of one directory tree. Arguments and the
 * cursor are checked on the calling thread; the walk runs as an engine job, is ordered
 * (list_order.ts), its directories summed when asked (list_sizes.ts), and the page is cut
 * where the result byte budget ends (the cursor then continues from there).
 */
import type { WorkspaceContext } from "./context.ts";
import { WorkspaceError } from "./errors.ts";
import type { Resolved } from "./path_policy.ts";
import { requireExisting } from "./containment.ts";
import { VERIFIED, type WalkEntry, Walker, type WalkStats } from "./walk.ts";
import { type EntryType, iso } from "./text.ts";
import { jsonBytes, ResultBudget } from "./budget.ts";
import type { Checkpoint, JobSpec } from "./engine/protocol.ts";
import { jobSpec } from "./engine/spec.ts";
import { fsOfKind } from "./fs/runtime.ts";
import {
  type CursorScope,
  decodeCursor,
  encodeCursor,
  type Listed,
  type ListSort,
  listSort,
  orderListing,
  type SortKey,
  type SortOrder,
} from "./list_order.ts";
import { type DirTotal, type SizeCut, sumDirectories, type SumTarget } from "./list_sizes.ts";

/** Arguments of listDirectory. */
export interface ListDirectoryArgs {
  path?: string;
  depth?: number;
  includeHidden?: boolean;
  /** Sort siblings by name (default), size or mtime; parents stay before their contents. */
  sortBy?: SortKey;
  /** Default: asc for name, desc (largest, newest first) for size and mtime. */
  order?: SortOrder;
  /** Report each listed directory's total (totalSize). */
  sizes?: boolean;
  limit?: number;
  cursor?: string;
}

/** One listed entry. */
export interface ListEntry {
  path: string;
  type: EntryType;
  size: number | null;
  mtime: string | null;
  /**
   * With sizes, on directories: the bytes of the regular files below, at any depth; a lower
   * bound when totalSizePartial says why; null when the sum never reached the directory.
   */
  totalSize?: number | null;
  /** Why totalSize is not exact. */
  totalSizePartial?: SizeCut;
}

/** Result of listDirectory. */
export interface ListDirectoryResult {
  path: string;
  entries: ListEntry[];
  total: number;
  nextCursor?: string;
  truncated: boolean;
  truncatedReason?: "maxVisited" | "maxResultBytes";
  /** With sizes: true when a directory total on this page is partial or unknown. */
  sizesPartial?: boolean;
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

/** Lists entries below a directory up to a depth, in the asked order, paged by an opaque cursor. */
export async function listDirectory(
  ws: WorkspaceContext,
  args: ListDirectoryArgs,
  signal?: AbortSignal,
): Promise<ListDirectoryResult> {
  const depth = args.depth ?? 1;
  const includeHidden = args.includeHidden ?? false;
  const sort = listSort(args);
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
  const scope: CursorScope = { rel: dir.rel, depth, includeHidden, sort };
  const offset = args.cursor === undefined ? 0 : decodeCursor(args.cursor, scope);
  const jobArgs: ListJobArgs = { depth, includeHidden, sort, limit, offset };
  const page = await ws.engine.run<ListPage>(
    jobSpec(ws, { op: "list", dir, args: { ...jobArgs } }),
    { signal },
  );
  const result: ListDirectoryResult = {
    path: dir.rel,
    entries: page.entries,
    total: page.total,
    truncated: page.truncatedReason !== undefined,
  };
  if (page.truncatedReason) result.truncatedReason = page.truncatedReason;
  if (page.nextOffset !== undefined) result.nextCursor = encodeCursor(page.nextOffset, scope);
  if (sort.sizes) result.sizesPartial = page.entries.some((e) => e.totalSizePartial);
  return result;
}

/** What a list job returns: one page, the listing's size, and where the next page starts. */
interface ListPage {
  entries: ListEntry[];
  total: number;
  nextOffset?: number;
  truncatedReason?: "maxVisited" | "maxResultBytes";
}

/** What a list job is given: the listing's shape, its order and the page asked for. */
interface ListJobArgs {
  depth: number;
  includeHidden: boolean;
  sort: ListSort;
  limit: number;
  offset: number;
}

/**
 * The listing itself, as an engine job: walk (sizes and times from the walk's lstat), sum the
 * directories when asked (all of them when they are the sort key, else the page's), order, then
 * cut one page.
 */
export async function listJob(spec: JobSpec, cp: Checkpoint): Promise<ListPage> {
  const a = spec.args as unknown as ListJobArgs;
  const stats: WalkStats = { visited: 0, unreadable: 0, capped: false };
  const walked = await listAll(spec, a, cp, stats);
  if (a.offset > walked.length) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      "cursor points past the end of this listing (it changed); start again",
      { argument: "cursor" },
    );
  }
  const sum = (of: Listed[]) => sumDirectories(spec, targets(of), cp, stats.visited);
  let totals = a.sort.sizes && a.sort.by === "size" ? await sum(walked) : undefined;
  const all = orderListing(walked, a.sort, (path) => totals?.get(path)?.bytes ?? null);
  const candidates = all.slice(a.offset, a.offset + a.limit);
  if (a.sort.sizes && totals === undefined) {
    // Only the page's directories, in walk order (a nested one is summed by the walk of the
    // top-most one holding it).
    const onPage = new Set(candidates);
    totals = await sum(walked.filter((r) => onPage.has(r)));
  }
  const entries = candidates.map((r) => listEntry(r, totals));
  return cutPage(spec, a, entries, all.length, stats.capped ? "maxVisited" : undefined);
}

/** The directories of `listed` with the identity the walk saw them with, in walk order. */
function targets(listed: Listed[]): SumTarget[] {
  const out: SumTarget[] = [];
  for (const r of listed) if (r.pin) out.push({ path: r.path, pin: r.pin });
  return out;
}

/** The entry a listed record shows: with sizes, a directory's total and why it is partial. */
function listEntry(r: Listed, totals: Map<string, DirTotal> | undefined): ListEntry {
  const e: ListEntry = { path: r.path, type: r.type, size: r.size, mtime: r.mtime };
  if (totals === undefined || r.type !== "directory") return e;
  const t = totals.get(r.path);
  e.totalSize = t?.bytes ?? null;
  const why = t === undefined ? "changed" : t.cut;
  if (why) e.totalSizePartial = why;
  return e;
}

/** Every entry of the walk, each accepted once the walk re-verified its directory. */
async function listAll(
  spec: JobSpec,
  a: ListJobArgs,
  cp: Checkpoint,
  stats: WalkStats,
): Promise<Listed[]> {
  const all: Listed[] = [];
  let pending: Listed[] = [];
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
    pending.push(listed(e));
  }
  walker.verifyCurrent();
  for (const x of pending) all.push(x);
  return all;
}

/** A walk entry as the listing keeps it. */
function listed(e: WalkEntry): Listed {
  const slash = e.relToBase.lastIndexOf("/");
  const r: Listed = {
    path: e.rel,
    type: e.type,
    size: e.info === null ? null : e.info.size,
    mtime: e.info === null ? null : iso(e.info.mtime),
    name: e.name,
    relToBase: e.relToBase,
    parent: slash === -1 ? "" : e.relToBase.slice(0, slash),
    mtimeMs: e.info?.mtime ? e.info.mtime.getTime() : null,
  };
  if (e.type === "directory" && e.info !== null) {
    r.pin = { rel: e.rel, abs: e.abs, dev: e.info.dev, ino: e.info.ino };
  }
  return r;
}

/** The page of `entries` (from the offset, at most the limit), cut where the byte budget ends. */
function cutPage(
  spec: JobSpec,
  a: ListJobArgs,
  candidates: ListEntry[],
  total: number,
  capped: ListPage["truncatedReason"],
): ListPage {
  // The fixed fields: path, total, a cursor.
  const budget = new ResultBudget(spec.limits.maxResultBytes, 512 + jsonBytes(spec.base.rel));
  const entries: ListEntry[] = [];
  let truncatedReason = capped;
  for (const e of candidates) {
    if (!budget.takeItem(e)) {
      truncatedReason = "maxResultBytes";
      break;
    }
    entries.push(e);
  }
  if (entries.length === 0 && candidates.length > 0) {
    throw new WorkspaceError(
      "TOO_LARGE",
      `one entry alone is larger than this workspace's maxResultBytes (${spec.limits.maxResultBytes})`,
      { details: { limit: spec.limits.maxResultBytes } },
    );
  }
  const page: ListPage = { entries, total };
  const next = a.offset + entries.length;
  if (next < total) page.nextOffset = next;
  if (truncatedReason) page.truncatedReason = truncatedReason;
  return page;
}
