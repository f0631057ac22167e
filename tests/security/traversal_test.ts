/**
 * Lexical escapes: `..`, absolute paths, home-directory spelling, NUL bytes, percent
 * encoding, and sibling directories whose names share W's prefix. Every attack runs
 * against every path-taking operation.
 */
import assert from "node:assert/strict";
import type { ErrorCode } from "../../mod.ts";
import {
  type Env,
  expectError,
  expectRefused,
  INSIDE,
  PATH_OPS,
  run,
  SECRET,
  snapshot,
  withEnv,
} from "./_helpers.ts";

/** Runs every operation of the table on each path; each must be refused with code. */
async function refuseEverywhere(
  t: Deno.TestContext,
  env: Env,
  paths: readonly string[],
  code: ErrorCode,
  watch: readonly string[] = [],
) {
  for (const op of PATH_OPS) {
    await t.step(op.label, async () => {
      for (const p of paths) await expectRefused(env, op, p, code, watch);
    });
  }
}

Deno.test("1. dot-dot and absolute paths outside W are refused by every operation", async (t) => {
  await withEnv(async (env) => {
    const { W } = env;
    await refuseEverywhere(t, env, [
      "../outside/secret",
      "../outside",
      "..",
      "a/../../outside/secret",
      "a/b/../../../outside/secret",
      "./../outside/secret",
      "a/./../.././outside/secret",
      `${W}/..`,
      `${W}/../outside/secret`,
      `${W}/a/../../outside/secret`,
      `${W}//..//outside/secret`,
      "/etc/passwd",
      "/",
      "/etc",
      "../outside/new-file",
      "../outside/new-dir/new-file",
    ], "OUTSIDE_WORKSPACE");
  });
});

Deno.test("1. names that merely contain dots stay inside W and work", async (t) => {
  await withEnv(async (env) => {
    const { ws, W, base } = env;
    for (
      const name of [
        "..test",
        "te..st",
        "test..",
        "...",
        "it's'",
        "%2e%2e%2f",
        "%2e%2e%2foutside%2fsecret",
        "..%2f..%2foutside",
        "..\\..\\outside\\secret",
        "ws2",
      ]
    ) {
      await t.step(JSON.stringify(name), async () => {
        const outsideBefore = await snapshot(base).then((s) => without(s, "ws"));
        const w = await run(ws, "write_file", { path: name, content: "hello\n" });
        assert.equal(w.path, name);
        assert.equal(w.created, true);
        assert.equal(await Deno.readTextFile(`${W}/${name}`), "hello\n");
        const r = await run(ws, "read_file", { path: name });
        assert.equal(r.content, "hello\n");
        const m = await run(ws, "read_media", { path: name });
        assert.equal(atob(m.data as string), "hello\n");
        const i = await run(ws, "get_file_info", { path: name });
        assert.equal(i.path, name);
        assert.equal(i.type, "file");
        const e = await run(ws, "edit_file", {
          path: name,
          edits: [{ oldText: "hello", newText: "bye" }],
        });
        assert.equal(e.changed, true);
        assert.equal(await Deno.readTextFile(`${W}/${name}`), "bye\n");
        const l = await run(ws, "list_directory", { path: ".", includeHidden: true });
        assert.ok((l.entries as { path: string }[]).some((x) => x.path === name));
        const s = await run(ws, "search_text", { query: "bye", includeHidden: true });
        assert.deepEqual((s.matches as { path: string }[]).map((x) => x.path), [name]);
        const mv = await run(ws, "move_path", { source: name, destination: `${name}.moved` });
        assert.equal(mv.destination, `${name}.moved`);
        await run(ws, "move_path", { source: `${name}.moved`, destination: name });
        const d = await run(ws, "create_directory", { path: `${name}.d/${name}` });
        assert.equal(d.created, true);
        assert.ok((await Deno.lstat(`${W}/${name}.d/${name}`)).isDirectory);
        await run(ws, "delete_path", { path: `${name}.d`, confirm: true, recursive: true });
        await run(ws, "delete_path", { path: name, confirm: true });
        await assert.rejects(Deno.lstat(`${W}/${name}`), Deno.errors.NotFound);
        assert.deepEqual(without(await snapshot(base), "ws"), outsideBefore);
      });
    }
  });
});

