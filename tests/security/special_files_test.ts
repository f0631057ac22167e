/**
 * Hard links to outside files (18) and special files (19): FIFOs, Unix sockets, character
 * devices and links to /dev/zero are refused by every operation that would open them, and
 * nothing blocks (a hang fails the test through a timeout instead of stalling CI).
 */
import assert from "node:assert/strict";
import type { ErrorCode } from "../../mod.ts";
import {
  type Env,
  expectRefused,
  INSIDE,
  makeEnv,
  PATH_OPS,
  type PathOp,
  run,
  SECRET,
  snapshot,
  withEnv,
  withTimeout,
} from "./_helpers.ts";
import fs from "node:fs";

Deno.test("18. a hard link to an outside file is never written through", async (t) => {
  const setup = async (env: Env) => {
    await Deno.link(`${env.O}/secret`, `${env.W}/hl`);
  };
  const byLabel = (label: string) => PATH_OPS.find((o) => o.label === label)!;
  await t.step("write_file overwrite refuses with HARD_LINKED", async () => {
    await withEnv(async (env) => {
      await setup(env);
      await expectRefused(env, byLabel("write_file"), "hl", "HARD_LINKED");
      await expectRefused(env, byLabel("write_file(createParents)"), "hl", "HARD_LINKED");
      await expectRefused(
        env,
        {
          label: "write_file(ifExists: error)",
          name: "write_file",
          argument: "path",
          write: true,
          args: (path) => ({ path, content: "x" }),
        },
        "hl",
        ["HARD_LINKED", "ALREADY_EXISTS"],
      );
      assert.equal(await Deno.readTextFile(`${env.O}/secret`), SECRET + "\n");
    });
  });
  await t.step("edit_file refuses with HARD_LINKED", async () => {
    await withEnv(async (env) => {
      await setup(env);
      await expectRefused(env, byLabel("edit_file"), "hl", "HARD_LINKED");
      assert.equal(await Deno.readTextFile(`${env.O}/secret`), SECRET + "\n");
    });
  });
  await t.step("copy_path never copies it, nor replaces it", async () => {
    await withEnv(async (env) => {
      const { ws, W, O } = env;
      await setup(env);
      await expectRefused(env, byLabel("copy_path(source)"), "hl", "HARD_LINKED");
      await expectRefused(env, byLabel("copy_path(destination)"), "hl", "HARD_LINKED");
      // In a copied directory it is skipped and listed, never opened.
      await Deno.link(`${O}/secretdir/inner.txt`, `${W}/a/hl3`);
      const before = await snapshot(O);
      const res = await run(ws, "copy_path", { source: "a", destination: "a2", recursive: true });
      assert.deepEqual(res.skipped, [{ path: "a/hl3", reason: "hard-linked" }]);
      await assert.rejects(Deno.lstat(`${W}/a2/hl3`), Deno.errors.NotFound);
      assert.equal(await Deno.readTextFile(`${W}/a2/keep.txt`), "keep\n");
      assert.deepEqual(await snapshot(O), before);
    });
  });
  await t.step("the other link of the pair (outside name first) is refused too", async () => {
    await withEnv(async (env) => {
      await Deno.writeTextFile(`${env.W}/orig`, "SECRET shared\n");
      await Deno.link(`${env.W}/orig`, `${env.O}/twin`);
      await expectRefused(env, byLabel("write_file"), "orig", "HARD_LINKED");
      await expectRefused(env, byLabel("edit_file"), "orig", "HARD_LINKED");
      assert.equal(await Deno.readTextFile(`${env.O}/twin`), "SECRET shared\n");
    });
  });
  await t.step("move onto, move away and delete act on the name in W only", async () => {
    await withEnv(async (env) => {
      const { ws, W, O } = env;
      await setup(env);
      await Deno.link(`${O}/secretdir/inner.txt`, `${W}/hl2`);
      const before = await snapshot(O);
      await run(ws, "move_path", { source: "hl", destination: "a/hl-moved" });
      await run(ws, "move_path", {
        source: "inside.txt",
        destination: "a/hl-moved",
        overwrite: true,
        confirm: true,
      });
      assert.equal(await Deno.readTextFile(`${W}/a/hl-moved`), INSIDE);
      await run(ws, "delete_path", { path: "hl2", confirm: true });
      const after = await snapshot(O);
      // Unlinking names in W changes only the link count (not part of the snapshot) of O's files.
      assert.deepEqual(after, before);
      assert.equal(await Deno.readTextFile(`${O}/secret`), SECRET + "\n");
    });
  });
});

