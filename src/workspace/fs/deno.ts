/** The Deno implementation of WorkspaceFs: Deno's own file-system API, unchanged. */
import type { WorkspaceFs } from "./types.ts";

/** WorkspaceFs over Deno's API (needs the Deno runtime). */
export const denoFs: WorkspaceFs = Object.freeze(
  {
    kind: "deno",
    lstat: (abs: string) => Deno.lstat(abs),
    lstatSync: (abs: string) => Deno.lstatSync(abs),
    stat: (abs: string) => Deno.stat(abs),
    realPath: (abs: string) => Deno.realPath(abs),
    readLink: (abs: string) => Deno.readLink(abs),
    readDir: (abs: string) => Deno.readDir(abs),
    readDirSync: (abs: string) => Deno.readDirSync(abs),
    mkdirSync: (abs: string) => Deno.mkdirSync(abs),
    renameSync: (from: string, to: string) => Deno.renameSync(from, to),
    linkSync: (existing: string, created: string) => Deno.linkSync(existing, created),
    removeSync: (abs: string) => Deno.removeSync(abs),
    cwd: () => Deno.cwd(),
  } as const,
);
