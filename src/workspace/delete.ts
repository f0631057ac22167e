/** delete_path: a file, link (never its target) or directory tree removed entry by entry. */
import type { Workspace } from "./workspace.ts";
import { toWorkspaceError, WorkspaceError } from "./errors.ts";
import {
  type ChainLink,
  dirHolds,
  fsyncDir,
  type Identity,
  lstatOrNullSync,
  requireExisting,
  verifyChain,
} from "./containment.ts";
import { assertFitsBudget, type EntryType, entryType, pacer } from "./text.ts";
import type { WorkspaceFs } from "./fs/types.ts";
import {
  assertMayCommit,
  changed,
  commitGate,
  joinChild,
  parentChain,
  removeChecked,
} from "./atomic.ts";

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
  if (!dirHolds(fs, { abs: dir.abs, dev: dir.id.dev, ino: dir.id.ino })) {
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

/** A checked entry to delete: its path, workspace-relative path and identity. */
type Target = { abs: string; rel: string; id: Identity };

/**
 * A recursive delete of a checked directory, paced; a swap, a cancellation or the time budget
 * that stops it part-way is reported with what was already removed.
 */
async function deleteTree(
  ws: Workspace,
  chain: readonly ChainLink[],
  target: Target,
  signal: AbortSignal | undefined,
): Promise<void> {
  const removed: string[] = [];
  try {
    const tick = pacer({ signal, maxOperationMs: ws.limits.maxOperationMs });
    await removeTree(ws.policy.fs, chain, target, { removed, tick });
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
      } of ${target.rel}`,
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
}

/** Removes one checked entry; a directory that became non-empty is DIRECTORY_NOT_EMPTY. */
function deleteOne(fs: WorkspaceFs, chain: readonly ChainLink[], target: Target): void {
  try {
    removeChecked(fs, chain, target, "path");
  } catch (err) {
    if ((err as { code?: string }).code === "ENOTEMPTY") {
      throw new WorkspaceError(
        "DIRECTORY_NOT_EMPTY",
        `${target.rel} became non-empty meanwhile (pass recursive: true to delete it and its contents)`,
        { argument: "recursive" },
      );
    }
    throw err;
  }
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
  // check; a recursive delete checks again before each entry and can stop part-way (deleteTree).
  assertMayCommit(gate, `the deletion of ${r.rel}`);
  if (info.isDirectory && args.recursive === true) {
    await deleteTree(ws, chain, target, options.signal);
  } else deleteOne(fs, chain, target);
  await fsyncDir(r.parentAbs);
  return out;
}
