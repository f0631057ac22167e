/**
 * Check-then-use races (15/16), made deterministic: a path is resolved, then the file
 * or one of its directories is swapped for a symlink to O before the open or the atomic
 * replace runs with the stale resolution. The operation must refuse and O must not change.
 */
import assert from "node:assert/strict";
import { PathPolicy, type Resolved } from "../../src/workspace/path_policy.ts";
import { openCheckedFile, openCheckedFileSync } from "../../src/workspace/containment.ts";
import { assertParentUnmoved, atomicReplace } from "../../src/workspace/atomic.ts";
import { type Env, expectError, SECRET, snapshot, withEnv } from "./_helpers.ts";

const enc = new TextEncoder();

/** Resolves rel in W with a fresh policy (what an operation does first). */
async function resolveIn(env: Env, rel: string, followLeaf = true): Promise<Resolved> {
  const policy = await PathPolicy.open(env.W);
  return await policy.resolve(rel, { argument: "path", followLeaf });
}

/** Moves W/rel aside and puts a symlink to target in its place. */
async function swapForLink(env: Env, rel: string, target: string): Promise<void> {
  await Deno.rename(`${env.W}/${rel}`, `${env.W}/${rel}.orig-${crypto.randomUUID()}`);
  await Deno.symlink(target, `${env.W}/${rel}`);
}

/** Prepares W/d/secret, W/g/secretdir/inner.txt: the same names as in O. */
async function mirror(env: Env): Promise<void> {
  await Deno.mkdir(`${env.W}/d`);
  await Deno.writeTextFile(`${env.W}/d/secret`, "inside twin\n");
  await Deno.mkdir(`${env.W}/g/secretdir`, { recursive: true });
  await Deno.writeTextFile(`${env.W}/g/secretdir/inner.txt`, "inside twin\n");
}

/** Runs a racing step and checks that nothing in O changed (names, contents, mtimes). */
async function outsideUnchanged(env: Env, fn: () => Promise<void>): Promise<void> {
  const before = await snapshot(env.O);
  await fn();
  assert.deepEqual(await snapshot(env.O), before, "O changed");
}

/** Both opens of a checked file: the one writes use and the synchronous one of reads (0038). */
const OPENS: [string, (r: Resolved, argument: string) => Promise<unknown>][] = [
  ["openCheckedFile", openCheckedFile],
  ["openCheckedFileSync", (r, argument) => {
    try {
      const file = openCheckedFileSync(r, argument);
      file.close();
      return Promise.resolve(file);
    } catch (err) {
      return Promise.reject(err);
    }
  }],
];

for (const [name, open] of OPENS) {
  Deno.test(`15. ${name} refuses a file swapped after it was checked`, async (t) => {
    await t.step("file replaced by a symlink to an outside file", async () => {
      await withEnv(async (env) => {
        await mirror(env);
        const r = await resolveIn(env, "d/secret");
        await swapForLink(env, "d/secret", `${env.O}/secret`);
        await outsideUnchanged(env, async () => {
          await expectError(open(r, "path"), "CHANGED_DURING_OPERATION", "path");
        });
      });
    });
    await t.step("file replaced by another regular file", async () => {
      await withEnv(async (env) => {
        const r = await resolveIn(env, "inside.txt");
        await Deno.rename(`${env.W}/inside.txt`, `${env.W}/old.txt`);
        await Deno.writeTextFile(`${env.W}/inside.txt`, "impostor\n");
        await expectError(open(r, "path"), "CHANGED_DURING_OPERATION", "path");
      });
    });
    await t.step("file replaced by a hard link to an outside file", async () => {
      await withEnv(async (env) => {
        const r = await resolveIn(env, "inside.txt");
        await Deno.remove(`${env.W}/inside.txt`);
        await Deno.link(`${env.O}/secret`, `${env.W}/inside.txt`);
        await expectError(open(r, "path"), "CHANGED_DURING_OPERATION", "path");
      });
    });
    await t.step("parent directory replaced by a symlink to O", async () => {
      await withEnv(async (env) => {
        await mirror(env);
        const r = await resolveIn(env, "d/secret");
        await swapForLink(env, "d", env.O);
        await outsideUnchanged(env, async () => {
          await expectError(open(r, "path"), "CHANGED_DURING_OPERATION", "path");
        });
      });
    });
    await t.step("grandparent directory replaced by a symlink to O", async () => {
      await withEnv(async (env) => {
        await mirror(env);
        const r = await resolveIn(env, "g/secretdir/inner.txt");
        await swapForLink(env, "g", env.O);
        await outsideUnchanged(env, async () => {
          await expectError(open(r, "path"), "CHANGED_DURING_OPERATION", "path");
        });
      });
    });
    await t.step("file replaced by a FIFO does not block", async () => {
      await withEnv(async (env) => {
        const r = await resolveIn(env, "inside.txt");
        await Deno.remove(`${env.W}/inside.txt`);
        const mk = await new Deno.Command("mkfifo", { args: [`${env.W}/inside.txt`] }).output();
        assert.ok(mk.success, "mkfifo failed");
        await expectError(
          open(r, "path"),
          ["CHANGED_DURING_OPERATION", "SPECIAL_FILE"],
          "path",
        );
      });
    });
  });
}

