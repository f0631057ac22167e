/** list_directory: order, depth, hidden names, paging cursors, errors. */
import assert from "node:assert/strict";
import { makeTree, openWorkspace, run, runError, withTempDir } from "./_helpers.ts";

const TREE = {
  "a/x.txt": "xx",
  "a/b/deep.txt": "deep",
  "a/b/c/deeper.txt": "deeper",
  "b.txt": "bbb",
  "B.txt": "BB",
  "_u.txt": "",
  ".hidden": "h",
  ".hdir/inner.txt": "i",
  "a/.dot": "d",
};

Deno.test("list_directory: depth 1, sorted by code unit, hidden left out", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, TREE);
    const ws = await openWorkspace(dir);
    const r = await run(ws, "list_directory", {});
    assert.equal(r.path, ".");
    assert.deepStrictEqual(r.entries.map((e) => [e.path, e.type]), [
      ["B.txt", "file"],
      ["_u.txt", "file"],
      ["a", "directory"],
      ["b.txt", "file"],
    ]);
    assert.equal(r.total, 4);
    assert.equal(r.truncated, false);
    assert.equal(r.nextCursor, undefined);
    const byPath = new Map(r.entries.map((e) => [e.path, e]));
    assert.equal(byPath.get("b.txt")!.size, 3);
    assert.equal(byPath.get("B.txt")!.size, 2);
    assert.equal(byPath.get("_u.txt")!.size, 0);
    const st = await Deno.lstat(`${dir}/b.txt`);
    assert.equal(byPath.get("b.txt")!.mtime, st.mtime!.toISOString());
    assert.equal(typeof byPath.get("a")!.size, "number");
  });
});

Deno.test("list_directory: depth 2 lists parents before children, deterministically", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, TREE);
    const ws = await openWorkspace(dir);
    const expected = ["B.txt", "_u.txt", "a", "a/b", "a/x.txt", "b.txt"];
    const r = await run(ws, "list_directory", { path: ".", depth: 2 });
    assert.deepStrictEqual(r.entries.map((e) => e.path), expected);
    assert.equal(r.total, expected.length);
    // Same again: deterministic.
    const again = await run(ws, "list_directory", { path: ".", depth: 2 });
    assert.deepStrictEqual(again.entries.map((e) => e.path), expected);
    const deep = await run(ws, "list_directory", { depth: 10 });
    assert.deepStrictEqual(deep.entries.map((e) => e.path), [
      "B.txt",
      "_u.txt",
      "a",
      "a/b",
      "a/b/c",
      "a/b/c/deeper.txt",
      "a/b/deep.txt",
      "a/x.txt",
      "b.txt",
    ]);
    // A subdirectory: paths stay workspace-relative.
    const sub = await run(ws, "list_directory", { path: "a/", depth: 2 });
    assert.equal(sub.path, "a");
    assert.deepStrictEqual(sub.entries.map((e) => e.path), [
      "a/b",
      "a/b/c",
      "a/b/deep.txt",
      "a/x.txt",
    ]);
  });
});

Deno.test("list_directory: includeHidden", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, TREE);
    const ws = await openWorkspace(dir);
    const r = await run(ws, "list_directory", { depth: 2, includeHidden: true });
    assert.deepStrictEqual(r.entries.map((e) => e.path), [
      ".hdir",
      ".hdir/inner.txt",
      ".hidden",
      "B.txt",
      "_u.txt",
      "a",
      "a/.dot",
      "a/b",
      "a/x.txt",
      "b.txt",
    ]);
    assert.equal(r.total, 10);
  });
});

Deno.test("list_directory: symbolic links are listed, never followed", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "real/f.txt": "f" });
    await Deno.symlink("real", `${dir}/alias`);
    await Deno.symlink("nowhere", `${dir}/dangling`);
    const ws = await openWorkspace(dir);
    const r = await run(ws, "list_directory", { depth: 3 });
    assert.deepStrictEqual(r.entries.map((e) => [e.path, e.type]), [
      ["alias", "symlink"],
      ["dangling", "symlink"],
      ["real", "directory"],
      ["real/f.txt", "file"],
    ]);
    // Listing through a directory link resolves to the real directory.
    const via = await run(ws, "list_directory", { path: "alias" });
    assert.equal(via.path, "real");
    assert.deepStrictEqual(via.entries.map((e) => e.path), ["real/f.txt"]);
  });
});

