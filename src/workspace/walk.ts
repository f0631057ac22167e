/**
 * The one directory walker behind list_directory, find_files and search_text:
 * deterministic pre-order (names sorted by code unit), never follows symbolic links,
 * honours hidden-file and .gitignore rules, and stops at a visited-entry cap, saying so.
 *
 * Every directory it enters and every file it opens is tied to the identity (dev, ino)
 * recorded when it was classified (lstat), and the chain of directories from the pinned
 * root is re-verified after each listing and before results gathered in a directory are
 * accepted: the walk yields `VERIFIED` at those points, and a consumer accepts what it
 * gathered only then. A mismatch fails the whole walk with CHANGED_DURING_OPERATION.
 * Synchronous by design: it runs in an engine worker, between checkpoints.
 */
import fs from "node:fs";
import ignore, { type Ignore } from "ignore";
import { WorkspaceError } from "./errors.ts";
import type { EntryType } from "./text.ts";
import type { Checkpoint, JobSpec, PinnedDir } from "./engine/protocol.ts";
import { excludesDir } from "./globs.ts";
import type { FsDirEntry, FsInfo, WorkspaceFs } from "./fs/types.ts";
import { fsOfKind } from "./fs/runtime.ts";
import { brokenLink, lstatOrNullSync, openNoFollowSync, sameIdentity } from "./containment.ts";

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
  /** Entry type from its lstat (links are not followed). */
  type: EntryType;
  /** 1 for the base directory's children. */
  depth: number;
  /** lstat at classification; null when the entry vanished between listing and lstat. */
  info: FsInfo | null;
}

/** Yielded after the chain was re-verified: everything yielded before it may be accepted. */
export const VERIFIED = null;

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
  /** The workspace's file system. */
  fs: WorkspaceFs;
  /** The workspace root with its pinned identity. */
  root: PinnedDir;
  /** The base directory with the identity it was resolved with. */
  base: PinnedDir;
  /** Deepest level yielded (1 = children of the base). */
  maxDepth: number;
  /** Yield and enter names starting with ".". */
  includeHidden: boolean;
  /** Apply .gitignore files (root down to each directory) and skip .git directories. */
  respectGitignore: boolean;
  /** Stop after this many entries, setting stats.capped. */
  maxVisited: number;
  /**
   * lstat every entry at classification (default true). When false, only directories (and
   * entries the listing could not type) are lstat'ed: for walks that report names and never
   * open files (find_files); their files' `info` is then null. A function decides per entry
   * (by workspace-relative path): a search shard lstats only the files it opens.
   */
  statEntries?: boolean | ((rel: string) => boolean);
  /** Called with the entry count (`visited`) when a directory cannot be listed. */
  onUnreadable?: (visited: number) => void;
  /** Called with the entry count (`visited`) when a directory at maxDepth is not entered. */
  onDepthLimit?: (visited: number) => void;
  /**
   * Called once, when the visited cap stops the walk: `chain` is then the directory whose
   * listing was cut (the directories of that chain are the ones left unfinished).
   */
  onCapped?: () => void;
  /** Skip a directory (and everything below it) when this returns true. */
  pruneDir?: (entry: WalkEntry) => boolean;
  /** Checked between entries: throws CANCELLED or TIME_BUDGET_EXCEEDED. */
  checkpoint: Checkpoint;
}

interface IgnoreLayer {
  /** Path of the directory holding the .gitignore, relative to the workspace root ("" for the root). */
  dir: string;
  ig: Ignore;
}

function changed(rel: string, what = "was replaced or moved"): WorkspaceError {
  return new WorkspaceError(
    "CHANGED_DURING_OPERATION",
    `${rel} ${what} while it was being walked; nothing was returned`,
    { details: { path: rel } },
  );
}

/** Re-verifies that every directory of a chain is still the directory it was checked as. */
export function verifyChain(chain: readonly PinnedDir[], fs: WorkspaceFs): void {
  const i = brokenLink(fs, chain);
  if (i !== -1) throw changed(chain[i].rel);
}

/**
 * Opens a classified regular file without following a final link and without blocking,
 * and checks that fstat names the inode the lstat classified. Returns the fd, or null
 * when the file cannot be opened (gone, no permission); CHANGED_DURING_OPERATION when
 * the name now leads elsewhere.
 */
export function openClassified(entry: { rel: string; abs: string; info: FsInfo }): {
  fd: number;
  stat: fs.Stats;
} | null {
  let fd: number;
  try {
    fd = openNoFollowSync(entry.abs);
  } catch (err) {
    if ((err as { code?: string }).code === "ELOOP") {
      throw changed(entry.rel, "was replaced by a symbolic link");
    }
    return null;
  }
  let stat: fs.Stats;
  try {
    stat = fs.fstatSync(fd);
  } catch {
    fs.closeSync(fd);
    return null;
  }
  if (!sameIdentity({ dev: stat.dev, ino: stat.ino }, entry.info)) {
    fs.closeSync(fd);
    throw changed(entry.rel);
  }
  return { fd, stat };
}

