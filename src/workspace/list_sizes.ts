/**
 * list_directory's directory totals (`sizes: true`, decision 0057): for each listed directory,
 * the bytes of the regular files below it at any depth (hidden ones included), by lstat, links
 * never followed, each hard-linked inode once per directory (as `du -sb` counts a file).
 *
 * One walk per top-most directory asked for (the Walker: identity-tied, chain re-verified), each
 * starting from the identity the listing's lstat recorded; the directories below it that were
 * asked for too are summed by the same walk. A file's bytes are accepted only once the walk has
 * re-verified its directory (VERIFIED), so no byte counted through a swapped directory is kept.
 * The walks share one visited count (maxVisited), descend at most maxDepth levels below their
 * start, and stop with the call on cancellation or the time budget (the checkpoint). A total a
 * bound cut is kept as a lower bound and says why; a directory the sum never reached has none.
 */
import { WorkspaceError } from "./errors.ts";
import { VERIFIED, type WalkEntry, Walker, type WalkStats } from "./walk.ts";
import type { Checkpoint, JobSpec, PinnedDir } from "./engine/protocol.ts";
import type { FsInfo } from "./fs/types.ts";
import { fsOfKind } from "./fs/runtime.ts";

/**
 * Why a total is not exact: the visited cap, a directory below deeper than maxDepth, a
 * directory below that could not be read, or one that changed (removed, moved, replaced) while
 * it was summed.
 */
export type SizeCut = "maxVisited" | "maxDepth" | "unreadable" | "changed";

/** One directory's total: bytes (a lower bound when `cut`), null when the sum never reached it. */
export interface DirTotal {
  bytes: number | null;
  cut?: SizeCut;
  /** Hard-linked inodes already counted in this total ("dev:ino"). */
  seen?: Set<string>;
}

/** A directory to sum: its workspace-relative path and the identity its listing lstat saw. */
export interface SumTarget {
  path: string;
  pin: PinnedDir;
}

/** Bytes met since the walk last re-verified, kept until it does. */
class PendingBytes {
  #batches: { owners: DirTotal[]; bytes: number }[] = [];
  #linked: { owners: DirTotal[]; key: string; size: number }[] = [];

  /** A regular file's bytes for every total it lies below. */
  add(owners: DirTotal[], info: FsInfo): void {
    if (owners.length === 0) return;
    if (info.nlink !== null && info.nlink > 1 && info.ino !== null) {
      this.#linked.push({ owners, key: `${info.dev}:${info.ino}`, size: info.size });
      return;
    }
    const last = this.#batches[this.#batches.length - 1];
    if (last?.owners === owners) last.bytes += info.size;
    else this.#batches.push({ owners, bytes: info.size });
  }

  /** The walk re-verified: everything met so far counts. */
  accept(): void {
    for (const b of this.#batches) for (const o of b.owners) o.bytes = (o.bytes ?? 0) + b.bytes;
    for (const l of this.#linked) {
      for (const o of l.owners) {
        o.seen ??= new Set();
        if (o.seen.has(l.key)) continue;
        o.seen.add(l.key);
        o.bytes = (o.bytes ?? 0) + l.size;
      }
    }
    this.#batches = [];
    this.#linked = [];
  }
}

/** The sums of one call: the totals asked for, the shared visited count, the checkpoint. */
class DirSums {
  readonly totals = new Map<string, DirTotal>();
  readonly stats: WalkStats = { visited: 0, unreadable: 0, capped: false };
  #ownersChain: readonly PinnedDir[] | null = null;
  #owners: DirTotal[] = [];

  constructor(
    readonly spec: JobSpec,
    readonly cp: Checkpoint,
    readonly visitedBefore: number,
  ) {}

