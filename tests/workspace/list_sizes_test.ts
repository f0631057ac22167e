/**
 * list_directory with `sizes: true` (decision 0057): what a directory's total counts, the bounds
 * that cut it (maxVisited, maxDepth) and say so, cancellation and the time budget during the sum,
 * and a tree changed while it is summed. The job runs with a checkpoint whose ticks (one per entry
 * met, in the walk's documented order: the listing's entries, then the sum's) let a test act at
 * an exact point of the walk instead of after a delay.
 */
import assert from "node:assert/strict";
import { makeTree, openWorkspace, run, withTempDir } from "./_helpers.ts";
import { expectError } from "../_support/errors.ts";
import type { Workspace } from "../../mod.ts";
import type { WorkspaceContext } from "../../src/workspace/context.ts";
import { listDirectory, type ListDirectoryArgs, listJob } from "../../src/workspace/list.ts";
import {
  Checkpoint,
  FLAG_CANCELLED,
  FLAG_TIME_BUDGET,
  type JobSpec,
} from "../../src/workspace/engine/protocol.ts";

/** A checkpoint that calls `onTick` with the tick's number (1 for the first entry) before it checks. */
class HookedCheckpoint extends Checkpoint {
  ticks = 0;
  constructor(readonly flag: Int32Array, readonly onTick: (n: number, flag: Int32Array) => void) {
    super(flag, { limits: { maxOperationMs: 1234 }, inline: false, onProgress: () => {} });
  }
  override tick(): Promise<void> | undefined {
    this.onTick(++this.ticks, this.flag);
    return super.tick();
  }
}

/** Runs list_directory on `ws` with the job on a hooked checkpoint (on this thread). */
function listHooked(
  ws: Workspace,
  args: ListDirectoryArgs,
  onTick: (n: number, flag: Int32Array) => void = () => {},
) {
  const cp = new HookedCheckpoint(new Int32Array(new SharedArrayBuffer(4)), onTick);
  const ctx: WorkspaceContext = {
    policy: ws.policy,
    limits: ws.limits,
    engine: {
      run: <T>(spec: JobSpec) => listJob(spec, cp) as Promise<T>,
      runShards: () => Promise.reject(new Error("list_directory runs no shards")),
    },
  };
  return { cp, result: listDirectory(ctx, args) };
}

type Entries = {
  entries: { path: string; totalSize?: number | null; totalSizePartial?: string }[];
};
/** path -> [totalSize, totalSizePartial] of the directories listed. */
const totals = (r: Entries) =>
  Object.fromEntries(
    r.entries.filter((e) => "totalSize" in e).map((
      e,
    ) => [e.path, [e.totalSize, e.totalSizePartial]]),
  );

Deno.test("sizes: a total is the bytes of the regular files below, hidden included, links not followed, a hard link once", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "proj/src/a.ts": "x".repeat(10),
      "proj/src/.cache/blob": "c".repeat(100),
      "proj/src/deep/x/y/z.txt": "z".repeat(7),
      "proj/empty/": null,
      "proj/other/": null,
      "proj/f.txt": "fff",
      "big/huge": "h".repeat(5000),
    });
    await Deno.link(`${dir}/proj/src/a.ts`, `${dir}/proj/src/hl`);
    await Deno.link(`${dir}/proj/src/a.ts`, `${dir}/proj/other/hl2`);
    await Deno.symlink("../../big", `${dir}/proj/src/link-big`);
    await Deno.symlink(".", `${dir}/proj/src/loop`);
    await Deno.symlink("self", `${dir}/proj/src/deep/self`);
    await Deno.symlink("../big", `${dir}/proj/bigalias`);
    const ws = await openWorkspace(dir);
    const r = await run(ws, "list_directory", { path: "proj", depth: 2, sizes: true });
    // src: a.ts 10 (hl is the same inode), .cache/blob 100, deep/x/y/z.txt 7; the links add
    // nothing. other: its hard link to a.ts counts there too (each total counts an inode once).
    assert.deepStrictEqual(totals(r), {
      "proj/empty": [0, undefined],
      "proj/other": [10, undefined],
      "proj/src": [117, undefined],
      "proj/src/deep": [7, undefined],
    });
    assert.equal(r.sizesPartial, false);
    // Only directories carry a total; the link to the big directory is a listed link.
    const alias = r.entries.find((e) => e.path === "proj/bigalias")!;
    assert.equal(alias.type, "symlink");
    assert.equal("totalSize" in alias, false);
    // Sorted by size with sizes: the totals are the directories' keys, largest first.
    const bySize = await run(ws, "list_directory", { path: "proj", sortBy: "size", sizes: true });
    assert.deepStrictEqual(bySize.entries.map((e) => e.path), [
      "proj/src",
      "proj/other",
      "proj/bigalias",
      "proj/f.txt",
      "proj/empty",
    ]);
  });
});

