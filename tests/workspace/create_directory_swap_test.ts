/**
 * create_directory when a parent it created a moment ago is gone for the kernel's look-up (what
 * a directory swapped during its rename leaves: the new directory landed elsewhere). Made
 * deterministic with a file system whose mkdir below that parent fails as the kernel's does.
 */
import assert from "node:assert/strict";
import { runOperation, Workspace, WorkspaceError } from "../../mod.ts";
import { denoFs } from "../../src/workspace/fs/deno.ts";
import type { WorkspaceFs } from "../../src/workspace/fs/types.ts";
import { withTempDir } from "../_support/fs.ts";

/** denoFs, except that mkdirSync of anything directly in dir fails with the given error. */
function failingMkdirFs(dir: string, error: () => Error): WorkspaceFs {
  return {
    ...denoFs,
    mkdirSync: (p: string) => {
      if (p.slice(0, p.lastIndexOf("/")) === dir) throw error();
      denoFs.mkdirSync(p);
    },
  };
}

for (
  const [label, error] of [
    ["gone", () => new Deno.errors.NotFound("mkdir")],
    ["not a directory", () => new Deno.errors.NotADirectory("mkdir")],
  ] as const
) {
  Deno.test(`create_directory: a created parent ${label} for the next level's mkdir is CHANGED_DURING_OPERATION, and undone`, async () => {
    await withTempDir(async (root) => {
      const real = await Deno.realPath(root);
      const fs = failingMkdirFs(`${real}/a`, error);
      const ws = await Workspace.open({ root, fs, writable: true });
      try {
        await assert.rejects(
          runOperation({ workspace: ws }, "create_directory", { path: "a/b" }),
          (err: unknown) => {
            assert.ok(err instanceof WorkspaceError, String(err));
            assert.equal(err.code, "CHANGED_DURING_OPERATION", err.message);
            assert.equal(err.details?.reason, "parent-changed");
            assert.equal(err.details?.leftBehind, undefined);
            return true;
          },
        );
        // What it created (a) was removed through its verified path.
        assert.deepEqual([...Deno.readDirSync(root)], []);
      } finally {
        ws.engine.close();
      }
    });
  });
}