  /** The totals a file in the last directory of `chain` counts toward (cached per directory). */
  ownersOf(chain: readonly PinnedDir[]): DirTotal[] {
    if (chain === this.#ownersChain) return this.#owners;
    const owners: DirTotal[] = [];
    for (const link of chain) {
      const t = this.totals.get(link.rel);
      if (t) owners.push(t);
    }
    this.#ownersChain = chain;
    this.#owners = owners;
    return owners;
  }

  /** Every total on `chain` was reached and is cut (the first reason stays). */
  cutChain(chain: readonly PinnedDir[], why: SizeCut): void {
    for (const t of this.ownersOf(chain)) cut(t, why);
  }
}

function cut(t: DirTotal, why: SizeCut): void {
  t.bytes ??= 0;
  t.cut ??= why;
}

function isDirectory(e: WalkEntry): boolean {
  return e.type === "directory" && e.info !== null;
}

/** CHANGED_DURING_OPERATION at `top` or below it (a change above it fails the call). */
function changedBelow(err: unknown, top: string): boolean {
  if (!(err instanceof WorkspaceError) || err.code !== "CHANGED_DURING_OPERATION") return false;
  const path = err.details?.path;
  return typeof path === "string" && (path === top || path.startsWith(`${top}/`));
}

/** A walk below one top-most target, its hooks cutting the totals it leaves unfinished. */
function walkerFor(sums: DirSums, top: SumTarget, last: { entry: WalkEntry | null }): Walker {
  const { spec, cp } = sums;
  const walker: Walker = new Walker({
    fs: fsOfKind(spec.fs),
    root: spec.root,
    base: top.pin,
    maxDepth: spec.limits.maxDepth,
    includeHidden: true,
    respectGitignore: false,
    maxVisited: spec.limits.maxVisited,
    checkpoint: cp,
    onUnreadable: () => sums.cutChain(walker.chain, "unreadable"),
    onDepthLimit: () => {
      sums.cutChain(walker.chain, "maxDepth");
      const t = last.entry && sums.totals.get(last.entry.rel);
      if (t) cut(t, "maxDepth");
    },
    onCapped: () => sums.cutChain(walker.chain, "maxVisited"),
  }, sums.stats);
  return walker;
}

/**
 * Sums one top-most target and the targets below it (`members`, itself included). A change
 * below it cuts its unfinished totals ("changed") instead of failing the call; a total left
 * unreached is cut by what stopped the walk.
 */
async function sumTop(sums: DirSums, top: SumTarget, members: string[]): Promise<void> {
  const last: { entry: WalkEntry | null } = { entry: null };
  const walker = walkerFor(sums, top, last);
  const pending = new PendingBytes();
  let stopped: SizeCut = "changed";
  try {
    for (const e of walker.entries()) {
      if (e === VERIFIED) {
        sums.totals.get(top.path)!.bytes ??= 0;
        pending.accept();
        continue;
      }
      const t = sums.cp.tick();
      if (t) await t;
      sums.cp.counters.filesSearched = sums.visitedBefore + sums.stats.visited;
      last.entry = e;
      if (isDirectory(e)) {
        const total = sums.totals.get(e.rel);
        if (total) total.bytes ??= 0;
      } else if (e.type === "file" && e.info !== null) {
        pending.add(sums.ownersOf(walker.chain), e.info);
      }
    }
    walker.verifyCurrent();
    pending.accept();
    if (sums.stats.capped) stopped = "maxVisited";
  } catch (err) {
    if (!changedBelow(err, top.path)) throw err;
    sums.cutChain(walker.chain, "changed");
  }
  for (const m of members) {
    const total = sums.totals.get(m)!;
    if (total.bytes === null) total.cut ??= stopped;
  }
}

/**
 * The totals of `targets` (listed directories, in walk order), each under its path. A directory
 * listed but not found by the sum (gone or replaced since the listing) has none, cut "changed".
 */
export async function sumDirectories(
  spec: JobSpec,
  targets: SumTarget[],
  cp: Checkpoint,
  visitedBefore: number,
): Promise<Map<string, DirTotal>> {
  const sums = new DirSums(spec, cp, visitedBefore);
  for (const t of targets) sums.totals.set(t.path, { bytes: null });
  let i = 0;
  while (i < targets.length) {
    const top = targets[i];
    const members = [top.path];
    for (i++; i < targets.length && targets[i].path.startsWith(`${top.path}/`); i++) {
      members.push(targets[i].path);
    }
    if (sums.stats.capped) {
      for (const m of members) sums.totals.get(m)!.cut = "maxVisited";
      continue;
    }
    await sumTop(sums, top, members);
  }
  return sums.totals;
}