Deno.test("sizes: the visited cap cuts totals and says so; sortBy size sorts by what was counted", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "a/1": "1".repeat(40),
      "a/2": "2".repeat(40),
      "b/1": "1",
      "b/2": "2",
      "b/3": "3",
      "b/4": "4",
      "b/5": "5".repeat(100),
      "c/1": "c".repeat(1000),
    });
    // The listing visits 3 entries; the sums may visit 6 more: a's 2, then 4 of b's 5.
    const ws = await openWorkspace(dir, { limits: { maxVisited: 6 } });
    const r = await run(ws, "list_directory", { sizes: true });
    assert.deepStrictEqual(totals(r), {
      "a": [80, undefined],
      "b": [4, "maxVisited"],
      "c": [null, "maxVisited"],
    });
    assert.equal(r.sizesPartial, true);
    assert.equal(r.truncated, false, "the listing itself is whole");
    const bySize = await run(ws, "list_directory", { sizes: true, sortBy: "size" });
    assert.deepStrictEqual(bySize.entries.map((e) => e.path), ["a", "b", "c"]);
    // Under another sort only the page's directories are summed: b alone fits the cap.
    const first = await run(ws, "list_directory", { sizes: true, limit: 1 });
    const second = await run(ws, "list_directory", {
      sizes: true,
      limit: 1,
      cursor: first.nextCursor,
    });
    assert.deepStrictEqual(totals(second), { "b": [104, undefined] });
    assert.equal(second.sizesPartial, false);
  });
});

Deno.test("sizes: a directory below deeper than maxDepth is not entered, and the total says so", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a/1": "1", "a/b/2": "22", "a/b/c/3": "333", "z/1": "1" });
    const ws = await openWorkspace(dir, { limits: { maxDepth: 2 } });
    const r = await run(ws, "list_directory", { sizes: true });
    assert.deepStrictEqual(totals(r), { "a": [3, "maxDepth"], "z": [1, undefined] });
  });
});

Deno.test("sizes: cancellation during the sum ends the call with CANCELLED", async () => {
  await withTempDir(async (dir) => {
    const files: Record<string, string> = { "top.txt": "t" };
    for (let i = 0; i < 200; i++) files[`d/f${i}`] = "x";
    await makeTree(dir, files);
    const ws = await openWorkspace(dir);
    // Ticks 1-2 are the listing (d, top.txt); the sum's entries start at tick 3.
    const { cp, result } = listHooked(ws, { sizes: true }, (n, flag) => {
      if (n === 50) Atomics.store(flag, 0, FLAG_CANCELLED);
    });
    await expectError(result, "CANCELLED");
    assert.equal(cp.ticks, 50, "stopped at the first check after the cancellation, in the sum");
  });
});

Deno.test("sizes: the time budget running out during the sum is TIME_BUDGET_EXCEEDED", async () => {
  await withTempDir(async (dir) => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 200; i++) files[`d/e/f${i}`] = "x";
    await makeTree(dir, files);
    const ws = await openWorkspace(dir);
    const { cp, result } = listHooked(ws, { sizes: true, sortBy: "size" }, (n, flag) => {
      if (n === 100) Atomics.store(flag, 0, FLAG_TIME_BUDGET);
    });
    const e = await expectError(result, "TIME_BUDGET_EXCEEDED");
    assert.deepStrictEqual(e.details, { limit: 1234 });
    assert.equal(cp.ticks, 100);
  });
});

