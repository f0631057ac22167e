/**
 * The write primitives every write operation shares: the commit gate (cancellation and the time
 * budget checked right before the first lasting change), the atomic write (a random-named
 * temporary file beside the target, filled, verified, then renamed or linked into place), the
 * atomic link (an existing entry given a second name the same way), checked removal of an entry
 * by renaming it to a random name first, and the helpers those need. Nothing here is an
 * operation; write.ts, directories.ts, move.ts, copy.ts, delete.ts and edit.ts are.
 */
import type { FileHandle } from "node:fs/promises";
import type { Workspace } from "./workspace.ts";
import { WorkspaceError } from "./errors.ts";
import type { Resolved } from "./path_policy.ts";
import {
  assertSameIdentity,
  chainHolds,
  type ChainLink,
  createExclusive,
  fsyncDir,
  type Identity,
  lstatOrNullSync,
  sameIdentity,
  verifyChain,
} from "./containment.ts";
import { fsErrorKind, type FsInfo, type WorkspaceFs } from "./fs/types.ts";

/** Prefix of the temporary files an atomic write creates beside its target. */
export const TEMP_PREFIX = ".wmcp-tmp-";

export function randomHex(bytes: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}

export function joinChild(dir: string, name: string): string {
  return `${dir === "/" ? "" : dir}/${name}`;
}

/** Whether abs is, right now and through a verified chain, the entry with this identity. */
export function isOursAt(
  fs: WorkspaceFs,
  chain: readonly ChainLink[],
  abs: string,
  id: Identity,
): boolean {
  // Chain, entry, chain, entry, chain: a swapper must flip the tree at each of these look-ups
  // to make an entry elsewhere pass for ours.
  for (let i = 0; i < 2; i++) {
    if (!chainHolds(fs, chain)) return false;
    const now = lstatOrNullSync(fs, abs);
    if (now === null || !sameIdentity(now, id)) return false;
  }
  return chainHolds(fs, chain);
}

/**
 * Removes an entry this operation created (a temp file or directory) by its path, only when the
 * chain verifies and the path still leads to it; otherwise leaves it. Returns whether it is gone.
 */
export function removeOwn(
  fs: WorkspaceFs,
  chain: readonly ChainLink[],
  abs: string,
  id: Identity,
): boolean {
  if (!isOursAt(fs, chain, abs, id)) return false;
  try {
    fs.removeSync(abs);
    return true;
  } catch {
    return false;
  }
}

export function changed(
  message: string,
  argument: string,
  details: Record<string, unknown> = {},
): WorkspaceError {
  return new WorkspaceError("CHANGED_DURING_OPERATION", message, { argument, details });
}

/**
 * What a write checks right before its commit point (its first change that stays on disk):
 * the caller's cancellation and the operation's time budget, counted from when the operation
 * started running (it holds the workspace lock from then on).
 */
export interface CommitGate {
  signal?: AbortSignal;
  /** performance.now() when the operation started running. */
  started: number;
  /** The workspace's maxOperationMs. */
  maxOperationMs: number;
}

/** A commit gate for an operation starting now. */
export function commitGate(ws: Workspace, signal?: AbortSignal): CommitGate {
  return { signal, started: performance.now(), maxOperationMs: ws.limits.maxOperationMs };
}

/**
 * Throws CANCELLED or TIME_BUDGET_EXCEEDED when the write must not pass its commit point; when it
 * throws, nothing has changed. Called synchronously right before the commit, so no cancellation
 * can arrive between this check and the change.
 */
export function assertMayCommit(gate: CommitGate | undefined, what: string): void {
  if (gate === undefined) return;
  if (gate.signal?.aborted) {
    throw new WorkspaceError(
      "CANCELLED",
      `${what} was cancelled before it changed anything; nothing was changed`,
      { details: { committed: false } },
    );
  }
  if (performance.now() - gate.started > gate.maxOperationMs) {
    throw new WorkspaceError(
      "TIME_BUDGET_EXCEEDED",
      `${what} ran longer than maxOperationMs (${gate.maxOperationMs} ms) before it changed anything; nothing was changed`,
      { details: { limit: gate.maxOperationMs, committed: false } },
    );
  }
}

