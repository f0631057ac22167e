/** write_file and create_directory: create, refuse, overwrite, expectedSha256, parents, modes, limits. */
import assert from "node:assert/strict";
import {
  bytesOrNull,
  exists,
  expectError,
  makeTree,
  modeOf,
  openWorkspace,
  run,
  runError,
  sha256,
  tempFilesBelow,
  utf8,
  withTempDir,
} from "./_helpers.ts";

Deno.test("write_file: creates a new file", async () => {
  await withTempDir(async (dir) => {
    const ws = await openWorkspace(dir, { writable: true });
    const content = "héllo\nwörld\n";
    const r = await run(ws, "write_file", { path: "new.txt", content });
    assert.deepStrictEqual(r, {
      path: "new.txt",
      created: true,
      size: utf8(content).length,
      sha256: sha256(utf8(content)),
    });
    assert.equal(await Deno.readTextFile(`${dir}/new.txt`), content);
    // Empty content is a valid file.
    const e = await run(ws, "write_file", { path: "empty.txt", content: "" });
    assert.equal(e.size, 0);
    assert.equal(e.sha256, sha256(""));
    assert.equal((await Deno.readFile(`${dir}/empty.txt`)).length, 0);
    assert.deepStrictEqual(await tempFilesBelow(dir), []);
  });
});

Deno.test("write_file: refuses an existing file without changing it", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "old\n" });
    const before = await Deno.lstat(`${dir}/a.txt`);
    const ws = await openWorkspace(dir, { writable: true });
    await runError(ws, "write_file", { path: "a.txt", content: "new\n" }, "ALREADY_EXISTS", "path");
    await runError(
      ws,
      "write_file",
      { path: "a.txt", content: "new\n", ifExists: "error" },
      "ALREADY_EXISTS",
      "path",
    );
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "old\n");
    const after = await Deno.lstat(`${dir}/a.txt`);
    assert.equal(after.ino, before.ino);
    assert.equal(after.mtime!.getTime(), before.mtime!.getTime());
    assert.deepStrictEqual(await tempFilesBelow(dir), []);
  });
});

Deno.test("write_file: overwrite replaces the content and reports the previous hash", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "old\n" });
    const ws = await openWorkspace(dir, { writable: true });
    const r = await run(ws, "write_file", {
      path: "a.txt",
      content: "new content\n",
      ifExists: "overwrite",
      confirm: true,
    });
    assert.deepStrictEqual(r, {
      path: "a.txt",
      created: false,
      size: 12,
      sha256: sha256("new content\n"),
      previousSha256: sha256("old\n"),
    });
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "new content\n");
    // Overwrite of a missing file simply creates it.
    const c = await run(ws, "write_file", {
      path: "b.txt",
      content: "b",
      ifExists: "overwrite",
      confirm: true,
    });
    assert.equal(c.created, true);
    assert.equal(c.previousSha256, undefined);
    assert.deepStrictEqual(await tempFilesBelow(dir), []);
  });
});

Deno.test("write_file: expectedSha256 match and stale (CONFLICT, untouched)", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "v1\n" });
    const ws = await openWorkspace(dir, { writable: true });
    const read = await run(ws, "read_file", { path: "a.txt" });
    const ok = await run(ws, "write_file", {
      path: "a.txt",
      content: "v2\n",
      ifExists: "overwrite",
      confirm: true,
      expectedSha256: read.sha256,
    });
    assert.equal(ok.previousSha256, read.sha256);
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "v2\n");
    // The same (now stale) hash again: refused, file untouched.
    const e = await runError(
      ws,
      "write_file",
      {
        path: "a.txt",
        content: "v3\n",
        ifExists: "overwrite",
        confirm: true,
        expectedSha256: read.sha256,
      },
      "CONFLICT",
      "expectedSha256",
    );
    assert.deepStrictEqual(e.details, { expected: read.sha256, actual: sha256("v2\n") });
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "v2\n");
    // Upper-case hex is accepted.
    const upper = await run(ws, "write_file", {
      path: "a.txt",
      content: "v4\n",
      ifExists: "overwrite",
      confirm: true,
      expectedSha256: sha256("v2\n").toUpperCase(),
    });
    assert.equal(upper.previousSha256, sha256("v2\n"));
    // An expected hash for a file that does not exist is a conflict too.
    const missing = await runError(
      ws,
      "write_file",
      {
        path: "nope.txt",
        content: "x",
        expectedSha256: sha256("x"),
      },
      "CONFLICT",
      "expectedSha256",
    );
    assert.deepStrictEqual(missing.details, { expected: sha256("x"), actual: null });
    assert.equal(await exists(`${dir}/nope.txt`), false);
    // Not a hash at all.
    await runError(
      ws,
      "write_file",
      {
        path: "a.txt",
        content: "x",
        ifExists: "overwrite",
        confirm: true,
        expectedSha256: "abc",
      },
      "INVALID_ARGUMENT",
      "expectedSha256",
    );
    assert.deepStrictEqual(await tempFilesBelow(dir), []);
  });
});

