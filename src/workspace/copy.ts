/**
 * copy_path: a file, a symbolic link (the link itself, never its target) or a directory tree
 * copied inside the workspace (decision 0058). A file is written as write_file writes one
 * (atomic.ts atomicWrite: a temporary file beside its target, filled from the source in chunks,
 * flushed, renamed or linked into place), with the source's permission bits; a link is given a
 * second name (atomicLink: the same link, its text unchanged); a directory is created as
 * create_directory creates one (makeDirectories), its permission bits set once its entries are
 * copied. A directory is planned first, changing nothing: every entry lstat'ed under verified
 * chains, bounded by maxVisited and maxDepth, hard-linked and special files set aside (skipped,
 * never opened), the refusals of a copy into an existing directory found. Then it is copied; from
 * the first entry on, each entry is its own commit, and a copy that stops says what it copied.
 */
import type { FileHandle } from "node:fs/promises";
import type { Workspace } from "./workspace.ts";
import { toWorkspaceError, WorkspaceError } from "./errors.ts";
import type { Resolved } from "./path_policy.ts";
import {
  type ChainLink,
  chmodCheckedDir,
  dirHolds,
  fsyncDir,
  type Located,
  lstatOrNullSync,
  openCheckedFile,
  refuseSpecial,
  requireExisting,
  verifyAfterRead,
  verifyChain,
} from "./containment.ts";
import { jsonBytes, ResultBudget } from "./budget.ts";
import { assertFitsBudget, type EntryType, entryType, pacer, READ_CHUNK } from "./text.ts";
import type { FsInfo, WorkspaceFs } from "./fs/types.ts";
import {
  atomicLink,
  atomicWrite,
  changed,
  type CommitGate,
  commitGate,
  joinChild,
} from "./atomic.ts";
import { assertDepth, makeDirectories } from "./directories.ts";
import { checkEnds } from "./move.ts";
import { assertConfirmed, checkReplace, refuseHardLinkedSource } from "./copy_checks.ts";

/** Arguments of copyPath. */
export interface CopyPathArgs {
  source: string;
  destination: string;
  /** Replace an existing file or link; copy a directory into an existing directory. */
  overwrite?: boolean;
  /** Must be true to copy a directory. */
  recursive?: boolean;
  /** Must be true when the copy replaces an existing file or link (CONFIRMATION_REQUIRED). */
  confirm?: boolean;
}

/** Why an entry of a copied directory was not copied. */
export type CopySkipReason = "hard-linked" | "special-file";

/** An entry of a copied directory that was not copied. */
export interface CopySkipped {
  /** Workspace-relative path of the source entry. */
  path: string;
  reason: CopySkipReason;
}

/** Result of copyPath. */
export interface CopyPathResult {
  source: string;
  destination: string;
  type: EntryType;
  /** The destination existed: a file or link replaced, or a directory copied into. */
  overwritten: boolean;
  /** Regular files copied. */
  files: number;
  /** Directories copied (created, or copied into when they existed). */
  directories: number;
  /** Symbolic links copied as links. */
  symlinks: number;
  /** Bytes of file content copied. */
  bytes: number;
  /** Entries of a copied directory that were not copied, and why. */
  skipped: CopySkipped[];
  /** skipped was cut (from its end) to fit the result byte budget. */
  truncated?: boolean;
  truncatedReason?: "maxResultBytes";
}

/** Progress of a copy: entries done of the entries planned. */
export interface CopyProgress {
  progress: number;
  total: number;
  message: string;
}

/** Most copied paths listed in the details of a copy that stopped part-way. */
const MAX_REPORTED_COPIED = 100;

/** One entry of the source as the plan saw it (its lstat: links are never followed). */
interface PlanNode {
  name: string;
  info: FsInfo;
  kind: "file" | "link" | "dir";
  /** A directory's entries, by name. */
  children: PlanNode[];
}

/** A checked directory: its path, workspace-relative path and chain (itself the last link). */
interface DirAt {
  abs: string;
  rel: string;
  chain: readonly ChainLink[];
}

/** A source entry: a checked location with the lstat the plan (or resolve) took of it. */
type SourceEntry = Located & { info: FsInfo };

/** A directory's DirAt, its identity taken from the lstat it was checked with. */
function dirAt(entry: SourceEntry): DirAt {
  const { abs, rel, info } = entry;
  return { abs, rel, chain: [...entry.chain, { abs, dev: info.dev, ino: info.ino }] };
}

