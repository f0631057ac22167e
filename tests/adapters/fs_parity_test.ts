/**
 * The two WorkspaceFs implementations agree: on Deno, denoFs (Deno's API) and nodeFs (node:fs,
 * what Node and Bun use) report the same lstat fields, listings and error classes, and a
 * workspace opened on nodeFs refuses the same escapes (traversal, a link leading outside, a
 * hard-linked target) as one on denoFs.
 */
import assert from "node:assert/strict";
import { denoFs } from "../../src/workspace/fs/deno.ts";
import { nodeFs } from "../../src/workspace/fs/node.ts";
import { fsErrorKind, type WorkspaceFs } from "../../src/workspace/fs/types.ts";
import { runOperation, Workspace, WorkspaceError } from "../../mod.ts";

const FIELDS = [
  "isFile",
  "isDirectory",
  "isSymlink",
  "isFifo",
  "isSocket",
  "isCharDevice",
  "isBlockDevice",
  "size",
  "dev",
  "ino",
  "mode",
  "nlink",
] as const;

async function tree(): Promise<{ base: string; root: string }> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-fs-parity-" }));
  const root = `${base}/ws`;
  await Deno.mkdir(`${root}/dir`, { recursive: true });
  await Deno.writeTextFile(`${root}/a.txt`, "alpha\n");
  await Deno.writeTextFile(`${base}/secret.txt`, "secret\n");
  await Deno.symlink("a.txt", `${root}/link`);
  await Deno.symlink(`${base}/secret.txt`, `${root}/out`);
  await Deno.link(`${root}/a.txt`, `${root}/hard.txt`);
  const mk = new Deno.Command("mkfifo", { args: [`${root}/fifo`] }).outputSync();
  assert.equal(mk.code, 0, "mkfifo");
  return { base, root };
}

Deno.test("denoFs and nodeFs report the same lstat fields, listings and error classes", async () => {
  const { base, root } = await tree();
  try {
    for (const name of ["a.txt", "dir", "link", "out", "hard.txt", "fifo"]) {
      const abs = `${root}/${name}`;
      const d = denoFs.lstatSync(abs);
      const n = nodeFs.lstatSync(abs);
      const na = await nodeFs.lstat(abs);
      for (const f of FIELDS) {
        assert.equal(n[f], d[f], `${name}: ${f}`);
        assert.equal(na[f], d[f], `${name}: ${f} (async)`);
      }
      assert.equal(n.mtime?.getTime(), d.mtime?.getTime(), `${name}: mtime`);
    }
    const names = (fs: WorkspaceFs) =>
      [...fs.readDirSync(root)].map((e) => [e.name, e.isFile, e.isDirectory, e.isSymlink]).sort();
    assert.deepEqual(names(nodeFs), names(denoFs));
    const asyncNames: unknown[] = [];
    for await (const e of nodeFs.readDir(root)) {
      asyncNames.push([e.name, e.isFile, e.isDirectory, e.isSymlink]);
    }
    assert.deepEqual(asyncNames.sort(), names(denoFs));
    assert.equal(await nodeFs.realPath(`${root}/link`), await denoFs.realPath(`${root}/link`));
    assert.equal(await nodeFs.readLink(`${root}/out`), await denoFs.readLink(`${root}/out`));
    const kinds = (fs: WorkspaceFs) => {
      const out: (string | null)[] = [];
      for (
        const f of [
          () => fs.lstatSync(`${root}/missing`),
          () => fs.lstatSync(`${root}/a.txt/x`),
          () => fs.mkdirSync(`${root}/dir`),
          () => fs.removeSync(root),
          () => fs.linkSync(`${root}/a.txt`, `${root}/hard.txt`),
        ]
      ) {
        try {
          f();
          out.push("no error");
        } catch (err) {
          out.push(fsErrorKind(err));
        }
      }
      return out;
    };
    assert.deepEqual(kinds(nodeFs), kinds(denoFs));
    assert.deepEqual(kinds(denoFs), [
      "NotFound",
      "NotADirectory",
      "AlreadyExists",
      null, // ENOTEMPTY: not a class of its own; toWorkspaceError maps the code
      "AlreadyExists",
    ]);
    // removeSync removes a file, a link (never its target) and an empty directory alike.
    await Deno.mkdir(`${root}/empty`);
    nodeFs.removeSync(`${root}/empty`);
    nodeFs.removeSync(`${root}/out`);
    assert.equal(await Deno.readTextFile(`${base}/secret.txt`), "secret\n");
    assert.equal(fsErrorKind(new Deno.errors.NotCapable("x")), "NotCapable");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a workspace on nodeFs refuses the same escapes as one on denoFs", async () => {
  const { base, root } = await tree();
  try {
    const outcome = async (fs: WorkspaceFs, op: string, args: Record<string, unknown>) => {
      const ws = await Workspace.open({ root, writable: true, fs, engine: "inline" });
      try {
        return { ok: await runOperation({ workspace: ws }, op, args) };
      } catch (err) {
        assert.ok(err instanceof WorkspaceError, String(err));
        return { code: err.code, argument: err.argument };
      } finally {
        ws.engine.close();
      }
    };
    const calls: [string, Record<string, unknown>][] = [
      ["read_file", { path: "../secret.txt" }],
      ["read_file", { path: "out" }],
      ["read_file", { path: `${base}/secret.txt` }],
      ["read_file", { path: "fifo" }],
      ["read_file", { path: "dir" }],
      ["list_directory", { path: "out" }],
      ["write_file", { path: "out", content: "x", ifExists: "overwrite" }],
      ["write_file", { path: "hard.txt", content: "x", ifExists: "overwrite" }],
      ["search_text", { query: "secret" }],
      ["get_file_info", { path: "out" }],
    ];
    for (const [op, args] of calls) {
      const d = await outcome(denoFs, op, args);
      const n = await outcome(nodeFs, op, args);
      assert.deepEqual(n, d, `${op} ${JSON.stringify(args)}`);
      if (op !== "search_text" && op !== "get_file_info") {
        assert.ok("code" in d, `${op} ${JSON.stringify(args)} was refused`);
      }
    }
    assert.equal(await Deno.readTextFile(`${base}/secret.txt`), "secret\n");
    assert.equal(await Deno.readTextFile(`${root}/a.txt`), "alpha\n");
    // A write and a read-back through nodeFs.
    const ws = await Workspace.open({ root, writable: true, fs: nodeFs, engine: "inline" });
    await runOperation({ workspace: ws }, "write_file", {
      path: "new/b.txt",
      content: "beta\n",
      createParents: true,
    });
    const back = await runOperation({ workspace: ws }, "read_file", { path: "new/b.txt" }) as {
      content: string;
    };
    assert.equal(back.content, "beta\n");
    assert.equal(ws.policy.fs.kind, "node");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