/** One special file and how it is made. */
interface Special {
  name: string;
  /** Creates it in W; returns a cleanup, or null when it cannot be made here (skip). */
  make(env: Env): Promise<(() => void) | null>;
  /** Code of the operations that would open or replace it. */
  openCode: ErrorCode;
  /** What get_file_info must say. */
  info: { type: string; symlink?: Record<string, string> };
}

async function sh(cmd: string, ...args: string[]): Promise<boolean> {
  try {
    const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "null" }).output();
    return out.success;
  } catch {
    return false;
  }
}

const SPECIALS: Special[] = [
  {
    name: "fifo",
    make: async (env) => (await sh("mkfifo", `${env.W}/fifo`)) ? () => {} : null,
    openCode: "SPECIAL_FILE",
    info: { type: "other" },
  },
  {
    name: "sock",
    // Made by a child process: listening on a Unix socket here would need --allow-net.
    make: async (env) => {
      const path = `${env.W}/sock`;
      const code = `Deno.listen({ transport: "unix", path: ${
        JSON.stringify(path)
      } }); Deno.exit(0);`;
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["eval", "--no-config", code],
        cwd: env.base,
        stdout: "null",
        stderr: "null",
      }).output();
      return out.success ? () => {} : null;
    },
    openCode: "SPECIAL_FILE",
    info: { type: "other" },
  },
  {
    name: "zero-link",
    make: async (env) => {
      await Deno.symlink("/dev/zero", `${env.W}/zero-link`);
      return () => {};
    },
    openCode: "OUTSIDE_WORKSPACE",
    info: { type: "symlink", symlink: { status: "outside" } },
  },
  {
    name: "fifo-link",
    make: async (env) => {
      if (!(await sh("mkfifo", `${env.W}/a/fifo`))) return null;
      await Deno.symlink("a/fifo", `${env.W}/fifo-link`);
      return () => {};
    },
    openCode: "SPECIAL_FILE",
    info: { type: "symlink", symlink: { status: "inside", target: "a/fifo", targetType: "other" } },
  },
  {
    // A character device made in place (needs root; skipped when mknod fails).
    name: "zero-dev",
    make: async (env) => (await sh("mknod", `${env.W}/zero-dev`, "c", "1", "5")) ? () => {} : null,
    openCode: "SPECIAL_FILE",
    info: { type: "other" },
  },
];

/**
 * Opens every FIFO in W for writing without blocking (O_NONBLOCK), releasing a reader stuck in
 * open(). A blocking open would itself wait for a reader: after a failure with none, the test
 * process hung on it (seen under load).
 */