/** Throws CHANGED_DURING_OPERATION unless a checked directory and its chain still hold. */
function assertDirHolds(fs: WorkspaceFs, dir: DirAt, argument: string): void {
  verifyChain(dir.chain.slice(0, -1), { rel: dir.rel, argument, fs });
  if (!dirHolds(fs, dir.chain[dir.chain.length - 1])) {
    throw changed(`${dir.rel} was replaced or moved since it was checked`, argument, {
      reason: "entry-changed",
    });
  }
}

/** The two ends of a copy, resolved and checked. */
interface Ends {
  src: Resolved;
  srcInfo: FsInfo;
  dst: Resolved;
}

/**
 * Resolves both paths (a final link is the entry itself, as for move_path) and makes the
 * refusals that need no walk: the root as source, the ends of checkEnds (the root as destination,
 * a missing destination parent, the same path, a directory into itself or into a directory that
 * holds it), a directory without recursive, a special or hard-linked source file, an existing
 * destination that cannot be replaced or copied into.
 */
async function resolveEnds(ws: Workspace, dws: Workspace, args: CopyPathArgs): Promise<Ends> {
  const src = await ws.policy.resolve(args.source, { argument: "source", followLeaf: false });
  const srcInfo = requireExisting(src, "source");
  if (src.rel === ".") {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      "the workspace root cannot be copied: every destination is inside it",
      { argument: "source" },
    );
  }
  const dst = await dws.policy.resolve(args.destination, {
    argument: "destination",
    followLeaf: false,
  });
  const sameRoot = dws === ws;
  checkEnds(src, srcInfo, dst, "copy", sameRoot);
  if (sameRoot && srcInfo.isDirectory && src.rel.startsWith(`${dst.rel}/`)) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `cannot copy ${src.rel} into ${dst.rel}, which holds it`,
      { argument: "destination" },
    );
  }
  if (srcInfo.isDirectory && args.recursive !== true) {
    throw new WorkspaceError(
      "IS_A_DIRECTORY",
      `source ${src.rel} is a directory (pass recursive: true to copy it and everything in it)`,
      { argument: "recursive" },
    );
  }
  if (!srcInfo.isDirectory && !srcInfo.isSymlink) {
    refuseSpecial(srcInfo, src.rel, "source");
    refuseHardLinkedSource(srcInfo, src.rel);
  }
  if (dst.info) checkReplace(srcInfo.isDirectory, dst.rel, dst.info, args.overwrite === true);
  return { src, srcInfo, dst };
}

/** One planning walk: the workspace, pacing, the count against maxVisited, what it sets aside. */
interface Planning {
  ws: Workspace;
  fs: WorkspaceFs;
  tick: () => Promise<void>;
  /** The source directory's path (for the refusal over maxVisited). */
  top: string;
  /** Depth of the destination directory below the root. */
  dstDepth: number;
  /** Entries met. */
  visited: number;
  /** Entries to copy (files, links, directories below the top). */
  planned: number;
  skipped: CopySkipped[];
  /** Existing files and links at the destination the copy replaces. */
  replaces: number;
}

/** How an entry is copied, by its lstat: as a file, a link or a directory, or why it is not. */
function classify(info: FsInfo): PlanNode["kind"] | CopySkipReason {
  if (info.isSymlink) return "link";
  if (info.isDirectory) return "dir";
  if (!info.isFile) return "special-file";
  return info.nlink !== null && info.nlink > 1 ? "hard-linked" : "file";
}

/** The names in a checked directory, listed between two checks that it still holds. */
async function listChecked(fs: WorkspaceFs, dir: DirAt): Promise<Set<string>> {
  assertDirHolds(fs, dir, "source");
  const names = new Set<string>();
  for await (const e of fs.readDir(dir.abs)) names.add(e.name);
  assertDirHolds(fs, dir, "source");
  return names;
}

/** Counts one entry against maxVisited: TOO_LARGE over it, before anything is copied. */
function countVisit(p: Planning): void {
  if (++p.visited <= p.ws.limits.maxVisited) return;
  const limit = p.ws.limits.maxVisited;
  throw new WorkspaceError(
    "TOO_LARGE",
    `${p.top} has more than maxVisited (${limit}) entries; nothing was copied`,
    { argument: "source", details: { reason: "maxVisited", limit } },
  );
}

/**
 * The plan's entries of one directory, by name: listed, lstat'ed, and taken only when a second
 * listing still has them, each listing between checks that the directory holds. A listing or an
 * lstat made through the directory swapped for a link and swapped back must then meet the swap
 * again at the second listing while the checks around it do not (decision 0010).
 */
