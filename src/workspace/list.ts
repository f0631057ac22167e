/** list_directory: a deterministic, paged listing of one directory tree. */
import type { Workspace } from "./workspace.ts";
import { WorkspaceError } from "./errors.ts";
import { requireExisting, type Resolved } from "./path_policy.ts";
import { walk, type WalkEntry, type WalkStats } from "./walk.ts";
import { type EntryType, iso, sha256Hex } from "./text.ts";

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
}

/** Resolves a path that must be an existing directory (links followed). */
export async function resolveDirectory(
  ws: Workspace,
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
  ws: Workspace,
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
  const stats: WalkStats = { visited: 0, unreadable: 0, capped: false };
  const all: WalkEntry[] = [];
  for await (
    const e of walk({
      baseRel: dir.rel,
      baseAbs: dir.abs,
      rootAbs: ws.policy.rootReal,
      maxDepth: depth,
      includeHidden,
      respectGitignore: false,
      maxVisited: ws.limits.maxVisited,
      signal,
    }, stats)
  ) all.push(e);
  if (offset > all.length) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      "cursor points past the end of this listing (it changed); start again",
      {
        argument: "cursor",
      },
    );
  }
  const page = all.slice(offset, offset + limit);
  const entries: ListEntry[] = [];
  for (const e of page) {
    let size: number | null = null;
    let mtime: string | null = null;
    try {
      const st = await Deno.lstat(e.abs);
      size = st.size;
      mtime = iso(st.mtime);
    } catch {
      // Removed since it was listed: reported without size and time.
    }
    entries.push({ path: e.rel, type: e.type, size, mtime });
  }
  const result: ListDirectoryResult = {
    path: dir.rel,
    entries,
    total: all.length,
    truncated: stats.capped,
  };
  if (offset + limit < all.length) result.nextCursor = encodeCursor(offset + limit, key);
  return result;
}