Deno.test("write_file: createParents, and a missing parent is NOT_FOUND", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "file.txt": "f" });
    const ws = await openWorkspace(dir, { writable: true });
    await runError(ws, "write_file", { path: "a/b/c.txt", content: "x" }, "NOT_FOUND", "path");
    assert.equal(await exists(`${dir}/a`), false);
    const r = await run(ws, "write_file", { path: "a/b/c.txt", content: "x", createParents: true });
    assert.equal(r.path, "a/b/c.txt");
    assert.equal(r.created, true);
    assert.equal(await Deno.readTextFile(`${dir}/a/b/c.txt`), "x");
    assert.ok((await Deno.lstat(`${dir}/a/b`)).isDirectory);
    // A parent that is a file.
    await runError(
      ws,
      "write_file",
      { path: "file.txt/x.txt", content: "x", createParents: true },
      "NOT_A_DIRECTORY",
      "path",
    );
    assert.equal(await Deno.readTextFile(`${dir}/file.txt`), "f");
  });
});

Deno.test("write_file: the permission mode is kept on overwrite", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "secret.txt": "s1", "exec.sh": "#!/bin/sh\n" });
    await Deno.chmod(`${dir}/secret.txt`, 0o600);
    await Deno.chmod(`${dir}/exec.sh`, 0o751);
    const ws = await openWorkspace(dir, { writable: true });
    await run(ws, "write_file", {
      path: "secret.txt",
      content: "s2",
      ifExists: "overwrite",
      confirm: true,
    });
    await run(ws, "write_file", {
      path: "exec.sh",
      content: "#!/bin/sh\nexit 0\n",
      ifExists: "overwrite",
      confirm: true,
    });
    assert.equal(await modeOf(`${dir}/secret.txt`), 0o600);
    assert.equal(await modeOf(`${dir}/exec.sh`), 0o751);
    assert.equal(await Deno.readTextFile(`${dir}/secret.txt`), "s2");
    assert.equal((await run(ws, "get_file_info", { path: "secret.txt" })).mode, "0600");
  });
});

Deno.test("write_file: no temp files are left behind, after success and failure", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "sub/a.txt": "a" });
    const ws = await openWorkspace(dir, { writable: true, limits: { maxWriteBytes: 100 } });
    for (let i = 0; i < 5; i++) {
      await run(ws, "write_file", {
        path: "sub/a.txt",
        content: `v${i}`,
        ifExists: "overwrite",
        confirm: true,
      });
      await run(ws, "write_file", { path: `sub/n${i}.txt`, content: `n${i}` });
    }
    await runError(ws, "write_file", {
      path: "sub/a.txt",
      content: "x".repeat(101),
      ifExists: "overwrite",
      confirm: true,
    }, "TOO_LARGE");
    await runError(ws, "write_file", { path: "sub/a.txt", content: "x" }, "ALREADY_EXISTS");
    await runError(ws, "write_file", {
      path: "sub/a.txt",
      content: "x",
      ifExists: "overwrite",
      confirm: true,
      expectedSha256: "0".repeat(64),
    }, "CONFLICT");
    assert.deepStrictEqual(await tempFilesBelow(dir), []);
    const names: string[] = [];
    for await (const e of Deno.readDir(`${dir}/sub`)) names.push(e.name);
    assert.deepStrictEqual(names.sort(), [
      "a.txt",
      "n0.txt",
      "n1.txt",
      "n2.txt",
      "n3.txt",
      "n4.txt",
    ]);
  });
});