function readGitignore(
  dir: PinnedDir,
  o: { checkpoint: Checkpoint; fs: WorkspaceFs },
): IgnoreLayer | null {
  const abs = (dir.abs === "/" ? "" : dir.abs) + "/.gitignore";
  const rel = dir.rel === "." ? ".gitignore" : `${dir.rel}/.gitignore`;
  const info = lstatOrNullSync(o.fs, abs);
  if (info === null || !info.isFile || info.size > MAX_GITIGNORE_BYTES) return null;
  const opened = openClassified({ rel, abs, info });
  if (opened === null) return null;
  try {
    if (!opened.stat.isFile() || opened.stat.size > MAX_GITIGNORE_BYTES) return null;
    const buf = new Uint8Array(opened.stat.size + 1);
    let n = 0;
    while (n < buf.length) {
      const r = fs.readSync(opened.fd, buf, n, buf.length - n, null);
      if (r === 0) break;
      n += r;
    }
    if (n > MAX_GITIGNORE_BYTES) return null;
    o.checkpoint.check();
    const text = new TextDecoder().decode(buf.subarray(0, n));
    return { dir: dir.rel === "." ? "" : dir.rel, ig: ignore().add(text) };
  } catch (err) {
    if (err instanceof WorkspaceError) throw err;
    return null;
  } finally {
    fs.closeSync(opened.fd);
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

function joinRel(a: string, b: string): string {
  return a === "." || a === "" ? b : `${a}/${b}`;
}

function joinAbs(a: string, b: string): string {
  return `${a === "/" ? "" : a}/${b}`;
}

function direntType(e: FsDirEntry): EntryType {
  return e.isSymlink ? "symlink" : e.isDirectory ? "directory" : e.isFile ? "file" : "other";
}

function infoType(info: FsInfo): EntryType {
  return info.isSymlink
    ? "symlink"
    : info.isDirectory
    ? "directory"
    : info.isFile
    ? "file"
    : "other";
}

/** What #classify returns when the visited cap stops the walk. */
const CAPPED = Symbol("capped");

/** A walk in progress: `entries()` yields entries and VERIFIED; `verifyCurrent()` re-verifies on demand. */
export class Walker {
  readonly #o: WalkOptions;
  readonly #stats: WalkStats;
  #current: readonly PinnedDir[] = [];

  /** A walk with its options, filling `stats`. */
  constructor(options: WalkOptions, stats: WalkStats) {
    this.#o = options;
    this.#stats = stats;
  }

  /** The chain of the directory being walked (the directory of the entry last yielded). */
  get chain(): readonly PinnedDir[] {
    return this.#current;
  }

  /** Re-verifies the chain of the directory being walked (accept results gathered since the last VERIFIED). */
  verifyCurrent(): void {
    verifyChain(this.#current, this.#o.fs);
  }

  /** The chain from the root to the base, each link lstat'ed and checked. */
  #baseChain(): PinnedDir[] {
    const { root, base } = this.#o;
    const rootInfo = root.mounted ? null : lstatOrNullSync(this.#o.fs, root.abs);
    if (
      !root.mounted && (rootInfo === null || !rootInfo.isDirectory || !sameIdentity(rootInfo, root))
    ) {
      throw new WorkspaceError(
        "CHANGED_DURING_OPERATION",
        "the workspace root was replaced or moved after the server started; nothing was returned",
      );
    }
    const chain: PinnedDir[] = [root];
    const segs = base.rel === "." ? [] : base.rel.split("/");
    let rel = ".";
    let abs = root.abs;
    for (const seg of segs) {
      rel = joinRel(rel, seg);
      abs = joinAbs(abs, seg);
      const st = lstatOrNullSync(this.#o.fs, abs);
      if (st === null || !st.isDirectory) throw changed(rel);
      chain.push({ rel, abs, dev: st.dev, ino: st.ino });
    }
    if (!sameIdentity(chain[chain.length - 1], base)) throw changed(base.rel);
    return chain;
  }

  /** Walks the tree: entries in order, VERIFIED after each re-verification of the chain. */
  *entries(): Generator<WalkEntry | typeof VERIFIED> {
    const chain = this.#baseChain();
    this.#current = chain;
    const layers: IgnoreLayer[] = [];
    if (this.#o.respectGitignore) {
      // .gitignore files from the root down to the base's parent apply too.
      for (const dir of chain.slice(0, -1)) {
        const layer = readGitignore(dir, this.#o);
        if (layer) layers.push(layer);
      }
    }
    yield* this.#walkDir(chain, "", 1, layers);
  }

  /** Walks one directory of `chain` (its last link): its entries, then each subdirectory's. */
  *#walkDir(
    chain: readonly PinnedDir[],
    dirRelToBase: string,
    depth: number,
    layers: IgnoreLayer[],
  ): Generator<WalkEntry | typeof VERIFIED> {
    const o = this.#o;
    const stats = this.#stats;
    o.checkpoint.check();
    if (stats.capped) return;
    this.#current = chain;
    const listing = this.#list(chain, layers);
    if (listing === null) return;
    yield VERIFIED;
    const { dirents, here } = listing;
    const dir = chain[chain.length - 1];
    let pending = false;
    for (const d of dirents) {
      const entry = this.#classify(d, dir, dirRelToBase, depth, here);
      if (entry === CAPPED) break;
      if (entry === null) continue;
      yield entry;
      pending = true;
      const { type, info } = entry;
      if (type !== "directory" || info === null) continue;
      if (depth >= o.maxDepth) {
        stats.depthLimited = true;
        o.onDepthLimit?.(stats.visited);
        continue;
      }
      // What was gathered here is accepted at the subdirectory's first re-verification: its
      // chain is this one plus the subdirectory, checked after its listing (decision 0035).
      // Should that listing fail (no VERIFIED), `pending` stays set and this directory's own
      // verification at its end accepts it.
      yield* this.#walkDir(
        [...chain, { rel: entry.rel, abs: entry.abs, dev: info.dev, ino: info.ino }],
        entry.relToBase,
        depth + 1,
        here,
      );
      this.#current = chain;
      if (stats.capped) break;
    }
    if (pending) {
      verifyChain(chain, o.fs);
      yield VERIFIED;
    }
  }

  /**
   * Lists the chain's last directory, sorted by code unit, with the .gitignore layers that apply
   * in it, the chain re-verified after; null (counted unreadable) when it cannot be listed.
   */
  #list(
    chain: readonly PinnedDir[],
    layers: IgnoreLayer[],
  ): { dirents: FsDirEntry[]; here: IgnoreLayer[] } | null {
    const o = this.#o;
    const dir = chain[chain.length - 1];
    let dirents: FsDirEntry[];
    try {
      dirents = [...o.fs.readDirSync(dir.abs)];
    } catch {
      verifyChain(chain, o.fs);
      this.#stats.unreadable++;
      o.onUnreadable?.(this.#stats.visited);
      return null;
    }
    o.checkpoint.check();
    let here = layers;
    if (o.respectGitignore && dirents.some((e) => e.name === ".gitignore")) {
      const layer = readGitignore(dir, o);
      if (layer) here = [...layers, layer];
    }
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    // The listing (and the .gitignore read with it) is accepted only if the chain still holds.
    verifyChain(chain, o.fs);
    return { dirents, here };
  }

  /**
   * One listed name of `dir`: its entry (counted, classified by lstat when needed), null when it
   * is skipped (hidden, .git, ignored, a pruned directory), CAPPED when the visited cap is reached.
   */
  #classify(
    d: FsDirEntry,
    dir: PinnedDir,
    dirRelToBase: string,
    depth: number,
    here: IgnoreLayer[],
  ): WalkEntry | null | typeof CAPPED {
    const o = this.#o;
    const stats = this.#stats;
    const name = d.name;
    if (!o.includeHidden && name.startsWith(".")) return null;
    const listedType = direntType(d);
    if (o.respectGitignore && name === ".git" && listedType === "directory") return null;
    const rel = joinRel(dir.rel, name);
    if (o.respectGitignore && isIgnored(here, rel, listedType === "directory")) return null;
    if (stats.visited >= o.maxVisited) {
      stats.capped = true;
      o.onCapped?.();
      return CAPPED;
    }
    stats.visited++;
    if ((stats.visited & 63) === 0) o.checkpoint.check();
    const abs = joinAbs(dir.abs, name);
    const needStat = listedType === "directory" || listedType === "other" ||
      (typeof o.statEntries === "function" ? o.statEntries(rel) : o.statEntries !== false);
    const info = needStat ? lstatOrNullSync(o.fs, abs) : null;
    const type = info === null ? listedType : infoType(info);
    const entry: WalkEntry = {
      rel,
      relToBase: dirRelToBase === "" ? name : `${dirRelToBase}/${name}`,
      abs,
      name,
      type,
      depth,
      info,
    };
    if (type === "directory" && o.pruneDir?.(entry)) return null;
    return entry;
  }
}

/**
 * The walk find_files and search_text share: below a job's base directory, with the
 * workspace's depth and visited caps, and exclude globs pruning whole directories.
 */
export function walkerBelow(
  spec: JobSpec,
  o: {
    includeHidden: boolean;
    respectGitignore: boolean;
    excluded: (relToBase: string) => boolean;
    statEntries?: WalkOptions["statEntries"];
    onUnreadable?: (visited: number) => void;
    onDepthLimit?: (visited: number) => void;
    checkpoint: Checkpoint;
  },
  stats: WalkStats,
): Walker {
  return new Walker({
    fs: fsOfKind(spec.fs),
    root: spec.root,
    base: spec.base,
    maxDepth: spec.limits.maxDepth,
    includeHidden: o.includeHidden,
    respectGitignore: o.respectGitignore,
    maxVisited: spec.limits.maxVisited,
    statEntries: o.statEntries,
    onUnreadable: o.onUnreadable,
    onDepthLimit: o.onDepthLimit,
    pruneDir: (d) => excludesDir(o.excluded, d.relToBase),
    checkpoint: o.checkpoint,
  }, stats);
}
