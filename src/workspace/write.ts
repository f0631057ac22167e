/** Write operations: write_file, create_directory, move_path, delete_path, and the atomic replace they share. */
import fsp from "node:fs/promises";
import { constants as FS } from "node:fs";
import type { Workspace } from "./workspace.ts";
import { toWorkspaceError, WorkspaceError } from "./errors.ts";
import type { Resolved } from "./path_policy.ts";
import {
  assertSameIdentity,
  chainHolds,
  type ChainLink,
  type Identity,
  lstatOrNullSync,
  openCheckedFile,
  refuseSpecial,
  requireExisting,
  sameIdentity,
  verifyAfterRead,
  verifyChain,
} from "./containment.ts";
import {
  assertFitsBudget,
  type EntryType,
  entryType,
  type HashSkipped,
  type Pace,
  pacer,
  sha256Bounded,
  sha256Hex,
} from "./text.ts";
import { jsonBytes, ResultBudget } from "./budget.ts";
import { fsErrorKind, type FsInfo, type WorkspaceFs } from "./fs/types.ts";

const utf8 = new TextEncoder();

/** Prefix of the temporary files an atomic write creates beside its target. */
export const TEMP_PREFIX = ".wmcp-tmp-";

function randomHex(bytes: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}

async function fsyncDir(abs: string): Promise<void> {
  try {
    const h = await fsp.open(abs, FS.O_RDONLY | FS.O_DIRECTORY);
    try {
      await h.sync();
    } finally {
      await h.close();
    }
  } catch {
    // Some file systems refuse fsync on directories; the rename itself is still atomic.
  }
}

/**
 * sha256 of an existing regular file, read through an identity-checked handle: streamed,
 * cancellable, and not computed (the reason returned instead) for a file over maxHashBytes.
 */
export async function hashFile(
  r: Resolved,
  options: Pace & { argument: string; limit: number },
): Promise<{ sha256: string } | { skipped: HashSkipped }> {
  const h = await openCheckedFile(r, options.argument);
  let hashed: { sha256: string } | { skipped: HashSkipped };
  try {
    hashed = await sha256Bounded(h, options);
  } finally {
    await h.close();
  }
  // As for reads: the name still leads to what was hashed (decision 0010).
  verifyAfterRead(r, options.argument);
  return hashed;
}

function joinChild(dir: string, name: string): string {
  return `${dir === "/" ? "" : dir}/${name}`;
}

