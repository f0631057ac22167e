/** move_path and delete_path: renames, moves, overwrite rules, confirmation, recursion. */
import assert from "node:assert/strict";
import { exists, makeTree, openWorkspace, run, runError, withTempDir } from "./_helpers.ts";

Deno.test("move_path: rename a file", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "A" });
    const ino = (await Deno.lstat(`${dir}/a.txt`)).ino;
    const ws = await openWorkspace(dir, { writable: true });
    const r = await run(ws, "move_path", { source: "a.txt", destination: "b.txt" });
    assert.deepStrictEqual(r, {
      source: "a.txt",
      destination: "b.txt",
      type: "file",
      overwritten: false,
    });
    assert.equal(await exists(`${dir}/a.txt`), false);
    assert.equal(await Deno.readTextFile(`${dir}/b.txt`), "A");
    // The same file (inode), not a copy, and no second link left.
    const st = await Deno.lstat(`${dir}/b.txt`);
    assert.equal(st.ino, ino);
    assert.equal(st.nlink, 1);
  });
});

Deno.test("move_path: move a directory with its contents", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "src/x/1.txt": "1", "src/x/y/2.txt": "2", "dest/": null });
    const ws = await openWorkspace(dir, { writable: true });
    const r = await run(ws, "move_path", { source: "src/x", destination: "dest/moved" });
    assert.deepStrictEqual(r, {
      source: "src/x",
      destination: "dest/moved",
      type: "directory",
      overwritten: false,
    });
    assert.equal(await exists(`${dir}/src/x`), false);
    assert.equal(await Deno.readTextFile(`${dir}/dest/moved/1.txt`), "1");
    assert.equal(await Deno.readTextFile(`${dir}/dest/moved/y/2.txt`), "2");
    // A file into a directory: destination is the new path, not a directory to move into.
    await makeTree(dir, { "f.txt": "f" });
    await run(ws, "move_path", { source: "f.txt", destination: "dest/moved/y/f.txt" });
    assert.equal(await Deno.readTextFile(`${dir}/dest/moved/y/f.txt`), "f");
  });
});

Deno.test("move_path: overwrite rules", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "a.txt": "A",
      "b.txt": "B",
      "d1/inner.txt": "i",
      "d2/": null,
      "d3/keep.txt": "k",
    });
    const ws = await openWorkspace(dir, { writable: true });
    // Existing destination without overwrite: refused, both untouched.
    await runError(
      ws,
      "move_path",
      { source: "a.txt", destination: "b.txt" },
      "ALREADY_EXISTS",
      "destination",
    );
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "A");
    assert.equal(await Deno.readTextFile(`${dir}/b.txt`), "B");
    // File over file with overwrite but no confirmation: refused, both untouched.
    await runError(
      ws,
      "move_path",
      { source: "a.txt", destination: "b.txt", overwrite: true },
      "CONFIRMATION_REQUIRED",
      "confirm",
    );
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "A");
    assert.equal(await Deno.readTextFile(`${dir}/b.txt`), "B");
    // File over file with overwrite, confirmed.
    const r = await run(ws, "move_path", {
      source: "a.txt",
      destination: "b.txt",
      overwrite: true,
      confirm: true,
    });
    assert.equal(r.overwritten, true);
    assert.equal(r.type, "file");
    assert.equal(await exists(`${dir}/a.txt`), false);
    assert.equal(await Deno.readTextFile(`${dir}/b.txt`), "A");
    // File over a directory, directory over a file: refused even with overwrite.
    await runError(
      ws,
      "move_path",
      { source: "b.txt", destination: "d2", overwrite: true },
      "IS_A_DIRECTORY",
      "destination",
    );
    await runError(
      ws,
      "move_path",
      { source: "d1", destination: "b.txt", overwrite: true },
      "NOT_A_DIRECTORY",
      "destination",
    );
    assert.equal(await Deno.readTextFile(`${dir}/b.txt`), "A");
    // Directory over an empty directory with overwrite.
    const dd = await run(ws, "move_path", { source: "d1", destination: "d2", overwrite: true });
    assert.deepStrictEqual(dd, {
      source: "d1",
      destination: "d2",
      type: "directory",
      overwritten: true,
    });
    assert.equal(await Deno.readTextFile(`${dir}/d2/inner.txt`), "i");
    assert.equal(await exists(`${dir}/d1`), false);
    // Directory over a non-empty directory: refused, nothing lost.
    await runError(
      ws,
      "move_path",
      { source: "d2", destination: "d3", overwrite: true },
      "DIRECTORY_NOT_EMPTY",
    );
    assert.equal(await Deno.readTextFile(`${dir}/d2/inner.txt`), "i");
    assert.equal(await Deno.readTextFile(`${dir}/d3/keep.txt`), "k");
  });
});

