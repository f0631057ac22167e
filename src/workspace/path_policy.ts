/**
 * Workspace containment: the one place where a caller-supplied path becomes a real
 * location. Every path argument of every operation goes through `resolve`.
 *
 * The walk resolves one component at a time from the workspace's real root,
 * following symbolic links by hand (bounded), so a non-existent tail, `..` after a
 * link, and links that leave the workspace are all decided on real locations, never
 * on the spelling of the input. Opens then verify (dev, ino) against what was checked
 * (containment.ts: the identity chain, checked opens, the re-checks after a read).
 */
import { WorkspaceError } from "./errors.ts";
import { fsErrorKind, type FsInfo, type WorkspaceFs } from "./fs/types.ts";
import { defaultFs } from "./fs/runtime.ts";
import {
  type ChainLink,
  dirHolds,
  type Located,
  lstatIfExists,
  lstatIfExistsSync,
} from "./containment.ts";

/** Most symbolic links one resolution follows (Linux's own limit is 40). */
export const MAX_SYMLINK_HOPS = 40;

/** A caller path resolved to a real location inside the workspace. */
export interface Resolved extends Located {
  /** Whether the parent directory exists (always true for the root). */
  parentExists: boolean;
  /** Absolute real path of the parent directory ("" for the root). */
  parentAbs: string;
  /** The last component's name on disk ("" for the root). */
  name: string;
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

/** The state of one resolve walk: the real names reached, their identities, what is left. */
interface Walk {
  /** Components still to walk. */
  queue: string[];
  /** Real names from the root down to the position reached. */
  stack: string[];
  /** Identity of each existing stack entry as the walk saw it (null: missing). */
  ids: ({ dev: number; ino: number | null } | null)[];
  /** Stack index of the first missing component; null while every one exists. */
  missingFrom: number | null;
  /** Symbolic links followed so far. */
  hops: number;
}

/** What a resolve walk reports and decides with: the input, its argument name, followLeaf. */
interface WalkContext {
  path: string;
  argument: string;
  followLeaf: boolean;
  outside: (why: string) => WorkspaceError;
}

/** The input as a path string: a non-empty, NUL-free, well-formed string, else INVALID_ARGUMENT. */
function checkedInput(input: unknown, argument: string): string {
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
  return input;
}

/** A ".." of the walk: one level up (OUTSIDE_WORKSPACE above the root). */
function up(w: Walk, outside: (why: string) => WorkspaceError): void {
  if (w.stack.length === 0) throw outside("escapes the workspace");
  w.stack.pop();
  w.ids.pop();
  if (w.missingFrom !== null && w.stack.length <= w.missingFrom) w.missingFrom = null;
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
  /**
   * The root is the kernel sandbox's mount point (decision 0059): it is not re-checked, since it
   * cannot be replaced in the sandbox and a swap on the host is not seen there.
   */
  readonly rootMounted: boolean;
  readonly #rootRealParts: string[];
  readonly #rootGivenParts: string[];

  private constructor(
    rootGiven: string,
    rootReal: string,
    rootId: { dev: number; ino: number | null },
    fs: WorkspaceFs,
    rootMounted: boolean,
  ) {
    this.fs = fs;
    this.rootMounted = rootMounted;
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
  static async open(
    root: string,
    options: { fs?: WorkspaceFs; rootMounted?: boolean } = {},
  ): Promise<PathPolicy> {
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
    // Only a root reached without a link is the mount point itself (the launcher mounts the
    // spelled path): any other is checked as usual.
    const mounted = options.rootMounted === true && real === normalizeAbs(given);
    return new PathPolicy(spelled, real, { dev: info.dev, ino: info.ino }, fs, mounted);
  }

  /** Resolves a caller path to a real location inside the workspace, or throws a typed error. */
  async resolve(input: unknown, options: ResolveOptions): Promise<Resolved> {
    const { argument } = options;
    const path = checkedInput(input, argument);
    const outside = (why: string) =>
      new WorkspaceError("OUTSIDE_WORKSPACE", `${argument} ${JSON.stringify(path)} ${why}`, {
        argument,
      });
    const w: Walk = {
      queue: this.#initialQueue(path, outside),
      stack: [],
      ids: [],
      missingFrom: null,
      hops: 0,
    };
    const ctx: WalkContext = { path, argument, followLeaf: options.followLeaf, outside };
    const sync = options.syncMetadata === true;
    this.verifyRoot(argument);

    while (w.queue.length > 0) {
      const c = w.queue.shift()!;
      if (c === "" || c === ".") continue;
      if (c === "..") {
        up(w, outside);
        continue;
      }
      if (w.missingFrom !== null) {
        w.stack.push(c);
        w.ids.push(null);
        continue;
      }
      // "name/" and "name/." ask for what name leads to, as in POSIX: only a bare final name is "last".
      const isLast = w.queue.length === 0;
      let name = c;
      const dir = joinAbs(this.rootReal, w.stack);
      let info = sync
        ? this.#lstatComponentSync(dir, name, argument)
        : await this.#lstatComponent(dir, name, argument);
      if (info === null) ({ name, info } = await this.#unicodeLookup(w.stack, name, argument));
      if (info === null) {
        w.missingFrom = w.stack.length;
        w.stack.push(name);
        w.ids.push(null);
        continue;
      }
      if (info.isSymlink && (!isLast || ctx.followLeaf)) {
        await this.#followLink(w, name, ctx);
        continue;
      }
      if (!isLast && !info.isDirectory) {
        throw new WorkspaceError(
          "NOT_A_DIRECTORY",
          `${argument} ${JSON.stringify(path)}: ${[...w.stack, name].join("/")} is not a directory`,
          { argument },
        );
      }
      w.stack.push(name);
      w.ids.push({ dev: info.dev, ino: info.ino });
    }
    return await this.#resolved(w, sync);
  }

  /**
   * The components to walk for a checked input: an absolute one must spell a path under the real
   * or the configured root (OUTSIDE_WORKSPACE otherwise), a trailing slash kept as an empty one.
   */
  #initialQueue(input: string, outside: (why: string) => WorkspaceError): string[] {
    if (!input.startsWith("/")) return input.split("/");
    const queue = this.#underRoot(parts(input));
    if (queue === null) throw outside("is an absolute path outside the workspace");
    if (input.endsWith("/")) queue.push(""); // keep the trailing slash's meaning
    return queue;
  }

  /** The components below the root of an absolute path under the real or configured root; null otherwise. */
  #underRoot(p: string[]): string[] | null {
    if (startsWithParts(p, this.#rootRealParts)) return p.slice(this.#rootRealParts.length);
    if (startsWithParts(p, this.#rootGivenParts)) return p.slice(this.#rootGivenParts.length);
    return null;
  }

  /** A missing name's one canonically equivalent (NFC) entry on disk and its lstat, if any. */
  async #unicodeLookup(
    stack: string[],
    name: string,
    argument: string,
  ): Promise<{ name: string; info: FsInfo | null }> {
    const alt = await this.#unicodeAlternative(stack, name, argument);
    if (alt === null) return { name, info: null };
    return {
      name: alt,
      info: await lstatIfExists(this.fs, joinAbs(this.rootReal, [...stack, alt])),
    };
  }

  /**
   * Follows the symbolic link `name` at the walk's position by splicing its target into the
   * components left: at most MAX_SYMLINK_HOPS in all (SYMLINK_LOOP); an absolute target restarts
   * from the root and must lie under it (OUTSIDE_WORKSPACE); a link that stopped being one is
   * CHANGED_DURING_OPERATION.
   */
  async #followLink(w: Walk, name: string, ctx: WalkContext): Promise<void> {
    const { argument, path } = ctx;
    if (++w.hops > MAX_SYMLINK_HOPS) {
      throw new WorkspaceError(
        "SYMLINK_LOOP",
        `${argument} ${JSON.stringify(path)} has too many levels of symbolic links`,
        { argument },
      );
    }
    let target: string;
    try {
      target = await this.fs.readLink(joinAbs(this.rootReal, [...w.stack, name]));
    } catch {
      // It stopped being a link (or went away) between the lstat and the readlink.
      throw new WorkspaceError(
        "CHANGED_DURING_OPERATION",
        `${argument} ${JSON.stringify(path)}: ${name} changed while it was checked`,
        { argument },
      );
    }
    if (!target.startsWith("/")) {
      w.queue = [...target.split("/"), ...w.queue];
      return;
    }
    const below = this.#underRoot(parts(target));
    if (below === null) {
      throw ctx.outside(`goes through a symbolic link (${name}) that points outside the workspace`);
    }
    w.stack.length = 0;
    w.ids.length = 0;
    w.queue = [...below, ...w.queue];
  }

  /** The resolved location a finished walk reached: its chain of checked directories and lstat. */
  async #resolved(w: Walk, sync: boolean): Promise<Resolved> {
    const { stack, ids, missingFrom } = w;
    const abs = joinAbs(this.rootReal, stack);
    const chain: ChainLink[] = [
      { abs: this.rootReal, ...this.rootId, ...(this.rootMounted ? { mounted: true } : {}) },
    ];
    for (let i = 0; i < stack.length - 1; i++) {
      const id = ids[i];
      if (id === null) break;
      chain.push({ abs: joinAbs(this.rootReal, stack.slice(0, i + 1)), dev: id.dev, ino: id.ino });
    }
    const exists = missingFrom === null;
    const info = !exists
      ? null
      : sync
      ? lstatIfExistsSync(this.fs, abs)
      : await lstatIfExists(this.fs, abs);
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
    if (this.rootMounted) return;
    // Gone or unreadable counts as changed.
    if (!dirHolds(this.fs, { abs: this.rootReal, ...this.rootId })) {
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
