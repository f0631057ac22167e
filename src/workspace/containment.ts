/**
 * Containment after resolve: the identity chain and the checked opens, once for the whole
 * workspace layer. A resolved location (path_policy.ts) carries the directories from the pinned
 * root down to its parent, each with the identity (dev, ino) it was checked with; every later step
 * re-checks that chain by path (verifyChain), opens files only with O_NOFOLLOW | O_NONBLOCK and
 * ties the descriptor's fstat to the checked identity, and after a read looks the name up again
 * (verifyAfterRead). The walker (walk.ts) and the writes (atomic.ts and the write operations) use the same helpers.
 *
 * The opens are node:fs calls on every runtime: Deno's own open has no O_NOFOLLOW (nor O_EXCL
 * with it, nor an open of a directory to fsync it). They are the only file-system calls of the
 * layer that do not go through WorkspaceFs, and they live here: the checked reads, the walker's
 * open, the atomic write's temporary file, the directory fsync and the checked directory chmod
 * (copy_path). Reads, fstat, fchmod and close on a descriptor one of them opened are calls on
 * that descriptor, not look-ups by path.
 */
import fsp, { type FileHandle } from "node:fs/promises";
import fs, { constants as FS } from "node:fs";
import { WorkspaceError } from "./errors.ts";
import { fsErrorKind, type FsInfo, type WorkspaceFs } from "./fs/types.ts";

/** A file or directory identity: what a checked name must still lead to. */
export interface Identity {
  dev: number;
  ino: number | null;
}

/** One directory of a checked chain: its absolute path and the identity it was checked with. */
export interface ChainLink extends Identity {
  abs: string;
  /**
   * A mount point of the kernel sandbox (the workspace root under bubblewrap): it cannot be renamed
   * or replaced there (EBUSY), and a swap on the host is not seen inside, so it is not re-checked
   * (decision 0059).
   */
  mounted?: boolean;
}

/** A checked location: what the re-checks and checked opens need of a resolved path. */
export interface Located {
  /** Workspace-relative path with forward slashes; "." is the root. */
  rel: string;
  /** Absolute real path on disk. */
  abs: string;
  /** lstat of the final location; null when it does not exist. */
  info: FsInfo | null;
  /**
   * The directories from the root down to the parent that existed when checked, each with the
   * identity it had then (the root's is the one pinned at open): what verifyChain re-checks.
   */
  chain: readonly ChainLink[];
  /** The file system it was resolved on (the workspace's): later checks use the same one. */
  fs: WorkspaceFs;
}

/** Whether two stats name the same inode. */
export function sameIdentity(a: Identity, b: Identity): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** lstat, or null when nothing is there (NotFound); any other failure is thrown. */
export async function lstatIfExists(fs: WorkspaceFs, abs: string): Promise<FsInfo | null> {
  try {
    return await fs.lstat(abs);
  } catch (err) {
    if (fsErrorKind(err) === "NotFound") return null;
    throw err;
  }
}

/**
 * lstatIfExists, synchronously (decision 0038: one metadata call of a few microseconds costs the
 * event loop less than its hop through the runtime's blocking pool).
 */
export function lstatIfExistsSync(fs: WorkspaceFs, abs: string): FsInfo | null {
  try {
    return fs.lstatSync(abs);
  } catch (err) {
    if (fsErrorKind(err) === "NotFound") return null;
    throw err;
  }
}

/** lstat for a re-check, or null when it fails for any reason (gone or unreadable: changed). */
export function lstatOrNullSync(fs: WorkspaceFs, abs: string): FsInfo | null {
  try {
    return fs.lstatSync(abs);
  } catch {
    return null;
  }
}

/**
 * Whether a checked directory's path still leads to it, right now: one lstat, which must find a
 * directory, not a link, with the identity it was checked with (gone or unreadable: it does not).
 */
