/** move_path: a file, directory or link (the link itself) moved or renamed inside the workspace. */
import type { Workspace } from "./workspace.ts";
import { WorkspaceError } from "./errors.ts";
import type { Resolved } from "./path_policy.ts";
import {
  assertSameIdentity,
  chainHolds,
  type ChainLink,
  fsyncDir,
  lstatOrNullSync,
  requireExisting,
  sameIdentity,
  verifyChain,
} from "./containment.ts";
import { assertFitsBudget, type EntryType, entryType } from "./text.ts";
import { fsErrorKind, type FsInfo, type WorkspaceFs } from "./fs/types.ts";
import {
  assertMayCommit,
  assertParentUnmoved,
  changed,
  commitGate,
  isOursAt,
  parentChain,
  removeChecked,
} from "./atomic.ts";

/** Result of movePath. */
export interface MovePathResult {
  source: string;
  destination: string;
  type: EntryType;
  overwritten: boolean;
}

/** The two ends of one move, resolved, with the source's lstat and the destination's (or null). */
interface Move {
  fs: WorkspaceFs;
  src: Resolved;
  srcInfo: FsInfo;
  dst: Resolved;
  dstInfo: FsInfo | null;
}

/**
 * The refusals that need only the two resolved paths: the root as destination, a missing
 * destination parent, the same path, a directory moved (or copied: copy.ts) into itself.
 */
export function checkEnds(
  src: Resolved,
  srcInfo: FsInfo,
  dst: Resolved,
  verb: "move" | "copy" = "move",
  sameRoot = true,
): void {
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
  if (!sameRoot) return; // two roots: never the same path, never one inside the other
  if (dst.rel === src.rel) {
    throw new WorkspaceError("INVALID_ARGUMENT", "source and destination are the same path", {
      argument: "destination",
    });
  }
  if (srcInfo.isDirectory && dst.rel.startsWith(src.rel + "/")) {
    throw new WorkspaceError("INVALID_ARGUMENT", `cannot ${verb} ${src.rel} into itself`, {
      argument: "destination",
    });
  }
}

/**
 * The refusals of an existing destination: overwrite not asked for; a directory in place of a
 * non-directory; a non-empty directory; a non-directory in place of a directory.
 */
async function checkOverwrite(
  m: Move,
  dstInfo: FsInfo,
  overwrite: boolean | undefined,
): Promise<void> {
  const { dst, srcInfo } = m;
  if (!overwrite) {
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
    for await (const _ of m.fs.readDir(dst.abs)) {
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

/**
 * Replacing an existing file or link needs `confirm: true`, as write_file's and copy_path's
 * overwrites do (the servers ask the user through elicitation when the client supports it): the
 * replaced content is gone. An empty directory replaced by a directory loses nothing and needs
 * none. Checked before anything moves.
 */
function assertReplaceConfirmed(rel: string, dstInfo: FsInfo, confirm: boolean | undefined): void {
  if (dstInfo.isDirectory || confirm === true) return;
  throw new WorkspaceError(
    "CONFIRMATION_REQUIRED",
    `moving onto ${rel} replaces the ${
      dstInfo.isSymlink ? "link" : "file"
    } there: pass confirm: true`,
    { argument: "confirm" },
  );
}

/**
 * Right before the commit, synchronously: both chains, the source still the checked entry, an
 * overwritten destination still the checked one.
 */
function checkBeforeMove(
  m: Move,
  srcChain: readonly ChainLink[],
  dstChain: readonly ChainLink[],
): void {
  const { fs, src, dst, dstInfo } = m;
  verifyChain(srcChain, { rel: src.rel, argument: "source", fs });
  verifyChain(dstChain, { rel: dst.rel, argument: "destination", fs });
  const now = lstatOrNullSync(fs, src.abs);
  if (now === null) throw changed(`${src.rel} was removed meanwhile; nothing was moved`, "source");
  assertSameIdentity(m.srcInfo, now, src.rel, "source");
  if (dstInfo) {
    const there = lstatOrNullSync(fs, dst.abs);
    if (there === null || !sameIdentity(there, dstInfo)) {
      throw changed(`${dst.rel} was replaced meanwhile; nothing was moved`, "destination");
    }
  }
}

/**
 * The commit: a no-clobber hard link for a non-directory to a new name (then the source is
 * removed), else a rename. Returns whether it linked.
 */
function moveEntry(m: Move): boolean {
  const { fs, src, dst } = m;
  let linked = false;
  if (!m.dstInfo && !m.srcInfo.isDirectory) {
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
  return linked;
}

/**
 * Undoes a move that landed elsewhere, only through verified chains, and checks that the
 * rollback did what it meant to; returns whether it did.
 */
function rollBack(
  m: Move,
  linked: boolean,
  srcChain: readonly ChainLink[],
  dstChain: readonly ChainLink[],
): boolean {
  const { fs, src, dst, srcInfo } = m;
  if (linked) {
    const there = lstatOrNullSync(fs, dst.abs);
    if (chainHolds(fs, dstChain) && there !== null && sameIdentity(there, srcInfo)) {
      fs.removeSync(dst.abs);
      return true;
    }
  } else if (chainHolds(fs, dstChain) && chainHolds(fs, srcChain)) {
    const there = lstatOrNullSync(fs, dst.abs);
    if (there !== null && sameIdentity(there, srcInfo) && lstatOrNullSync(fs, src.abs) === null) {
      fs.renameSync(dst.abs, src.abs);
      return isOursAt(fs, srcChain, src.abs, srcInfo);
    }
  }
  return false;
}

/** Moves or renames a file, directory or link (the link itself) inside the workspace. */
export async function movePath(
  ws: Workspace,
  args: { source: string; destination: string; overwrite?: boolean; confirm?: boolean },
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
  checkEnds(src, srcInfo, dst);
  const m: Move = { fs, src, srcInfo, dst, dstInfo: dst.info };
  if (m.dstInfo) {
    await checkOverwrite(m, m.dstInfo, args.overwrite);
    assertReplaceConfirmed(dst.rel, m.dstInfo, args.confirm);
  }
  // The result is known now: one that cannot fit the budget is refused before anything moves.
  const out: MovePathResult = {
    source: src.rel,
    destination: dst.rel,
    type: entryType(srcInfo),
    overwritten: !!m.dstInfo,
  };
  assertFitsBudget(out, { limit: ws.limits.maxResultBytes, what: "move_path" });
  const srcChain = parentChain(src, "source");
  const dstChain = parentChain(dst, "destination");
  await assertParentUnmoved(src, "source");
  await assertParentUnmoved(dst, "destination");
  // Synchronous from the checks to the rename and the check after it: the link or rename is the
  // commit point.
  assertMayCommit(gate, `the move of ${src.rel}`);
  checkBeforeMove(m, srcChain, dstChain);
  const linked = moveEntry(m);
  // Where did it land? The kernel looked both names up again.
  if (!isOursAt(fs, dstChain, dst.abs, srcInfo) || !chainHolds(fs, srcChain)) {
    // Roll back only through verified chains, and check that the rollback did what it meant to.
    const rolledBack = rollBack(m, linked, srcChain, dstChain);
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
