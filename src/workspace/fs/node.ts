/**
 * The Node implementation of WorkspaceFs, on node:fs (also what Bun provides). Errors are the
 * errno errors node:fs throws; fsErrorKind maps their codes to the classes Deno's errors have.
 */
import fs from "node:fs";
import fsp from "node:fs/promises";
import process from "node:process";
import type { FsDirEntry, FsInfo, WorkspaceFs } from "./types.ts";

function info(s: fs.Stats): FsInfo {
  return {
    isFile: s.isFile(),
    isDirectory: s.isDirectory(),
    isSymlink: s.isSymbolicLink(),
    isFifo: s.isFIFO(),
    isSocket: s.isSocket(),
    isCharDevice: s.isCharacterDevice(),
    isBlockDevice: s.isBlockDevice(),
    size: s.size,
    mtime: s.mtime,
    atime: s.atime,
    birthtime: s.birthtime,
    ctime: s.ctime,
    dev: s.dev,
    ino: s.ino,
    mode: s.mode,
    nlink: s.nlink,
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
    lstat: async (abs: string) => info(await fsp.lstat(abs)),
    lstatSync: (abs: string) => info(fs.lstatSync(abs)),
    stat: async (abs: string) => info(await fsp.stat(abs)),
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
