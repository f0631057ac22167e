/**
 * Decision 0059: a root that is the kernel sandbox's mount point is not re-checked on every
 * request; any other root is. Observed through a file system that records every lstat.
 */
import assert from "node:assert/strict";
import { Workspace } from "../../mod.ts";
import { defaultFs } from "../../src/workspace/fs/runtime.ts";
import type { WorkspaceFs } from "../../src/workspace/fs/types.ts";
import { makeTree, run, withTempDir } from "./_helpers.ts";

/** The runtime's file system, recording the paths lstat'ed. */
function recording(): { fs: WorkspaceFs; lstats: string[] } {
  const base = defaultFs();
  const lstats: string[] = [];
  const fs: WorkspaceFs = {
    ...base,
    lstat: (abs) => {
      lstats.push(abs);
      return base.lstat(abs);
    },
    lstatSync: (abs) => {
      lstats.push(abs);
      return base.lstatSync(abs);
    },
  };
  return { fs, lstats };
}

/** Reads, stats and writes through a workspace; returns the lstats of its root meanwhile. */
async function rootLstats(dir: string, root: string, rootMounted: boolean): Promise<number> {
  const { fs, lstats } = recording();
  const ws = await Workspace.open({ root, fs, rootMounted, writable: true, engine: "inline" });
  lstats.length = 0;
  await run(ws, "read_file", { path: "sub/a.txt" });
  await run(ws, "get_file_info", { path: "sub" });
  await run(ws, "write_file", {
    path: "sub/b.txt",
    content: "b\n",
    ifExists: "overwrite",
    confirm: true,
  });
  await run(ws, "read_file", { path: "sub/b.txt", tailLines: 1 });
  const real = await Deno.realPath(dir);
  return lstats.filter((p) => p === real).length;
}

Deno.test("a mounted root is not re-checked; an ordinary root, or one reached by a link, is", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "ws/sub/a.txt": "a\n" });
    await Deno.symlink(`${dir}/ws`, `${dir}/link`);
    assert.equal(await rootLstats(`${dir}/ws`, `${dir}/ws`, true), 0);
    assert.ok((await rootLstats(`${dir}/ws`, `${dir}/ws`, false)) >= 4);
    // Reached through a link, the root is not the mount point: checked as usual.
    assert.ok((await rootLstats(`${dir}/ws`, `${dir}/link`, true)) >= 4);
  });
});

Deno.test("several roots: each root that is a mount point is one (the sandbox mounts every root)", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a/x.txt": "x\n", "b/y.txt": "y\n" });
    await Deno.symlink(`${dir}/b`, `${dir}/blink`);
    const real = await Deno.realPath(dir);
    const ws = await Workspace.open({
      roots: [{ path: `${real}/a` }, { path: `${real}/b`, readOnly: true }],
      rootMounted: true,
      engine: "inline",
    });
    assert.deepEqual(ws.roots.map((r) => r.policy.rootMounted), [true, true]);
    // A root reached by a link is not its mount point, whichever place it has.
    const linked = await Workspace.open({
      roots: [{ path: `${real}/a` }, { path: `${real}/blink` }],
      rootMounted: true,
      engine: "inline",
    });
    assert.deepEqual(linked.roots.map((r) => r.policy.rootMounted), [true, false]);
  });
});
