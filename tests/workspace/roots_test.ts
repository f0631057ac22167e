/**
 * Several roots through the library (decision 0064): which root a path addresses, how results
 * show a later root's paths, read-only roots, overlapping roots refused, copies from one root into
 * another, moves between roots refused, read_files across roots, and the containment of each root
 * (a link never crosses from one root into another, `..` never leaves a root, a root swapped away
 * after open is caught); and broadness, the one rule on broad roots.
 */
import assert from "node:assert/strict";
import { runOperation, Workspace, WorkspaceError } from "../../mod.ts";
import { makeTree, run, runError, withTempDir } from "./_helpers.ts";
import { broadness } from "../../src/workspace/roots.ts";

/** Two roots `a` (first) and `b` below one temporary directory, and the workspace on them. */
async function twoRoots(
  dir: string,
  options: { readOnlyB?: boolean; writable?: boolean } = {},
): Promise<{ a: string; b: string; ws: Workspace }> {
  const a = `${dir}/a`;
  const b = `${dir}/b`;
  await makeTree(a, { "x.txt": "in a\n", "sub/": null });
  await makeTree(b, { "d/y.txt": "in b\nneedle\n", "z.txt": "zz\n" });
  const ws = await Workspace.open({
    roots: [{ path: a }, { path: b, readOnly: options.readOnlyB ?? true }],
    writable: options.writable ?? true,
  });
  return { a, b, ws };
}

Deno.test("roots: a relative path addresses the first root, an absolute one the root it lies under", async () => {
  await withTempDir(async (dir) => {
    const { a, b, ws } = await twoRoots(dir);
    const first = await run(ws, "read_file", { path: "x.txt" });
    assert.equal(first.path, "x.txt");
    assert.equal(first.content, "in a\n");
    const second = await run(ws, "read_file", { path: `${b}/d/y.txt` });
    assert.equal(second.path, `${b}/d/y.txt`, "a later root's path is shown absolute");
    assert.equal(second.content, "in b\nneedle\n");
    // The first root by its absolute path is shown relative, as with one root.
    assert.equal((await run(ws, "read_file", { path: `${a}/x.txt` })).path, "x.txt");
    // A relative path never reaches the second root, whatever it spells.
    await runError(ws, "read_file", { path: "b/d/y.txt" }, "NOT_FOUND", "path");
  });
});

Deno.test("roots: walks of a later root show its paths absolute, and they address it back", async () => {
  await withTempDir(async (dir) => {
    const { b, ws } = await twoRoots(dir);
    const listed = await run(ws, "list_directory", { path: b });
    assert.equal(listed.path, b);
    assert.deepEqual(listed.entries.map((e) => e.path).sort(), [`${b}/d`, `${b}/z.txt`]);
    const found = await run(ws, "find_files", { path: b, pattern: "**/*.txt" });
    assert.deepEqual(found.matches.map((m) => m.path).sort(), [`${b}/d/y.txt`, `${b}/z.txt`]);
    const hits = await run(ws, "search_text", { path: `${b}/d`, query: "needle" });
    assert.deepEqual(hits.matches.map((m) => [m.path, m.line]), [[`${b}/d/y.txt`, 2]]);
    // Each path of a result, passed back, reads the entry it names.
    for (const m of found.matches) {
      assert.equal((await run(ws, "get_file_info", { path: m.path })).path, m.path);
    }
    const rootInfo = await run(ws, "get_file_info", { path: b });
    assert.equal(rootInfo.path, b);
    assert.equal(rootInfo.type, "directory");
  });
});

Deno.test("roots: a read-only root refuses every write, and the others still take them", async () => {
  await withTempDir(async (dir) => {
    const { a, b, ws } = await twoRoots(dir);
    assert.equal(ws.writable, true, "write tools are served: the first root takes writes");
    const calls: [string, Record<string, unknown>][] = [
      ["write_file", { path: `${b}/new.txt`, content: "no" }],
      ["edit_file", { path: `${b}/z.txt`, edits: [{ oldText: "zz", newText: "yy" }] }],
      ["create_directory", { path: `${b}/made` }],
      ["delete_path", { path: `${b}/z.txt` }],
      ["move_path", { source: `${b}/z.txt`, destination: `${b}/w.txt` }],
      ["copy_path", { source: "x.txt", destination: `${b}/x.txt` }],
    ];
    for (const [name, args] of calls) {
      const e = await runError(ws, name, args, "READ_ONLY");
      assert.match(e.message, new RegExp(`read-only root ${b}`), name);
      assert.deepEqual(e.details, { root: b }, name);
    }
    assert.deepEqual([...Deno.readDirSync(b)].map((e) => e.name).sort(), ["d", "z.txt"]);
    assert.equal(
      Deno.readTextFileSync(`${b}/z.txt`),
      "zz\n",
      "nothing in the read-only root changed",
    );
    const written = await run(ws, "write_file", { path: "new.txt", content: "yes" });
    assert.equal(written.path, "new.txt");
    assert.equal(Deno.readTextFileSync(`${a}/new.txt`), "yes");
  });
});