Deno.test("move_path: invalid moves", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "d/sub/f.txt": "f", "a.txt": "A" });
    const ws = await openWorkspace(dir, { writable: true });
    await runError(
      ws,
      "move_path",
      { source: "d", destination: "d/sub/inside" },
      "INVALID_ARGUMENT",
      "destination",
    );
    await runError(
      ws,
      "move_path",
      { source: "d", destination: "d/inside" },
      "INVALID_ARGUMENT",
      "destination",
    );
    await runError(
      ws,
      "move_path",
      { source: "a.txt", destination: "no/such/dir/a.txt" },
      "NOT_FOUND",
      "destination",
    );
    await runError(
      ws,
      "move_path",
      { source: "a.txt", destination: "a.txt" },
      "INVALID_ARGUMENT",
      "destination",
    );
    await runError(
      ws,
      "move_path",
      { source: "a.txt", destination: "./a.txt" },
      "INVALID_ARGUMENT",
      "destination",
    );
    await runError(
      ws,
      "move_path",
      { source: "missing.txt", destination: "b.txt" },
      "NOT_FOUND",
      "source",
    );
    await runError(
      ws,
      "move_path",
      { source: ".", destination: "elsewhere" },
      "INVALID_ARGUMENT",
      "source",
    );
    await runError(
      ws,
      "move_path",
      { source: "a.txt", destination: "." },
      "ALREADY_EXISTS",
      "destination",
    );
    // Everything is where it was.
    assert.equal(await Deno.readTextFile(`${dir}/d/sub/f.txt`), "f");
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "A");
    // A sibling whose name starts with the directory's name is not "inside" it.
    const r = await run(ws, "move_path", { source: "d", destination: "d2" });
    assert.equal(r.destination, "d2");
  });
});

Deno.test("move_path: a symbolic link is moved itself, not its target", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "target.txt": "T", "sub/": null });
    await Deno.symlink("../target.txt", `${dir}/sub/link`);
    const ws = await openWorkspace(dir, { writable: true });
    const r = await run(ws, "move_path", { source: "sub/link", destination: "sub/renamed" });
    assert.equal(r.type, "symlink");
    assert.ok((await Deno.lstat(`${dir}/sub/renamed`)).isSymlink);
    assert.equal(await Deno.readLink(`${dir}/sub/renamed`), "../target.txt");
    assert.equal(await Deno.readTextFile(`${dir}/target.txt`), "T");
  });
});

Deno.test("delete_path: confirmation is required and nothing is deleted without it", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "A", "d/f.txt": "f" });
    const ws = await openWorkspace(dir, { writable: true });
    await runError(ws, "delete_path", { path: "a.txt" }, "CONFIRMATION_REQUIRED", "confirm");
    await runError(
      ws,
      "delete_path",
      { path: "a.txt", confirm: false },
      "CONFIRMATION_REQUIRED",
      "confirm",
    );
    await runError(
      ws,
      "delete_path",
      { path: "d", recursive: true },
      "CONFIRMATION_REQUIRED",
      "confirm",
    );
    await runError(
      ws,
      "delete_path",
      { path: "a.txt", confirm: "yes" },
      "INVALID_ARGUMENT",
      "confirm",
    );
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "A");
    assert.equal(await Deno.readTextFile(`${dir}/d/f.txt`), "f");
    const r = await run(ws, "delete_path", { path: "a.txt", confirm: true });
    assert.deepStrictEqual(r, { path: "a.txt", type: "file", deleted: true });
    assert.equal(await exists(`${dir}/a.txt`), false);
    await runError(ws, "delete_path", { path: "a.txt", confirm: true }, "NOT_FOUND", "path");
  });
});

Deno.test("delete_path: directories, recursion, the root", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "full/a/b.txt": "b", "full/c.txt": "c", "empty/": null });
    const ws = await openWorkspace(dir, { writable: true });
    await runError(
      ws,
      "delete_path",
      { path: "full", confirm: true },
      "DIRECTORY_NOT_EMPTY",
      "recursive",
    );
    assert.equal(await Deno.readTextFile(`${dir}/full/a/b.txt`), "b");
    const e = await run(ws, "delete_path", { path: "empty", confirm: true });
    assert.deepStrictEqual(e, { path: "empty", type: "directory", deleted: true });
    assert.equal(await exists(`${dir}/empty`), false);
    const r = await run(ws, "delete_path", { path: "full", confirm: true, recursive: true });
    assert.deepStrictEqual(r, { path: "full", type: "directory", deleted: true });
    assert.equal(await exists(`${dir}/full`), false);
    await runError(
      ws,
      "delete_path",
      { path: ".", confirm: true, recursive: true },
      "INVALID_ARGUMENT",
      "path",
    );
    await runError(
      ws,
      "delete_path",
      { path: dir, confirm: true, recursive: true },
      "INVALID_ARGUMENT",
      "path",
    );
    assert.ok((await Deno.lstat(dir)).isDirectory);
  });
});

Deno.test("delete_path: a symbolic link is deleted, never its target", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "t/keep.txt": "k", "f.txt": "f" });
    await Deno.symlink("t", `${dir}/dirlink`);
    await Deno.symlink("f.txt", `${dir}/filelink`);
    const ws = await openWorkspace(dir, { writable: true });
    const r = await run(ws, "delete_path", { path: "dirlink", confirm: true, recursive: true });
    assert.deepStrictEqual(r, { path: "dirlink", type: "symlink", deleted: true });
    await run(ws, "delete_path", { path: "filelink", confirm: true });
    assert.equal(await exists(`${dir}/dirlink`), false);
    assert.equal(await exists(`${dir}/filelink`), false);
    assert.equal(await Deno.readTextFile(`${dir}/t/keep.txt`), "k");
    assert.equal(await Deno.readTextFile(`${dir}/f.txt`), "f");
  });
});