Deno.test("16. atomicReplace refuses when the target or its directories were swapped", async (t) => {
  const content = enc.encode("pwned\n");
  await t.step("existing file replaced by a symlink to an outside file", async () => {
    await withEnv(async (env) => {
      await mirror(env);
      const r = await resolveIn(env, "d/secret");
      await swapForLink(env, "d/secret", `${env.O}/secret`);
      await outsideUnchanged(env, async () => {
        await expectError(
          atomicReplace(r, content, { existing: r.info, argument: "path" }),
          "CHANGED_DURING_OPERATION",
          "path",
        );
      });
      assert.equal(await Deno.readTextFile(`${env.O}/secret`), SECRET + "\n");
      assert.ok((await Deno.lstat(`${env.W}/d/secret`)).isSymlink, "the link was replaced");
    });
  });
  await t.step("existing file's parent replaced by a symlink to O", async () => {
    await withEnv(async (env) => {
      await mirror(env);
      const r = await resolveIn(env, "d/secret");
      await swapForLink(env, "d", env.O);
      await outsideUnchanged(env, async () => {
        await expectError(
          atomicReplace(r, content, { existing: r.info, argument: "path" }),
          "CHANGED_DURING_OPERATION",
          "path",
        );
      });
    });
  });
  await t.step("existing file's grandparent replaced by a symlink to O", async () => {
    await withEnv(async (env) => {
      await mirror(env);
      const r = await resolveIn(env, "g/secretdir/inner.txt");
      await swapForLink(env, "g", env.O);
      await outsideUnchanged(env, async () => {
        await expectError(
          atomicReplace(r, content, { existing: r.info, argument: "path" }),
          "CHANGED_DURING_OPERATION",
          "path",
        );
      });
    });
  });
  await t.step("new file's parent replaced by a symlink to O", async () => {
    await withEnv(async (env) => {
      await mirror(env);
      const r = await resolveIn(env, "d/new.txt");
      assert.equal(r.info, null);
      await swapForLink(env, "d", env.O);
      await outsideUnchanged(env, async () => {
        await expectError(
          atomicReplace(r, content, { existing: null, argument: "path" }),
          "CHANGED_DURING_OPERATION",
          "path",
        );
      });
      await assert.rejects(Deno.lstat(`${env.O}/new.txt`), Deno.errors.NotFound);
    });
  });
  await t.step("new file's grandparent replaced by a symlink to O", async () => {
    await withEnv(async (env) => {
      await mirror(env);
      const r = await resolveIn(env, "g/secretdir/new.txt");
      assert.equal(r.info, null);
      await swapForLink(env, "g", env.O);
      await outsideUnchanged(env, async () => {
        await expectError(
          atomicReplace(r, content, { existing: null, argument: "path" }),
          "CHANGED_DURING_OPERATION",
          "path",
        );
      });
      await assert.rejects(Deno.lstat(`${env.O}/secretdir/new.txt`), Deno.errors.NotFound);
    });
  });
  await t.step("new file's grandparent replaced by a relative symlink to O", async () => {
    await withEnv(async (env) => {
      await mirror(env);
      const r = await resolveIn(env, "g/secretdir/new.txt");
      await swapForLink(env, "g", "../outside");
      await outsideUnchanged(env, async () => {
        await expectError(
          atomicReplace(r, content, { existing: null, argument: "path" }),
          "CHANGED_DURING_OPERATION",
          "path",
        );
      });
    });
  });
  await t.step("new name became a dangling symlink to O", async () => {
    await withEnv(async (env) => {
      const r = await resolveIn(env, "new.txt");
      await Deno.symlink(`${env.O}/created-by-attack`, `${env.W}/new.txt`);
      await outsideUnchanged(env, async () => {
        await expectError(
          atomicReplace(r, content, { existing: null, argument: "path" }),
          ["ALREADY_EXISTS", "CHANGED_DURING_OPERATION"],
          "path",
        );
      });
      await assert.rejects(Deno.lstat(`${env.O}/created-by-attack`), Deno.errors.NotFound);
    });
  });
  await t.step("new name became a symlink to an existing outside file", async () => {
    await withEnv(async (env) => {
      const r = await resolveIn(env, "new.txt");
      await Deno.symlink(`${env.O}/secret`, `${env.W}/new.txt`);
      await outsideUnchanged(env, async () => {
        await expectError(
          atomicReplace(r, content, { existing: null, argument: "path" }),
          ["ALREADY_EXISTS", "CHANGED_DURING_OPERATION"],
          "path",
        );
      });
    });
  });
  await t.step("no stray temporary files are left in W after a refusal", async () => {
    await withEnv(async (env) => {
      await mirror(env);
      const r = await resolveIn(env, "d/secret");
      await swapForLink(env, "d/secret", `${env.O}/secret`);
      await assert.rejects(atomicReplace(r, content, { existing: r.info, argument: "path" }));
      for (const name of Object.keys(await snapshot(env.W))) {
        assert.ok(!name.includes(".wmcp-tmp-"), `left behind: ${name}`);
      }
    });
  });
});

Deno.test("16. move_path's parent check catches a destination ancestor swapped for a link", async () => {
  await withEnv(async (env) => {
    await mirror(env);
    const dst = await resolveIn(env, "g/secretdir/moved.txt", false);
    const src = await resolveIn(env, "inside.txt", false);
    await assertParentUnmoved(dst, "destination");
    await assertParentUnmoved(src, "source");
    await swapForLink(env, "g", env.O);
    await outsideUnchanged(env, async () => {
      await expectError(
        assertParentUnmoved(dst, "destination"),
        "CHANGED_DURING_OPERATION",
        "destination",
      );
    });
  });
});