Deno.test("roots: without --write no root takes writes, a read-only first root included", async () => {
  await withTempDir(async (dir) => {
    const a = `${dir}/a`;
    const b = `${dir}/b`;
    await makeTree(a, { "x.txt": "a" });
    await makeTree(b, { "y.txt": "b" });
    const ro = await Workspace.open({ roots: [{ path: a, readOnly: true }, { path: b }] });
    assert.equal(ro.writable, false);
    await runError(ro, "write_file", { path: `${b}/n.txt`, content: "n" }, "READ_ONLY");
    const firstReadOnly = await Workspace.open({
      roots: [{ path: a, readOnly: true }, { path: b }],
      writable: true,
    });
    assert.equal(firstReadOnly.writable, true, "the second root takes writes");
    await runError(firstReadOnly, "write_file", { path: "n.txt", content: "n" }, "READ_ONLY");
    await run(firstReadOnly, "write_file", { path: `${b}/n.txt`, content: "n" });
    assert.equal(Deno.readTextFileSync(`${b}/n.txt`), "n");
  });
});

Deno.test("roots: the same directory twice, or one root inside another, is refused at open", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a/in/": null, "b/": null });
    Deno.symlinkSync(`${dir}/a`, `${dir}/link-to-a`);
    const refused = [
      [{ path: `${dir}/a` }, { path: `${dir}/a/in` }],
      [{ path: `${dir}/a/in` }, { path: `${dir}/a`, readOnly: true }],
      [{ path: `${dir}/a` }, { path: `${dir}/b` }, { path: `${dir}/link-to-a` }],
      [{ path: `${dir}/a` }, { path: `${dir}/a/` }],
    ];
    for (const roots of refused) {
      const e = await Workspace.open({ roots }).then(
        () => assert.fail(`opened ${JSON.stringify(roots)}`),
        (err) => err,
      );
      assert.ok(e instanceof WorkspaceError);
      assert.equal(e.code, "INVALID_ARGUMENT");
      assert.match(e.message, /same directory|overlap/);
    }
    await assert.rejects(() => Workspace.open({ roots: [] }), WorkspaceError);
    await assert.rejects(
      () => Workspace.open({ root: dir, roots: [{ path: dir }] }),
      WorkspaceError,
    );
  });
});

Deno.test("roots: a path outside every root is OUTSIDE_WORKSPACE naming the roots", async () => {
  await withTempDir(async (dir) => {
    const { a, b, ws } = await twoRoots(dir);
    await makeTree(dir, { "outside/secret.txt": "secret" });
    const cases = [
      `${dir}/outside/secret.txt`,
      `${b}/../outside/secret.txt`,
      `${b}/../a/x.txt`,
      "../outside/secret.txt",
    ];
    for (const path of cases) {
      const e = await runError(ws, "read_file", { path }, "OUTSIDE_WORKSPACE", "path");
      assert.ok(e.message.endsWith(`(the roots: ${a}, ${b} (read-only))`), e.message);
      assert.deepEqual(e.details?.roots, [a, b]);
      assert.ok(!JSON.stringify(e.toJSON()).includes('secret"'), "nothing of the file leaks");
    }
  });
});

Deno.test("roots: a link never crosses from one root into another", async () => {
  await withTempDir(async (dir) => {
    const { a, b, ws } = await twoRoots(dir, { readOnlyB: false });
    Deno.symlinkSync(`${a}/x.txt`, `${b}/to-a`);
    Deno.symlinkSync("../a", `${b}/rel-to-a`);
    Deno.symlinkSync(b, `${a}/to-b`);
    await runError(ws, "read_file", { path: `${b}/to-a` }, "OUTSIDE_WORKSPACE", "path");
    await runError(ws, "read_file", { path: `${b}/rel-to-a/x.txt` }, "OUTSIDE_WORKSPACE", "path");
    await runError(ws, "read_file", { path: "to-b/z.txt" }, "OUTSIDE_WORKSPACE", "path");
    await runError(
      ws,
      "write_file",
      { path: `${b}/to-a`, content: "over" },
      "OUTSIDE_WORKSPACE",
      "path",
    );
    assert.equal(Deno.readTextFileSync(`${a}/x.txt`), "in a\n");
  });
});