export function dirHolds(fs: WorkspaceFs, dir: ChainLink): boolean {
  const info = lstatOrNullSync(fs, dir.abs);
  return info !== null && !info.isSymlink && info.isDirectory && sameIdentity(info, dir);
}

/**
 * The index of the first directory of a chain that is no longer the one it was checked as (gone,
 * unreadable, a link, not a directory, another identity), looked up by path from the root down;
 * -1 when the whole chain holds. Synchronous: no other task runs between the look-ups.
 */
export function brokenLink(fs: WorkspaceFs, chain: readonly ChainLink[]): number {
  for (let i = 0; i < chain.length; i++) {
    if (chain[i].mounted !== true && !dirHolds(fs, chain[i])) return i;
  }
  return -1;
}

/** Whether a checked chain still holds (every directory the same, none a link), without throwing. */
export function chainHolds(fs: WorkspaceFs, chain: readonly ChainLink[]): boolean {
  return brokenLink(fs, chain) === -1;
}

/**
 * Opens a file for reading without following a final link and without blocking on a FIFO
 * (O_RDONLY | O_NOFOLLOW | O_NONBLOCK), synchronously; returns the descriptor. Throws the errno
 * error (ELOOP when the name is a link).
 */
export function openNoFollowSync(abs: string): number {
  return fs.openSync(abs, FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK);
}

/**
 * Creates a new file for writing under a name nothing holds yet, never through a final link
 * (O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode 0666 before the umask): the temporary file of an
 * atomic write. Throws the errno error (EEXIST when the name exists, even as a dangling link).
 */
export function createExclusive(abs: string): Promise<FileHandle> {
  return fsp.open(abs, FS.O_WRONLY | FS.O_CREAT | FS.O_EXCL | FS.O_NOFOLLOW, 0o666);
}

/**
 * fsyncs a directory, so a rename or link in it survives a crash; a file system that refuses
 * fsync on directories is ignored (the rename itself is still atomic).
 */
