/** edit_file: exact replacements, candidates, all-or-nothing, line endings, dry runs, diffs, hashes. */
import assert from "node:assert/strict";
import {
  makeTree,
  modeOf,
  openWorkspace,
  run,
  runError,
  sha256,
  tempFilesBelow,
  withTempDir,
} from "./_helpers.ts";

Deno.test("edit_file: a single edit, with diff and hashes", async () => {
  await withTempDir(async (dir) => {
    const before = "alpha\nbeta\ngamma\n";
    await makeTree(dir, { "a.txt": before });
    const ws = await openWorkspace(dir, { writable: true });
    const r = await run(ws, "edit_file", {
      path: "a.txt",
      edits: [{ oldText: "beta", newText: "BETA" }],
    });
    const after = "alpha\nBETA\ngamma\n";
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), after);
    assert.equal(r.path, "a.txt");
    assert.equal(r.dryRun, false);
    assert.equal(r.changed, true);
    assert.equal(r.replacements, 1);
    assert.equal(r.lineEnding, "lf");
    assert.equal(r.sha256Before, sha256(before));
    assert.equal(r.sha256After, sha256(await Deno.readFile(`${dir}/a.txt`)));
    assert.equal(r.sha256After, sha256(after));
    // A unified diff: file headers, one hunk, the -/+ lines and the context.
    const lines = r.diff.split("\n");
    assert.ok(lines[0].startsWith("Index:") || lines[0].startsWith("---"), r.diff);
    assert.ok(lines.includes("--- a.txt"), r.diff);
    assert.ok(lines.includes("+++ a.txt"), r.diff);
    assert.ok(lines.includes("@@ -1,3 +1,3 @@"), r.diff);
    assert.deepStrictEqual(lines.filter((l) => /^[-+ ][^-+]/.test(l) || l === " "), [
      " alpha",
      "-beta",
      "+BETA",
      " gamma",
    ]);
    assert.deepStrictEqual(await tempFilesBelow(dir), []);
  });
});

Deno.test("edit_file: multiple edits apply in order, each to the result of the previous", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "one\ntwo\nthree\n" });
    const ws = await openWorkspace(dir, { writable: true });
    const r = await run(ws, "edit_file", {
      path: "a.txt",
      edits: [
        { oldText: "two", newText: "deux" },
        { oldText: "deux\nthree", newText: "trois" },
        { oldText: "one", newText: "un\nzero" },
      ],
    });
    assert.equal(r.replacements, 3);
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "un\nzero\ntrois\n");
    // Replacement text is literal ($& and friends are not special).
    await run(ws, "edit_file", { path: "a.txt", edits: [{ oldText: "zero", newText: "$&$1$$" }] });
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "un\n$&$1$$\ntrois\n");
  });
});

Deno.test("edit_file: no match is NO_MATCH with candidate line numbers", async () => {
  await withTempDir(async (dir) => {
    const text = [
      "function foo() {", // 1
      "  return 1;", // 2
      "}", // 3
      "", // 4
      "function foo() {", // 5
      "  return 3;", // 6
      "}", // 7
      "",
    ].join("\n");
    await makeTree(dir, { "a.js": text });
    const ws = await openWorkspace(dir, { writable: true });
    const e = await runError(
      ws,
      "edit_file",
      {
        path: "a.js",
        edits: [{ oldText: "function foo() {\n  return 2;\n}", newText: "x" }],
      },
      "NO_MATCH",
      "edits[0].oldText",
    );
    assert.deepStrictEqual(e.details, { editIndex: 0, candidates: [1, 5] });
    assert.match(e.message, /1, 5/);
    // Candidates use the first non-blank line, trimmed.
    const e2 = await runError(
      ws,
      "edit_file",
      {
        path: "a.js",
        edits: [{ oldText: "\n   return 1;  \n}  extra", newText: "x" }],
      },
      "NO_MATCH",
      "edits[0].oldText",
    );
    assert.deepStrictEqual(e2.details, { editIndex: 0, candidates: [2] });
    // Nothing similar: no candidates.
    const e3 = await runError(
      ws,
      "edit_file",
      {
        path: "a.js",
        edits: [{ oldText: "nothing like it", newText: "x" }],
      },
      "NO_MATCH",
      "edits[0].oldText",
    );
    assert.deepStrictEqual(e3.details, { editIndex: 0, candidates: [] });
    assert.equal(await Deno.readTextFile(`${dir}/a.js`), text);
  });
});

