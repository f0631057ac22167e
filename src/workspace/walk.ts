/**
 * The one directory walker behind list_directory, find_files and search_text:
 * deterministic pre-order (names sorted by code unit), never follows symbolic links,
 * honours hidden-file and .gitignore rules, and stops at a visited-entry cap, saying so.
 */
import ignore, { type Ignore } from "ignore";
import { WorkspaceError } from "./errors.ts";
import { excludesDir } from "./globs.ts";
import type { Workspace } from "./workspace.ts";
import type { EntryType } from "./text.ts";

/** Largest .gitignore file that is read (bytes); larger ones are skipped. */
const MAX_GITIGNORE_BYTES = 1024 * 1024;

/** One entry met by a walk. */
export interface WalkEntry {
  /** Workspace-relative path. */
  rel: string;
  /** Path relative to the walk's base directory. */
  relToBase: string;
  /** Absolute path. */
  abs: string;
  /** Entry name. */
  name: string;
  /** Entry type from the directory listing (links are not followed). */
  type: EntryType;
  /** 1 for the base directory's children. */
  depth: number;
}

/** What a walk did, filled in as it goes. */
export interface WalkStats {
  /** Entries seen. */
  visited: number;
  /** Directories that could not be read. */
  unreadable: number;
  /** True when the visited cap stopped the walk. */
  capped: boolean;
  /** True when a directory at maxDepth was not entered. */
  depthLimited?: boolean;
}

/** Options of a walk. */
export interface WalkOptions {
  /** Workspace-relative path of the base directory ("." for the root). */
  baseRel: string;
  /** Absolute real path of the base directory. */
  baseAbs: string;
  /** Absolute real path of the workspace root (for .gitignore files above the base). */
  rootAbs: string;
  /** Deepest level yielded (1 = children of the base). */
  maxDepth: number;
  /** Yield and enter names starting with ".". */
  includeHidden: boolean;
  /** Apply .gitignore files (root down to each directory) and skip .git directories. */
  respectGitignore: boolean;
  /** Stop after this many entries, setting stats.capped. */
  maxVisited: number;
  /** Skip a directory (and everything below it) when this returns true. */
  pruneDir?: (entry: WalkEntry) => boolean;
  /** Checked between directories and every 256 entries; abort throws CANCELLED. */
  signal?: AbortSignal;
}

interface IgnoreLayer {
  /** Path of the directory holding the .gitignore, relative to the workspace root ("" for the root). */
  dir: string;
  ig: Ignore;
}

async function loadGitignore(dirAbs: string, dirRel: string): Promise<IgnoreLayer | null> {
  const file = (dirAbs === "/" ? "" : dirAbs) + "/.gitignore";
  try {
    const info = await Deno.lstat(file);
    if (!info.isFile || info.size > MAX_GITIGNORE_BYTES) return null;
    const text = await Deno.readTextFile(file);
    return { dir: dirRel === "." ? "" : dirRel, ig: ignore().add(text) };
  } catch {
    return null;
  }
}

function isIgnored(layers: IgnoreLayer[], rel: string, isDir: boolean): boolean {
  let verdict = false;
  for (const layer of layers) {
    const sub = layer.dir === "" ? rel : rel.slice(layer.dir.length + 1);
    const r = layer.ig.test(isDir ? sub + "/" : sub);
    if (r.ignored) verdict = true;
    else if (r.unignored) verdict = false;
  }
  return verdict;
}

function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw new WorkspaceError("CANCELLED", "the operation was cancelled");
}

function joinRel(a: string, b: string): string {
  return a === "." || a === "" ? b : `${a}/${b}`;
}

/** Walks a directory tree inside the workspace, yielding entries in a deterministic order. */
export async function* walk(options: WalkOptions, stats: WalkStats): AsyncGenerator<WalkEntry> {
  const layers: IgnoreLayer[] = [];
  if (options.respectGitignore) {
    // .gitignore files from the root down to the base's parent apply too.
    const segs = options.baseRel === "." ? [] : options.baseRel.split("/");
    let rel = ".";
    let abs = options.rootAbs;
    for (let i = 0; i < segs.length; i++) {
      const layer = await loadGitignore(abs, rel);
      if (layer) layers.push(layer);
      rel = joinRel(rel, segs[i]);
      abs = `${abs === "/" ? "" : abs}/${segs[i]}`;
    }
  }
  yield* walkDir(options, stats, options.baseAbs, options.baseRel, "", 1, layers);
}

async function* walkDir(
  o: WalkOptions,
  stats: WalkStats,
  dirAbs: string,
  dirRel: string,
  dirRelToBase: string,
  depth: number,
  layers: IgnoreLayer[],
): AsyncGenerator<WalkEntry> {
  throwIfAborted(o.signal);
  if (stats.capped) return;
  let here = layers;
  if (o.respectGitignore) {
    const layer = await loadGitignore(dirAbs, dirRel);
    if (layer) here = [...layers, layer];
  }
  const names: { name: string; type: EntryType }[] = [];
  try {
    for await (const e of Deno.readDir(dirAbs)) {
      const type: EntryType = e.isSymlink
        ? "symlink"
        : e.isDirectory
        ? "directory"
        : e.isFile
        ? "file"
        : "other";
      names.push({ name: e.name, type });
    }
  } catch (err) {
    if (err instanceof WorkspaceError) throw err;
    stats.unreadable++;
    return;
  }
  names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const prefixAbs = dirAbs === "/" ? "" : dirAbs;
  for (const { name, type } of names) {
    if (!o.includeHidden && name.startsWith(".")) continue;
    if (o.respectGitignore && name === ".git" && type === "directory") continue;
    const rel = joinRel(dirRel, name);
    if (o.respectGitignore && isIgnored(here, rel, type === "directory")) continue;
    if (stats.visited >= o.maxVisited) {
      stats.capped = true;
      return;
    }
    stats.visited++;
    if ((stats.visited & 255) === 0) throwIfAborted(o.signal);
    const entry: WalkEntry = {
      rel,
      relToBase: dirRelToBase === "" ? name : `${dirRelToBase}/${name}`,
      abs: `${prefixAbs}/${name}`,
      name,
      type,
      depth,
    };
    if (type === "directory" && o.pruneDir?.(entry)) continue;
    yield entry;
    if (type === "directory" && depth >= o.maxDepth) stats.depthLimited = true;
    if (type === "directory" && depth < o.maxDepth) {
      yield* walkDir(o, stats, entry.abs, rel, entry.relToBase, depth + 1, here);
      if (stats.capped) return;
    }
  }
}

/**
 * The walk find_files and search_text share: below a resolved directory, with the
 * workspace's depth and visited caps, and exclude globs pruning whole directories.
 */
export function walkBelow(
  ws: Workspace,
  dir: { rel: string; abs: string },
  o: {
    includeHidden: boolean;
    respectGitignore: boolean;
    excluded: (relToBase: string) => boolean;
    signal?: AbortSignal;
  },
  stats: WalkStats,
): AsyncGenerator<WalkEntry> {
  return walk({
    baseRel: dir.rel,
    baseAbs: dir.abs,
    rootAbs: ws.policy.rootReal,
    maxDepth: ws.limits.maxDepth,
    includeHidden: o.includeHidden,
    respectGitignore: o.respectGitignore,
    maxVisited: ws.limits.maxVisited,
    pruneDir: (d) => excludesDir(o.excluded, d.relToBase),
    signal: o.signal,
  }, stats);
}
