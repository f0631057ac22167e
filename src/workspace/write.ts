/** Write operations: write_file, create_directory, move_path, delete_path, and the atomic replace they share. */
import fsp from "node:fs/promises";
import { constants as FS } from "node:fs";
import type { Workspace } from "./workspace.ts";
import { WorkspaceError } from "./errors.ts";
import {
  assertSameIdentity,
  openCheckedFile,
  refuseSpecial,
  requireExisting,
  type Resolved,
} from "./path_policy.ts";
import {
  assertFitsBudget,
  type EntryType,
  entryType,
  type HashSkipped,
  type Pace,
  sha256Bounded,
  sha256Hex,
} from "./text.ts";
import { jsonBytes, ResultBudget } from "./budget.ts";

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
  try {
    return await sha256Bounded(h, options);
  } finally {
    await h.close();
  }
}

/**
 * Throws CHANGED_DURING_OPERATION unless the checked parent directory of a resolved path is
 * still reached without symbolic links: an ancestor swapped for a link (to outside the
 * workspace) after resolution would otherwise redirect the create, link or rename.
 */
export async function assertParentUnmoved(
  target: Pick<Resolved, "parentAbs" | "rel">,
  argument: string,
): Promise<void> {
  let real: string | null = null;
  try {
    real = await Deno.realPath(target.parentAbs);
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
 * Replaces (or creates) a file atomically: temp file in the same directory, write,
 * fsync, identity checks of the directory and of the replaced file, rename, fsync the
 * directory. A crash leaves the old or the new content, never a mix.
 */
export async function atomicReplace(
  target: Resolved,
  content: Uint8Array,
  options: { existing: Deno.FileInfo | null; argument: string },
): Promise<void> {
  const { argument, existing } = options;
  await assertParentUnmoved(target, argument);
  const parent = await Deno.lstat(target.parentAbs);
  if (!parent.isDirectory) {
    throw new WorkspaceError(
      "CHANGED_DURING_OPERATION",
      `the parent of ${target.rel} changed; nothing was written`,
      {
        argument,
      },
    );
  }
  const tmpAbs = `${target.parentAbs === "/" ? "" : target.parentAbs}/${TEMP_PREFIX}${
    randomHex(8)
  }`;
  const h = await fsp.open(tmpAbs, FS.O_WRONLY | FS.O_CREAT | FS.O_EXCL | FS.O_NOFOLLOW, 0o666);
  let renamed = false;
  try {
    try {
      // Keep the permission bits; setuid/setgid are dropped as the kernel does on a write.
      if (existing?.mode != null) await h.chmod(existing.mode & 0o1777);
      await h.writeFile(content);
      await h.sync();
      const tmpStat = await h.stat();
      // The temp file must still be where we put it, in the directory we checked.
      const again = await Deno.lstat(target.parentAbs);
      assertSameIdentity(parent, again, target.rel, argument);
      const tmpByPath = await Deno.lstat(tmpAbs);
      assertSameIdentity({ dev: tmpStat.dev, ino: tmpStat.ino }, tmpByPath, target.rel, argument);
      if (existing) {
        let now: Deno.FileInfo;
        try {
          now = await Deno.lstat(target.abs);
        } catch {
          throw new WorkspaceError(
            "CHANGED_DURING_OPERATION",
            `${target.rel} was removed meanwhile; nothing was written`,
            {
              argument,
            },
          );
        }
        assertSameIdentity(existing, now, target.rel, argument);
      }
      await assertParentUnmoved(target, argument);
    } finally {
      await h.close();
    }
    if (!existing) {
      // No-clobber create: link fails if the name appeared meanwhile (even as a dangling link).
      try {
        await Deno.link(tmpAbs, target.abs);
      } catch (err) {
        if (err instanceof Deno.errors.AlreadyExists) {
          throw new WorkspaceError(
            "ALREADY_EXISTS",
            `${target.rel} was created by someone else meanwhile`,
            {
              argument,
            },
          );
        }
        // No hard links on this file system: check, then rename.
        if (await Deno.lstat(target.abs).then(() => true, () => false)) {
          throw new WorkspaceError(
            "ALREADY_EXISTS",
            `${target.rel} was created by someone else meanwhile`,
            {
              argument,
            },
          );
        }
        await Deno.rename(tmpAbs, target.abs);
        renamed = true;
      }
      if (!renamed) await Deno.remove(tmpAbs);
    } else {
      await Deno.rename(tmpAbs, target.abs);
    }
    renamed = true;
    await fsyncDir(target.parentAbs);
  } finally {
    if (!renamed) await Deno.remove(tmpAbs).catch(() => {});
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

function assertReplaceable(info: Deno.FileInfo, rel: string, argument: string): void {
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
    await makeDirectories(ws, r.rel.split("/").slice(0, -1), "path");
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
  await atomicReplace(r, bytes, { existing, argument: "path" });
  return out;
}

/** Creates each missing directory of a real workspace-relative path, one level at a time. */
async function makeDirectories(ws: Workspace, segs: string[], argument: string): Promise<string[]> {
  const created: string[] = [];
  for (let i = 1; i <= segs.length; i++) {
    const rel = segs.slice(0, i).join("/");
    const abs = ws.policy.absOf(rel);
    let info: Deno.FileInfo | null = null;
    try {
      info = await Deno.lstat(abs);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    if (info === null) {
      await assertParentUnmoved({
        parentAbs: ws.policy.absOf(segs.slice(0, i - 1).join("/") || "."),
        rel,
      }, argument);
      try {
        await Deno.mkdir(abs);
        created.push(rel);
      } catch (err) {
        if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
      }
      info = await Deno.lstat(abs);
    }
    if (info.isSymlink) {
      throw new WorkspaceError(
        "CHANGED_DURING_OPERATION",
        `${rel} became a symbolic link meanwhile; stopped`,
        {
          argument,
        },
      );
    }
    if (!info.isDirectory) {
      throw new WorkspaceError("NOT_A_DIRECTORY", `${rel} exists and is not a directory`, {
        argument,
      });
    }
  }
  return created;
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

/** Creates a directory (and its parents unless parents is false); an existing directory is success. */
export async function createDirectory(
  ws: Workspace,
  args: { path: string; parents?: boolean },
): Promise<CreateDirectoryResult> {
  ws.assertWritable("create_directory");
  const r = await ws.policy.resolve(args.path, { argument: "path", followLeaf: true });
  if (r.info) {
    if (r.info.isDirectory) return { path: r.rel, created: false, createdPaths: [] };
    throw new WorkspaceError("ALREADY_EXISTS", `${r.rel} exists and is not a directory`, {
      argument: "path",
    });
  }
  if (!r.parentExists && args.parents === false) {
    throw new WorkspaceError(
      "NOT_FOUND",
      `the parent directory of ${r.rel} does not exist (parents: true creates it)`,
      { argument: "path" },
    );
  }
  const made = await makeDirectories(ws, r.rel.split("/"), "path");
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

/** Moves or renames a file, directory or link (the link itself) inside the workspace. */
export async function movePath(
  ws: Workspace,
  args: { source: string; destination: string; overwrite?: boolean },
): Promise<MovePathResult> {
  ws.assertWritable("move_path");
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
      for await (const _ of Deno.readDir(dst.abs)) {
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
  await assertParentUnmoved(src, "source");
  await assertParentUnmoved(dst, "destination");
  const now = await Deno.lstat(src.abs);
  assertSameIdentity(srcInfo, now, src.rel, "source");
  let linked = false;
  if (!dstInfo && !srcInfo.isDirectory) {
    // No-clobber for non-directories: a hard link fails if the destination appeared meanwhile.
    try {
      await Deno.link(src.abs, dst.abs);
      linked = true;
    } catch (err) {
      if (err instanceof Deno.errors.AlreadyExists) {
        throw new WorkspaceError(
          "ALREADY_EXISTS",
          `${dst.rel} was created by someone else meanwhile`,
          {
            argument: "destination",
          },
        );
      }
      // Hard links unsupported here: fall back to rename after the check above.
    }
  }
  if (linked) {
    await Deno.remove(src.abs);
  } else {
    await Deno.rename(src.abs, dst.abs);
  }
  const moved = await Deno.lstat(dst.abs);
  if (moved.dev !== srcInfo.dev || moved.ino !== srcInfo.ino) {
    // Something else was swapped in under the checked name: put it back and refuse.
    await Deno.rename(dst.abs, src.abs).catch(() => {});
    assertSameIdentity(srcInfo, moved, src.rel, "source");
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

/** Deletes a file, link (never its target) or directory; needs confirm: true, and recursive for non-empty directories. */
export async function deletePath(
  ws: Workspace,
  args: { path: string; recursive?: boolean; confirm?: boolean },
): Promise<DeletePathResult> {
  ws.assertWritable("delete_path");
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
    for await (const _ of Deno.readDir(r.abs)) {
      throw new WorkspaceError(
        "DIRECTORY_NOT_EMPTY",
        `${r.rel} is a non-empty directory (pass recursive: true to delete it and its contents)`,
        { argument: "recursive" },
      );
    }
  }
  const out: DeletePathResult = { path: r.rel, type: entryType(info), deleted: true };
  assertFitsBudget(out, { limit: ws.limits.maxResultBytes, what: "delete_path" });
  const now = await Deno.lstat(r.abs);
  assertSameIdentity(info, now, r.rel, "path");
  // Deno.remove does not follow links inside a recursively removed tree.
  await Deno.remove(r.abs, { recursive: info.isDirectory && args.recursive === true });
  await fsyncDir(r.parentAbs);
  return out;
}