Deno.test("edit_file: several matches is AMBIGUOUS_MATCH with their line numbers", async () => {
  await withTempDir(async (dir) => {
    const text = "x = 1\ny = 2\nx = 1\nz = 3\n  x = 1;\n";
    await makeTree(dir, { "a.txt": text });
    const ws = await openWorkspace(dir, { writable: true });
    const e = await runError(
      ws,
      "edit_file",
      {
        path: "a.txt",
        edits: [{ oldText: "x = 1", newText: "x = 9" }],
      },
      "AMBIGUOUS_MATCH",
      "edits[0].oldText",
    );
    assert.deepStrictEqual(e.details, { editIndex: 0, occurrences: 3, candidates: [1, 3, 5] });
    // A match that starts with a newline is reported on the line that newline ends.
    await Deno.writeTextFile(`${dir}/b.txt`, "a\nb\na\nb\n");
    const e2 = await runError(
      ws,
      "edit_file",
      {
        path: "b.txt",
        edits: [{ oldText: "\nb", newText: "" }],
      },
      "AMBIGUOUS_MATCH",
      "edits[0].oldText",
    );
    assert.deepStrictEqual(e2.details, { editIndex: 0, occurrences: 2, candidates: [1, 3] });
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), text);
  });
});

Deno.test("edit_file: replaceAll reports the replacement count", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "cat cat\ndog\ncat\n" });
    const ws = await openWorkspace(dir, { writable: true });
    const r = await run(ws, "edit_file", {
      path: "a.txt",
      edits: [{ oldText: "cat", newText: "cow", replaceAll: true }],
    });
    assert.equal(r.replacements, 3);
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "cow cow\ndog\ncow\n");
    // replaceAll with a single occurrence is fine; with none it is NO_MATCH.
    const one = await run(ws, "edit_file", {
      path: "a.txt",
      edits: [{ oldText: "dog", newText: "doge", replaceAll: true }],
    });
    assert.equal(one.replacements, 1);
    await runError(ws, "edit_file", {
      path: "a.txt",
      edits: [{ oldText: "cat", newText: "x", replaceAll: true }],
    }, "NO_MATCH");
    // Overlapping-looking occurrences are counted left to right, without overlap.
    await Deno.writeTextFile(`${dir}/b.txt`, "aaaa\n");
    const ov = await run(ws, "edit_file", {
      path: "b.txt",
      edits: [{ oldText: "aa", newText: "b", replaceAll: true }],
    });
    assert.equal(ov.replacements, 2);
    assert.equal(await Deno.readTextFile(`${dir}/b.txt`), "bb\n");
  });
});

Deno.test("edit_file: all or nothing when a later edit fails", async () => {
  await withTempDir(async (dir) => {
    const text = "one\ntwo\nthree\n";
    await makeTree(dir, { "a.txt": text });
    const before = await Deno.lstat(`${dir}/a.txt`);
    const ws = await openWorkspace(dir, { writable: true });
    const e = await runError(
      ws,
      "edit_file",
      {
        path: "a.txt",
        edits: [{ oldText: "one", newText: "1" }, { oldText: "four", newText: "4" }],
      },
      "NO_MATCH",
      "edits[1].oldText",
    );
    assert.equal((e.details as { editIndex: number }).editIndex, 1);
    // An edit that only matches text the first edit removed also fails the whole call.
    await runError(
      ws,
      "edit_file",
      {
        path: "a.txt",
        edits: [{ oldText: "two", newText: "2" }, { oldText: "two", newText: "deux" }],
      },
      "NO_MATCH",
      "edits[1].oldText",
    );
    await runError(
      ws,
      "edit_file",
      {
        path: "a.txt",
        edits: [{ oldText: "one", newText: "x" }, { oldText: "x", newText: "y" }, {
          oldText: "\n",
          newText: "",
        }],
      },
      "AMBIGUOUS_MATCH",
      "edits[2].oldText",
    );
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), text);
    const after = await Deno.lstat(`${dir}/a.txt`);
    assert.equal(after.ino, before.ino);
    assert.equal(after.mtime!.getTime(), before.mtime!.getTime());
    assert.deepStrictEqual(await tempFilesBelow(dir), []);
  });
});