/** Whether abs is, right now and through a verified chain, the entry with this identity. */
function isOursAt(
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
function removeOwn(
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

function changed(
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

/** The chain ending at a resolved path's parent directory (which must exist). */
function parentChain(target: Pick<Resolved, "chain" | "parentAbs" | "rel">, argument: string) {
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

/**
 * Replaces (or creates) a file atomically: an empty temp file with a random name in the same
 * directory, verified to have landed there (chain and identity) before any byte is written;
 * write, fsync, identity checks of the chain, the temp file and the replaced file; rename (or,
 * for a new file, link); a check that the result is where it was meant to be; fsync the
 * directory. A crash leaves the old or the new content, never a mix. The rename's source is a
 * random name that exists only in the checked directory, so a parent swapped right before it
 * makes it fail instead of acting elsewhere.
 */
export async function atomicReplace(
  target: Resolved,
  content: Uint8Array,
  options: { existing: FsInfo | null; argument: string; gate?: CommitGate },
): Promise<void> {
  const { argument, existing } = options;
  const { fs } = target;
  const chain = parentChain(target, argument);
  await assertParentUnmoved(target, argument);
  const tmpName = `${TEMP_PREFIX}${randomHex(8)}`;
  const tmpAbs = joinChild(target.parentAbs, tmpName);
  const tmpRel = target.rel.includes("/")
    ? `${target.rel.slice(0, target.rel.lastIndexOf("/"))}/${tmpName}`
    : tmpName;
  verifyChain(chain, { rel: target.rel, argument, fs });
  const h = await fsp.open(tmpAbs, FS.O_WRONLY | FS.O_CREAT | FS.O_EXCL | FS.O_NOFOLLOW, 0o666);
  let tmpId: Identity | null = null;
  let committed = false;
  try {
    try {
      const st = await h.stat();
      tmpId = { dev: st.dev, ino: st.ino };
      // Before any byte is written: the temp file must be in the checked directory.
      if (!isOursAt(fs, chain, tmpAbs, tmpId)) {
        throw changed(
          `a directory above ${target.rel} was replaced while the temporary file was created; nothing was written`,
          argument,
          { reason: "parent-changed" },
        );
      }
      // Keep the permission bits; setuid/setgid are dropped as the kernel does on a write.
      if (existing?.mode != null) await h.chmod(existing.mode & 0o1777);
      await h.writeFile(content);
      await h.sync();
    } finally {
      await h.close();
    }
    // Synchronous from here to the rename: no other task of this process runs in between, so
    // a cancellation seen by neither this check nor the rename cannot happen in between.
    assertMayCommit(options.gate, `the write of ${target.rel}`);
    verifyChain(chain, { rel: target.rel, argument, fs });
    if (!isOursAt(fs, chain, tmpAbs, tmpId)) {
      throw changed(`the temporary file of ${target.rel} was moved meanwhile`, argument);
    }
    if (existing) {
      const now = lstatOrNullSync(fs, target.abs);
      if (now === null) {
        throw changed(`${target.rel} was removed meanwhile; nothing was written`, argument);
      }
      assertSameIdentity(existing, now, target.rel, argument);
      fs.renameSync(tmpAbs, target.abs);
      committed = true;
    } else {
      try {
        // No-clobber create: link fails if the name appeared meanwhile (even as a dangling link).
        fs.linkSync(tmpAbs, target.abs);
        committed = true;
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
        verifyChain(chain, { rel: target.rel, argument, fs });
        fs.renameSync(tmpAbs, target.abs);
        committed = true;
      }
    }
    // The result must be where it was meant to be: the kernel looked the names up again.
    if (!isOursAt(fs, chain, target.abs, tmpId)) {
      throw changed(
        `a directory above ${target.rel} was swapped during the final rename; the content may have ` +
          "been placed elsewhere (the kernel sandbox closes this window)",
        argument,
        { reason: "swapped-during-commit" },
      );
    }
    if (lstatOrNullSync(fs, tmpAbs) !== null) removeOwn(fs, chain, tmpAbs, tmpId); // the link's source
    await fsyncDir(target.parentAbs);
  } finally {
    if (!committed && tmpId !== null && !removeOwn(fs, chain, tmpAbs, tmpId)) {
      // Not removable through a verified path: left where it is, and said so.
      // deno-lint-ignore no-unsafe-finally
      throw changed(
        `a directory above ${target.rel} changed; the temporary file ${tmpRel} could not be ` +
          "removed safely and was left",
        argument,
        { reason: "parent-changed", leftBehind: [tmpRel] },
      );
    }
  }
}

/** Arguments of writeFile. */
export interface WriteFileArgs {
  path: string;
  content: string;
  ifExists?: "error" | "overwrite";
  expectedSha256?: string;
  createParents?: boolean;
  /** Must be true to replace an existing file (ifExists "overwrite"). */
  confirm?: boolean;
}

/** Result of writeFile. */
export interface WriteFileResult {
  path: string;
  created: boolean;
  size: number;
  sha256: string;
  previousSha256?: string;
  /** Why previousSha256 is absent although a file was replaced: it was larger than maxHashBytes. */
  previousSha256Skipped?: HashSkipped;
}

function assertReplaceable(info: FsInfo, rel: string, argument: string): void {
  if (info.isDirectory) {
    throw new WorkspaceError("IS_A_DIRECTORY", `${argument} ${rel} is a directory`, { argument });
  }
  refuseSpecial(info, rel, argument);
  if (info.nlink !== null && info.nlink > 1) {
    throw new WorkspaceError(
      "HARD_LINKED",
      `${argument} ${rel} has ${info.nlink} hard links; wmcp never writes through a hard link`,
      { argument, details: { nlink: info.nlink } },
    );
  }
}

/** Writes a whole UTF-8 file atomically; refuses to clobber unless asked, and checks expectedSha256. */
export async function writeFile(
  ws: Workspace,
  args: WriteFileArgs,
  options: { signal?: AbortSignal } = {},
): Promise<WriteFileResult> {
  ws.assertWritable("write_file");
  const gate = commitGate(ws, options.signal);
  const bytes = utf8.encode(args.content);
  if (bytes.length > ws.limits.maxWriteBytes) {
    throw new WorkspaceError(
      "TOO_LARGE",
      `content is ${bytes.length} bytes, over the write limit of ${ws.limits.maxWriteBytes}`,
      {
        argument: "content",
        details: { size: bytes.length, limit: ws.limits.maxWriteBytes },
      },
    );
  }
  let r = await ws.policy.resolve(args.path, { argument: "path", followLeaf: true });
  let committed = false;
  if (r.rel === ".") {
    throw new WorkspaceError("IS_A_DIRECTORY", "path is the workspace root", { argument: "path" });
  }
  if (!r.parentExists) {
    if (!args.createParents) {
      throw new WorkspaceError(
        "NOT_FOUND",
        `the parent directory of ${r.rel} does not exist (pass createParents: true to create it)`,
        { argument: "path" },
      );
    }
    const dirs = r.rel.split("/").slice(0, -1);
    assertDepth(ws, dirs.length, "path");
    // Creating the first missing parent is the commit point: from there the write completes.
    const made = await makeDirectories(ws, { chain: r.chain, segs: dirs, gate }, "path");
    if (made.length > 0) committed = true;
    r = await ws.policy.resolve(args.path, { argument: "path", followLeaf: true });
  }
  const existing = r.info;
  let previousSha256: string | undefined;
  let previousSkipped: HashSkipped | undefined;
  if (existing) {
    assertReplaceable(existing, r.rel, "path");
    if ((args.ifExists ?? "error") === "error") {
      throw new WorkspaceError(
        "ALREADY_EXISTS",
        `${r.rel} already exists (pass ifExists: "overwrite" to replace it)`,
        { argument: "path" },
      );
    }
    const hashed = await hashFile(r, {
      argument: "path",
      limit: ws.limits.maxHashBytes,
      signal: options.signal,
      maxOperationMs: ws.limits.maxOperationMs,
    });
    if ("skipped" in hashed) {
      previousSkipped = hashed.skipped;
      if (args.expectedSha256 !== undefined) {
        throw new WorkspaceError(
          "TOO_LARGE",
          `${r.rel} is ${hashed.skipped.size} bytes, over maxHashBytes (${hashed.skipped.limit}): its sha256 cannot be checked against expectedSha256; nothing was written`,
          { argument: "expectedSha256", details: { ...hashed.skipped } },
        );
      }
    } else previousSha256 = hashed.sha256;
  }
  if (args.expectedSha256 !== undefined) {
    const expected = args.expectedSha256.toLowerCase();
    if (previousSha256 !== expected) {
      throw new WorkspaceError(
        "CONFLICT",
        existing
          ? `${r.rel} has changed: its sha256 is ${previousSha256}, not the expected ${expected}`
          : `${r.rel} does not exist, but expectedSha256 was given`,
        { argument: "expectedSha256", details: { expected, actual: previousSha256 ?? null } },
      );
    }
  }
  if (existing && args.confirm !== true) {
    throw new WorkspaceError(
      "CONFIRMATION_REQUIRED",
      `overwriting ${r.rel} needs explicit confirmation: pass confirm: true`,
      { argument: "confirm" },
    );
  }
  const out: WriteFileResult = {
    path: r.rel,
    created: !existing,
    size: bytes.length,
    sha256: sha256Hex(bytes),
  };
  if (previousSha256 !== undefined) out.previousSha256 = previousSha256;
  if (previousSkipped !== undefined) out.previousSha256Skipped = previousSkipped;
  assertFitsBudget(out, { limit: ws.limits.maxResultBytes, what: "write_file" });
  await atomicReplace(r, bytes, {
    existing,
    argument: "path",
    gate: committed ? undefined : gate,
  });
  return out;
}

/** Throws INVALID_ARGUMENT (naming maxDepth) when a directory path is deeper than the limit. */
function assertDepth(ws: Workspace, depth: number, argument: string): void {
  if (depth > ws.limits.maxDepth) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `${argument} is ${depth} directories deep, over the maxDepth limit of ${ws.limits.maxDepth}; nothing was created`,
      { argument, details: { limit: "maxDepth", value: ws.limits.maxDepth, depth } },
    );
  }
}

/**
 * Creates each missing directory of segs (a real workspace-relative path) below the existing
 * part of its checked chain, one level at a time, each as a random-named directory renamed to
 * its name after it was verified to be in the checked parent. A constant number of system calls
 * per level (the parent's identity stands for its chain: the kernel walks the path each time).
 * On failure, what was created is removed where that can be done through verified paths.
 */
async function makeDirectories(
  ws: Workspace,
  from: { chain: readonly ChainLink[]; segs: readonly string[]; gate?: CommitGate },
  argument: string,
): Promise<string[]> {
  const { segs } = from;
  const { fs } = ws.policy;
  const chain: ChainLink[] = [...from.chain];
  const created: { rel: string; chain: ChainLink[]; id: Identity }[] = [];
  const parentOk = (link: ChainLink) => {
    const now = lstatOrNullSync(fs, link.abs);
    return now !== null && now.isDirectory && !now.isSymlink && sameIdentity(now, link);
  };
  // Synchronous from this check through every level: creating the first missing directory is
  // the commit point, and no cancellation is seen between the check and the last level.
  if (chain.length - 1 < segs.length) assertMayCommit(from.gate, `creating ${segs.join("/")}`);
  try {
    verifyChain(chain, { rel: segs.join("/"), argument, fs });
    for (let i = chain.length - 1; i < segs.length; i++) {
      const parent = chain[chain.length - 1];
      const name = segs[i];
      const rel = segs.slice(0, i + 1).join("/");
      const abs = joinChild(parent.abs, name);
      ws.policy.verifyRoot(argument);
      if (!parentOk(parent)) {
        throw changed(`a directory above ${rel} was replaced or moved; stopped`, argument, {
          reason: "parent-changed",
        });
      }
      let info = lstatOrNullSync(fs, abs);
      if (info === null) {
        const tmpName = `${TEMP_PREFIX}${randomHex(8)}`;
        const tmpAbs = joinChild(parent.abs, tmpName);
        const tmpRel = i === 0 ? tmpName : `${segs.slice(0, i).join("/")}/${tmpName}`;
        fs.mkdirSync(tmpAbs);
        const made = lstatOrNullSync(fs, tmpAbs);
        if (made === null || !made.isDirectory || !parentOk(parent)) {
          const gone = made !== null && removeOwn(fs, [parent], tmpAbs, made);
          throw changed(
            `a directory above ${rel} was replaced while it was created; stopped`,
            argument,
            { reason: "parent-changed", ...(gone ? {} : { leftBehind: [tmpRel] }) },
          );
        }
        try {
          fs.renameSync(tmpAbs, abs);
        } catch (err) {
          // Created meanwhile (or a non-empty directory, or a file, took the name).
          if (!removeOwn(fs, [parent], tmpAbs, made)) {
            throw changed(`${rel} changed while it was created`, argument, {
              leftBehind: [tmpRel],
            });
          }
          info = lstatOrNullSync(fs, abs);
          if (info === null) throw err;
        }
        if (info === null) {
          const now = lstatOrNullSync(fs, abs);
          if (now === null || !sameIdentity(now, made) || !parentOk(parent)) {
            throw changed(
              `a directory above ${rel} was swapped during its creation; it may have been created elsewhere`,
              argument,
              { reason: "swapped-during-commit" },
            );
          }
          created.push({ rel, chain: [...chain], id: made });
          info = now;
        }
      }
      if (info.isSymlink) {
        throw changed(`${rel} became a symbolic link meanwhile; stopped`, argument);
      }
      if (!info.isDirectory) {
        throw new WorkspaceError("NOT_A_DIRECTORY", `${rel} exists and is not a directory`, {
          argument,
        });
      }
      chain.push({ abs, dev: info.dev, ino: info.ino });
    }
  } catch (err) {
    // Undo, deepest first, only through verified paths; say what could not be undone.
    const left: string[] = [];
    for (const c of created.reverse()) {
      if (
        !removeOwn(
          fs,
          c.chain,
          joinChild(c.chain[c.chain.length - 1].abs, c.rel.split("/").pop()!),
          c.id,
        )
      ) {
        left.push(c.rel);
      }
    }
    if (left.length > 0 && err instanceof WorkspaceError) {
      throw new WorkspaceError(err.code, err.message, {
        argument: err.argument,
        details: {
          ...err.details,
          leftBehind: [...((err.details?.leftBehind as string[]) ?? []), ...left],
        },
        cause: err,
      });
    }
    throw err;
  }
  await fsyncDir(chain[Math.max(0, from.chain.length - 1)].abs);
  return created.map((c) => c.rel);
}

/** Result of createDirectory. */
export interface CreateDirectoryResult {
  path: string;
  created: boolean;
  createdPaths: string[];
  /** createdPaths was cut (from its end) to fit the result byte budget. */
  truncated?: boolean;
  truncatedReason?: "maxResultBytes";
}

/**
 * Creates a directory (and its parents unless parents is false); an existing directory is
 * success. Its depth below the workspace root is bounded by maxDepth, checked before anything
 * is created.
 */
export async function createDirectory(
  ws: Workspace,
  args: { path: string; parents?: boolean },
  options: { signal?: AbortSignal } = {},
): Promise<CreateDirectoryResult> {
  ws.assertWritable("create_directory");
  const gate = commitGate(ws, options.signal);
  const r = await ws.policy.resolve(args.path, { argument: "path", followLeaf: true });
  if (r.info) {
    if (r.info.isDirectory) return { path: r.rel, created: false, createdPaths: [] };
    throw new WorkspaceError("ALREADY_EXISTS", `${r.rel} exists and is not a directory`, {
      argument: "path",
    });
  }
  const segs = r.rel.split("/");
  assertDepth(ws, segs.length, "path");
  if (!r.parentExists && args.parents === false) {
    throw new WorkspaceError(
      "NOT_FOUND",
      `the parent directory of ${r.rel} does not exist (parents: true creates it)`,
      { argument: "path" },
    );
  }
  const made = await makeDirectories(ws, { chain: r.chain, segs, gate }, "path");
  return createdResult(ws, r.rel, made);
}

/** The create_directory result, its createdPaths list built under the result byte budget. */
function createdResult(ws: Workspace, path: string, made: string[]): CreateDirectoryResult {
  const out: CreateDirectoryResult = { path, created: made.length > 0, createdPaths: [] };
  const budget = new ResultBudget(ws.limits.maxResultBytes, 0);
  budget.take(jsonBytes(out) + jsonBytes({ truncated: true, truncatedReason: "maxResultBytes" }));
  for (const p of made) {
    if (!budget.takeItem(p)) {
      out.truncated = true;
      out.truncatedReason = "maxResultBytes";
      break;
    }
    out.createdPaths.push(p);
  }
  return out;
}

/** Result of movePath. */
export interface MovePathResult {
  source: string;
  destination: string;
  type: EntryType;
  overwritten: boolean;
}

/**
 * Removes one entry (file, link, or empty directory) whose parent chain was checked: verify,
 * rename it to a random name in the same directory, verify that the renamed entry is the one
 * checked and is still in that directory, then remove the random name. A parent swapped at the
 * last moment can make the rename act elsewhere (reported), never the removal: the random name
 * exists nowhere else.
 */
function removeChecked(
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

/** Moves or renames a file, directory or link (the link itself) inside the workspace. */
export async function movePath(
  ws: Workspace,
  args: { source: string; destination: string; overwrite?: boolean },
  options: { signal?: AbortSignal } = {},
): Promise<MovePathResult> {
  ws.assertWritable("move_path");
  const { fs } = ws.policy;
  const gate = commitGate(ws, options.signal);
  const src = await ws.policy.resolve(args.source, { argument: "source", followLeaf: false });
  const srcInfo = requireExisting(src, "source");
  if (src.rel === ".") {
    throw new WorkspaceError("INVALID_ARGUMENT", "the workspace root cannot be moved", {
      argument: "source",
    });
  }
  const dst = await ws.policy.resolve(args.destination, {
    argument: "destination",
    followLeaf: false,
  });
  if (dst.rel === ".") {
    throw new WorkspaceError("ALREADY_EXISTS", "destination is the workspace root", {
      argument: "destination",
    });
  }
  if (!dst.parentExists) {
    throw new WorkspaceError("NOT_FOUND", `the parent directory of ${dst.rel} does not exist`, {
      argument: "destination",
    });
  }
  if (dst.rel === src.rel) {
    throw new WorkspaceError("INVALID_ARGUMENT", "source and destination are the same path", {
      argument: "destination",
    });
  }
  if (srcInfo.isDirectory && dst.rel.startsWith(src.rel + "/")) {
    throw new WorkspaceError("INVALID_ARGUMENT", `cannot move ${src.rel} into itself`, {
      argument: "destination",
    });
  }
  const dstInfo = dst.info;
  if (dstInfo) {
    if (!args.overwrite) {
      throw new WorkspaceError(
        "ALREADY_EXISTS",
        `${dst.rel} already exists (pass overwrite: true to replace it)`,
        { argument: "destination" },
      );
    }
    if (dstInfo.isDirectory && !srcInfo.isDirectory) {
      throw new WorkspaceError("IS_A_DIRECTORY", `destination ${dst.rel} is a directory`, {
        argument: "destination",
      });
    }
    if (dstInfo.isDirectory && srcInfo.isDirectory) {
      for await (const _ of fs.readDir(dst.abs)) {
        throw new WorkspaceError(
          "DIRECTORY_NOT_EMPTY",
          `destination ${dst.rel} is a non-empty directory; only an empty directory can be replaced`,
          { argument: "destination" },
        );
      }
    }
    if (!dstInfo.isDirectory && srcInfo.isDirectory) {
      throw new WorkspaceError("NOT_A_DIRECTORY", `destination ${dst.rel} is not a directory`, {
        argument: "destination",
      });
    }
  }
  // The result is known now: one that cannot fit the budget is refused before anything moves.
  const out: MovePathResult = {
    source: src.rel,
    destination: dst.rel,
    type: entryType(srcInfo),
    overwritten: !!dstInfo,
  };
  assertFitsBudget(out, { limit: ws.limits.maxResultBytes, what: "move_path" });
  const srcChain = parentChain(src, "source");
  const dstChain = parentChain(dst, "destination");
  await assertParentUnmoved(src, "source");
  await assertParentUnmoved(dst, "destination");
  // Synchronous from the checks to the rename and the check after it: the link or rename is the
  // commit point.
  assertMayCommit(gate, `the move of ${src.rel}`);
  verifyChain(srcChain, { rel: src.rel, argument: "source", fs });
  verifyChain(dstChain, { rel: dst.rel, argument: "destination", fs });
  const now = lstatOrNullSync(fs, src.abs);
  if (now === null) throw changed(`${src.rel} was removed meanwhile; nothing was moved`, "source");
  assertSameIdentity(srcInfo, now, src.rel, "source");
  if (dstInfo) {
    const there = lstatOrNullSync(fs, dst.abs);
    if (there === null || !sameIdentity(there, dstInfo)) {
      throw changed(`${dst.rel} was replaced meanwhile; nothing was moved`, "destination");
    }
  }
  let linked = false;
  if (!dstInfo && !srcInfo.isDirectory) {
    // No-clobber for non-directories: a hard link fails if the destination appeared meanwhile.
    try {
      fs.linkSync(src.abs, dst.abs);
      linked = true;
    } catch (err) {
      if (fsErrorKind(err) === "AlreadyExists") {
        throw new WorkspaceError(
          "ALREADY_EXISTS",
          `${dst.rel} was created by someone else meanwhile`,
          { argument: "destination" },
        );
      }
      // Hard links unsupported here: fall back to rename after the check above.
    }
  }
  if (!linked) fs.renameSync(src.abs, dst.abs);
  // Where did it land? The kernel looked both names up again.
  if (!isOursAt(fs, dstChain, dst.abs, srcInfo) || !chainHolds(fs, srcChain)) {
    // Roll back only through verified chains, and check that the rollback did what it meant to.
    let rolledBack = false;
    if (linked) {
      const there = lstatOrNullSync(fs, dst.abs);
      if (chainHolds(fs, dstChain) && there !== null && sameIdentity(there, srcInfo)) {
        fs.removeSync(dst.abs);
        rolledBack = true;
      }
    } else if (chainHolds(fs, dstChain) && chainHolds(fs, srcChain)) {
      const there = lstatOrNullSync(fs, dst.abs);
      if (there !== null && sameIdentity(there, srcInfo) && lstatOrNullSync(fs, src.abs) === null) {
        fs.renameSync(dst.abs, src.abs);
        rolledBack = isOursAt(fs, srcChain, src.abs, srcInfo);
      }
    }
    throw changed(
      `a directory above ${src.rel} or ${dst.rel} was swapped during the move` +
        (rolledBack ? "; it was undone" : "; it could not be undone safely and was left as it is"),
      "destination",
      { reason: "swapped-during-commit", rolledBack },
    );
  }
  if (linked) {
    removeChecked(fs, srcChain, { abs: src.abs, rel: src.rel, id: srcInfo }, "source");
  }
  await fsyncDir(dst.parentAbs);
  if (src.parentAbs !== dst.parentAbs) await fsyncDir(src.parentAbs);
  return out;
}

/** Result of deletePath. */
export interface DeletePathResult {
  path: string;
  type: EntryType;
  deleted: true;
}

/** Most removed paths listed in a CHANGED_DURING_OPERATION error of a recursive delete. */
const MAX_REPORTED_REMOVED = 100;

/**
 * Removes a directory tree it checked, entry by entry and never through a link: each directory
 * is entered by a verified chain and its identity is checked after it is listed; each entry is
 * lstat'ed and removed by removeChecked (links are removed, never followed).
 */
async function removeTree(
  fs: WorkspaceFs,
  chain: readonly ChainLink[],
  dir: { abs: string; rel: string; id: Identity },
  work: { removed: string[]; tick: () => Promise<void> },
): Promise<void> {
  const { removed, tick } = work;
  await tick();
  verifyChain(chain, { rel: dir.rel, argument: "path", fs });
  const here = lstatOrNullSync(fs, dir.abs);
  if (here === null || here.isSymlink || !here.isDirectory || !sameIdentity(here, dir.id)) {
    throw changed(`${dir.rel} was replaced or moved since it was checked`, "path", {
      reason: "entry-changed",
    });
  }
  const inner: ChainLink[] = [...chain, { abs: dir.abs, dev: dir.id.dev, ino: dir.id.ino }];
  const names: string[] = [];
  for await (const e of fs.readDir(dir.abs)) names.push(e.name);
  // The listing must have been of the checked directory.
  verifyChain(inner, { rel: dir.rel, argument: "path", fs });
  for (const name of names) {
    const abs = joinChild(dir.abs, name);
    const rel = `${dir.rel}/${name}`;
    const info = lstatOrNullSync(fs, abs);
    if (info === null) continue; // gone meanwhile
    if (info.isDirectory && !info.isSymlink) {
      await removeTree(fs, inner, { abs, rel, id: info }, work);
    } else {
      await tick();
      removeChecked(fs, inner, { abs, rel, id: info }, "path");
      removed.push(rel);
    }
  }
  removeChecked(fs, chain, dir, "path");
  removed.push(dir.rel);
}

/** Deletes a file, link (never its target) or directory; needs confirm: true, and recursive for non-empty directories. */
export async function deletePath(
  ws: Workspace,
  args: { path: string; recursive?: boolean; confirm?: boolean },
  options: { signal?: AbortSignal } = {},
): Promise<DeletePathResult> {
  ws.assertWritable("delete_path");
  const { fs } = ws.policy;
  const gate = commitGate(ws, options.signal);
  const r = await ws.policy.resolve(args.path, { argument: "path", followLeaf: false });
  if (args.confirm !== true) {
    throw new WorkspaceError(
      "CONFIRMATION_REQUIRED",
      `deleting ${r.rel} needs explicit confirmation: pass confirm: true`,
      { argument: "confirm" },
    );
  }
  const info = requireExisting(r, "path");
  if (r.rel === ".") {
    throw new WorkspaceError("INVALID_ARGUMENT", "the workspace root cannot be deleted", {
      argument: "path",
    });
  }
  if (info.isDirectory && !args.recursive) {
    for await (const _ of fs.readDir(r.abs)) {
      throw new WorkspaceError(
        "DIRECTORY_NOT_EMPTY",
        `${r.rel} is a non-empty directory (pass recursive: true to delete it and its contents)`,
        { argument: "recursive" },
      );
    }
  }
  const out: DeletePathResult = { path: r.rel, type: entryType(info), deleted: true };
  assertFitsBudget(out, { limit: ws.limits.maxResultBytes, what: "delete_path" });
  const chain = parentChain(r, "path");
  const target = { abs: r.abs, rel: r.rel, id: { dev: info.dev, ino: info.ino } };
  // The first removal is the commit point. A single entry is removed synchronously after this
  // check; a recursive delete checks again before each entry and can stop part-way (below).
  assertMayCommit(gate, `the deletion of ${r.rel}`);
  if (info.isDirectory && args.recursive === true) {
    const removed: string[] = [];
    try {
      const tick = pacer({ signal: options.signal, maxOperationMs: ws.limits.maxOperationMs });
      await removeTree(fs, chain, target, { removed, tick });
    } catch (err) {
      const e = toWorkspaceError(err, "path");
      // A swap, a cancellation or the time budget stops a recursive delete part-way: say what
      // was already removed.
      const stops = ["CHANGED_DURING_OPERATION", "CANCELLED", "TIME_BUDGET_EXCEEDED"];
      if (!stops.includes(e.code) || removed.length === 0) throw e;
      throw new WorkspaceError(
        e.code,
        `${e.message}; stopped after removing ${removed.length} entr${
          removed.length === 1 ? "y" : "ies"
        } of ${r.rel}`,
        {
          argument: "path",
          details: {
            ...e.details,
            removedCount: removed.length,
            removed: removed.slice(0, MAX_REPORTED_REMOVED),
          },
          cause: err,
        },
      );
    }
  } else {
    try {
      removeChecked(fs, chain, target, "path");
    } catch (err) {
      if ((err as { code?: string }).code === "ENOTEMPTY") {
        throw new WorkspaceError(
          "DIRECTORY_NOT_EMPTY",
          `${r.rel} became non-empty meanwhile (pass recursive: true to delete it and its contents)`,
          { argument: "recursive" },
        );
      }
      throw err;
    }
  }
  await fsyncDir(r.parentAbs);
  return out;
}