Deno.test("list_directory: paging with limit and nextCursor until exhausted", async () => {
  await withTempDir(async (dir) => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 23; i++) files[`d${i % 3}/f${String(i).padStart(2, "0")}.txt`] = `${i}`;
    await makeTree(dir, files);
    const ws = await openWorkspace(dir);
    const full = await run(ws, "list_directory", { depth: 2 });
    assert.equal(full.total, 26);
    assert.equal(full.entries.length, 26);
    for (const limit of [1, 5, 7, 13, 26]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await run(ws, "list_directory", {
          depth: 2,
          limit,
          ...(cursor ? { cursor } : {}),
        });
        pages++;
        assert.equal(page.total, 26);
        assert.ok(page.entries.length <= limit);
        seen.push(...page.entries.map((e) => e.path));
        cursor = page.nextCursor;
        if (cursor === undefined) assert.equal(seen.length, 26, "last page ends the listing");
        else assert.equal(page.entries.length, limit, "only the last page is short");
      } while (cursor !== undefined && pages < 100);
      assert.equal(pages, Math.ceil(26 / limit), `limit ${limit}: page count`);
      assert.deepStrictEqual(seen, full.entries.map((e) => e.path), `limit ${limit}: union`);
      assert.equal(new Set(seen).size, seen.length, "no duplicates");
    }
  });
});

Deno.test("list_directory: bad cursors are INVALID_ARGUMENT on cursor", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a/1": "", "a/2": "", "a/3": "", "b/1": "", "b/2": "", "b/3": "" });
    const ws = await openWorkspace(dir);
    const first = await run(ws, "list_directory", { path: ".", depth: 2, limit: 2 });
    const cursor = first.nextCursor!;
    assert.equal(typeof cursor, "string");
    // The cursor works for its own listing.
    const second = await run(ws, "list_directory", { path: ".", depth: 2, limit: 2, cursor });
    assert.deepStrictEqual(second.entries.map((e) => e.path), ["a/2", "a/3"]);

    const bad = (args: Record<string, unknown>) =>
      runError(ws, "list_directory", args, "INVALID_ARGUMENT", "cursor");
    await bad({ depth: 2, cursor: "garbage!!" });
    await bad({ depth: 2, cursor: "%%%" });
    await bad({ depth: 2, cursor: btoa("not json") });
    await bad({ depth: 2, cursor: btoa("[1,2]") });
    await bad({ depth: 2, cursor: cursor.slice(0, -3) });
    const decoded = JSON.parse(atob(cursor)) as { v: number; o: number; k: string };
    const enc = (o: unknown) => btoa(JSON.stringify(o)).replaceAll("=", "");
    await bad({ depth: 2, cursor: enc({ ...decoded, o: 9999 }) });
    await bad({ depth: 2, cursor: enc({ ...decoded, o: -1 }) });
    await bad({ depth: 2, cursor: enc({ ...decoded, o: 1.5 }) });
    await bad({ depth: 2, cursor: enc({ ...decoded, o: "2" }) });
    await bad({ depth: 2, cursor: enc({ ...decoded, v: 2 }) });
    await bad({ depth: 2, cursor: enc({ ...decoded, k: "0000000000000000" }) });
    // A cursor from a different listing: other path, other depth, other hidden setting.
    await bad({ path: "a", depth: 2, cursor });
    await bad({ depth: 1, cursor });
    await bad({ depth: 3, cursor });
    await bad({ depth: 2, includeHidden: true, cursor });
    // The empty string is refused by the schema.
    await bad({ depth: 2, cursor: "" });
  });
});

Deno.test("list_directory: errors and limits", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "f.txt": "x", "d/1": "", "d/2": "", "d/3": "", "d/4": "" });
    const ws = await openWorkspace(dir, { limits: { maxListEntries: 3, maxVisited: 4 } });
    await runError(ws, "list_directory", { path: "f.txt" }, "NOT_A_DIRECTORY", "path");
    await runError(ws, "list_directory", { path: "missing" }, "NOT_FOUND", "path");
    const e = await runError(ws, "list_directory", { limit: 4 }, "INVALID_ARGUMENT", "limit");
    assert.deepStrictEqual(e.details, { limit: 3 });
    await runError(ws, "list_directory", { depth: 0 }, "INVALID_ARGUMENT", "depth");
    await runError(ws, "list_directory", { depth: 11 }, "INVALID_ARGUMENT", "depth");
    // Default page size is maxListEntries.
    const r = await run(ws, "list_directory", { path: "d" });
    assert.deepStrictEqual(r.entries.map((x) => x.path), ["d/1", "d/2", "d/3"]);
    assert.equal(r.total, 4);
    assert.equal(typeof r.nextCursor, "string");
    assert.equal(r.truncated, false);
    // The visited cap stops the walk and says so.
    const capped = await run(ws, "list_directory", { depth: 2, limit: 3 });
    assert.equal(capped.truncated, true);
    assert.equal(capped.total, 4);
    assert.deepStrictEqual(capped.entries.map((x) => x.path), ["d", "d/1", "d/2"]);
  });
});

Deno.test("list_directory: an empty directory", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "empty/": null });
    const ws = await openWorkspace(dir);
    const r = await run(ws, "list_directory", { path: "empty", depth: 3 });
    assert.deepStrictEqual(r, { path: "empty", entries: [], total: 0, truncated: false });
  });
});