Deno.test("roots: copy_path copies from a read-only root into a writable one", async () => {
  await withTempDir(async (dir) => {
    const { a, b, ws } = await twoRoots(dir);
    const file = await run(ws, "copy_path", { source: `${b}/d/y.txt`, destination: "y.txt" });
    assert.equal(file.source, `${b}/d/y.txt`);
    assert.equal(file.destination, "y.txt", "the first root's destination is shown relative");
    assert.equal(Deno.readTextFileSync(`${a}/y.txt`), "in b\nneedle\n");
    const tree = await run(ws, "copy_path", {
      source: `${b}/d`,
      destination: "sub/d",
      recursive: true,
    });
    assert.equal(tree.destination, "sub/d");
    assert.equal(tree.files, 1);
    assert.equal(Deno.readTextFileSync(`${a}/sub/d/y.txt`), "in b\nneedle\n");
    // The same relative name at both ends is not "the same path" across roots.
    await makeTree(b, { "x.txt": "b's x\n" });
    const { a: _a, b: b2, ws: rw } = await twoRoots(`${dir}/second`, { readOnlyB: false });
    const across = await run(rw, "copy_path", { source: "x.txt", destination: `${b2}/x.txt` });
    assert.equal(across.destination, `${b2}/x.txt`);
    assert.equal(Deno.readTextFileSync(`${b2}/x.txt`), "in a\n");
  });
});

Deno.test("roots: move_path between roots is CROSS_DEVICE and changes nothing", async () => {
  await withTempDir(async (dir) => {
    const { a, b, ws } = await twoRoots(dir, { readOnlyB: false });
    const e = await runError(
      ws,
      "move_path",
      { source: "x.txt", destination: `${b}/x.txt` },
      "CROSS_DEVICE",
      "destination",
    );
    assert.match(e.message, /copy_path .* then delete_path/);
    assert.equal(Deno.readTextFileSync(`${a}/x.txt`), "in a\n");
    assert.equal(await Deno.lstat(`${b}/x.txt`).catch(() => null), null);
    // Within the second root a move works, and says where in absolute paths.
    const moved = await run(ws, "move_path", { source: `${b}/z.txt`, destination: `${b}/w.txt` });
    assert.equal(moved.source, `${b}/z.txt`);
    assert.equal(moved.destination, `${b}/w.txt`);
  });
});

Deno.test("roots: read_files reads each path on its own root, failures per path", async () => {
  await withTempDir(async (dir) => {
    const { a, b, ws } = await twoRoots(dir);
    const r = await run(ws, "read_files", {
      paths: ["x.txt", `${b}/z.txt`, `${dir}/nope`, `${b}/missing`],
    });
    assert.equal(r.files.length, 4);
    assert.deepEqual(r.files.map((f) => f.path), [
      "x.txt",
      `${b}/z.txt`,
      `${dir}/nope`,
      `${b}/missing`,
    ]);
    assert.equal((r.files[0] as { content: string }).content, "in a\n");
    assert.equal((r.files[1] as { content: string }).content, "zz\n");
    const outside = (r.files[2] as { error: { code: string; message: string } }).error;
    assert.equal(outside.code, "OUTSIDE_WORKSPACE");
    assert.ok(outside.message.includes(`the roots: ${a}, ${b} (read-only)`));
    assert.equal((r.files[3] as { error: { code: string } }).error.code, "NOT_FOUND");
  });
});

Deno.test("roots: workspace_info lists the roots with their modes", async () => {
  await withTempDir(async (dir) => {
    const { b, ws } = await twoRoots(dir);
    const info = await runOperation({ workspace: ws }, "workspace_info", {});
    assert.equal(info.root, "a");
    assert.equal(info.mode, "read-write");
    assert.deepEqual(info.roots, [
      { name: "a", path: ".", mode: "read-write" },
      { name: "b", path: b, mode: "read-only" },
    ]);
    const one = await Workspace.open({ root: b });
    assert.deepEqual((await runOperation({ workspace: one }, "workspace_info", {})).roots, [
      { name: "b", path: ".", mode: "read-only" },
    ]);
  });
});