Deno.test("write_file: content over maxWriteBytes is TOO_LARGE (bytes, not characters)", async () => {
  await withTempDir(async (dir) => {
    const ws = await openWorkspace(dir, { writable: true, limits: { maxWriteBytes: 10 } });
    // 5 characters, 10 bytes: fits exactly.
    const ok = await run(ws, "write_file", { path: "ok.txt", content: "ééééé" });
    assert.equal(ok.size, 10);
    // 6 characters, 11 bytes.
    const e = await runError(
      ws,
      "write_file",
      { path: "big.txt", content: "éééééa" },
      "TOO_LARGE",
      "content",
    );
    assert.deepStrictEqual(e.details, { size: 11, limit: 10 });
    assert.equal(await exists(`${dir}/big.txt`), false);
  });
});

Deno.test("write_file: writing to a directory is IS_A_DIRECTORY", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "d/inner.txt": "i" });
    const ws = await openWorkspace(dir, { writable: true });
    await runError(ws, "write_file", { path: "d", content: "x" }, "IS_A_DIRECTORY", "path");
    await runError(
      ws,
      "write_file",
      { path: "d", content: "x", ifExists: "overwrite", confirm: true },
      "IS_A_DIRECTORY",
      "path",
    );
    await runError(
      ws,
      "write_file",
      { path: ".", content: "x", ifExists: "overwrite", confirm: true },
      "IS_A_DIRECTORY",
      "path",
    );
    assert.ok((await Deno.lstat(`${dir}/d`)).isDirectory);
    assert.equal(await Deno.readTextFile(`${dir}/d/inner.txt`), "i");
  });
});

Deno.test("write_file: a link inside the workspace is written through to its target", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "target.txt": "old" });
    await Deno.symlink("target.txt", `${dir}/link.txt`);
    const ws = await openWorkspace(dir, { writable: true });
    const r = await run(ws, "write_file", {
      path: "link.txt",
      content: "new",
      ifExists: "overwrite",
      confirm: true,
    });
    assert.equal(r.path, "target.txt");
    assert.equal(await Deno.readTextFile(`${dir}/target.txt`), "new");
    assert.ok((await Deno.lstat(`${dir}/link.txt`)).isSymlink);
  });
});

Deno.test("create_directory: parents, existing, errors", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "f.txt": "f", "existing/": null });
    const ws = await openWorkspace(dir, { writable: true });
    const r = await run(ws, "create_directory", { path: "a/b/c" });
    assert.deepStrictEqual(r, {
      path: "a/b/c",
      created: true,
      createdPaths: ["a", "a/b", "a/b/c"],
    });
    assert.ok((await Deno.lstat(`${dir}/a/b/c`)).isDirectory);
    const again = await run(ws, "create_directory", { path: "a/b/c" });
    assert.deepStrictEqual(again, { path: "a/b/c", created: false, createdPaths: [] });
    const partial = await run(ws, "create_directory", { path: "existing/x/y" });
    assert.deepStrictEqual(partial.createdPaths, ["existing/x", "existing/x/y"]);
    const one = await run(ws, "create_directory", { path: "a/z", parents: false });
    assert.deepStrictEqual(one, { path: "a/z", created: true, createdPaths: ["a/z"] });
    await runError(ws, "create_directory", { path: "p/q", parents: false }, "NOT_FOUND", "path");
    assert.equal(await exists(`${dir}/p`), false);
    await runError(ws, "create_directory", { path: "f.txt" }, "ALREADY_EXISTS", "path");
    await runError(ws, "create_directory", { path: "f.txt/sub" }, "NOT_A_DIRECTORY", "path");
    const root = await run(ws, "create_directory", { path: "." });
    assert.deepStrictEqual(root, { path: ".", created: false, createdPaths: [] });
    assert.equal(await bytesOrNull(`${dir}/f.txt`) !== null, true);
  });
});

Deno.test("write_file: replacing an existing file needs confirm: true; nothing changes without it", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/keep.txt`, "precious\n");
    const ws = await openWorkspace(dir, { writable: true });
    await expectError(
      run(ws, "write_file", { path: "keep.txt", content: "gone", ifExists: "overwrite" }),
      "CONFIRMATION_REQUIRED",
      "confirm",
    );
    assert.equal(await Deno.readTextFile(`${dir}/keep.txt`), "precious\n");
    // A new file needs no confirmation, even with ifExists overwrite.
    const created = await run(ws, "write_file", {
      path: "new.txt",
      content: "n",
      ifExists: "overwrite",
    });
    assert.equal(created.created, true);
  });
});