/** A snapshot without one top-level entry (and what is below it). */
function without<T>(snap: Record<string, T>, top: string): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [k, v] of Object.entries(snap)) {
    if (k !== top && !k.startsWith(top + "/") && k !== ".") out[k] = v;
  }
  return out;
}

Deno.test("1. ~ is a literal name inside W, never the home directory", async (t) => {
  await withEnv(async (env) => {
    const { ws, W, base } = env;
    const home = `${base}/home`;
    await Deno.mkdir(`${home}/.ssh`, { recursive: true });
    await Deno.writeTextFile(`${home}/.ssh/id_rsa`, SECRET);
    const savedHome = Deno.env.get("HOME");
    Deno.env.set("HOME", home);
    try {
      const homeBefore = await snapshot(home);
      for (const op of PATH_OPS.filter((o) => !o.write)) {
        await t.step(`${op.label} ~/.ssh/id_rsa is NOT_FOUND inside W`, async () => {
          await expectRefused(env, op, "~/.ssh/id_rsa", "NOT_FOUND");
        });
      }
      await t.step("writes land in W/~", async () => {
        await expectRefused(
          env,
          PATH_OPS.find((o) => o.label === "write_file")!,
          "~/.ssh/id_rsa",
          "NOT_FOUND",
        );
        const w = await run(ws, "write_file", {
          path: "~/.ssh/id_rsa",
          content: "mine\n",
          createParents: true,
        });
        assert.equal(w.path, "~/.ssh/id_rsa");
        assert.equal(await Deno.readTextFile(`${W}/~/.ssh/id_rsa`), "mine\n");
      });
      assert.deepEqual(await snapshot(home), homeBefore);
    } finally {
      if (savedHome === undefined) Deno.env.delete("HOME");
      else Deno.env.set("HOME", savedHome);
    }
  });
});

Deno.test("2. non-existent paths containing .. cannot escape", async (t) => {
  await withEnv(async (env) => {
    await refuseEverywhere(t, env, [
      "missing/../../outside/secret",
      "missing/../../outside/new-file",
      "missing/deeper/../../../outside/secret",
      "missing/deeper/../../../outside/new-dir/new-file",
      "a/missing/../../../outside/secret",
      "missing/../missing2/../../outside",
    ], "OUTSIDE_WORKSPACE");
    await t.step("a missing path that comes back inside resolves inside", async () => {
      const r = await run(env.ws, "read_file", { path: "missing/../a/../inside.txt" });
      assert.equal(r.content, INSIDE);
      assert.equal(r.path, "inside.txt");
    });
  });
});

Deno.test("3. relative paths resolve against W, never the process cwd", async () => {
  await withEnv(async (env) => {
    const { ws, W, base } = env;
    const elsewhere = `${base}/elsewhere`;
    await Deno.mkdir(elsewhere);
    await Deno.writeTextFile(`${elsewhere}/a.txt`, "cwd copy\n");
    await Deno.writeTextFile(`${W}/a.txt`, "workspace copy\n");
    const saved = Deno.cwd();
    Deno.chdir(elsewhere);
    try {
      const elsewhereBefore = await snapshot(elsewhere);
      assert.equal((await run(ws, "read_file", { path: "a.txt" })).content, "workspace copy\n");
      assert.equal((await run(ws, "read_file", { path: "./a.txt" })).content, "workspace copy\n");
      await run(ws, "write_file", { path: "b.txt", content: "new\n" });
      await run(ws, "create_directory", { path: "c" });
      await run(ws, "edit_file", {
        path: "a.txt",
        edits: [{ oldText: "workspace", newText: "edited" }],
      });
      await run(ws, "move_path", { source: "b.txt", destination: "c/b.txt" });
      const listed = await run(ws, "list_directory", { path: "." });
      assert.ok((listed.entries as { path: string }[]).some((e) => e.path === "a.txt"));
      assert.equal(await Deno.readTextFile(`${W}/a.txt`), "edited copy\n");
      assert.equal(await Deno.readTextFile(`${W}/c/b.txt`), "new\n");
      assert.deepEqual(await snapshot(elsewhere), elsewhereBefore);
    } finally {
      Deno.chdir(saved);
    }
  });
});