export async function fsyncDir(abs: string): Promise<void> {
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
 * Sets the permission bits of a checked directory through a descriptor: opened without following
 * a final link (O_DIRECTORY | O_NOFOLLOW), its fstat must be the checked identity, then fchmod.
 * Returns false, changing nothing, when the name no longer leads to that directory.
 */
export async function chmodCheckedDir(abs: string, id: Identity, mode: number): Promise<boolean> {
  let h: FileHandle;
  try {
    h = await fsp.open(abs, FS.O_RDONLY | FS.O_DIRECTORY | FS.O_NOFOLLOW);
  } catch {
    return false;
  }
  try {
    const st = await h.stat();
    if (!sameIdentity({ dev: st.dev, ino: st.ino }, id)) return false;
    await h.chmod(mode);
    return true;
  } finally {
    await h.close();
  }
}

/** Throws unless a resolved location exists; returns its lstat. */
export function requireExisting(r: Located, argument: string): FsInfo {
  if (r.info === null) {
    throw new WorkspaceError("NOT_FOUND", `${argument} ${r.rel} does not exist`, { argument });
  }
  return r.info;
}

/** Throws SPECIAL_FILE for FIFOs, sockets and devices. */
export function refuseSpecial(info: FsInfo, rel: string, argument: string): void {
  if (info.isFifo || info.isSocket || info.isCharDevice || info.isBlockDevice) {
    throw new WorkspaceError(
      "SPECIAL_FILE",
      `${argument} ${rel} is a special file (FIFO, socket or device) and is refused`,
      { argument },
    );
  }
}

/**
 * Re-verifies a checked directory chain, synchronously (no other task runs in between): each
 * directory, from the root down, is reached by its path, is a directory and not a link, and has
 * the identity it was checked with. Throws CHANGED_DURING_OPERATION naming argument otherwise.
 * Because the kernel walks the whole path for every look-up, an identical identity for a
 * directory means a mutation by that path at that moment lands in the checked directory.
 */
export function verifyChain(
  chain: readonly ChainLink[],
  what: { rel: string; argument: string; fs: WorkspaceFs },
): void {
  const i = brokenLink(what.fs, chain);
  if (i === -1) return;
  throw new WorkspaceError(
    "CHANGED_DURING_OPERATION",
    i === 0
      ? `the workspace root was replaced after the workspace was opened; nothing was done to ${what.rel}`
      : `a directory above ${what.rel} was replaced or moved since it was checked`,
    {
      argument: what.argument,
      details: { reason: i === 0 ? "root-replaced" : "parent-changed" },
    },
  );
}

/**
 * The checks after a checked file was read, before its content is returned: the chain, the file's
 * name still leading to the inode that was opened (a fresh look-up by path, not a link), the chain
 * again. A read whose open went through a directory swapped for a link and swapped back must also
 * win this later look-up while both chain checks around it lose (decision 0010).
 */
export function verifyAfterRead(r: Located, argument: string): void {
  const what = { rel: r.rel, argument, fs: r.fs };
  const info = r.info;
  // Twice: each look-up of the name is one more moment a swapped-and-restored directory must be
  // swapped at again while the chain checks on both sides of it see it restored.
  for (let i = 0; i < AFTER_READ_LOOKUPS; i++) {
    verifyChain(r.chain, what);
    const now = lstatOrNullSync(r.fs, r.abs);
    if (info === null || now === null || now.isSymlink || !sameIdentity(now, info)) {
      throw new WorkspaceError(
        "CHANGED_DURING_OPERATION",
        `${argument} ${r.rel} was replaced or moved while it was read; nothing was done with it`,
        { argument, details: { reason: "entry-changed" } },
      );
    }
  }
  verifyChain(r.chain, what);
}

/** Look-ups of a read file's name after its read (verifyAfterRead). */
const AFTER_READ_LOOKUPS = 2;

/** Attempts a read makes when its file is replaced under it (an editor's save by rename). */
export const READ_ATTEMPTS = 2;

/**
 * Runs a read (read_file, read_media) again, from its resolve on, when its file was replaced
 * while it was checked, opened or read (`CHANGED_DURING_OPERATION` with reason `entry-changed`:
 * an editor, formatter or checkout saving by rename does that), up to READ_ATTEMPTS in all; every
 * check runs again on each attempt. Any other error, or the last attempt's, is thrown. Not for
 * writes: a write's caller decides on the changed file.
 */
export async function retryReplacedRead<T>(
  read: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await read();
    } catch (err) {
      const replaced = err instanceof WorkspaceError && err.code === "CHANGED_DURING_OPERATION" &&
        err.details?.reason === "entry-changed";
      if (!replaced || attempt >= READ_ATTEMPTS || signal?.aborted) throw err;
    }
  }
}

/** Throws CHANGED_DURING_OPERATION unless two stats name the same inode. */
export function assertSameIdentity(
  checked: Identity,
  opened: Identity,
  rel: string,
  argument: string,
): void {
  if (!sameIdentity(checked, opened)) {
    throw new WorkspaceError(
      "CHANGED_DURING_OPERATION",
      `${argument} ${rel} changed between the check and the open; nothing was done`,
      { argument, details: { reason: "entry-changed" } },
    );
  }
}

/** The checks before a checked open: an existing regular file, the chain verified; its lstat. */
function beforeCheckedOpen(r: Located, argument: string): FsInfo {
  const info = requireExisting(r, argument);
  if (info.isDirectory) {
    throw new WorkspaceError("IS_A_DIRECTORY", `${argument} ${r.rel} is a directory`, {
      argument,
    });
  }
  refuseSpecial(info, r.rel, argument);
  verifyChain(r.chain, { rel: r.rel, argument, fs: r.fs });
  return info;
}

