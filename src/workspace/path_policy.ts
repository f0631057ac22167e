/**
 * Workspace containment: the one place where a caller-supplied path becomes a real
 * location. Every path argument of every operation goes through `resolve`.
 *
 * The walk resolves one component at a time from the workspace's real root,
 * following symbolic links by hand (bounded), so a non-existent tail, `..` after a
 * link, and links that leave the workspace are all decided on real locations, never
 * on the spelling of the input. Opens then verify (dev, ino) against what was checked.
 */
import fsp, { type FileHandle } from "node:fs/promises";
import fs, { constants as FS } from "node:fs";
import { WorkspaceError } from "./errors.ts";
import { fsErrorKind, type FsInfo, type WorkspaceFs } from "./fs/types.ts";
import { defaultFs } from "./fs/runtime.ts";

/** Most symbolic links one resolution follows (Linux's own limit is 40). */
export const MAX_SYMLINK_HOPS = 40;

/** A caller path resolved to a real location inside the workspace. */
export interface Resolved {
  /** Workspace-relative path with forward slashes; "." is the root. */
  rel: string;
  /** Absolute real path on disk. */
  abs: string;
  /** lstat of the final location; null when it does not exist. */
  info: FsInfo | null;
  /** Whether the parent directory exists (always true for the root). */
  parentExists: boolean;
  /** Absolute real path of the parent directory ("" for the root). */
  parentAbs: string;
  /** The last component's name on disk ("" for the root). */
  name: string;
  /**
   * The directories from the root down to the parent that existed when checked, each with the
   * identity it had then (the root's is the one pinned at open): what verifyChain re-checks.
   */
  chain: readonly ChainLink[];
  /** The file system it was resolved on (the workspace's): later checks use the same one. */
  fs: WorkspaceFs;
}

/** One directory of a checked chain: its absolute path and the identity it was checked with. */
export interface ChainLink {
  abs: string;
  dev: number;
  ino: number | null;
}

/** How a path is resolved. */
export interface ResolveOptions {
  /** The argument name reported in errors ("path", "source", ...). */
  argument: string;
  /** Follow a symbolic link in the last component (read, write) or act on the link itself (stat, move, delete). */
  followLeaf: boolean;
  /**
   * lstat each component synchronously (the read operations: decision 0038); otherwise as
   * asynchronous ops, each a point where a write's cancellation is checked.
   */
  syncMetadata?: boolean;
}

/** Splits a path on "/" dropping empty parts. */
function parts(p: string): string[] {
  return p.split("/").filter((c) => c !== "");
}

function startsWithParts(full: string[], prefix: string[]): boolean {
  if (prefix.length > full.length) return false;
  for (let i = 0; i < prefix.length; i++) if (full[i] !== prefix[i]) return false;
  return true;
}

function joinAbs(root: string, stack: readonly string[]): string {
  if (stack.length === 0) return root;
  return (root === "/" ? "" : root) + "/" + stack.join("/");
}

async function lstatOrNull(fs: WorkspaceFs, abs: string): Promise<FsInfo | null> {
  try {
    return await fs.lstat(abs);
  } catch (err) {
    if (fsErrorKind(err) === "NotFound") return null;
    throw err;
  }
}

/**
 * lstatOrNull, synchronously (decision 0038: one metadata call of a few microseconds costs the
 * event loop less than its hop through the runtime's blocking pool).
 */
function lstatOrNullSync(fs: WorkspaceFs, abs: string): FsInfo | null {
  try {
    return fs.lstatSync(abs);
  } catch (err) {
    if (fsErrorKind(err) === "NotFound") return null;
    throw err;
  }
}

/** The containment policy of one workspace root. */
export class PathPolicy {
  /** Absolute real path of the root (symlinks resolved). */
  readonly rootReal: string;
  /** Absolute path of the root as configured (may differ, e.g. through a symlinked /tmp). */
  readonly rootGiven: string;
  /** Identity of the root directory pinned when the policy was opened. */
  readonly rootId: Readonly<{ dev: number; ino: number | null }>;
  /** The file system every check of this workspace goes through. */
  readonly fs: WorkspaceFs;
  readonly #rootRealParts: string[];
  readonly #rootGivenParts: string[];

  private constructor(
    rootGiven: string,
    rootReal: string,
    rootId: { dev: number; ino: number | null },
    fs: WorkspaceFs,
  ) {
    this.fs = fs;
    this.rootGiven = rootGiven;
    this.rootReal = rootReal;
    this.rootId = Object.freeze({ dev: rootId.dev, ino: rootId.ino });
    this.#rootRealParts = parts(rootReal);
    this.#rootGivenParts = parts(rootGiven);
  }