/** proj/a: 0.txt (7 bytes), 1.txt (11), d/inner (5); proj/b: q (2); outside the workspace: 9999 bytes. */
async function changingTree(dir: string): Promise<Workspace> {
  await makeTree(`${dir}/ws`, {
    "proj/a/0.txt": "0".repeat(7),
    "proj/a/1.txt": "1".repeat(11),
    "proj/a/d/inner": "i".repeat(5),
    "proj/b/q": "qq",
  });
  await makeTree(`${dir}/outside`, { "huge": "h".repeat(9999) });
  return await openWorkspace(`${dir}/ws`);
}

// Ticks: 1 proj/a, 2 proj/b (the listing); 3 a/0.txt, 4 a/1.txt, 5 a/d, 6 a/d/inner (the sum of a);
// 7 b/q (the sum of b).

Deno.test("sizes: a directory below swapped for a link to the outside: the total is cut 'changed', nothing outside counted", async () => {
  await withTempDir(async (dir) => {
    const ws = await changingTree(dir);
    const { result } = listHooked(ws, { path: "proj", sizes: true }, (n) => {
      if (n !== 5) return;
      Deno.renameSync(`${dir}/ws/proj/a/d`, `${dir}/ws/proj/a/d.gone`);
      Deno.symlinkSync(`${dir}/outside`, `${dir}/ws/proj/a/d`);
    });
    const r = await result;
    // What a's walk met since its last re-verification is dropped with the walk.
    assert.deepStrictEqual(totals(r), { "proj/a": [0, "changed"], "proj/b": [2, undefined] });
    assert.equal(r.sizesPartial, true);
  });
});

Deno.test("sizes: a directory below removed while summed: the total is cut 'changed', the call answers", async () => {
  await withTempDir(async (dir) => {
    const ws = await changingTree(dir);
    const { result } = listHooked(ws, { path: "proj", sizes: true, depth: 2 }, (n) => {
      // With depth 2 the listing takes ticks 1-6 (a, a/0.txt, a/1.txt, a/d, b, b/q): a/d is 9.
      if (n === 9) Deno.removeSync(`${dir}/ws/proj/a/d`, { recursive: true });
    });
    const r = await result;
    assert.deepStrictEqual(totals(r), {
      "proj/a": [0, "changed"],
      "proj/a/d": [0, "changed"],
      "proj/b": [2, undefined],
    });
  });
});

Deno.test("sizes: a file removed after its directory was listed is not counted, and the total stays exact", async () => {
  await withTempDir(async (dir) => {
    const ws = await changingTree(dir);
    const { result } = listHooked(ws, { path: "proj", sizes: true }, (n) => {
      if (n === 3) Deno.removeSync(`${dir}/ws/proj/a/1.txt`);
    });
    assert.deepStrictEqual(totals(await result), {
      "proj/a": [12, undefined],
      "proj/b": [2, undefined],
    });
  });
});

Deno.test("sizes: a listed directory replaced before its sum has no total ('changed')", async () => {
  await withTempDir(async (dir) => {
    const ws = await changingTree(dir);
    const { result } = listHooked(ws, { path: "proj", sizes: true }, (n) => {
      if (n !== 2) return;
      Deno.renameSync(`${dir}/ws/proj/b`, `${dir}/ws/proj/b.old`);
      Deno.mkdirSync(`${dir}/ws/proj/b`);
      Deno.writeTextFileSync(`${dir}/ws/proj/b/new`, "n".repeat(1000));
    });
    const r = await result;
    assert.deepStrictEqual(totals(r), { "proj/a": [23, undefined], "proj/b": [null, "changed"] });
  });
});

Deno.test("sizes: the listed directory itself replaced during the sum is CHANGED_DURING_OPERATION", async () => {
  await withTempDir(async (dir) => {
    const ws = await changingTree(dir);
    const { result } = listHooked(ws, { path: "proj", sizes: true }, (n) => {
      if (n !== 4) return;
      Deno.renameSync(`${dir}/ws/proj`, `${dir}/ws/proj.old`);
      Deno.mkdirSync(`${dir}/ws/proj/a/d`, { recursive: true });
    });
    const e = await expectError(result, "CHANGED_DURING_OPERATION");
    assert.deepStrictEqual(e.details, { path: "proj" });
  });
});