Deno.test("edit_file: CRLF files edited with LF text keep CRLF everywhere", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "w.txt": "a\r\nb\r\nc\r\n" });
    const ws = await openWorkspace(dir, { writable: true });
    const r = await run(ws, "edit_file", {
      path: "w.txt",
      edits: [{ oldText: "a\nb", newText: "x\ny\nz" }],
    });
    assert.equal(r.lineEnding, "crlf");
    const bytes = await Deno.readFile(`${dir}/w.txt`);
    assert.equal(new TextDecoder().decode(bytes), "x\r\ny\r\nz\r\nc\r\n");
    assert.equal(r.sha256After, sha256(bytes));
    // CRLF in the edit text works the same way.
    await run(ws, "edit_file", {
      path: "w.txt",
      edits: [{ oldText: "z\r\nc", newText: "c\r\nd" }],
    });
    assert.equal(await Deno.readTextFile(`${dir}/w.txt`), "x\r\ny\r\nc\r\nd\r\n");
    // The diff is of the normalized text: no \r in it.
    assert.ok(!r.diff.includes("\r"));
    assert.ok(r.diff.split("\n").includes("-a"));
    assert.ok(r.diff.split("\n").includes("+z"));
  });
});

Deno.test("edit_file: the final newline, or its absence, is kept", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "nl.txt": "a\nb\n",
      "nonl.txt": "a\nb",
      "crlf-nonl.txt": "a\r\nb",
    });
    const ws = await openWorkspace(dir, { writable: true });
    await run(ws, "edit_file", { path: "nl.txt", edits: [{ oldText: "b\n", newText: "c" }] });
    assert.equal(await Deno.readTextFile(`${dir}/nl.txt`), "a\nc\n");
    await run(ws, "edit_file", { path: "nonl.txt", edits: [{ oldText: "b", newText: "c\n" }] });
    assert.equal(await Deno.readTextFile(`${dir}/nonl.txt`), "a\nc");
    const r = await run(ws, "edit_file", {
      path: "crlf-nonl.txt",
      edits: [{ oldText: "b", newText: "c\nd" }],
    });
    assert.equal(r.lineEnding, "crlf");
    assert.equal(await Deno.readTextFile(`${dir}/crlf-nonl.txt`), "a\r\nc\r\nd");
  });
});

Deno.test("edit_file: dryRun returns the diff and does not write", async () => {
  await withTempDir(async (dir) => {
    const text = "keep\nchange me\nkeep\n";
    await makeTree(dir, { "a.txt": text });
    const before = await Deno.lstat(`${dir}/a.txt`);
    const ws = await openWorkspace(dir, { writable: true });
    const dry = await run(ws, "edit_file", {
      path: "a.txt",
      edits: [{ oldText: "change me", newText: "changed" }],
      dryRun: true,
    });
    assert.equal(dry.dryRun, true);
    assert.equal(dry.changed, true);
    assert.equal(dry.replacements, 1);
    assert.equal(dry.sha256Before, sha256(text));
    assert.equal(dry.sha256After, sha256("keep\nchanged\nkeep\n"));
    assert.ok(dry.diff.split("\n").includes("-change me"));
    assert.ok(dry.diff.split("\n").includes("+changed"));
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), text);
    const after = await Deno.lstat(`${dir}/a.txt`);
    assert.equal(after.ino, before.ino);
    assert.equal(after.mtime!.getTime(), before.mtime!.getTime());
    // The real edit produces the same diff and hash.
    const real = await run(ws, "edit_file", {
      path: "a.txt",
      edits: [{ oldText: "change me", newText: "changed" }],
    });
    assert.equal(real.diff, dry.diff);
    assert.equal(real.sha256After, dry.sha256After);
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "keep\nchanged\nkeep\n");
  });
});