/** Throws HARD_LINKED for a file with more than one hard link: wmcp never writes through one. */
export function refuseHardLinked(
  info: Pick<FsInfo, "nlink">,
  rel: string,
  argument: string,
): void {
  if (info.nlink !== null && info.nlink > 1) {
    throw new WorkspaceError(
      "HARD_LINKED",
      `${argument} ${rel} has ${info.nlink} hard links; wmcp never writes through a hard link`,
      { argument, details: { nlink: info.nlink } },
    );
  }
}

/** The chain ending at a resolved path's parent directory (which must exist). */
export function parentChain(
  target: Pick<Resolved, "chain" | "parentAbs" | "rel">,
  argument: string,
) {
  const last = target.chain[target.chain.length - 1];
  if (last === undefined || last.abs !== target.parentAbs) {
    throw changed(`the parent directory of ${target.rel} is missing or changed`, argument, {
      reason: "parent-changed",
    });
  }
  return target.chain;
}

/**
 * Throws CHANGED_DURING_OPERATION unless the checked parent directory of a resolved path is
 * still reached without symbolic links and, when its checked chain is known, every directory
 * from the pinned root down still has the identity it was checked with.
 */
export async function assertParentUnmoved(
  target: Pick<Resolved, "parentAbs" | "rel" | "fs"> & Partial<Pick<Resolved, "chain">>,
  argument: string,
): Promise<void> {
  const { fs } = target;
  if (target.chain !== undefined) verifyChain(target.chain, { rel: target.rel, argument, fs });
  let real: string | null = null;
  try {
    real = await fs.realPath(target.parentAbs);
  } catch {
    // Gone or unreadable: treated as changed.
  }
  if (real !== target.parentAbs) {
    throw new WorkspaceError(
      "CHANGED_DURING_OPERATION",
      `a directory above ${target.rel} changed since it was checked; nothing was done`,
      { argument },
    );
  }
}

/** One atomic replace under way: its target, the target's parent chain and the temporary file. */
interface Replace {
  target: Resolved;
  fs: WorkspaceFs;
  chain: readonly ChainLink[];
  argument: string;
  /** The temporary file beside the target: absolute and workspace-relative. */
  tmpAbs: string;
  tmpRel: string;
}

/** A fresh random temporary name in the target's directory. */
function tempBeside(target: Resolved): { tmpAbs: string; tmpRel: string } {
  const tmpName = `${TEMP_PREFIX}${randomHex(8)}`;
  const tmpRel = target.rel.includes("/")
    ? `${target.rel.slice(0, target.rel.lastIndexOf("/"))}/${tmpName}`
    : tmpName;
  return { tmpAbs: joinChild(target.parentAbs, tmpName), tmpRel };
}

/**
 * Fills the just-created temporary file: it must be in the checked directory before any byte is
 * written; then the permission bits, the content (`fill`), fsync.
 */
async function fillTemp(
  op: Replace,
  h: FileHandle,
  tmpId: Identity,
  content: { fill: (h: FileHandle) => Promise<void>; mode: number | null },
): Promise<void> {
  // Before any byte is written: the temp file must be in the checked directory.
  if (!isOursAt(op.fs, op.chain, op.tmpAbs, tmpId)) {
    throw changed(
      `a directory above ${op.target.rel} was replaced while the temporary file was created; nothing was written`,
      op.argument,
      { reason: "parent-changed" },
    );
  }
  // Keep the permission bits; setuid/setgid are dropped as the kernel does on a write.
  if (content.mode !== null) await h.chmod(content.mode & 0o1777);
  await content.fill(h);
  await h.sync();
}

/** Renames the temporary file over the existing target, which must still be the checked file. */
function replaceExisting(op: Replace, existing: FsInfo): void {
  const { target, fs, argument } = op;
  const now = lstatOrNullSync(fs, target.abs);
  if (now === null) {
    throw changed(`${target.rel} was removed meanwhile; nothing was written`, argument);
  }
  assertSameIdentity(existing, now, target.rel, argument);
  fs.renameSync(op.tmpAbs, target.abs);
}

/**
 * Puts the temporary file under the new target's name without clobbering: a hard link, which
 * fails if the name appeared meanwhile; a check then a rename where hard links are unsupported.
 * Returns whether the temporary name is still there (linked: afterCommit removes it).
 */
