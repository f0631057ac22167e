/** create_directory, and the checked creation of missing parents that write_file shares. */
import type { Workspace } from "./workspace.ts";
import { WorkspaceError } from "./errors.ts";
import {
  type ChainLink,
  dirHolds,
  fsyncDir,
  type Identity,
  lstatOrNullSync,
  sameIdentity,
  verifyChain,
} from "./containment.ts";
import { jsonBytes, ResultBudget } from "./budget.ts";
import { fsErrorKind, type FsInfo, type WorkspaceFs } from "./fs/types.ts";
import {
  assertMayCommit,
  changed,
  type CommitGate,
  commitGate,
  joinChild,
  randomHex,
  removeOwn,
  TEMP_PREFIX,
} from "./atomic.ts";

/** Throws INVALID_ARGUMENT (naming maxDepth) when a directory path is deeper than the limit. */
export function assertDepth(ws: Workspace, depth: number, argument: string): void {
  if (depth > ws.limits.maxDepth) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `${argument} is ${depth} directories deep, over the maxDepth limit of ${ws.limits.maxDepth}; nothing was created`,
      { argument, details: { limit: "maxDepth", value: ws.limits.maxDepth, depth } },
    );
  }
}

/** A directory this operation created: its path, the chain it was created through, its identity. */
interface Made {
  rel: string;
  chain: ChainLink[];
  id: Identity;
}

/** One makeDirectories run: the levels asked for, the chain so far, what it created. */
interface Levels {
  fs: WorkspaceFs;
  segs: readonly string[];
  argument: string;
  /** The checked chain down to the last level reached. */
  chain: ChainLink[];
  created: Made[];
}

/** One level of segs: its index, path, absolute path and the checked parent it goes in. */
interface Level {
  i: number;
  rel: string;
  abs: string;
  parent: ChainLink;
}

/**
 * Creates a missing level as a random-named directory in its checked parent, renamed to its name
 * once verified there; returns the lstat of what then holds the name (another directory that
 * took it meanwhile is accepted by the caller's checks, as before).
 */
function createLevel(run: Levels, level: Level): FsInfo {
  const { fs, segs, argument } = run;
  const { i, rel, abs, parent } = level;
  const tmpName = `${TEMP_PREFIX}${randomHex(8)}`;
  const tmpAbs = joinChild(parent.abs, tmpName);
  const tmpRel = i === 0 ? tmpName : `${segs.slice(0, i).join("/")}/${tmpName}`;
  try {
    fs.mkdirSync(tmpAbs);
  } catch (err) {
    // The parent checked a moment ago is gone (or no longer a directory) for the kernel: it was
    // replaced or moved, as for the check above; the undo then says what it left.
    const kind = fsErrorKind(err);
    if (kind !== "NotFound" && kind !== "NotADirectory") throw err;
    throw changed(`a directory above ${rel} was replaced or moved; stopped`, argument, {
      reason: "parent-changed",
    });
  }
  const made = lstatOrNullSync(fs, tmpAbs);
  if (made === null || !made.isDirectory || !dirHolds(fs, parent)) {
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
    const taken = lstatOrNullSync(fs, abs);
    if (taken === null) throw err;
    return taken;
  }
  const now = lstatOrNullSync(fs, abs);
  if (now === null || !sameIdentity(now, made) || !dirHolds(fs, parent)) {
    throw changed(
      `a directory above ${rel} was swapped during its creation; it may have been created elsewhere`,
      argument,
      { reason: "swapped-during-commit" },
    );
  }
  run.created.push({ rel, chain: [...run.chain], id: made });
  return now;
}

/**
 * Reaches level i of segs: the root and the parent re-checked, the level created when missing;
 * it must then be a directory, not a link. Its identity joins the chain.
 */
function reachLevel(ws: Workspace, run: Levels, i: number): void {
  const { fs, segs, argument, chain } = run;
  const parent = chain[chain.length - 1];
  const rel = segs.slice(0, i + 1).join("/");
  const abs = joinChild(parent.abs, segs[i]);
  ws.policy.verifyRoot(argument);
  if (!dirHolds(fs, parent)) {
    throw changed(`a directory above ${rel} was replaced or moved; stopped`, argument, {
      reason: "parent-changed",
    });
  }
  const info = lstatOrNullSync(fs, abs) ?? createLevel(run, { i, rel, abs, parent });
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

/**
 * After a failure: removes what the run created, deepest first, only through verified paths;
 * returns the error to throw, naming in leftBehind what could not be removed.
 */
function undoLevels(run: Levels, err: unknown): unknown {
  const left: string[] = [];
  for (const c of run.created.reverse()) {
    const abs = joinChild(c.chain[c.chain.length - 1].abs, c.rel.split("/").pop()!);
    if (!removeOwn(run.fs, c.chain, abs, c.id)) left.push(c.rel);
  }
  if (left.length > 0 && err instanceof WorkspaceError) {
    return new WorkspaceError(err.code, err.message, {
      argument: err.argument,
      details: {
        ...err.details,
        leftBehind: [...((err.details?.leftBehind as string[]) ?? []), ...left],
      },
      cause: err,
    });
  }
  return err;
}

/** What makeDirectories did: the directories it created, and the checked chain down to the last. */
export interface MadeDirectories {
  /** Workspace-relative paths of the directories created, top first. */
  created: string[];
  /** The checked chain from the root down to the last level of segs, that level included. */
  chain: ChainLink[];
}

/**
 * Creates each missing directory of segs (a real workspace-relative path) below the existing
 * part of its checked chain, one level at a time, each as a random-named directory renamed to
 * its name after it was verified to be in the checked parent. A constant number of system calls
 * per level (the parent's identity stands for its chain: the kernel walks the path each time).
 * On failure, what was created is removed where that can be done through verified paths.
 */
export async function makeDirectories(
  ws: Workspace,
  from: { chain: readonly ChainLink[]; segs: readonly string[]; gate?: CommitGate },
  argument: string,
): Promise<MadeDirectories> {
  const { segs } = from;
  const run: Levels = { fs: ws.policy.fs, segs, argument, chain: [...from.chain], created: [] };
  // Synchronous from this check through every level: creating the first missing directory is
  // the commit point, and no cancellation is seen between the check and the last level.
  if (run.chain.length - 1 < segs.length) {
    assertMayCommit(from.gate, `creating ${segs.join("/")}`);
  }
  try {
    verifyChain(run.chain, { rel: segs.join("/"), argument, fs: run.fs });
    for (let i = run.chain.length - 1; i < segs.length; i++) reachLevel(ws, run, i);
  } catch (err) {
    // Undo, deepest first, only through verified paths; say what could not be undone.
    throw undoLevels(run, err);
  }
  await fsyncDir(run.chain[Math.max(0, from.chain.length - 1)].abs);
  return { created: run.created.map((c) => c.rel), chain: run.chain };
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
  return createdResult(ws, r.rel, made.created);
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