/** A failed O_NOFOLLOW open in wmcp's words: ELOOP means the file became a link. */
function checkedOpenFailure(err: unknown, r: Located, argument: string): unknown {
  if ((err as { code?: string }).code === "ELOOP") {
    return new WorkspaceError(
      "CHANGED_DURING_OPERATION",
      `${argument} ${r.rel} was replaced by a symbolic link; nothing was done`,
      { argument, details: { reason: "entry-changed" } },
    );
  }
  return err;
}

/**
 * The checks after a checked open, on the descriptor's fstat: the identity that was checked, a
 * regular file, and the chain still holding (the identity came from a look-up by path: a directory
 * above swapped for a link during resolve's last lstat and the open would match too).
 */
function afterCheckedOpen(
  info: FsInfo,
  st: { dev: number; ino: number; isFile(): boolean },
  r: Located,
  argument: string,
): void {
  assertSameIdentity(
    { dev: info.dev, ino: info.ino },
    { dev: st.dev, ino: st.ino },
    r.rel,
    argument,
  );
  if (!st.isFile()) refuseSpecial({ ...info, isFifo: true }, r.rel, argument);
  verifyChain(r.chain, { rel: r.rel, argument, fs: r.fs });
}

/**
 * Opens an existing regular file for reading without following a final link and
 * without blocking on special files, then verifies it is the inode that was checked.
 */
export async function openCheckedFile(r: Located, argument: string): Promise<FileHandle> {
  const info = beforeCheckedOpen(r, argument);
  let handle: FileHandle;
  try {
    handle = await fsp.open(r.abs, FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK);
  } catch (err) {
    throw checkedOpenFailure(err, r, argument);
  }
  try {
    afterCheckedOpen(info, await handle.stat(), r, argument);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * A regular file opened by openCheckedFileSync: its descriptor, the size its fstat gave at open,
 * reads (synchronous for the small reads of decision 0038, asynchronous otherwise) and close.
 */
export class CheckedFile {
  /** The open descriptor (O_RDONLY | O_NOFOLLOW | O_NONBLOCK). */
  readonly fd: number;
  /** Size by the fstat made at open. */
  readonly size: number;
  #closed = false;

  /** @ignore */
  constructor(fd: number, size: number) {
    this.fd = fd;
    this.size = size;
  }

  /** Reads at the current position, synchronously; returns the bytes read (0 at end of file). */
  readSync(buffer: Uint8Array, offset: number, length: number): number {
    return fs.readSync(this.fd, buffer, offset, length, null);
  }

  /** Reads at `position` (the descriptor's position is unchanged), synchronously. */
  readAtSync(buffer: Uint8Array, offset: number, length: number, position: number): number {
    return fs.readSync(this.fd, buffer, offset, length, position);
  }

  /** Reads at the current position through the runtime's blocking pool (large files). */
  read(buffer: Uint8Array, offset: number, length: number): Promise<number> {
    return new Promise((resolve, reject) => {
      fs.read(this.fd, buffer, offset, length, null, (err, n) => err ? reject(err) : resolve(n));
    });
  }

  /** Closes the descriptor (once; later calls do nothing). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    fs.closeSync(this.fd);
  }
}

/**
 * openCheckedFile, synchronously (decision 0038): the same checks in the same order (existing,
 * not a directory or special file, chain verified, opened with O_NOFOLLOW | O_NONBLOCK, the
 * descriptor's fstat identity equal to the checked one, a regular file, chain verified again),
 * with no hop through the blocking pool. Closing it is the caller's.
 */
export function openCheckedFileSync(r: Located, argument: string): CheckedFile {
  const info = beforeCheckedOpen(r, argument);
  let fd: number;
  try {
    fd = openNoFollowSync(r.abs);
  } catch (err) {
    throw checkedOpenFailure(err, r, argument);
  }
  try {
    const st = fs.fstatSync(fd);
    afterCheckedOpen(info, st, r, argument);
    return new CheckedFile(fd, st.size);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}