function placeNew(op: Replace): boolean {
  const { target, fs, argument } = op;
  try {
    // No-clobber create: link fails if the name appeared meanwhile (even as a dangling link).
    fs.linkSync(op.tmpAbs, target.abs);
    return true;
  } catch (err) {
    if (fsErrorKind(err) === "AlreadyExists") {
      throw new WorkspaceError(
        "ALREADY_EXISTS",
        `${target.rel} was created by someone else meanwhile`,
        { argument },
      );
    }
    if (fsErrorKind(err) === "NotFound") {
      throw changed(`a directory above ${target.rel} was replaced meanwhile`, argument);
    }
    // No hard links on this file system: check, then rename.
    if (lstatOrNullSync(fs, target.abs) !== null) {
      throw new WorkspaceError(
        "ALREADY_EXISTS",
        `${target.rel} was created by someone else meanwhile`,
        { argument },
      );
    }
    verifyChain(op.chain, { rel: target.rel, argument, fs });
    fs.renameSync(op.tmpAbs, target.abs);
    return false;
  }
}

/**
 * The checks right before the commit and the commit itself (rename or link), synchronously: no
 * other task of this process runs in between, so a cancellation seen by neither the gate nor the
 * rename cannot happen in between. Returns once the target's name holds the new content, and
 * whether the temporary name still holds it too (placeNew's link).
 */
function commitTemp(op: Replace, tmpId: Identity, options: PlaceOptions): boolean {
  const { target, fs, argument } = op;
  assertMayCommit(options.gate, `the write of ${target.rel}`);
  verifyChain(op.chain, { rel: target.rel, argument, fs });
  if (!isOursAt(fs, op.chain, op.tmpAbs, tmpId)) {
    throw changed(`the temporary file of ${target.rel} was moved meanwhile`, argument);
  }
  if (!options.existing) return placeNew(op);
  replaceExisting(op, options.existing);
  return false;
}

/**
 * After the commit: the result must be where it was meant to be; the link's source (`linked`: the
 * temporary name placeNew linked from) goes; the directory is flushed unless the caller flushes it
 * once for many entries (syncDir false).
 */
async function afterCommit(
  op: Replace,
  tmpId: Identity,
  linked: boolean,
  syncDir = true,
): Promise<void> {
  const { target, fs, chain } = op;
  // The result must be where it was meant to be: the kernel looked the names up again.
  if (!isOursAt(fs, chain, target.abs, tmpId)) {
    // A linked temporary name is still beside the content, where no verified path reaches now:
    // left, and named.
    throw changed(
      `a directory above ${target.rel} was swapped during the final rename; the content may have ` +
        "been placed elsewhere (the kernel sandbox closes this window)",
      op.argument,
      { reason: "swapped-during-commit", ...(linked ? { leftBehind: [op.tmpRel] } : {}) },
    );
  }
  // The link's source: removed through the verified chain, or (that chain broken meanwhile) left
  // and named, never silently (it is a second name of the new file).
  const gone = () => chainHolds(fs, chain) && lstatOrNullSync(fs, op.tmpAbs) === null;
  if (linked && !removeOwn(fs, chain, op.tmpAbs, tmpId) && !gone()) {
    throw changed(
      `${target.rel} was written, then a directory above it was swapped before its temporary ` +
        `name ${op.tmpRel} was removed: that name was left`,
      op.argument,
      { reason: "parent-changed", committed: true, leftBehind: [op.tmpRel] },
    );
  }
  if (syncDir) await fsyncDir(target.parentAbs);
}

/** The refusal when an uncommitted temporary file cannot be removed through a verified path. */
function leftTemp(op: Replace): WorkspaceError {
  return changed(
    `a directory above ${op.target.rel} changed; the temporary file ${op.tmpRel} could not be ` +
      "removed safely and was left",
    op.argument,
    { reason: "parent-changed", leftBehind: [op.tmpRel] },
  );
}