Deno.test("roots: a later root swapped for another directory after open is caught", async () => {
  await withTempDir(async (dir) => {
    const { b, ws } = await twoRoots(dir);
    await run(ws, "read_file", { path: `${b}/z.txt` });
    Deno.renameSync(b, `${dir}/b-away`);
    await makeTree(b, { "z.txt": "impostor\n" });
    await runError(ws, "read_file", { path: `${b}/z.txt` }, "CHANGED_DURING_OPERATION");
    await runError(ws, "list_directory", { path: b }, "CHANGED_DURING_OPERATION");
    // A removed root fails the same typed way; the first root is untouched by it.
    Deno.removeSync(b, { recursive: true });
    await runError(ws, "read_file", { path: `${b}/z.txt` }, "CHANGED_DURING_OPERATION");
    assert.equal((await run(ws, "read_file", { path: "x.txt" })).content, "in a\n");
  });
});

Deno.test("roots: allRoots walks every root in order, under the call's caps", async () => {
  await withTempDir(async (dir) => {
    const { b, ws } = await twoRoots(dir);
    await makeTree(`${dir}/a`, { "sub/needle.txt": "needle in a\n" });
    const found = await run(ws, "find_files", { pattern: "**/*.txt", allRoots: true });
    assert.equal(found.path, ".");
    assert.deepEqual(found.matches.map((m) => m.path), [
      "sub/needle.txt",
      "x.txt",
      `${b}/d/y.txt`,
      `${b}/z.txt`,
    ]);
    assert.equal(found.truncated, false);
    const hits = await run(ws, "search_text", { query: "needle", allRoots: true });
    assert.deepEqual(hits.matches.map((m) => m.path), ["sub/needle.txt", `${b}/d/y.txt`]);
    assert.equal(hits.filesMatched, 2);
    assert.equal(hits.filesSearched, 4, "the counters add up across roots");
    // The cap is the call's: two results in all, and the cut says so.
    const capped = await run(ws, "find_files", {
      pattern: "**/*.txt",
      allRoots: true,
      maxResults: 3,
    });
    assert.deepEqual(capped.matches.map((m) => m.path), [
      "sub/needle.txt",
      "x.txt",
      `${b}/d/y.txt`,
    ]);
    assert.equal(capped.truncated, true);
    assert.equal(capped.truncatedReason, "maxResults");
    const two = await run(ws, "find_files", { pattern: "**/*.txt", allRoots: true, maxResults: 2 });
    assert.equal(two.matches.length, 2);
    assert.equal(two.truncated, true);
    await runError(
      ws,
      "find_files",
      { pattern: "*", allRoots: true, path: "sub" },
      "INVALID_ARGUMENT",
      "path",
    );
  });
});

Deno.test("roots: allRoots shares maxVisited across the roots", async () => {
  await withTempDir(async (dir) => {
    const a = `${dir}/a`;
    const b = `${dir}/b`;
    await makeTree(a, { "1.txt": "", "2.txt": "", "3.txt": "" });
    await makeTree(b, { "4.txt": "", "5.txt": "", "6.txt": "" });
    const ws = await Workspace.open({
      roots: [{ path: a }, { path: b }],
      limits: { maxVisited: 4 },
    });
    const r = await run(ws, "find_files", { pattern: "*.txt", allRoots: true });
    assert.ok(r.visited <= 4, `visited ${r.visited} of a budget of 4`);
    assert.equal(r.truncated, true);
    assert.equal(r.truncatedReason, "maxVisited");
    assert.ok(r.matches.length < 6);
  });
});

Deno.test("broadness: the one rule on broad roots, every spelling normalized first", () => {
  const home = "/home/you";
  // [root spellings, home spellings, expected]
  const cases: [(string | undefined)[], (string | undefined)[], string | undefined][] = [
    [["/"], [home], "file-system"],
    [["//"], [home], "file-system"],
    [["/home/you/.."], [home], "contains-home"],
    [["/home/you/"], [home], "home"],
    [["/home/./you"], ["/home/you//"], "home"],
    [["/home"], [home], "contains-home"],
    [["/home/you/project"], [home], undefined],
    [["/home/yours"], [home], undefined],
    // Any spelling counts: the one given, or the one with links resolved (for either side).
    [["/srv/link", "/home/you"], [home], "home"],
    [["/data/you"], ["/home/you", "/data/you/"], "home"],
    // A $HOME that is not absolute, or none, is no spelling of it.
    [["/home/you"], ["home/you", undefined], undefined],
    [[undefined], [home], undefined],
  ];
  for (const [roots, homes, expected] of cases) {
    assert.equal(broadness(roots, homes), expected, JSON.stringify([roots, homes]));
  }
});
