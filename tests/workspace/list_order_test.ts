/** list_directory's sortBy and order: sibling order, depth > 1, ties, unknown keys, paging, cursors. */
import assert from "node:assert/strict";
import { makeTree, openWorkspace, run, runError, withTempDir } from "./_helpers.ts";

/** Seconds since the epoch of a fixed day, plus `n` minutes: mtimes set explicitly. */
const at = (n: number) => 1_700_000_000 + 60 * n;

/**
 * Files of distinct sizes and mtimes, two of equal size and mtime (a tie), a directory with
 * children: `big` 9 bytes (oldest), `mid` 5, `tie-a`/`tie-b` 3 each (same mtime), `small` 1
 * (newest), `d/` (mtime between) with `d/x` 4, `d/y` 7.
 */
async function sortTree(dir: string): Promise<void> {
  await makeTree(dir, {
    "big": "123456789",
    "mid": "12345",
    "tie-b": "123",
    "tie-a": "123",
    "small": "1",
    "d/x": "1234",
    "d/y": "1234567",
  });
  const times: Record<string, number> = {
    "big": at(0),
    "mid": at(1),
    "tie-a": at(2),
    "tie-b": at(2),
    "d/x": at(3),
    "d/y": at(1),
    "d": at(4),
    "small": at(5),
  };
  for (const [rel, t] of Object.entries(times)) await Deno.utime(`${dir}/${rel}`, t, t);
}

const paths = (r: { entries: { path: string }[] }) => r.entries.map((e) => e.path);

Deno.test("list_directory: sortBy size, largest first by default; directories without sizes last", async () => {
  await withTempDir(async (dir) => {
    await sortTree(dir);
    const ws = await openWorkspace(dir);
    const desc = await run(ws, "list_directory", { sortBy: "size" });
    // Ties (tie-a, tie-b: 3 bytes) by name; the directory has no size key, so it comes last.
    assert.deepStrictEqual(paths(desc), ["big", "mid", "tie-a", "tie-b", "small", "d"]);
    const explicit = await run(ws, "list_directory", { sortBy: "size", order: "desc" });
    assert.deepStrictEqual(paths(explicit), paths(desc));
    const asc = await run(ws, "list_directory", { sortBy: "size", order: "asc" });
    // Ascending: smallest first; ties still a→z; the key-less directory still last.
    assert.deepStrictEqual(paths(asc), ["small", "tie-a", "tie-b", "mid", "big", "d"]);
    // The entries themselves are today's: no total without sizes.
    assert.equal("totalSize" in desc.entries[5], false);
    assert.equal(desc.sizesPartial, undefined);
  });
});

Deno.test("list_directory: sortBy mtime, newest first by default, asc oldest first", async () => {
  await withTempDir(async (dir) => {
    await sortTree(dir);
    const ws = await openWorkspace(dir);
    const newest = await run(ws, "list_directory", { sortBy: "mtime" });
    assert.deepStrictEqual(paths(newest), ["small", "d", "tie-a", "tie-b", "mid", "big"]);
    const oldest = await run(ws, "list_directory", { sortBy: "mtime", order: "asc" });
    assert.deepStrictEqual(paths(oldest), ["big", "mid", "tie-a", "tie-b", "d", "small"]);
  });
});

Deno.test("list_directory: sortBy name desc reverses names; asc is today's order", async () => {
  await withTempDir(async (dir) => {
    await sortTree(dir);
    const ws = await openWorkspace(dir);
    const plain = await run(ws, "list_directory", { depth: 2 });
    const byName = await run(ws, "list_directory", { depth: 2, sortBy: "name", order: "asc" });
    assert.deepStrictEqual(byName, plain);
    const desc = await run(ws, "list_directory", { depth: 2, sortBy: "name", order: "desc" });
    assert.deepStrictEqual(paths(desc), [
      "tie-b",
      "tie-a",
      "small",
      "mid",
      "d",
      "d/y",
      "d/x",
      "big",
    ]);
  });
});

Deno.test("list_directory: with depth > 1 siblings are sorted within each directory, parents before contents", async () => {
  await withTempDir(async (dir) => {
    await sortTree(dir);
    await makeTree(dir, { "d/e/z": "z" });
    const t = at(9);
    await Deno.utime(`${dir}/d/e/z`, t, t);
    await Deno.utime(`${dir}/d/e`, at(-1), at(-1));
    await Deno.utime(`${dir}/d`, at(4), at(4));
    const ws = await openWorkspace(dir);
    const size = await run(ws, "list_directory", { depth: 3, sortBy: "size" });
    // d's children: y 7, x 4, then the directory e (no size key) with its own contents.
    assert.deepStrictEqual(paths(size), [
      "big",
      "mid",
      "tie-a",
      "tie-b",
      "small",
      "d",
      "d/y",
      "d/x",
      "d/e",
      "d/e/z",
    ]);
    const mtime = await run(ws, "list_directory", { depth: 3, sortBy: "mtime", order: "asc" });
    assert.deepStrictEqual(paths(mtime), [
      "big",
      "mid",
      "tie-a",
      "tie-b",
      "d",
      "d/e",
      "d/e/z",
      "d/y",
      "d/x",
      "small",
    ]);
    // The same call again: the same order.
    assert.deepStrictEqual(
      paths(await run(ws, "list_directory", { depth: 3, sortBy: "mtime", order: "asc" })),
      paths(mtime),
    );
  });
});