/** How an atomic write or link places its entry. */
export interface PlaceOptions {
  /** The target's lstat when it was checked (it is replaced), or null (a new name, never clobbered). */
  existing: FsInfo | null;
  /** The argument errors name. */
  argument: string;
  /** Checked synchronously right before the commit (none: the operation committed already). */
  gate?: CommitGate;
  /** fsync the target's directory after the commit (default true). */
  syncDir?: boolean;
}

/** The start of an atomic replace: the checked parent chain, unmoved, and a temporary name in it. */
async function beginReplace(target: Resolved, argument: string): Promise<Replace> {
  const { fs } = target;
  const chain = parentChain(target, argument);
  await assertParentUnmoved(target, argument);
  const op: Replace = { target, fs, chain, argument, ...tempBeside(target) };
  verifyChain(chain, { rel: target.rel, argument, fs });
  return op;
}

/**
 * Removes whatever an uncommitted operation left at its temporary name (the name is random and
 * exists only in the checked directory), through a verified chain; throws leftTemp otherwise.
 */
function dropTemp(op: Replace): void {
  const there = lstatOrNullSync(op.fs, op.tmpAbs);
  if (there !== null && !removeOwn(op.fs, op.chain, op.tmpAbs, there)) throw leftTemp(op);
}

/**
 * Writes (or replaces) a file atomically: an empty temp file with a random name in the same
 * directory, verified to have landed there (chain and identity) before any byte is written;
 * the permission bits (`mode`), the content (`fill` writes it to the handle), fsync, identity
 * checks of the chain, the temp file and the replaced file; rename (or, for a new file, link); a
 * check that the result is where it was meant to be; fsync the directory. A crash leaves the old
 * or the new content, never a mix. The rename's source is a random name that exists only in the
 * checked directory, so a parent swapped right before it makes it fail instead of acting
 * elsewhere. A failure before the commit removes the temporary file.
 */
export async function atomicWrite(
  target: Resolved,
  fill: (h: FileHandle) => Promise<void>,
  options: PlaceOptions & { mode: number | null },
): Promise<void> {
  const op = await beginReplace(target, options.argument);
  const h = await createExclusive(op.tmpAbs);
  let tmpId: Identity | null = null;
  let committed = false;
  try {
    try {
      const st = await h.stat();
      tmpId = { dev: st.dev, ino: st.ino };
      await fillTemp(op, h, tmpId, { fill, mode: options.mode });
    } finally {
      await h.close();
    }
    const linked = commitTemp(op, tmpId, options);
    committed = true;
    await afterCommit(op, tmpId, linked, options.syncDir);
  } finally {
    if (!committed && tmpId !== null && !removeOwn(op.fs, op.chain, op.tmpAbs, tmpId)) {
      // Not removable through a verified path: left where it is, and said so.
      // deno-lint-ignore no-unsafe-finally
      throw leftTemp(op);
    }
  }
}

/**
 * Replaces (or creates) a file atomically with the given content (atomicWrite); a replaced file's
 * permission bits are kept.
 */
export function atomicReplace(
  target: Resolved,
  content: Uint8Array,
  options: PlaceOptions,
): Promise<void> {
  return atomicWrite(target, (h) => h.writeFile(content), {
    ...options,
    mode: options.existing?.mode ?? null,
  });
}

/** An existing entry to give a second name: its path, identity and checked parent chain. */
export interface LinkSource {
  abs: string;
  rel: string;
  id: Identity;
  chain: readonly ChainLink[];
  /** The argument errors about it name. */
  argument: string;
}

/**
 * Attempts of linkTemp while its source still holds after a failure: a swap racing the link can
 * make it fail on a directory and be undone before the check after it.
 */
const LINK_ATTEMPTS = 8;

/**
 * Hard-links the source to the temporary name of op. A failure is judged by what holds after it:
 * a source that is no longer the checked entry (a directory swapped in makes link fail with
 * EPERM) is CHANGED_DURING_OPERATION; EXDEV is CROSS_DEVICE; another failure is tried again while
 * the source holds, and after LINK_ATTEMPTS is the file system's own answer (EPERM:
 * PERMISSION_DENIED, saying why a link can be refused a second name).
 */
