/**
 * Bounds of the write operations and argument hygiene: create_directory deeper than maxDepth is
 * refused before anything is created (it once ran 130 s and left ~2,000 directories), and an
 * argument named `__proto__` is INVALID_ARGUMENT like every other unknown key, through the
 * library and the CLI. (Over MCP the SDK's request parser drops a `__proto__` key before any
 * tool sees it: the call runs as if the key were absent.)
 */
import assert from "node:assert/strict";
import { runCli } from "../_support/cli.ts";
import { runOperation } from "../../mod.ts";
import { expectError, run, snapshot, withEnv, withTimeout } from "./_helpers.ts";

Deno.test("create_directory 3,000 levels deep is INVALID_ARGUMENT naming maxDepth; nothing is created", async () => {
  await withEnv(async (env) => {
    const before = await snapshot(env.base);
    const path = Array.from({ length: 3000 }, () => "d").join("/");
    for (
      const [name, args] of [
        ["create_directory", { path }],
        ["write_file", { path: `${path}/f.txt`, content: "x", createParents: true }],
      ] as const
    ) {
      const err = await expectError(
        withTimeout(runOperation({ workspace: env.ws }, name, args), 5_000, name),
        "INVALID_ARGUMENT",
        "path",
        name,
      );
      assert.equal(err.details?.limit, "maxDepth");
      assert.match(err.message, /maxDepth/);
    }
    assert.deepEqual(await snapshot(env.base), before, "something was created");
  });
});

Deno.test("create_directory: the depth bound is maxDepth from the root, and the limit is configurable", async () => {
  await withEnv(async (env) => {
    // a/b exists: a/b/c/d is 4 deep from the root.
    const ok = await run(env.ws, "create_directory", { path: "a/b/c" });
    assert.deepEqual(ok.createdPaths, ["a/b/c"]);
    const err = await expectError(
      run(env.ws, "create_directory", { path: "a/b/c/d" }),
      "INVALID_ARGUMENT",
      "path",
    );
    assert.equal(err.details?.depth, 4);
    await assert.rejects(Deno.lstat(`${env.W}/a/b/c/d`), Deno.errors.NotFound);
  }, { limits: { maxDepth: 3 } });
});

Deno.test("create_directory at maxDepth creates every level and leaves no temporary directory", async () => {
  await withEnv(async (env) => {
    const path = Array.from({ length: 64 }, (_, i) => `l${i}`).join("/");
    const res = await run(env.ws, "create_directory", { path });
    assert.equal((res.createdPaths as string[]).length, 64);
    assert.ok((await Deno.lstat(`${env.W}/${path}`)).isDirectory);
    for (const name of Object.keys(await snapshot(env.W))) {
      assert.ok(!name.includes(".wmcp-tmp-"), `left behind: ${name}`);
    }
  });
});

Deno.test("__proto__ is INVALID_ARGUMENT naming it, through the library", async (t) => {
  await withEnv(async (env) => {
    const cases: [string, string, unknown][] = [
      [
        "own key (JSON.parse)",
        "__proto__",
        JSON.parse('{"path":"inside.txt","__proto__":{"x":1}}'),
      ],
      [
        "set as the prototype (an object literal)",
        "__proto__",
        { path: "inside.txt", __proto__: { x: 1 } },
      ],
      ["null prototype", "__proto__", Object.assign(Object.create(null), { path: "inside.txt" })],
      [
        "nested",
        "edits[0].__proto__",
        {
          path: "inside.txt",
          edits: [{ oldText: "inside", newText: "x", __proto__: { replaceAll: true } }],
        },
      ],
      ["constructor", "constructor", JSON.parse('{"path":"inside.txt","constructor":{}}')],
      ["prototype", "prototype", JSON.parse('{"path":"inside.txt","prototype":{}}')],
    ];
    for (const [label, argument, args] of cases) {
      await t.step(label, async () => {
        const op = argument.startsWith("edits") ? "edit_file" : "read_file";
        const before = await snapshot(env.W);
        await expectError(
          runOperation({ workspace: env.ws }, op, args),
          "INVALID_ARGUMENT",
          argument,
          label,
        );
        assert.deepEqual(await snapshot(env.W), before);
      });
    }
  });
});

Deno.test("__proto__ is INVALID_ARGUMENT through the CLI", async () => {
  await withEnv(async (env) => {
    const out = await runCli(["-q", "--no-prompt", `--allow-read=${env.W}`], [
      "op",
      "read_file",
      "--root",
      env.W,
      "--arguments",
      '{"path":"inside.txt","__proto__":{"maxBytes":1}}',
    ]);
    // Refused by the input schema before anything runs: exit 2 (usage) since decision 0028.
    assert.equal(out.code, 2);
    const err = JSON.parse(out.stderr).error;
    assert.equal(err.code, "INVALID_ARGUMENT");
    assert.equal(err.argument, "__proto__");
  }, { writable: false });
});

Deno.test("delete_path recursive stops at the time budget and says what it removed", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-del-" }));
  try {
    const { Workspace } = await import("../../mod.ts");
    const FILES = 2000;
    await Deno.mkdir(`${dir}/tree/sub`, { recursive: true });
    for (let i = 0; i < FILES; i++) await Deno.writeTextFile(`${dir}/tree/sub/f${i}.txt`, "x");
    const ws = await Workspace.open({ root: dir, writable: true, limits: { maxOperationMs: 1 } });
    const err = await runOperation({ workspace: ws }, "delete_path", {
      path: "tree",
      recursive: true,
      confirm: true,
    }).then(() => null, (e) => e as { code: string; details?: { removedCount?: number } });
    assert.ok(err, "a 1 ms budget cannot remove 2000 files");
    assert.equal(err.code, "TIME_BUDGET_EXCEEDED");
    const left = [...Deno.readDirSync(`${dir}/tree/sub`)].length;
    assert.ok(left > 0, "it stopped part-way");
    assert.equal(FILES - left, err.details?.removedCount ?? 0, "what it says it removed is gone");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