  /**
   * Opens the policy for a root directory, which must exist and be a directory; `fs` defaults
   * to the runtime's (Deno's API on Deno, node:fs on Node and Bun).
   */
  static async open(root: string, options: { fs?: WorkspaceFs } = {}): Promise<PathPolicy> {
    const fs = options.fs ?? defaultFs();
    if (root.includes("\0")) {
      throw new WorkspaceError("INVALID_ARGUMENT", "the workspace root contains a NUL byte", {
        argument: "root",
      });
    }
    const given = root.startsWith("/") ? root : joinAbs(fs.cwd(), parts(root));
    let real: string;
    try {
      real = await fs.realPath(given);
    } catch (err) {
      if (fsErrorKind(err) === "NotCapable") {
        // Deno's own wall: say which permission is missing rather than "not found".
        throw new WorkspaceError(
          "PERMISSION_DENIED",
          `workspace root ${root} cannot be read: this process has no read permission for it ` +
            `(run it with --allow-read=${normalizeAbs(given)})`,
          { argument: "root", cause: err },
        );
      }
      if (fsErrorKind(err) === "PermissionDenied") {
        throw new WorkspaceError(
          "PERMISSION_DENIED",
          `workspace root ${root} cannot be opened: permission denied by the operating system`,
          { argument: "root", cause: err },
        );
      }
      throw new WorkspaceError("NOT_FOUND", `workspace root ${root} cannot be opened`, {
        argument: "root",
        cause: err,
      });
    }
    const info = await fs.stat(real);
    if (!info.isDirectory) {
      throw new WorkspaceError("NOT_A_DIRECTORY", `workspace root ${root} is not a directory`, {
        argument: "root",
      });
    }
    // The configured spelling is trusted for absolute arguments only when it has no "..":
    // "link/.." means something else lexically than on disk.
    const spelled = given.split("/").includes("..") ? real : normalizeAbs(given);
    return new PathPolicy(spelled, real, { dev: info.dev, ino: info.ino }, fs);
  }