function unblockFifos(W: string): Promise<void> {
  for (const p of [`${W}/fifo`, `${W}/a/fifo`]) {
    try {
      fs.closeSync(fs.openSync(p, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    } catch {
      // Not there, or nobody is blocked on it (ENXIO: no reader).
    }
  }
  return Promise.resolve();
}

/** What an operation must do with the special file (beyond never blocking). */
function expectation(
  op: PathOp,
  s: Special,
): ErrorCode | "info" | "moved" | "copied" | "replaced" | "deleted" {
  switch (op.label) {
    case "read_file":
    case "read_media":
    case "edit_file":
    case "write_file":
    case "write_file(createParents)":
      return s.openCode;
    case "get_file_info":
      return "info";
    case "list_directory":
    case "find_files":
    case "search_text":
      return s.openCode === "OUTSIDE_WORKSPACE" ? s.openCode : "NOT_A_DIRECTORY";
    case "create_directory":
      return s.openCode === "OUTSIDE_WORKSPACE" ? s.openCode : "ALREADY_EXISTS";
    case "move_path(source)":
      return "moved";
    case "move_path(destination)":
      return "replaced";
    case "copy_path(source)":
      // A link is copied as itself; a special file is never opened nor copied.
      return s.info.type === "symlink" ? "copied" : s.openCode;
    case "copy_path(destination)":
      // A link is replaced (the link itself); a special file is never replaced.
      return s.info.type === "symlink" ? "replaced" : s.openCode;
    default:
      assert.equal(op.name, "delete_path");
      return "deleted";
  }
}

Deno.test("19. FIFOs, sockets, devices and links to /dev/zero are refused and never block", async (t) => {
  for (const s of SPECIALS) {
    for (const op of PATH_OPS) {
      let cleanup: (() => void) | null = null;
      const env0 = await makeEnv();
      try {
        cleanup = await s.make(env0);
        await t.step({
          name: `${s.name}: ${op.label}`,
          ignore: cleanup === null,
          fn: async () => {
            const env = env0;
            const want = expectation(op, s);
            try {
              await withTimeout(
                (async () => {
                  if (want === "info") {
                    const info = await run(env.ws, op.name, op.args(s.name));
                    assert.equal(info.type, s.info.type);
                    if (s.info.symlink) assert.deepEqual(info.symlink, s.info.symlink);
                  } else if (want === "moved") {
                    await run(env.ws, op.name, op.args(s.name));
                    await assert.rejects(Deno.lstat(`${env.W}/${s.name}`), Deno.errors.NotFound);
                    await Deno.lstat(`${env.W}/moved-here`);
                  } else if (want === "copied") {
                    await run(env.ws, op.name, op.args(s.name));
                    const text = await Deno.readLink(`${env.W}/${s.name}`);
                    assert.equal(await Deno.readLink(`${env.W}/copied-here`), text);
                  } else if (want === "replaced") {
                    await run(env.ws, op.name, op.args(s.name));
                    assert.equal(await Deno.readTextFile(`${env.W}/${s.name}`), INSIDE);
                  } else if (want === "deleted") {
                    await run(env.ws, op.name, op.args(s.name));
                    await assert.rejects(Deno.lstat(`${env.W}/${s.name}`), Deno.errors.NotFound);
                  } else {
                    await expectRefused(env, op, s.name, want);
                  }
                })(),
                5_000,
                `${op.label} on ${s.name}`,
              );
            } catch (err) {
              await unblockFifos(env.W);
              throw err;
            }
          },
        });
      } finally {
        cleanup?.();
        await Deno.remove(env0.base, { recursive: true });
      }
    }
  }
});

Deno.test("19. walks over a workspace full of special files finish and skip them", async () => {
  const env = await makeEnv();
  const cleanups: (() => void)[] = [];
  try {
    for (const s of SPECIALS) {
      const c = await s.make(env);
      if (c) cleanups.push(c);
    }
    await Deno.writeTextFile(`${env.W}/a/zz.txt`, "needle\n");
    try {
      await withTimeout(
        (async () => {
          const l = await run(env.ws, "list_directory", { path: ".", depth: 10 });
          const types = Object.fromEntries(
            (l.entries as { path: string; type: string }[]).map((e) => [e.path, e.type]),
          );
          assert.equal(types["fifo"], "other");
          assert.equal(types["sock"], "other");
          assert.equal(types["zero-link"], "symlink");
          await run(env.ws, "find_files", { pattern: "**" });
          const s = await run(env.ws, "search_text", { query: "needle", respectGitignore: false });
          assert.deepEqual((s.matches as { path: string }[]).map((m) => m.path), ["a/zz.txt"]);
          assert.equal(s.filesSearched, 3);
        })(),
        10_000,
        "walks",
      );
    } catch (err) {
      await unblockFifos(env.W);
      throw err;
    }
  } finally {
    for (const c of cleanups) c();
    await Deno.remove(env.base, { recursive: true });
  }
});
