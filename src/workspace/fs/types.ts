/**
 * The one file-system interface of the workspace layer: every look-up, listing, rename, link,
 * removal and directory creation the containment checks make goes through a WorkspaceFs, so
 * the same checks run on Deno (Deno APIs) and on Node or Bun (node:fs). Opens of regular files
 * use node:fs/promises on every runtime (O_NOFOLLOW, O_NONBLOCK), as they always did.
 */

/** The lstat/stat fields the containment checks read (a structural subset of Deno.FileInfo). */
export interface FsInfo {
  isFile: boolean;
  isDirectory: boolean;
  isSymlink: boolean;
  isFifo: boolean | null;
  isSocket: boolean | null;
  isCharDevice: boolean | null;
  isBlockDevice: boolean | null;
  size: number;
  mtime: Date | null;
  atime: Date | null;
  birthtime: Date | null;
  ctime: Date | null;
  dev: number;
  ino: number | null;
  mode: number | null;
  nlink: number | null;
}

/** One directory entry as the listing typed it (links are not followed). */
export interface FsDirEntry {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
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
  lstat(abs: string): Promise<FsInfo>;
  lstatSync(abs: string): FsInfo;
  stat(abs: string): Promise<FsInfo>;
  realPath(abs: string): Promise<string>;
  readLink(abs: string): Promise<string>;
  readDir(abs: string): AsyncIterable<FsDirEntry>;
  readDirSync(abs: string): Iterable<FsDirEntry>;
  mkdirSync(abs: string): void;
  renameSync(from: string, to: string): void;
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
