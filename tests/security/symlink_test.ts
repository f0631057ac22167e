/**
 * Symbolic links: leaf and ancestor links leaving W, dangling links, chains, loops,
 * links that stay inside, a symlinked root, walks that must not descend through links,
 * and moves of links. Every attack runs against every path-taking operation.
 */
import assert from "node:assert/strict";
import type { ErrorCode } from "../../mod.ts";
import { Workspace } from "../../mod.ts";
import {
  assertRevealsNothing,
  type Env,
  expectRefused,
  INSIDE,
  PATH_OPS,
  type PathOp,
  run,
  SECRET,
  SECRET_NAME,
  snapshot,
  withEnv,
} from "./_helpers.ts";

/** What an operation must do when its path names a symlink that leaves W. */
type LeafExpectation =
  | { refused: ErrorCode }
  | { info: "outside" | "loop" }
  | "actsOnLink";

/** Expected behaviour for a path whose last component is a link (not followed by stat/move/delete). */
function leafLinkExpectation(op: PathOp, followedCode: ErrorCode): LeafExpectation {
  if (op.name === "get_file_info") {
    return { info: followedCode === "SYMLINK_LOOP" ? "loop" : "outside" };
  }
  if (["move_path", "copy_path", "delete_path"].includes(op.name)) return "actsOnLink";
  return { refused: followedCode };
}

/**
 * Runs every operation against a leaf link (made by setup in a fresh env), checking the
 * per-operation expectation; O never changes.
 */
async function leafLinkAttack(
  t: Deno.TestContext,
  link: string,
  setup: (env: Env) => Promise<void>,
  followedCode: ErrorCode,
) {
  for (const op of PATH_OPS) {
    await t.step(`${op.label} ${link}`, async () => {
      await withEnv(async (env) => {
        await setup(env);
        const { W, O, base } = env;
        const expectation = leafLinkExpectation(op, followedCode);
        const target = await Deno.readLink(`${W}/${link}`);
        const outsideBefore = await snapshot(O);
        const baseBefore = await topLevel(base);
        if (typeof expectation === "object" && "refused" in expectation) {
          await expectRefused(env, op, link, expectation.refused);
        } else if (typeof expectation === "object" && "info" in expectation) {
          const info = await run(env.ws, op.name, op.args(link));
          assert.equal(info.type, "symlink");
          assert.equal(info.isSymlink, true);
          assert.deepEqual(info.symlink, { status: expectation.info });
          assertRevealsNothing(env, info, op.label);
        } else if (op.label === "move_path(source)") {
          await run(env.ws, op.name, op.args(link));
          await assert.rejects(Deno.lstat(`${W}/${link}`), Deno.errors.NotFound);
          assert.ok((await Deno.lstat(`${W}/moved-here`)).isSymlink);
          assert.equal(await Deno.readLink(`${W}/moved-here`), target);
        } else if (op.label === "move_path(destination)") {
          await run(env.ws, op.name, op.args(link));
          const now = await Deno.lstat(`${W}/${link}`);
          assert.ok(now.isFile, "the link itself was replaced by the moved file");
          assert.equal(await Deno.readTextFile(`${W}/${link}`), INSIDE);
        } else if (op.label === "copy_path(source)") {
          const res = await run(env.ws, op.name, op.args(link));
          assert.equal(res.type, "symlink");
          assertRevealsNothing(env, res, op.label);
          assert.equal(await Deno.readLink(`${W}/${link}`), target, "the source link stays");
          assert.ok((await Deno.lstat(`${W}/copied-here`)).isSymlink);
          assert.equal(await Deno.readLink(`${W}/copied-here`), target);
        } else if (op.label === "copy_path(destination)") {
          await run(env.ws, op.name, op.args(link));
          const now = await Deno.lstat(`${W}/${link}`);
          assert.ok(now.isFile, "the link itself was replaced by the copied file");
          assert.equal(await Deno.readTextFile(`${W}/${link}`), INSIDE);
        } else {
          assert.equal(op.name, "delete_path");
          const res = await run(env.ws, op.name, op.args(link));
          assert.equal(res.type, "symlink");
          await assert.rejects(Deno.lstat(`${W}/${link}`), Deno.errors.NotFound);
        }
        assert.deepEqual(await snapshot(O), outsideBefore, `${op.label} changed O`);
        assert.deepEqual(await topLevel(base), baseBefore, `${op.label} changed base`);
      });
    });
  }
}

