/**
 * The one file-system interface of the workspace layer: every look-up, listing, rename, link,
 * removal and directory creation the containment checks make goes through a WorkspaceFs, so
 * the same checks run on Deno (Deno APIs) and on Node or Bun (node:fs). Opens of regular files
 * use node:fs/promises on every runtime (O_NOFOLLOW, O_NONBLOCK), as they always did.
 */

/** The lstat/stat fields the containment checks read (a structural subset of Deno.FileInfo). */
export interface FsInfo {
  /** A regular file. */
  isFile: boolean;
  /** A directory. */
  isDirectory: boolean;
  /** A symbolic link (lstat only). */
  isSymlink: boolean;
  /** A FIFO; null where the runtime cannot tell. */
  isFifo: boolean | null;
  /** A socket; null where unknown. */
  isSocket: boolean | null;
  /** A character device; null where unknown. */
  isCharDevice: boolean | null;
  /** A block device; null where unknown. */
  isBlockDevice: boolean | null;
  /** Size in bytes. */
  size: number;
  /** Last modification. */
  mtime: Date | null;
  /** Last access. */
  atime: Date | null;
  /** Creation, where the file system records it. */
  birthtime: Date | null;
  /** Last status change. */
  ctime: Date | null;
  /** Device id (with ino, the identity the containment checks compare). */
  dev: number;
  /** Inode number. */
  ino: number | null;
  /** Permission and type bits. */
  mode: number | null;
  /** Number of hard links. */
  nlink: number | null;
}

/** One directory entry as the listing typed it (links are not followed). */
export interface FsDirEntry {
  /** The entry's name (no directory part). */
  name: string;
  /** A regular file. */
  isFile: boolean;
  /** A directory. */
  isDirectory: boolean;
  /** A symbolic link (not followed). */
  isSymlink: boolean;
}

/** Which runtime's API an implementation uses. */
export type FsKind = "deno" | "node";

/**
 * The file-system operations of the workspace layer. Failures throw the runtime's own errors
 * (Deno.errors.* or Node errno errors); fsErrorKind classifies both the same way.
 */
export interface WorkspaceFs {
  /** "deno" or "node": also tells engine workers which implementation to use. */
  readonly kind: FsKind;
  /** Information on a path, not following a final link. */
  lstat(abs: string): Promise<FsInfo>;
  /** lstat, synchronously. */
  lstatSync(abs: string): FsInfo;
  /** Information on what a path resolves to. */
  stat(abs: string): Promise<FsInfo>;
  /** The canonical absolute path (links resolved). */
  realPath(abs: string): Promise<string>;
  /** The target of a symbolic link. */
  readLink(abs: string): Promise<string>;
  /** The entries of a directory. */
  readDir(abs: string): AsyncIterable<FsDirEntry>;
  /** readDir, synchronously. */
  readDirSync(abs: string): Iterable<FsDirEntry>;
  /** Creates one directory (not its parents). */
  mkdirSync(abs: string): void;
  /** Renames a path atomically within one file system. */
  renameSync(from: string, to: string): void;
  /** Creates a hard link `created` to `existing`. */
  linkSync(existing: string, created: string): void;
  /** Removes a file, a link or an empty directory. */
  removeSync(abs: string): void;
  /** The process's current directory. */
  cwd(): string;
}

/** A runtime-independent class of a file-system failure; null for anything else. */
export type FsErrorKind =
  | "NotFound"
  | "AlreadyExists"
  | "NotADirectory"
  | "IsADirectory"
  | "FilesystemLoop"
  | "PermissionDenied"
  | "NotCapable";

const BY_NAME: ReadonlySet<string> = new Set([
  "NotFound",
  "AlreadyExists",
  "NotADirectory",
  "IsADirectory",
  "FilesystemLoop",
  "PermissionDenied",
  "NotCapable",
]);

const BY_CODE: Readonly<Record<string, FsErrorKind>> = Object.freeze({
  ENOENT: "NotFound",
  EEXIST: "AlreadyExists",
  ENOTDIR: "NotADirectory",
  EISDIR: "IsADirectory",
  ELOOP: "FilesystemLoop",
  EACCES: "PermissionDenied",
  EPERM: "PermissionDenied",
});

/**
 * Classifies a thrown value: Deno's error classes by name (Deno.errors.NotFound, ..., NotCapable
 * for its permission wall), Node's errno errors by code (ENOENT, EEXIST, ...).
 */
export function fsErrorKind(err: unknown): FsErrorKind | null {
  if (!(err instanceof Error)) return null;
  if (BY_NAME.has(err.name) && err.constructor?.name === err.name) return err.name as FsErrorKind;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? BY_CODE[code] ?? null : null;
}
