/**
 * The Node implementation of WorkspaceFs, on node:fs (also what Bun provides). Errors are the
 * errno errors node:fs throws; fsErrorKind maps their codes to the classes Deno's errors have.
 */
import fs from "node:fs";
import fsp from "node:fs/promises";
import process from "node:process";
import type { FsDirEntry, FsInfo, WorkspaceFs } from "./types.ts";

/** A nanosecond time as Deno gives it: truncated to the millisecond (Node and Bun round). */
function msTime(ns: bigint): Date {
  return new Date(Number(ns / 1_000_000n));
}

/**
 * Stat results in the form Deno's fs gives them, so answers match across runtimes: mtime, atime
 * and birthtime truncated to the millisecond from the nanosecond stat; ctime in whole seconds
 * (what Deno 2 reports).
 */
function info(s: fs.BigIntStats): FsInfo {
  return {
    isFile: s.isFile(),
    isDirectory: s.isDirectory(),
    isSymlink: s.isSymbolicLink(),
    isFifo: s.isFIFO(),
    isSocket: s.isSocket(),
    isCharDevice: s.isCharacterDevice(),
    isBlockDevice: s.isBlockDevice(),
    size: Number(s.size),
    mtime: msTime(s.mtimeNs),
    atime: msTime(s.atimeNs),
    birthtime: msTime(s.birthtimeNs),
    ctime: new Date(Number(s.ctimeNs / 1_000_000_000n) * 1000),
    dev: Number(s.dev),
    ino: Number(s.ino),
    mode: Number(s.mode),
    nlink: Number(s.nlink),
  };
}

function entry(d: fs.Dirent): FsDirEntry {
  return {
    name: d.name,
    isFile: d.isFile(),
    isDirectory: d.isDirectory(),
    isSymlink: d.isSymbolicLink(),
  };
}

async function* readDir(abs: string): AsyncIterable<FsDirEntry> {
  const dir = await fsp.opendir(abs);
  for await (const d of dir) yield entry(d);
}

/** WorkspaceFs over node:fs (Node 22+, Bun; also runs on Deno's node:fs). */
export const nodeFs: WorkspaceFs = Object.freeze(
  {
    kind: "node",
    lstat: async (abs: string) => info(await fsp.lstat(abs, { bigint: true })),
    lstatSync: (abs: string) => info(fs.lstatSync(abs, { bigint: true })),
    stat: async (abs: string) => info(await fsp.stat(abs, { bigint: true })),
    realPath: (abs: string) => fsp.realpath(abs),
    readLink: (abs: string) => fsp.readlink(abs),
    readDir,
    readDirSync: (abs: string) => fs.readdirSync(abs, { withFileTypes: true }).map(entry),
    mkdirSync: (abs: string) => void fs.mkdirSync(abs),
    renameSync: (from: string, to: string) => fs.renameSync(from, to),
    linkSync: (existing: string, created: string) => fs.linkSync(existing, created),
    removeSync: (abs: string) => {
      // Deno.removeSync removes a file, a link or an empty directory: the same here.
      const s = fs.lstatSync(abs);
      if (s.isDirectory()) fs.rmdirSync(abs);
      else fs.unlinkSync(abs);
    },
    cwd: () => process.cwd(),
  } as const,
);
