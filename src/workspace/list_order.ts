/**
 * list_directory's order and cursors (decision 0057): siblings sorted by name, size or mtime
 * within each directory, parents still before their contents, ties broken by name; and the
 * opaque cursor, bound to everything that decides which entry sits at which offset.
 */
import { WorkspaceError } from "./errors.ts";
import type { PinnedDir } from "./engine/protocol.ts";
import { type EntryType, sha256Hex } from "./text.ts";

/** What siblings are sorted by. */
export type SortKey = "name" | "size" | "mtime";
/** Ascending or descending. */
export type SortOrder = "asc" | "desc";

/** The order of one listing, with every default applied. */
export interface ListSort {
  by: SortKey;
  order: SortOrder;
  /** Directory totals asked for: under `by: "size"` they are a directory's sort key. */
  sizes: boolean;
}

/** One entry of the listing walk, with what ordering and summing need beside the entry. */
export interface Listed {
  path: string;
  type: EntryType;
  size: number | null;
  mtime: string | null;
  /** The entry's name: the tie-break. */
  name: string;
  /** Path relative to the listed directory. */
  relToBase: string;
  /** `relToBase` of the directory holding it ("" for the listed directory itself). */
  parent: string;
  /** mtime in milliseconds, null when unknown. */
  mtimeMs: number | null;
  /** A directory's identity from the listing's lstat (the sum starts from it). */
  pin?: PinnedDir;
}

/** The `order` an omitted one means: a→z for names, largest and newest first (ls -S, ls -t). */
export function defaultOrder(by: SortKey): SortOrder {
  return by === "name" ? "asc" : "desc";
}

/** The order with its defaults applied. */
export function listSort(
  args: { sortBy?: SortKey; order?: SortOrder; sizes?: boolean },
): ListSort {
  const by = args.sortBy ?? "name";
  return { by, order: args.order ?? defaultOrder(by), sizes: args.sizes ?? false };
}

/** The order as a cursor records it; "" for the default (name, asc), whose cursors stay valid. */
function signature(s: ListSort): string {
  if (s.by === "name" && s.order === "asc") return "";
  return `${s.by}:${s.order}${s.by === "size" && s.sizes ? "+sizes" : ""}`;
}

function describe(sig: string): string {
  if (sig === "") return "name (asc)";
  const [by, rest] = sig.split(":");
  const [order, sizes] = rest.split("+");
  return `${by} (${order}${sizes ? ", with sizes" : ""})`;
}

function byName(a: Listed, b: Listed): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * The comparator of siblings: by the key, unknown keys (null) last in both orders, ties by name
 * a→z. A directory's size key is its total (`sizeOfDir`) with sizes, else unknown.
 */
function comparator(
  s: ListSort,
  sizeOfDir: (path: string) => number | null,
): (a: Listed, b: Listed) => number {
  if (s.by === "name") return s.order === "asc" ? byName : (a, b) => byName(b, a);
  const key = s.by === "mtime"
    ? (r: Listed) => r.mtimeMs
    : (r: Listed) => r.type === "directory" ? (s.sizes ? sizeOfDir(r.path) : null) : r.size;
  const sign = s.order === "asc" ? 1 : -1;
  return (a, b) => {
    const x = key(a);
    const y = key(b);
    if (x !== y) {
      if (x === null) return 1;
      if (y === null) return -1;
      return sign * (x - y);
    }
    return byName(a, b);
  };
}

/**
 * The walk's entries (pre-order, names sorted) in the asked order: each directory's children
 * sorted among themselves, each directory still followed by its contents.
 */
export function orderListing(
  all: Listed[],
  s: ListSort,
  sizeOfDir: (path: string) => number | null,
): Listed[] {
  if (signature(s) === "") return all;
  const children = new Map<string, Listed[]>();
  for (const r of all) {
    const group = children.get(r.parent);
    if (group) group.push(r);
    else children.set(r.parent, [r]);
  }
  const cmp = comparator(s, sizeOfDir);
  for (const group of children.values()) group.sort(cmp);
  const out: Listed[] = [];
  const emit = (parent: string) => {
    for (const r of children.get(parent) ?? []) {
      out.push(r);
      if (r.type === "directory") emit(r.relToBase);
    }
  };
  emit("");
  return out;
}

/** The listing a cursor is bound to: path, depth, hidden flag and order. */
export interface CursorScope {
  rel: string;
  depth: number;
  includeHidden: boolean;
  sort: ListSort;
}

function listingKey(scope: CursorScope): string {
  const sig = signature(scope.sort);
  const base = `${scope.rel}\0${scope.depth}\0${scope.includeHidden}`;
  return sha256Hex(sig === "" ? base : `${base}\0${sig}`).slice(0, 16);
}

/** A cursor continuing the listing of `scope` at `offset`. */
export function encodeCursor(offset: number, scope: CursorScope): string {
  const sig = signature(scope.sort);
  const c: Record<string, unknown> = { v: 1, o: offset, k: listingKey(scope) };
  if (sig !== "") c.s = sig;
  return btoa(JSON.stringify(c)).replaceAll("=", "");
}

/** The offset of a cursor made for `scope`; INVALID_ARGUMENT on `cursor` for any other. */
export function decodeCursor(cursor: string, scope: CursorScope): number {
  const bad = (why = "cursor is not valid for this listing; start again without it") =>
    new WorkspaceError("INVALID_ARGUMENT", why, { argument: "cursor" });
  let parsed: unknown;
  try {
    parsed = JSON.parse(atob(cursor));
  } catch {
    throw bad();
  }
  const c = parsed as { v?: unknown; o?: unknown; k?: unknown; s?: unknown };
  if (c?.v !== 1 || !Number.isSafeInteger(c.o) || (c.o as number) < 0) throw bad();
  if (c.k !== listingKey(scope)) {
    const theirs = typeof c.s === "string" ? c.s : "";
    const ours = signature(scope.sort);
    if (theirs !== ours && /^(size|mtime|name):(asc|desc)(\+sizes)?$|^$/.test(theirs)) {
      throw bad(
        `cursor belongs to a listing sorted by ${describe(theirs)}, but this call sorts by ` +
          `${
            describe(ours)
          }: pass the first page's sortBy, order and sizes, or start again without it`,
      );
    }
    throw bad();
  }
  return c.o as number;
}