Deno.test("3. every operation resolves a name that exists only in the cwd against W", async (t) => {
  for (const op of PATH_OPS) {
    await t.step(op.label, async () => {
      await withEnv(async (env) => {
        const { ws, W, base } = env;
        const elsewhere = `${base}/elsewhere`;
        await Deno.mkdir(`${elsewhere}/cwd-only`, { recursive: true });
        await Deno.writeTextFile(`${elsewhere}/cwd-only/SECRET.txt`, `${SECRET}\n`);
        await Deno.writeTextFile(`${elsewhere}/cwd-only.txt`, `${SECRET}\n`);
        const saved = Deno.cwd();
        Deno.chdir(elsewhere);
        try {
          const before = await snapshot(elsewhere);
          const dirOp = ["list_directory", "find_files", "search_text"].includes(op.name);
          const p = dirOp ? "cwd-only" : "cwd-only.txt";
          const creates = ["write_file", "create_directory"].includes(op.name) ||
            op.label === "move_path(destination)" || op.label === "copy_path(destination)";
          if (creates) {
            const res = await run(ws, op.name, op.args(p));
            assert.equal(res.path ?? res.destination, p);
            await Deno.lstat(`${W}/${p}`);
          } else {
            await expectRefused(env, op, p, "NOT_FOUND");
          }
          assert.deepEqual(await snapshot(elsewhere), before);
        } finally {
          Deno.chdir(saved);
        }
      });
    });
  }
});

Deno.test("4. a NUL byte anywhere in a path is INVALID_ARGUMENT", async (t) => {
  await withEnv(async (env) => {
    await refuseEverywhere(t, env, [
      "\0",
      "inside.txt\0",
      "\0inside.txt",
      "a/\0/keep.txt",
      "a\0/../../outside/secret",
      "../outside/secret\0",
      `${env.W}/inside.txt\0.png`,
    ], "INVALID_ARGUMENT");
  });
});

Deno.test("4. percent-encoded traversal is literal and never escapes", async (t) => {
  await withEnv(async (env) => {
    const { ws, W } = env;
    const encoded = [
      "%2e%2e%2foutside%2fsecret",
      "%2e%2e/outside/secret",
      "..%2foutside%2fsecret",
      "%2E%2E%2F%2E%2E%2Foutside",
    ];
    for (const op of PATH_OPS.filter((o) => !o.write)) {
      await t.step(`${op.label}: literal names that do not exist are NOT_FOUND`, async () => {
        for (const p of encoded) await expectRefused(env, op, p, "NOT_FOUND");
      });
    }
    await t.step("a file literally named %2e%2e%2f is an ordinary file", async () => {
      await Deno.writeTextFile(`${W}/%2e%2e%2f`, "literal\n");
      assert.equal((await run(ws, "read_file", { path: "%2e%2e%2f" })).content, "literal\n");
      await Deno.mkdir(`${W}/%2e%2e`);
      await Deno.writeTextFile(`${W}/%2e%2e/outside`, "still inside\n");
      const r = await run(ws, "read_file", { path: "%2e%2e/outside" });
      assert.equal(r.content, "still inside\n");
      assert.equal(r.path, "%2e%2e/outside");
    });
  });
});

const SIBLINGS = ["ws2", "ws_backup", "ws-old", "ws.bak", "wsile", "ws (v2)_backup"];
const QUOTED_SIBLINGS = ["ws'", 'ws"', "ws ", "ws\t"];