  /** Resolves a caller path to a real location inside the workspace, or throws a typed error. */
  async resolve(input: unknown, options: ResolveOptions): Promise<Resolved> {
    const { argument } = options;
    if (typeof input !== "string") {
      throw new WorkspaceError("INVALID_ARGUMENT", `${argument} must be a string`, { argument });
    }
    if (input.length === 0) {
      throw new WorkspaceError(
        "INVALID_ARGUMENT",
        `${argument} is empty; use "." for the workspace root`,
        { argument },
      );
    }
    if (input.includes("\0")) {
      throw new WorkspaceError("INVALID_ARGUMENT", `${argument} contains a NUL byte`, {
        argument,
      });
    }
    if (!input.isWellFormed()) {
      // A lone surrogate has no file-system spelling: it would silently become U+FFFD.
      throw new WorkspaceError("INVALID_ARGUMENT", `${argument} is not well-formed Unicode`, {
        argument,
      });
    }
    const outside = (why: string) =>
      new WorkspaceError("OUTSIDE_WORKSPACE", `${argument} ${JSON.stringify(input)} ${why}`, {
        argument,
      });

    let queue: string[];
    if (input.startsWith("/")) {
      const p = parts(input);
      if (startsWithParts(p, this.#rootRealParts)) {
        queue = p.slice(this.#rootRealParts.length);
      } else if (startsWithParts(p, this.#rootGivenParts)) {
        queue = p.slice(this.#rootGivenParts.length);
      } else {
        throw outside("is an absolute path outside the workspace");
      }
      if (input.endsWith("/")) queue.push(""); // keep the trailing slash's meaning
    } else {
      queue = input.split("/");
    }
    const followLeaf = options.followLeaf;
    const sync = options.syncMetadata === true;
    this.verifyRoot(argument);

    const stack: string[] = [];
    // Identity of each existing stack entry as the walk saw it (null: missing).
    const ids: ({ dev: number; ino: number | null } | null)[] = [];
    let missingFrom: number | null = null;
    let hops = 0;
    while (queue.length > 0) {
      const c = queue.shift()!;
      if (c === "" || c === ".") continue;
      if (c === "..") {
        if (stack.length === 0) throw outside("escapes the workspace");
        stack.pop();
        ids.pop();
        if (missingFrom !== null && stack.length <= missingFrom) missingFrom = null;
        continue;
      }
      if (missingFrom !== null) {
        stack.push(c);
        ids.push(null);
        continue;
      }
      // "name/" and "name/." ask for what name leads to, as in POSIX: only a bare final name is "last".
      const isLast = queue.length === 0;
      let name = c;
      const dir = joinAbs(this.rootReal, stack);
      let info = sync
        ? this.#lstatComponentSync(dir, name, argument)
        : await this.#lstatComponent(dir, name, argument);
      if (info === null) {
        const alt = await this.#unicodeAlternative(stack, name, argument);
        if (alt !== null) {
          name = alt;
          info = await lstatOrNull(this.fs, joinAbs(this.rootReal, [...stack, name]));
        }
      }
      if (info === null) {
        missingFrom = stack.length;
        stack.push(name);
        ids.push(null);
        continue;
      }
      if (info.isSymlink && (!isLast || followLeaf)) {
        if (++hops > MAX_SYMLINK_HOPS) {
          throw new WorkspaceError(
            "SYMLINK_LOOP",
            `${argument} ${JSON.stringify(input)} has too many levels of symbolic links`,
            { argument },
          );
        }
        let target: string;
        try {
          target = await this.fs.readLink(joinAbs(this.rootReal, [...stack, name]));
        } catch {
          // It stopped being a link (or went away) between the lstat and the readlink.
          throw new WorkspaceError(
            "CHANGED_DURING_OPERATION",
            `${argument} ${JSON.stringify(input)}: ${name} changed while it was checked`,
            { argument },
          );
        }
        if (target.startsWith("/")) {
          const t = parts(target);
          if (startsWithParts(t, this.#rootRealParts)) {
            stack.length = 0;
            ids.length = 0;
            queue = [...t.slice(this.#rootRealParts.length), ...queue];
          } else if (startsWithParts(t, this.#rootGivenParts)) {
            stack.length = 0;
            ids.length = 0;
            queue = [...t.slice(this.#rootGivenParts.length), ...queue];
          } else {
            throw outside(
              `goes through a symbolic link (${name}) that points outside the workspace`,
            );
          }
        } else {
          queue = [...target.split("/"), ...queue];
        }
        continue;
      }
      if (!isLast && !info.isDirectory) {
        throw new WorkspaceError(
          "NOT_A_DIRECTORY",
          `${argument} ${JSON.stringify(input)}: ${[...stack, name].join("/")} is not a directory`,
          { argument },
        );
      }
      stack.push(name);
      ids.push({ dev: info.dev, ino: info.ino });
    }

    const abs = joinAbs(this.rootReal, stack);
    const chain: ChainLink[] = [{ abs: this.rootReal, ...this.rootId }];
    for (let i = 0; i < stack.length - 1; i++) {
      const id = ids[i];
      if (id === null) break;
      chain.push({ abs: joinAbs(this.rootReal, stack.slice(0, i + 1)), dev: id.dev, ino: id.ino });
    }
    const exists = missingFrom === null;
    const info = !exists
      ? null
      : sync
      ? lstatOrNullSync(this.fs, abs)
      : await lstatOrNull(this.fs, abs);
    return {
      rel: stack.length === 0 ? "." : stack.join("/"),
      abs,
      info,
      parentExists: missingFrom === null || missingFrom >= stack.length - 1,
      parentAbs: stack.length === 0 ? "" : joinAbs(this.rootReal, stack.slice(0, -1)),
      name: stack.length === 0 ? "" : stack[stack.length - 1],
      chain,
      fs: this.fs,
    };
  }

  /**
   * Throws CHANGED_DURING_OPERATION unless the root is still the directory pinned at open (not
   * a symbolic link, not another directory put in its place).
   */
  verifyRoot(argument?: string): void {
    let info: FsInfo | null = null;
    try {
      info = this.fs.lstatSync(this.rootReal);
    } catch {
      // gone or unreadable: changed
    }
    if (
      info === null || info.isSymlink || !info.isDirectory || info.dev !== this.rootId.dev ||
      info.ino !== this.rootId.ino
    ) {
      throw new WorkspaceError(
        "CHANGED_DURING_OPERATION",
        "the workspace root was replaced after the workspace was opened (it is no longer the " +
          "same directory); nothing was done: restart on the intended directory",
        { argument, details: { reason: "root-replaced" } },
      );
    }
  }

  async #lstatComponent(dir: string, name: string, argument: string): Promise<FsInfo | null> {
    try {
      return await this.fs.lstat((dir === "/" ? "" : dir) + "/" + name);
    } catch (err) {
      return this.#missingOrThrow(err, argument);
    }
  }

  /** #lstatComponent, synchronously (decision 0038). */
  #lstatComponentSync(dir: string, name: string, argument: string): FsInfo | null {
    try {
      return this.fs.lstatSync((dir === "/" ? "" : dir) + "/" + name);
    } catch (err) {
      return this.#missingOrThrow(err, argument);
    }
  }

  /** A failed component lstat: null for a missing one, else the typed error is thrown. */
  #missingOrThrow(err: unknown, argument: string): null {
    const kind = fsErrorKind(err);
    if (kind === "NotFound") return null;
    if (kind === "NotADirectory") {
      throw new WorkspaceError("NOT_A_DIRECTORY", `${argument}: a parent is not a directory`, {
        argument,
      });
    }
    if ((err as { code?: string }).code === "ENAMETOOLONG") {
      throw new WorkspaceError(
        "INVALID_ARGUMENT",
        `${argument}: a name in it is longer than the file system allows`,
        { argument },
      );
    }
    throw err;
  }

  /** Finds the one on-disk entry that is canonically equivalent (NFC) to a missing name. */
  async #unicodeAlternative(
    stack: string[],
    name: string,
    argument: string,
  ): Promise<string | null> {
    // deno-lint-ignore no-control-regex
    if (/^[\x00-\x7f]*$/.test(name)) return null;
    const want = name.normalize("NFC");
    const found: string[] = [];
    try {
      for await (const e of this.fs.readDir(joinAbs(this.rootReal, stack))) {
        if (e.name !== name && e.name.normalize("NFC") === want) found.push(e.name);
      }
    } catch {
      return null;
    }
    if (found.length > 1) {
      throw new WorkspaceError(
        "AMBIGUOUS_PATH",
        `${argument}: ${JSON.stringify(name)} matches ${found.length} canonically equivalent names`,
        { argument, details: { candidates: found.sort() } },
      );
    }
    return found[0] ?? null;
  }
}

function normalizeAbs(p: string): string {
  const out: string[] = [];
  for (const c of parts(p)) {
    if (c === ".") continue;
    if (c === "..") out.pop();
    else out.push(c);
  }
  return "/" + out.join("/");
}

/** Throws unless a resolved location exists; returns its lstat. */
export function requireExisting(r: Resolved, argument: string): FsInfo {
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
  for (let i = 0; i < chain.length; i++) {
    const link = chain[i];
    let info: FsInfo | null = null;
    try {
      info = what.fs.lstatSync(link.abs);
    } catch {
      // gone or unreadable: changed
    }
    if (
      info === null || info.isSymlink || !info.isDirectory || info.dev !== link.dev ||
      info.ino !== link.ino
    ) {
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
  }
}

/**
 * The checks after a checked file was read, before its content is returned: the chain, the file's
 * name still leading to the inode that was opened (a fresh look-up by path, not a link), the chain
 * again. A read whose open went through a directory swapped for a link and swapped back must also
 * win this later look-up while both chain checks around it lose (decision 0010).
 */
export function verifyAfterRead(r: Resolved, argument: string): void {
  const what = { rel: r.rel, argument, fs: r.fs };
  const info = r.info;
  // Twice: each look-up of the name is one more moment a swapped-and-restored directory must be
  // swapped at again while the chain checks on both sides of it see it restored.
  for (let i = 0; i < AFTER_READ_LOOKUPS; i++) {
    verifyChain(r.chain, what);
    let now: FsInfo | null = null;
    try {
      now = r.fs.lstatSync(r.abs);
    } catch {
      // gone or unreadable: changed
    }
    if (
      info === null || now === null || now.isSymlink || now.dev !== info.dev ||
      now.ino !== info.ino
    ) {
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
  checked: { dev: number; ino: number | null },
  opened: { dev: number; ino: number | null },
  rel: string,
  argument: string,
): void {
  if (checked.dev !== opened.dev || checked.ino !== opened.ino) {
    throw new WorkspaceError(
      "CHANGED_DURING_OPERATION",
      `${argument} ${rel} changed between the check and the open; nothing was done`,
      { argument, details: { reason: "entry-changed" } },
    );
  }
}

/** The checks before a checked open: an existing regular file, the chain verified; its lstat. */
function beforeCheckedOpen(r: Resolved, argument: string): FsInfo {
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
function checkedOpenFailure(err: unknown, r: Resolved, argument: string): unknown {
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
  r: Resolved,
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
export async function openCheckedFile(r: Resolved, argument: string): Promise<FileHandle> {
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
export function openCheckedFileSync(r: Resolved, argument: string): CheckedFile {
  const info = beforeCheckedOpen(r, argument);
  let fd: number;
  try {
    fd = fs.openSync(r.abs, FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK);
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