Deno.test("list_directory: paging walks every sorted listing exactly once", async () => {
  await withTempDir(async (dir) => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 17; i++) files[`d${i % 3}/f${i}`] = "x".repeat((i * 7) % 5);
    await makeTree(dir, files);
    for (let i = 0; i < 17; i++) await Deno.utime(`${dir}/d${i % 3}/f${i}`, at(i % 4), at(i % 4));
    const ws = await openWorkspace(dir);
    for (const sortBy of ["name", "size", "mtime"]) {
      for (const order of ["asc", "desc"]) {
        for (const sizes of [false, true]) {
          const args = { depth: 2, sortBy, order, sizes };
          const full = await run(ws, "list_directory", args);
          assert.equal(full.total, 20);
          const seen: string[] = [];
          let cursor: string | undefined;
          do {
            const page = await run(ws, "list_directory", {
              ...args,
              limit: 3,
              ...(cursor ? { cursor } : {}),
            });
            seen.push(...paths(page));
            cursor = page.nextCursor;
          } while (cursor !== undefined && seen.length <= 20);
          assert.deepStrictEqual(seen, paths(full), JSON.stringify(args));
        }
      }
    }
  });
});

Deno.test("list_directory: a cursor from one sort is INVALID_ARGUMENT with another", async () => {
  await withTempDir(async (dir) => {
    await sortTree(dir);
    const ws = await openWorkspace(dir);
    const bad = (args: Record<string, unknown>) =>
      runError(ws, "list_directory", args, "INVALID_ARGUMENT", "cursor");
    const byName = (await run(ws, "list_directory", { limit: 2 })).nextCursor!;
    const bySize = (await run(ws, "list_directory", { sortBy: "size", limit: 2 })).nextCursor!;
    const withSizes = (await run(ws, "list_directory", { sortBy: "size", sizes: true, limit: 2 }))
      .nextCursor!;
    // Each works with its own arguments; an omitted order is the key's default.
    await run(ws, "list_directory", { sortBy: "size", order: "desc", cursor: bySize });
    await run(ws, "list_directory", { sortBy: "name", order: "asc", cursor: byName });
    // Today's cursor format is unchanged for today's order.
    assert.deepStrictEqual(Object.keys(JSON.parse(atob(byName))), ["v", "o", "k"]);
    let e = await bad({ sortBy: "size", cursor: byName });
    assert.match(e.message, /sorted by name \(asc\), but this call sorts by size \(desc\)/);
    e = await bad({ cursor: bySize });
    assert.match(e.message, /sorted by size \(desc\), but this call sorts by name \(asc\)/);
    await bad({ sortBy: "size", order: "asc", cursor: bySize });
    await bad({ sortBy: "mtime", cursor: bySize });
    // Under sortBy size the directory totals are part of the order.
    e = await bad({ sortBy: "size", cursor: withSizes });
    assert.match(e.message, /size \(desc, with sizes\)/);
    await bad({ sortBy: "size", sizes: true, cursor: bySize });
    // Elsewhere sizes change no position: the name cursor continues a listing with sizes.
    const next = await run(ws, "list_directory", { sizes: true, cursor: byName });
    assert.deepStrictEqual(paths(next), ["mid", "small", "tie-a", "tie-b"]);
    assert.equal(next.sizesPartial, false);
    // A forged order in the cursor gains nothing: the key decides.
    const forged = btoa(JSON.stringify({ ...JSON.parse(atob(bySize)), s: "" }));
    await bad({ cursor: forged.replaceAll("=", "") });
  });
});

Deno.test("list_directory: unknown sortBy or order is INVALID_ARGUMENT naming it", async () => {
  await withTempDir(async (dir) => {
    await sortTree(dir);
    const ws = await openWorkspace(dir);
    await runError(ws, "list_directory", { sortBy: "ctime" }, "INVALID_ARGUMENT", "sortBy");
    await runError(ws, "list_directory", { order: "up" }, "INVALID_ARGUMENT", "order");
    await runError(ws, "list_directory", { sizes: "yes" }, "INVALID_ARGUMENT", "sizes");
  });
});

Deno.test("list_directory: an entry whose mtime is unknown sorts last in both orders", async () => {
  const { orderListing } = await import("../../src/workspace/list_order.ts");
  const rec = (name: string, mtimeMs: number | null, size: number | null) => ({
    path: name,
    type: "file" as const,
    size,
    mtime: null,
    name,
    relToBase: name,
    parent: "",
    mtimeMs,
  });
  const all = [rec("a", null, null), rec("b", 2, 1), rec("c", 1, 2), rec("d", null, 0)];
  const names = (by: "mtime" | "size", order: "asc" | "desc") =>
    orderListing(all, { by, order, sizes: false }, () => null).map((r) => r.name);
  assert.deepStrictEqual(names("mtime", "desc"), ["b", "c", "a", "d"]);
  assert.deepStrictEqual(names("mtime", "asc"), ["c", "b", "a", "d"]);
  assert.deepStrictEqual(names("size", "desc"), ["c", "b", "d", "a"]);
  assert.deepStrictEqual(names("size", "asc"), ["d", "b", "c", "a"]);
});