for (
  const [title, names] of [
    ["5. sibling directories sharing W's name as a prefix", SIBLINGS],
    ["6. sibling directories with quotes and whitespace after W's name", QUOTED_SIBLINGS],
  ] as const
) {
  Deno.test(`${title} are refused (absolute and ../)`, async (t) => {
    await withEnv(async (env) => {
      const { base } = env;
      for (const n of names) {
        await Deno.mkdir(`${base}/${n}`);
        await Deno.writeTextFile(`${base}/${n}/f`, `${SECRET} in ${n}\n`);
      }
      const paths = names.flatMap((n) => [
        `${base}/${n}/f`,
        `${base}/${n}`,
        `${base}/${n}/new-file`,
        `${base}/${n}/new-dir/new-file`,
        `../${n}/f`,
        `../${n}`,
        `./../${n}/new-file`,
      ]);
      await refuseEverywhere(t, env, paths, "OUTSIDE_WORKSPACE");
    });
  });
}

Deno.test("6. a file named it's' inside W is allowed", async () => {
  await withEnv(async (env) => {
    const { ws, W } = env;
    await run(ws, "write_file", { path: "it's'", content: "quote\n" });
    assert.equal((await run(ws, "read_file", { path: "it's'" })).content, "quote\n");
    assert.equal((await run(ws, "read_file", { path: `${W}/it's'` })).content, "quote\n");
    const info = await run(ws, "get_file_info", { path: "it's'" });
    assert.equal(info.path, "it's'");
  });
});

Deno.test("empty paths and non-string paths are INVALID_ARGUMENT", async (t) => {
  await withEnv(async (env) => {
    for (const op of PATH_OPS) {
      await t.step(op.label, async () => {
        await expectRefused(env, op, "", "INVALID_ARGUMENT");
        const args = op.args("x") as Record<string, unknown>;
        args[op.argument] = 42;
        const before = await snapshot(env.base);
        await expectError(run(env.ws, op.name, args), "INVALID_ARGUMENT", op.argument, op.label);
        assert.deepEqual(await snapshot(env.base), before);
      });
    }
  });
});

Deno.test("the workspace root itself cannot be deleted, moved, copied or overwritten", async (t) => {
  await withEnv(async (env) => {
    const { W } = env;
    await Deno.symlink(".", `${W}/rootlink`);
    const spellings = [".", "./", W, `${W}/`, "a/..", "a/b/../..", "rootlink/", `${W}/rootlink/`];
    const byLabel = (label: string) => PATH_OPS.find((o) => o.label === label)!;
    await t.step("delete_path", async () => {
      for (const p of spellings) {
        await expectRefused(env, byLabel("delete_path"), p, "INVALID_ARGUMENT");
      }
    });
    await t.step("move_path(source)", async () => {
      for (const p of spellings) {
        await expectRefused(env, byLabel("move_path(source)"), p, "INVALID_ARGUMENT");
      }
    });
    await t.step("move_path(destination)", async () => {
      for (const p of spellings) {
        await expectRefused(env, byLabel("move_path(destination)"), p, "ALREADY_EXISTS");
      }
    });
    await t.step("copy_path(source)", async () => {
      for (const p of spellings) {
        await expectRefused(env, byLabel("copy_path(source)"), p, "INVALID_ARGUMENT");
      }
    });
    await t.step("copy_path(destination)", async () => {
      for (const p of spellings) {
        await expectRefused(env, byLabel("copy_path(destination)"), p, "ALREADY_EXISTS");
      }
    });
    await t.step("write_file", async () => {
      for (const p of spellings) {
        await expectRefused(env, byLabel("write_file"), p, "IS_A_DIRECTORY");
      }
    });
    await t.step("edit_file", async () => {
      for (const p of spellings) {
        await expectRefused(env, byLabel("edit_file"), p, "IS_A_DIRECTORY");
      }
    });
  });
});