/** Names directly in a directory (to see that nothing was created beside W and O). */
async function topLevel(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

Deno.test("8. leaf symlink to an outside file: followed uses refused, link itself handled", async (t) => {
  await leafLinkAttack(
    t,
    "leaf",
    (env) => Deno.symlink(`${env.O}/secret`, `${env.W}/leaf`),
    "OUTSIDE_WORKSPACE",
  );
  await leafLinkAttack(
    t,
    "leafrel",
    (env) => Deno.symlink("../outside/secret", `${env.W}/leafrel`),
    "OUTSIDE_WORKSPACE",
  );
  await leafLinkAttack(
    t,
    "a/b/deep",
    (env) => Deno.symlink("../../../outside/secret", `${env.W}/a/b/deep`),
    "OUTSIDE_WORKSPACE",
  );
  await leafLinkAttack(
    t,
    "leafdir",
    (env) => Deno.symlink(env.O, `${env.W}/leafdir`),
    "OUTSIDE_WORKSPACE",
  );
});

Deno.test("8. a trailing slash follows a leaf link, so even stat/move/delete refuse it", async (t) => {
  await withEnv(async (env) => {
    await Deno.symlink(env.O, `${env.W}/leafdir`);
    await Deno.symlink(`${env.O}/secret`, `${env.W}/leaf`);
    for (const op of PATH_OPS) {
      await t.step(op.label, async () => {
        for (const p of ["leafdir/", "leaf/", "leafdir/secret", "leafdir/./"]) {
          await expectRefused(env, op, p, "OUTSIDE_WORKSPACE");
        }
      });
    }
  });
});

Deno.test("8. recursive delete of a directory holding a link to O removes only the link", async () => {
  await withEnv(async (env) => {
    const { ws, W, O } = env;
    await Deno.mkdir(`${W}/d/e`, { recursive: true });
    await Deno.symlink(O, `${W}/d/e/out`);
    await Deno.symlink(`${O}/secret`, `${W}/d/out-file`);
    const before = await snapshot(O);
    await run(ws, "delete_path", { path: "d", recursive: true, confirm: true });
    await assert.rejects(Deno.lstat(`${W}/d`), Deno.errors.NotFound);
    assert.deepEqual(await snapshot(O), before);
  });
});

Deno.test("9. an ancestor symlink to O is refused for existing and new paths", async (t) => {
  await withEnv(async (env) => {
    const { W, O } = env;
    await Deno.symlink(O, `${W}/link`);
    await Deno.symlink("../outside", `${W}/linkrel`);
    await Deno.symlink("../../outside/secretdir", `${W}/a/up`);
    const paths = [
      "link/secret",
      "link/secretdir",
      "link/secretdir/inner.txt",
      "link/new.txt",
      "link/newdir/new.txt",
      "link/secretdir/new.txt",
      "link/../outside/secret",
      "linkrel/secret",
      "linkrel/new.txt",
      "linkrel/newdir/deeper/new.txt",
      "a/up/inner.txt",
      "a/up/new.txt",
      `${W}/link/secret`,
      `${W}/link/new.txt`,
    ];
    for (const op of PATH_OPS) {
      await t.step(op.label, async () => {
        for (const p of paths) await expectRefused(env, op, p, "OUTSIDE_WORKSPACE");
      });
    }
    assert.equal(await Deno.readTextFile(`${O}/secret`), SECRET + "\n");
  });
});

Deno.test("10. dangling links to outside targets: nothing is ever created there", async (t) => {
  const makeLinks = async (env: Env) => {
    await Deno.symlink(`${env.O}/nonexistent`, `${env.W}/dang`);
  };
  const makeRel = async (env: Env) => {
    await Deno.symlink("../outside/nonexistent", `${env.W}/dangrel`);
  };
  const makeDir = async (env: Env) => {
    await Deno.symlink(`${env.O}/newdir/file`, `${env.W}/dangdir`);
  };
  await leafLinkAttack(t, "dang", makeLinks, "OUTSIDE_WORKSPACE");
  await leafLinkAttack(t, "dangrel", makeRel, "OUTSIDE_WORKSPACE");
  await leafLinkAttack(t, "dangdir", makeDir, "OUTSIDE_WORKSPACE");
  await t.step("write_file through a dangling link never creates the target", async () => {
    await withEnv(async (env) => {
      await makeLinks(env);
      await makeRel(env);
      await makeDir(env);
      for (const path of ["dang", "dangrel", "dangdir", "dang/x", "dangdir/../x"]) {
        for (const ifExists of ["error", "overwrite"]) {
          for (const createParents of [false, true]) {
            await expectRefused(
              env,
              {
                label: `write_file(ifExists: ${ifExists}, createParents: ${createParents})`,
                name: "write_file",
                argument: "path",
                write: true,
                args: (p) => ({ path: p, content: "x", ifExists, createParents, confirm: true }),
              },
              path,
              "OUTSIDE_WORKSPACE",
            );
          }
        }
      }
      await assert.rejects(Deno.lstat(`${env.O}/nonexistent`), Deno.errors.NotFound);
      await assert.rejects(Deno.lstat(`${env.O}/newdir`), Deno.errors.NotFound);
    });
  });
  await t.step("a dangling link that stays inside W may be written through", async () => {
    await withEnv(async (env) => {
      await Deno.symlink("a/created-through-link.txt", `${env.W}/danginside`);
      const w = await run(env.ws, "write_file", { path: "danginside", content: "ok\n" });
      assert.equal(w.path, "a/created-through-link.txt");
      assert.equal(await Deno.readTextFile(`${env.W}/a/created-through-link.txt`), "ok\n");
      assert.ok((await Deno.lstat(`${env.W}/danginside`)).isSymlink);
    });
  });
});

Deno.test("12. symlink chains: leaving is refused, staying inside works, loops are SYMLINK_LOOP", async (t) => {
  await t.step("chain a -> b -> c -> outside", async (t) => {
    await leafLinkAttack(t, "c1", async (env) => {
      await Deno.symlink("c2", `${env.W}/c1`);
      await Deno.symlink("a/c3", `${env.W}/c2`);
      await Deno.symlink(`${env.O}/secret`, `${env.W}/a/c3`);
    }, "OUTSIDE_WORKSPACE");
  });
  await t.step("chain leaving and re-entering W is refused", async (t) => {
    await leafLinkAttack(t, "re", async (env) => {
      await Deno.symlink(`${env.W}/inside.txt`, `${env.O}/hop`);
      await Deno.symlink(`${env.O}/hop`, `${env.W}/re`);
    }, "OUTSIDE_WORKSPACE");
    await leafLinkAttack(t, "rerel", async (env) => {
      await Deno.symlink("../ws/inside.txt", `${env.O}/hop`);
      await Deno.symlink("../outside/hop", `${env.W}/rerel`);
    }, "OUTSIDE_WORKSPACE");
  });
  await t.step("loop a -> b -> a", async (t) => {
    await leafLinkAttack(t, "l1", async (env) => {
      await Deno.symlink("l2", `${env.W}/l1`);
      await Deno.symlink("l1", `${env.W}/l2`);
    }, "SYMLINK_LOOP");
    await leafLinkAttack(t, "self", async (env) => {
      await Deno.symlink("self", `${env.W}/self`);
    }, "SYMLINK_LOOP");
  });
  await t.step("a loop as an ancestor is SYMLINK_LOOP for every operation", async () => {
    await withEnv(async (env) => {
      await Deno.symlink("l2", `${env.W}/l1`);
      await Deno.symlink("l1", `${env.W}/l2`);
      for (const op of PATH_OPS) {
        for (const p of ["l1/x", "l1/x/y"]) await expectRefused(env, op, p, "SYMLINK_LOOP");
      }
    });
  });
  await t.step("too many hops through a link to W is SYMLINK_LOOP; a few are fine", async () => {
    await withEnv(async (env) => {
      await Deno.symlink(".", `${env.W}/here`);
      const few = await run(env.ws, "read_file", { path: "here/here/here/inside.txt" });
      assert.equal(few.content, INSIDE);
      assert.equal(few.path, "inside.txt");
      const many = Array(50).fill("here").join("/") + "/inside.txt";
      for (const op of PATH_OPS) await expectRefused(env, op, many, "SYMLINK_LOOP");
    });
  });
  await t.step("chain that stays inside works", async () => {
    await withEnv(async (env) => {
      const { ws, W } = env;
      await Deno.symlink("i2", `${W}/i1`);
      await Deno.symlink("a/b/i3", `${W}/i2`);
      await Deno.symlink("../../inside.txt", `${W}/a/b/i3`);
      const r = await run(ws, "read_file", { path: "i1" });
      assert.equal(r.content, INSIDE);
      assert.equal(r.path, "inside.txt");
      const info = await run(ws, "get_file_info", { path: "i1" });
      assert.deepEqual(info.symlink, {
        status: "inside",
        target: "inside.txt",
        targetType: "file",
      });
      const m = await run(ws, "read_media", { path: "i1" });
      assert.equal(atob(m.data as string), INSIDE);
    });
  });
});

Deno.test("13. links inside W to inside W work for reads", async () => {
  await withEnv(async (env) => {
    const { ws, W } = env;
    await Deno.symlink("inside.txt", `${W}/rel-link`);
    await Deno.symlink(`${W}/inside.txt`, `${W}/abs-link`);
    await Deno.symlink("a", `${W}/dir-link`);
    for (const p of ["rel-link", "abs-link", `${W}/rel-link`]) {
      const r = await run(ws, "read_file", { path: p });
      assert.equal(r.content, INSIDE);
      assert.equal(r.path, "inside.txt");
    }
    const listed = await run(ws, "list_directory", { path: "dir-link" });
    assert.deepEqual(
      (listed.entries as { path: string }[]).map((e) => e.path),
      ["a/b", "a/keep.txt"],
    );
    const found = await run(ws, "find_files", { path: "dir-link", pattern: "*.txt" });
    assert.deepEqual((found.matches as { path: string }[]).map((e) => e.path), ["a/keep.txt"]);
    const searched = await run(ws, "search_text", { path: "dir-link", query: "keep" });
    assert.deepEqual((searched.matches as { path: string }[]).map((e) => e.path), ["a/keep.txt"]);
    assert.equal((await run(ws, "read_file", { path: "dir-link/keep.txt" })).content, "keep\n");
  });
});

Deno.test("13. a workspace opened through a symlinked path accepts both spellings", async () => {
  await withEnv(async (env) => {
    const { base, W, O } = env;
    const L = `${base}/ws-link`;
    await Deno.symlink(W, L);
    const ws = await Workspace.open({ root: L, writable: true });
    assert.equal(ws.policy.rootReal, W);
    for (const p of ["inside.txt", `${L}/inside.txt`, `${W}/inside.txt`, `${L}/a/../inside.txt`]) {
      const r = await run(ws, "read_file", { path: p });
      assert.equal(r.content, INSIDE);
      assert.equal(r.path, "inside.txt");
    }
    // A link inside W spelled through the configured root stays inside.
    await Deno.symlink(`${L}/a/keep.txt`, `${W}/via-given-root`);
    assert.equal((await run(ws, "read_file", { path: "via-given-root" })).content, "keep\n");
    const w = await run(ws, "write_file", { path: `${L}/new.txt`, content: "n\n" });
    assert.equal(w.path, "new.txt");
    assert.equal(await Deno.readTextFile(`${W}/new.txt`), "n\n");
    const before = await snapshot(O);
    for (const op of PATH_OPS) {
      for (const p of [`${L}/../outside/secret`, `${L}/..`, `${base}/outside/secret`]) {
        const envL = { ...env, ws };
        await expectRefused(envL, op, p, "OUTSIDE_WORKSPACE");
      }
    }
    assert.deepEqual(await snapshot(O), before);
  });
});

Deno.test("14. list, find and search never descend into links to O nor reveal outside names, sizes, mtimes", async (t) => {
  await withEnv(async (env) => {
    const { ws, W, O } = env;
    // Distinctive size and mtime of the outside entries.
    await Deno.writeTextFile(`${O}/${SECRET_NAME}`, SECRET + "x".repeat(7777 - SECRET.length));
    const oddTime = new Date("2001-02-03T04:05:06.789Z");
    for (const p of [`${O}/${SECRET_NAME}`, `${O}/secret`, `${O}/secretdir/inner.txt`]) {
      await Deno.utime(p, oddTime, oddTime);
    }
    await Deno.symlink(O, `${W}/outdir`);
    await Deno.symlink("../../outside/secretdir", `${W}/a/outdir2`);
    await Deno.symlink(`${O}/${SECRET_NAME}`, `${W}/outfile`);
    await Deno.symlink("../outside", `${W}/.hidden-out`);
    const check = (label: string, value: unknown) => {
      assertRevealsNothing(env, value, label);
      const json = JSON.stringify(value);
      assert.ok(!json.includes("7777"), `${label} reveals the outside size`);
      assert.ok(!json.includes("2001-02-03"), `${label} reveals the outside mtime`);
    };
    await t.step("list_directory depth 10", async () => {
      for (const includeHidden of [false, true]) {
        const l = await run(ws, "list_directory", { path: ".", depth: 10, includeHidden });
        check("list_directory", l);
        const links = (l.entries as { path: string; type: string }[])
          .filter((e) => e.type === "symlink").map((e) => e.path);
        const want = ["a/outdir2", "outdir", "outfile"];
        if (includeHidden) want.unshift(".hidden-out");
        assert.deepEqual(links.sort(), want.sort());
        assert.ok(
          !(l.entries as { path: string }[]).some((e) =>
            e.path.startsWith("outdir/") || e.path.startsWith("a/outdir2/")
          ),
        );
      }
    });
    await t.step("find_files **", async () => {
      for (const includeHidden of [false, true]) {
        for (
          const pattern of [
            "**",
            "**/*",
            "*",
            "**/*.txt",
            `**/${SECRET_NAME}`,
            "**/inner.txt",
            "../outside/*",
            "../**",
            `${O}/*`,
            "/**",
            "outdir/**",
          ]
        ) {
          const f = await run(ws, "find_files", {
            pattern,
            includeHidden,
            respectGitignore: false,
          });
          check(`find_files ${pattern}`, f);
        }
      }
    });
    await t.step("search_text", async () => {
      for (const query of [SECRET, "x", "inner", "."]) {
        const s = await run(ws, "search_text", {
          query,
          includeHidden: true,
          respectGitignore: false,
        });
        check(`search_text ${query}`, s);
        for (const m of s.matches as { path: string }[]) {
          assert.ok(["inside.txt", "a/keep.txt"].includes(m.path), m.path);
        }
      }
      const regex = await run(ws, "search_text", { query: ".*", regex: true, includeHidden: true });
      check("search_text regex", regex);
      for (const include of [["../outside/*"], ["../**"], [`${O}/**`], ["outdir/**"], ["**"]]) {
        const s = await run(ws, "search_text", {
          query: SECRET,
          include,
          includeHidden: true,
          respectGitignore: false,
        });
        check(`search_text include ${include}`, s);
        assert.equal((s.matches as unknown[]).length, 0);
      }
    });
    await t.step("starting a walk at the link is refused", async () => {
      for (const name of ["list_directory", "find_files", "search_text"]) {
        for (const p of ["outdir", "a/outdir2", "outdir/secretdir", ".hidden-out"]) {
          await expectRefused(
            env,
            PATH_OPS.find((o) => o.name === name)!,
            p,
            "OUTSIDE_WORKSPACE",
          );
        }
      }
    });
    await t.step("a .gitignore that is a link to O is not read", async () => {
      await Deno.writeTextFile(`${O}/gitignore`, "inside.txt\n");
      await Deno.symlink(`${O}/gitignore`, `${W}/.gitignore`);
      const f = await run(ws, "find_files", { pattern: "*.txt" });
      assert.ok((f.matches as { path: string }[]).some((m) => m.path === "inside.txt"));
    });
  });
});

Deno.test("17. copy_path copies links as links, never their targets, in a tree too", async () => {
  await withEnv(async (env) => {
    const { ws, W, O } = env;
    await Deno.mkdir(`${W}/t/d`, { recursive: true });
    await Deno.writeTextFile(`${W}/t/own.txt`, "own\n");
    await Deno.symlink(O, `${W}/t/out`);
    await Deno.symlink("../../outside/secret", `${W}/t/d/rel-secret`);
    await Deno.symlink(`${O}/secretdir/inner.txt`, `${W}/t/d/abs-inner`);
    await Deno.symlink(`${O}/nonexistent`, `${W}/t/dangling`);
    const before = await snapshot(O);
    const res = await run(ws, "copy_path", { source: "t", destination: "a/t2", recursive: true });
    assertRevealsNothing(env, res, "copy_path");
    assert.equal(res.symlinks, 4);
    assert.equal(res.files, 1);
    for (const p of ["out", "d/rel-secret", "d/abs-inner", "dangling"]) {
      assert.ok((await Deno.lstat(`${W}/a/t2/${p}`)).isSymlink, p);
      assert.equal(await Deno.readLink(`${W}/a/t2/${p}`), await Deno.readLink(`${W}/t/${p}`), p);
    }
    assert.deepEqual(await snapshot(O), before);
    await assert.rejects(Deno.lstat(`${O}/nonexistent`), Deno.errors.NotFound);
  });
});

Deno.test("17. move_path moves links, never their targets", async (t) => {
  await t.step("moving a link to O moves the link", async () => {
    await withEnv(async (env) => {
      const { ws, W, O } = env;
      await Deno.symlink(`${O}/secret`, `${W}/ln`);
      const before = await snapshot(O);
      const res = await run(ws, "move_path", { source: "ln", destination: "a/ln2" });
      assert.equal(res.type, "symlink");
      assert.equal(await Deno.readLink(`${W}/a/ln2`), `${O}/secret`);
      await assert.rejects(Deno.lstat(`${W}/ln`), Deno.errors.NotFound);
      assert.deepEqual(await snapshot(O), before);
    });
  });
  await t.step("moving onto an existing link with overwrite replaces the link", async () => {
    await withEnv(async (env) => {
      const { ws, W, O } = env;
      await Deno.symlink(`${O}/secret`, `${W}/dstlink`);
      await Deno.symlink("../outside/secret", `${W}/dstlinkrel`);
      await Deno.writeTextFile(`${W}/src.txt`, "mine\n");
      await Deno.writeTextFile(`${W}/src2.txt`, "mine2\n");
      const before = await snapshot(O);
      await expectRefused(
        env,
        {
          label: "move_path(no overwrite)",
          name: "move_path",
          argument: "destination",
          write: true,
          args: (p) => ({ source: "src.txt", destination: p }),
        },
        "dstlink",
        "ALREADY_EXISTS",
      );
      const res = await run(ws, "move_path", {
        source: "src.txt",
        destination: "dstlink",
        overwrite: true,
        confirm: true,
      });
      assert.equal(res.overwritten, true);
      assert.ok((await Deno.lstat(`${W}/dstlink`)).isFile);
      assert.equal(await Deno.readTextFile(`${W}/dstlink`), "mine\n");
      await run(ws, "move_path", {
        source: "src2.txt",
        destination: "dstlinkrel",
        overwrite: true,
        confirm: true,
      });
      assert.equal(await Deno.readTextFile(`${W}/dstlinkrel`), "mine2\n");
      assert.deepEqual(await snapshot(O), before);
    });
  });
  await t.step("moving a link onto a link replaces the destination link only", async () => {
    await withEnv(async (env) => {
      const { ws, W, O } = env;
      await Deno.symlink(`${O}/secret`, `${W}/l-src`);
      await Deno.symlink(`${O}/secretdir`, `${W}/l-dst`);
      const before = await snapshot(O);
      await run(ws, "move_path", {
        source: "l-src",
        destination: "l-dst",
        overwrite: true,
        confirm: true,
      });
      assert.equal(await Deno.readLink(`${W}/l-dst`), `${O}/secret`);
      assert.deepEqual(await snapshot(O), before);
    });
  });
  await t.step("a directory holding links moves with its links intact", async () => {
    await withEnv(async (env) => {
      const { ws, W, O } = env;
      await Deno.mkdir(`${W}/dir`);
      await Deno.symlink(O, `${W}/dir/out`);
      const before = await snapshot(O);
      await run(ws, "move_path", { source: "dir", destination: "a/dir" });
      assert.equal(await Deno.readLink(`${W}/a/dir/out`), O);
      assert.deepEqual(await snapshot(O), before);
    });
  });
});