function linkTemp(op: Replace, source: LinkSource): void {
  for (let attempt = 1;; attempt++) {
    try {
      op.fs.linkSync(source.abs, op.tmpAbs);
      return;
    } catch (err) {
      if (!isOursAt(op.fs, source.chain, source.abs, source.id)) {
        throw changed(`${source.rel} was replaced or moved while it was linked`, source.argument, {
          reason: "entry-changed",
        });
      }
      if ((err as { code?: string }).code === "EXDEV") {
        throw new WorkspaceError(
          "CROSS_DEVICE",
          `${op.target.rel} is on another file system than ${source.rel}: a link is copied as a ` +
            "second name of itself, which cannot cross file systems",
          { argument: op.argument, cause: err },
        );
      }
      if (attempt < LINK_ATTEMPTS) continue;
      if ((err as { code?: string }).code !== "EPERM") throw err;
      throw new WorkspaceError(
        "PERMISSION_DENIED",
        `the file system refused ${source.rel} a second name: it has no hard links of symbolic ` +
          "links, or the link is another user's (protected_hardlinks)",
        { argument: source.argument, cause: err },
      );
    }
  }
}

/**
 * Gives an existing entry (a symbolic link copied as itself: its text, never its target) a name
 * at target, atomically as atomicWrite places a file: the source checked (its chain holds, its
 * name leads to the checked identity), hard-linked to a random name beside target, that name
 * checked to hold the very entry (a kernel that followed the link, or a swapped directory,
 * gives another identity: removed, CHANGED_DURING_OPERATION), then the same commit.
 */
export async function atomicLink(
  target: Resolved,
  source: LinkSource,
  options: PlaceOptions,
): Promise<void> {
  const op = await beginReplace(target, options.argument);
  if (!isOursAt(op.fs, source.chain, source.abs, source.id)) {
    throw changed(`${source.rel} was replaced or moved since it was checked`, source.argument, {
      reason: "entry-changed",
    });
  }
  linkTemp(op, source);
  let committed = false;
  try {
    if (!isOursAt(op.fs, op.chain, op.tmpAbs, source.id)) {
      throw changed(
        `${source.rel} or a directory above it or ${target.rel} changed while it was linked; nothing was copied`,
        source.argument,
        { reason: "entry-changed" },
      );
    }
    const linked = commitTemp(op, source.id, options);
    committed = true;
    await afterCommit(op, source.id, linked, options.syncDir);
  } finally {
    if (!committed) dropTemp(op);
  }
}

/**
 * Removes one entry (file, link, or empty directory) whose parent chain was checked: verify,
 * rename it to a random name in the same directory, verify that the renamed entry is the one
 * checked and is still in that directory, then remove the random name. A parent swapped at the
 * last moment can make the rename act elsewhere (reported), never the removal: the random name
 * exists nowhere else.
 */
export function removeChecked(
  fs: WorkspaceFs,
  chain: readonly ChainLink[],
  entry: { abs: string; rel: string; id: Identity },
  argument: string,
): void {
  const parent = chain[chain.length - 1];
  verifyChain(chain, { rel: entry.rel, argument, fs });
  const now = lstatOrNullSync(fs, entry.abs);
  if (now === null || !sameIdentity(now, entry.id)) {
    throw changed(`${entry.rel} was replaced or moved since it was checked`, argument, {
      reason: "entry-changed",
    });
  }
  const victim = joinChild(parent.abs, `${TEMP_PREFIX}del-${randomHex(8)}`);
  try {
    fs.renameSync(entry.abs, victim);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== "EBUSY" && code !== "EXDEV" && code !== "EPERM") throw err;
    // A mount point cannot be renamed: remove it by its verified name.
    verifyChain(chain, { rel: entry.rel, argument, fs });
    fs.removeSync(entry.abs);
    return;
  }
  if (!isOursAt(fs, chain, victim, entry.id)) {
    throw changed(
      `a directory above ${entry.rel} was swapped while it was removed; the entry may have been renamed elsewhere`,
      argument,
      { reason: "swapped-during-commit" },
    );
  }
  try {
    fs.removeSync(victim);
  } catch (err) {
    // Not removable (a directory that became non-empty, say): give it its name back.
    if (isOursAt(fs, chain, victim, entry.id) && lstatOrNullSync(fs, entry.abs) === null) {
      fs.renameSync(victim, entry.abs);
    }
    throw err;
  }
}