Deno.test("edit_file: an edit that changes nothing writes nothing", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "same\n" });
    const before = await Deno.lstat(`${dir}/a.txt`);
    const ws = await openWorkspace(dir, { writable: true });
    const r = await run(ws, "edit_file", {
      path: "a.txt",
      edits: [{ oldText: "same", newText: "same" }],
    });
    assert.equal(r.changed, false);
    assert.equal(r.replacements, 1);
    assert.equal(r.diff, "");
    assert.equal(r.sha256After, r.sha256Before);
    assert.equal((await Deno.lstat(`${dir}/a.txt`)).ino, before.ino);
  });
});

Deno.test("edit_file: expectedSha256 match and stale (CONFLICT)", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "v1\n" });
    const ws = await openWorkspace(dir, { writable: true });
    const stale = sha256("v0\n");
    const e = await runError(
      ws,
      "edit_file",
      {
        path: "a.txt",
        edits: [{ oldText: "v1", newText: "v2" }],
        expectedSha256: stale,
      },
      "CONFLICT",
      "expectedSha256",
    );
    assert.deepStrictEqual(e.details, { expected: stale, actual: sha256("v1\n") });
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "v1\n");
    const ok = await run(ws, "edit_file", {
      path: "a.txt",
      edits: [{ oldText: "v1", newText: "v2" }],
      expectedSha256: sha256("v1\n"),
    });
    assert.equal(ok.sha256After, sha256("v2\n"));
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "v2\n");
  });
});

Deno.test("edit_file: mode kept; errors for bad input, binary files, directories, size", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "a.txt": "hello\n",
      "bin.dat": new Uint8Array([0x68, 0x00, 0x69]),
      "d/": null,
      "big.txt": "x".repeat(200),
    });
    await Deno.chmod(`${dir}/a.txt`, 0o640);
    const ws = await openWorkspace(dir, { writable: true, limits: { maxWriteBytes: 100 } });
    await run(ws, "edit_file", { path: "a.txt", edits: [{ oldText: "hello", newText: "bye" }] });
    assert.equal(await modeOf(`${dir}/a.txt`), 0o640);
    await runError(ws, "edit_file", { path: "a.txt", edits: [] }, "INVALID_ARGUMENT", "edits");
    await runError(
      ws,
      "edit_file",
      { path: "a.txt", edits: [{ oldText: "", newText: "x" }] },
      "INVALID_ARGUMENT",
      "edits[0].oldText",
    );
    await runError(ws, "edit_file", {
      path: "a.txt",
      edits: [{ oldText: "a", newText: "b", extra: 1 }],
    }, "INVALID_ARGUMENT");
    await runError(
      ws,
      "edit_file",
      { path: "bin.dat", edits: [{ oldText: "h", newText: "j" }] },
      "BINARY_FILE",
      "path",
    );
    await runError(
      ws,
      "edit_file",
      { path: "d", edits: [{ oldText: "h", newText: "j" }] },
      "IS_A_DIRECTORY",
      "path",
    );
    await runError(
      ws,
      "edit_file",
      { path: "missing.txt", edits: [{ oldText: "h", newText: "j" }] },
      "NOT_FOUND",
      "path",
    );
    const big = await runError(
      ws,
      "edit_file",
      { path: "big.txt", edits: [{ oldText: "x", newText: "y", replaceAll: true }] },
      "TOO_LARGE",
      "path",
    );
    assert.deepStrictEqual(big.details, { size: 200, limit: 100 });
    // An edit that would grow the file past the limit.
    const grow = await runError(
      ws,
      "edit_file",
      { path: "a.txt", edits: [{ oldText: "bye", newText: "y".repeat(100) }] },
      "TOO_LARGE",
      "edits",
    );
    assert.deepStrictEqual(grow.details, { size: 101, limit: 100 });
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "bye\n");
  });
});