async function planEntries(p: Planning, dir: DirAt): Promise<PlanNode[]> {
  await p.tick();
  const found: { name: string; info: FsInfo }[] = [];
  for (const name of [...await listChecked(p.fs, dir)].sort()) {
    countVisit(p);
    const info = lstatOrNullSync(p.fs, joinChild(dir.abs, name));
    if (info !== null) found.push({ name, info }); // else gone meanwhile
  }
  const again = await listChecked(p.fs, dir);
  const nodes: PlanNode[] = [];
  for (const { name, info } of found) {
    if (!again.has(name)) continue;
    const kind = classify(info);
    if (kind === "hard-linked" || kind === "special-file") {
      p.skipped.push({ path: `${dir.rel}/${name}`, reason: kind });
    } else nodes.push({ name, info, kind, children: [] });
  }
  p.planned += nodes.length;
  return nodes;
}

/** Plans a directory and, depth first, the directories in it (each within maxDepth). */
async function planDir(p: Planning, dir: DirAt, level: number): Promise<PlanNode[]> {
  const nodes = await planEntries(p, dir);
  for (const n of nodes) {
    if (n.kind !== "dir") continue;
    assertDepth(p.ws, p.dstDepth + level + 1, "destination");
    const abs = joinChild(dir.abs, n.name);
    const chain = [...dir.chain, { abs, dev: n.info.dev, ino: n.info.ino }];
    n.children = await planDir(p, { abs, rel: `${dir.rel}/${n.name}`, chain }, level + 1);
  }
  return nodes;
}

/**
 * In a copy into an existing directory: every planned entry that meets something at the
 * destination must be able to replace it or be copied into it (checkReplace). Refused before
 * anything is copied; the copy checks each entry again when it gets to it.
 */
async function checkMerge(p: Planning, dst: { abs: string; rel: string }, nodes: PlanNode[]) {
  await p.tick();
  for (const n of nodes) {
    const abs = joinChild(dst.abs, n.name);
    const rel = `${dst.rel}/${n.name}`;
    const there = lstatOrNullSync(p.fs, abs);
    if (there === null) continue;
    checkReplace(n.kind === "dir", rel, there, true);
    if (n.kind !== "dir") p.replaces++;
    if (n.kind === "dir") await checkMerge(p, { abs, rel }, n.children);
  }
}

/** The plan of a directory copy: its entries, what is skipped, how many entries it copies. */
async function planTree(
  ws: Workspace,
  ends: Ends,
  tick: () => Promise<void>,
): Promise<{ root: PlanNode; planned: number; skipped: CopySkipped[]; replaces: number }> {
  const { src, srcInfo, dst } = ends;
  const dstDepth = dst.rel.split("/").length;
  assertDepth(ws, dstDepth, "destination");
  const p: Planning = {
    ws,
    fs: ws.policy.fs,
    tick,
    top: src.rel,
    dstDepth,
    visited: 0,
    planned: 1,
    skipped: [],
    replaces: 0,
  };
  const children = await planDir(p, dirAt({ ...src, info: srcInfo }), 0);
  if (dst.info) await checkMerge(p, dst, children);
  const root: PlanNode = { name: src.name, info: srcInfo, kind: "dir", children };
  return { root, planned: p.planned, skipped: p.skipped, replaces: p.replaces };
}

/** One copy under way: its workspace, gate and pacing, and what it has done so far. */
interface Copying {
  ws: Workspace;
  fs: WorkspaceFs;
  gate: CommitGate;
  tick: () => Promise<void>;
  overwrite: boolean;
  /** The first destination paths written (files, links, created directories), in order. */
  copied: string[];
  /** Destination paths written. */
  copiedCount: number;
  counts: { files: number; directories: number; symlinks: number; bytes: number };
  /** Entries done, of `total`. */
  done: number;
  total: number;
  onProgress?: (p: CopyProgress) => void;
}

/** One entry done: counted, listed when it wrote something, reported as progress. */
function entryDone(c: Copying, rel: string, wrote: boolean): void {
  if (wrote) {
    c.copiedCount++;
    if (c.copied.length < MAX_REPORTED_COPIED) c.copied.push(rel);
  }
  c.done++;
  c.onProgress?.({ progress: c.done, total: c.total, message: `copied ${rel}` });
}

