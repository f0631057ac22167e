/** Temporary directories, file trees and file-system snapshots for tests (independent of src/). */
import { createHash } from "node:crypto";

/** Hex sha256, computed independently of the code under test. */
export function sha256(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A fresh temporary directory, by its real path (so results naming it compare equal). */
export async function makeTempDir(prefix = "wmcp-test-"): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix }));
}

/** Removes a directory tree; one already gone is fine. */
export async function removeDir(path: string): Promise<void> {
  await Deno.remove(path, { recursive: true }).catch(() => {});
}

/**
 * Runs fn with a fresh temporary directory (real path, optionally filled by makeTree) that is
 * removed afterwards, whatever fn did.
 */
export async function withTempDir<T>(
  fn: (dir: string) => Promise<T>,
  options: { prefix?: string; files?: Record<string, string | Uint8Array | null> } = {},
): Promise<T> {
  const dir = await makeTempDir(options.prefix);
  try {
    if (options.files) await makeTree(dir, options.files);
    return await fn(dir);
  } finally {
    await removeDir(dir);
  }
}

/**
 * Creates files and directories below root. Keys ending in "/" are directories;
 * string values are written as UTF-8, Uint8Array values as bytes. Parents are created.
 */
export async function makeTree(
  root: string,
  entries: Record<string, string | Uint8Array | null>,
): Promise<void> {
  for (const [rel, content] of Object.entries(entries)) {
    const abs = `${root}/${rel}`;
    if (rel.endsWith("/")) {
      await Deno.mkdir(abs, { recursive: true });
      continue;
    }
    const parent = abs.slice(0, abs.lastIndexOf("/"));
    await Deno.mkdir(parent, { recursive: true });
    if (typeof content === "string") await Deno.writeTextFile(abs, content);
    else if (content instanceof Uint8Array) await Deno.writeFile(abs, content);
  }
}

/** True when a path exists (without following a final link). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** Writes an MCP host config (`{"mcpServers": ...}`) as DIR/mcp.json; returns its path. */
export async function writeConfig(dir: string, servers: Record<string, unknown>): Promise<string> {
  const path = `${dir}/mcp.json`;
  await Deno.writeTextFile(path, JSON.stringify({ mcpServers: servers }, null, 2));
  return path;
}

/** One entry of a snapshot: everything that a write, create or delete would change. */
export interface SnapEntry {
  type: "file" | "directory" | "symlink" | "other";
  size: number;
  mtime: number | null;
  mode: number | null;
  ino: number | null;
  content?: string;
  target?: string;
}

/**
 * Recursive lstat snapshot of a directory (links are recorded, never followed). Synchronous
 * system calls inside (several times faster than one promise per entry, which matters to the race
 * suites that take one per attempt); async for its callers.
 */
export function snapshot(dir: string): Promise<Record<string, SnapEntry>> {
  try {
    return Promise.resolve(snapshotSync(dir));
  } catch (err) {
    return Promise.reject(err);
  }
}

/** snapshot(), synchronously. */
export function snapshotSync(dir: string): Record<string, SnapEntry> {
  const out: Record<string, SnapEntry> = {};
  const decoder = new TextDecoder();
  const visit = (abs: string, rel: string) => {
    const info = Deno.lstatSync(abs);
    const e: SnapEntry = {
      type: info.isSymlink
        ? "symlink"
        : info.isDirectory
        ? "directory"
        : info.isFile
        ? "file"
        : "other",
      size: info.size,
      mtime: info.mtime?.getTime() ?? null,
      mode: info.mode,
      ino: info.ino,
    };
    if (info.isFile) e.content = decoder.decode(Deno.readFileSync(abs));
    if (info.isSymlink) e.target = Deno.readLinkSync(abs);
    out[rel] = e;
    if (info.isDirectory) {
      const names: string[] = [];
      for (const d of Deno.readDirSync(abs)) names.push(d.name);
      names.sort();
      for (const n of names) visit(`${abs}/${n}`, rel === "." ? n : `${rel}/${n}`);
    }
  };
  visit(dir, ".");
  return out;
}

/** Shape of makeBigTree's tree. */
export interface BigTreeOptions {
  /** Prefix of the temporary directory. */
  prefix?: string;
  /** The line every file repeats. */
  line: string;
  /** Times the line is repeated in each file (default 200). */
  repeat?: number;
  /** Directories d0..d(N-1) (default 40). */
  dirs?: number;
  /** Files f0.txt..f(N-1).txt in each (default 100). */
  files?: number;
  /**
   * Every name a hard link to d0/f0.txt: a search reads each name's bytes, the disk holds them
   * once, so a tree that takes seconds on any machine costs no disk.
   */
  linked?: boolean;
}

/** A temporary tree large enough that a walk or search over it takes a while; returns its root. */
export async function makeBigTree(options: BigTreeOptions): Promise<string> {
  const root = await makeTempDir(options.prefix ?? "wmcp-big-");
  const body = options.line.repeat(options.repeat ?? 200);
  const first = `${root}/d0/f0.txt`;
  for (let d = 0; d < (options.dirs ?? 40); d++) {
    await Deno.mkdir(`${root}/d${d}`);
    if (options.linked) {
      if (d === 0) await Deno.writeTextFile(first, body);
      for (let f = d === 0 ? 1 : 0; f < (options.files ?? 100); f++) {
        await Deno.link(first, `${root}/d${d}/f${f}.txt`);
      }
      continue;
    }
    await Promise.all(
      Array.from(
        { length: options.files ?? 100 },
        (_, f) => Deno.writeTextFile(`${root}/d${d}/f${f}.txt`, body),
      ),
    );
  }
  return root;
}

/**
 * A tree no regular-expression search crosses quickly on any machine, at no disk cost: `names`
 * names (in directories of 100) for one 4 MB text file, as hard links (makeBigTree's `linked`).
 * With LONG_SEARCH, 2,000 names take seconds here (8 GB read), so a call on it outlasts the
 * client's timers, a queued write and an interrupt typed when its progress shows.
 */
export function makeLongSearchTree(prefix: string, names = 2000): Promise<string> {
  const line = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor\n";
  return makeBigTree({
    prefix,
    line,
    repeat: Math.floor(4_000_000 / line.length),
    dirs: Math.ceil(names / 100),
    files: Math.min(names, 100),
    linked: true,
  });
}

/** search_text arguments that cross every line of makeLongSearchTree's tree and match nothing. */
export const LONG_SEARCH = { query: "([a-z]+ ?){1,100}Q0", regex: true } as const;