/** Writes all of bytes at the handle's position. */
async function writeAll(h: FileHandle, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length;) {
    const { bytesWritten } = await h.write(bytes, off, bytes.length - off);
    off += bytesWritten;
  }
}

/**
 * Streams a source file into a temporary file's handle: opened as reads open (no final link
 * followed, never blocking, the descriptor's identity the checked one), one link only, read in
 * chunks with cancellation and the time budget checked between them, the name checked to lead
 * to it after the read (decision 0010). Returns the bytes copied.
 */
async function streamFile(c: Copying, from: SourceEntry, to: FileHandle): Promise<number> {
  const h = await openCheckedFile(from, "source");
  let total = 0;
  try {
    refuseHardLinkedSource(await h.stat(), from.rel);
    const buf = new Uint8Array(READ_CHUNK);
    while (true) {
      await c.tick();
      const { bytesRead } = await h.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      await writeAll(to, buf.subarray(0, bytesRead));
      total += bytesRead;
    }
  } finally {
    await h.close();
  }
  verifyAfterRead(from, "source");
  return total;
}

/** Copies one file (its content and permission bits) or link (itself) to a checked target. */
async function copyLeaf(
  c: Copying,
  from: SourceEntry,
  kind: "file" | "link",
  target: Resolved,
): Promise<void> {
  const existing = target.info;
  if (existing) checkReplace(false, target.rel, existing, c.overwrite);
  const place = { existing, argument: "destination", gate: c.gate, syncDir: false };
  if (kind === "link") {
    const source = { abs: from.abs, rel: from.rel, id: from.info, chain: from.chain };
    await atomicLink(target, { ...source, argument: "source" }, place);
    c.counts.symlinks++;
  } else {
    let bytes = 0;
    const fill = async (h: FileHandle) => void (bytes = await streamFile(c, from, h));
    await atomicWrite(target, fill, { ...place, mode: from.info.mode });
    c.counts.files++;
    c.counts.bytes += bytes;
  }
  entryDone(c, target.rel, true);
}

/** The target of the entry `name` in a checked destination directory, lstat'ed now. */
function childTarget(c: Copying, dir: DirAt, name: string): Resolved {
  const rel = `${dir.rel}/${name}`;
  verifyChain(dir.chain, { rel, argument: "destination", fs: c.fs });
  const abs = joinChild(dir.abs, name);
  const info = lstatOrNullSync(c.fs, abs);
  return {
    rel,
    abs,
    info,
    chain: dir.chain,
    fs: c.fs,
    parentExists: true,
    parentAbs: dir.abs,
    name,
  };
}

/** The destination directory of a directory copy: created (through the gate), or copied into. */
async function enterTarget(
  c: Copying,
  target: Resolved,
  mode: number | null,
): Promise<{ chain: ChainLink[]; created: boolean }> {
  const existing = target.info;
  if (existing) {
    checkReplace(true, target.rel, existing, c.overwrite);
    const self = { abs: target.abs, dev: existing.dev, ino: existing.ino };
    return { chain: [...target.chain, self], created: false };
  }
  const segs = target.rel.split("/");
  const made = await makeDirectories(
    c.ws,
    { chain: target.chain, segs, gate: c.gate },
    "destination",
  );
  const created = made.created.length > 0;
  // While it is filled, no one gets more access to it than the source gives (the owner keeps
  // rwx to fill it): a copy of a private directory is private from its creation, also when the
  // copy stops before its final mode is set.
  if (created && mode !== null) {
    const self = made.chain[made.chain.length - 1];
    if (!await chmodCheckedDir(target.abs, self, (mode & 0o777) | 0o700)) {
      throw changed(`${target.rel} was replaced or moved while it was created`, "destination", {
        reason: "entry-changed",
      });
    }
  }
  return { chain: made.chain, created };
}

/**
 * Copies a planned directory: its target created (or copied into), its entries in name order
 * (directories depth first), its directory flushed, then, for a directory it created, the
 * source's permission bits (last, so a read-only directory is filled first).
 */
async function copyDir(c: Copying, from: SourceEntry, node: PlanNode, target: Resolved) {
  const entered = await enterTarget(c, target, from.info.mode);
  c.counts.directories++;
  entryDone(c, target.rel, entered.created);
  const src = dirAt(from);
  const dst: DirAt = { abs: target.abs, rel: target.rel, chain: entered.chain };
  for (const n of node.children) {
    await c.tick();
    const abs = joinChild(src.abs, n.name);
    const child = { rel: `${src.rel}/${n.name}`, abs, info: n.info, chain: src.chain, fs: c.fs };
    const to = childTarget(c, dst, n.name);
    if (n.kind === "dir") await copyDir(c, child, n, to);
    else await copyLeaf(c, child, n.kind, to);
  }
  await fsyncDir(dst.abs);
  const mode = from.info.mode;
  if (!entered.created || mode === null) return;
  if (!await chmodCheckedDir(dst.abs, dst.chain[dst.chain.length - 1], mode & 0o1777)) {
    throw changed(`${dst.rel} was replaced or moved while it was copied into`, "destination", {
      reason: "entry-changed",
    });
  }
}

/**
 * The error of a copy that stopped after it wrote something: its code, and in details what it
 * copied (copiedCount, the first 100 destination paths in copied, committed: true). Every file
 * there is whole: the file in flight when it stopped was a temporary file, removed.
 */
function stopped(c: Copying, err: unknown, destination: string): WorkspaceError {
  const e = toWorkspaceError(err);
  if (c.copiedCount === 0) return e;
  const n = c.copiedCount;
  return new WorkspaceError(
    e.code,
    `${e.message}; stopped after copying ${n} entr${n === 1 ? "y" : "ies"} to ${destination} ` +
      "(every file copied is whole)",
    {
      argument: e.argument,
      details: { ...e.details, committed: true, copiedCount: n, copied: c.copied },
      cause: err,
    },
  );
}

/**
 * The result, its skipped list cut to fit the result byte budget; the rest of it (counted up to
 * the largest numbers) must fit, or the copy is TOO_LARGE before it changes anything.
 */
function resultOf(ws: Workspace, ends: Ends, skipped: CopySkipped[]): CopyPathResult {
  const out: CopyPathResult = {
    source: ends.src.rel,
    destination: ends.dst.rel,
    type: entryType(ends.srcInfo),
    overwritten: ends.dst.info !== null,
    files: 0,
    directories: 0,
    symlinks: 0,
    bytes: 0,
    skipped: [],
  };
  const most = Number.MAX_SAFE_INTEGER;
  const widest = { ...out, files: most, directories: most, symlinks: most, bytes: most };
  const fixed = { ...widest, truncated: true, truncatedReason: "maxResultBytes" };
  assertFitsBudget(fixed, { limit: ws.limits.maxResultBytes, what: "copy_path" });
  const budget = new ResultBudget(ws.limits.maxResultBytes, jsonBytes(fixed));
  for (const s of skipped) {
    if (!budget.takeItem(s)) {
      out.truncated = true;
      out.truncatedReason = "maxResultBytes";
      break;
    }
    out.skipped.push(s);
  }
  return out;
}

/** Copies a file, a link (the link itself) or, with recursive, a directory inside the workspace. */
export async function copyPath(
  ws: Workspace,
  args: CopyPathArgs,
  options: {
    signal?: AbortSignal;
    onProgress?: (p: CopyProgress) => void;
    /**
     * The root the destination is in, when it is not `ws` (decision 0064: a copy from one root
     * into another writable root). Default: `ws`.
     */
    destination?: Workspace;
  } = {},
): Promise<CopyPathResult> {
  const dws = options.destination ?? ws;
  dws.assertWritable("copy_path");
  const gate = commitGate(ws, options.signal);
  const tick = pacer({ signal: options.signal, maxOperationMs: ws.limits.maxOperationMs });
  const ends = await resolveEnds(ws, dws, args);
  const { src, srcInfo, dst } = ends;
  const plan = srcInfo.isDirectory ? await planTree(ws, ends, tick) : null;
  assertConfirmed(args, dst.rel, plan ? plan.replaces : dst.info ? 1 : 0);
  const out = resultOf(ws, ends, plan?.skipped ?? []);
  const c: Copying = {
    ws: dws,
    fs: ws.policy.fs,
    gate,
    tick,
    overwrite: args.overwrite === true,
    copied: [],
    copiedCount: 0,
    counts: { files: 0, directories: 0, symlinks: 0, bytes: 0 },
    done: 0,
    total: plan?.planned ?? 1,
    onProgress: options.onProgress,
  };
  const from = { ...src, info: srcInfo };
  try {
    if (plan) await copyDir(c, from, plan.root, dst);
    else await copyLeaf(c, from, srcInfo.isSymlink ? "link" : "file", dst);
  } catch (err) {
    throw stopped(c, err, dst.rel);
  }
  await fsyncDir(dst.parentAbs);
  return { ...out, ...c.counts };
}
