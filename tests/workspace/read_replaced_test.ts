/**
 * A file replaced while it is read (decision 0010): after the read, its name must still lead to
 * the inode that was opened (`verifyAfterRead`), else CHANGED_DURING_OPERATION with reason
 * `entry-changed`. read_file and read_media then run again from the start (an editor's save by
 * rename is the common cause), up to READ_ATTEMPTS in all; edit_file refuses at once (its caller
 * decides on the changed file). The look-up that sees the change is made deterministic with
 * a file system whose lstat of the file answers with another file's identity.
 */
import assert from "node:assert/strict";
import { runOperation, Workspace, WorkspaceError } from "../../mod.ts";
import { denoFs } from "../../src/workspace/fs/deno.ts";
import type { WorkspaceFs } from "../../src/workspace/fs/types.ts";
import { READ_ATTEMPTS } from "../../src/workspace/containment.ts";
import { withTempDir } from "../_support/fs.ts";

/**
 * denoFs, except that the lstatSync calls of FILE numbered in `swapped` (1-based, counted over
 * the file system's life) answer with OTHER's identity, as if FILE had been replaced by it.
 */
function replacingFs(file: string, other: string, swapped: (n: number) => boolean) {
  let calls = 0;
  const fs: WorkspaceFs = {
    ...denoFs,
    lstatSync: (p: string) => {
      if (p !== file) return denoFs.lstatSync(p);
      calls++;
      return denoFs.lstatSync(swapped(calls) ? other : p);
    },
  };
  return { fs, calls: () => calls };
}

type Case = readonly [string, Record<string, unknown>];
const READS: Case[] = [["read_file", { path: "f.txt" }], ["read_media", { path: "f.txt" }]];
const EDIT: Case = [
  "edit_file",
  { path: "f.txt", edits: [{ oldText: "inside", newText: "edited" }], dryRun: true },
];

/** How many lstatSync calls of f.txt one clean run of the operation makes. */
async function cleanCalls(root: string, [name, input]: Case): Promise<number> {
  const probe = replacingFs(`${root}/f.txt`, `${root}/g.txt`, () => false);
  const ws = await Workspace.open({ root, fs: probe.fs, writable: true });
  try {
    await runOperation({ workspace: ws }, name, input);
  } finally {
    ws.engine.close();
  }
  return probe.calls();
}

async function setup(root: string): Promise<void> {
  await Deno.writeTextFile(`${root}/f.txt`, "inside\n");
  await Deno.writeTextFile(`${root}/g.txt`, "other\n");
}

function assertReplaced(err: unknown): boolean {
  assert.ok(err instanceof WorkspaceError, String(err));
  assert.equal(err.code, "CHANGED_DURING_OPERATION");
  assert.equal(err.details?.reason, "entry-changed");
  assert.equal(err.argument, "path");
  return true;
}

Deno.test("a file replaced for good during every read: read_file and read_media refuse after their retries, typed", async () => {
  await withTempDir(async (root) => {
    await setup(root);
    for (const op of READS) {
      // From the look-up after the first read on, the name leads to g.txt.
      const last = await cleanCalls(root, op);
      const r = replacingFs(`${root}/f.txt`, `${root}/g.txt`, (n) => n >= last);
      const ws = await Workspace.open({ root, fs: r.fs });
      try {
        await assert.rejects(runOperation({ workspace: ws }, op[0], op[1]), assertReplaced);
        // Each attempt after the first resolves the name again (one more look-up at least).
        assert.ok(r.calls() >= last + READ_ATTEMPTS - 1, `${op[0]}: ${r.calls()} look-ups`);
      } finally {
        ws.engine.close();
      }
    }
  });
});

Deno.test("a file replaced once during a read: read_file and read_media read it again and answer", async () => {
  await withTempDir(async (root) => {
    await setup(root);
    for (const op of READS) {
      // Only the look-up after the first attempt's read sees another file.
      const last = await cleanCalls(root, op);
      const r = replacingFs(`${root}/f.txt`, `${root}/g.txt`, (n) => n === last);
      const ws = await Workspace.open({ root, fs: r.fs });
      try {
        const out = await runOperation({ workspace: ws }, op[0], op[1]) as Record<string, unknown>;
        const text = op[0] === "read_file" ? out.content : atob(String(out.data));
        assert.equal(text, "inside\n");
        assert.ok(r.calls() > last, "it looked the file up again: a second attempt");
      } finally {
        ws.engine.close();
      }
    }
  });
});

Deno.test("edit_file refuses a file replaced while it was read, without a retry", async () => {
  await withTempDir(async (root) => {
    await setup(root);
    const last = await cleanCalls(root, EDIT);
    const r = replacingFs(`${root}/f.txt`, `${root}/g.txt`, (n) => n === last);
    const ws = await Workspace.open({ root, fs: r.fs, writable: true });
    try {
      await assert.rejects(runOperation({ workspace: ws }, EDIT[0], EDIT[1]), assertReplaced);
    } finally {
      ws.engine.close();
    }
  });
});

Deno.test("reads while another process saves the file by rename: each answer is one whole version, failures typed", async () => {
  await withTempDir(async (root) => {
    const versions = ["a".repeat(64 * 1024) + "\n", "b".repeat(64 * 1024) + "\n"];
    await Deno.writeTextFile(`${root}/f.txt`, versions[0]);
    // The saver: writes a temporary file and renames it over f.txt, alternating versions.
    const saver = new Deno.Command("python3", {
      args: [
        "-c",
        `import os, sys, time
root, a, b = sys.argv[1], sys.argv[2], sys.argv[3]
print("ready", flush=True)
end = time.monotonic() + 1.5
i = 0
while time.monotonic() < end:
    tmp = os.path.join(root, ".save-tmp")
    with open(tmp, "w") as f:
        f.write((a if i % 2 else b) * 65536 + "\\n")
    os.rename(tmp, os.path.join(root, "f.txt"))
    i += 1
    time.sleep(0.002)
`,
        root,
        "a",
        "b",
      ],
      stdout: "piped",
    }).spawn();
    const ws = await Workspace.open({ root });
    const tally = { whole: 0, replaced: 0 };
    try {
      const out = saver.stdout.pipeThrough(new TextDecoderStream()).getReader();
      assert.match((await out.read()).value ?? "", /ready/);
      for (let i = 0; i < 300; i++) {
        try {
          const r = await runOperation({ workspace: ws }, "read_file", { path: "f.txt" });
          assert.ok(versions.includes((r as { content: string }).content), "one whole version");
          tally.whole++;
        } catch (err) {
          assertReplaced(err);
          tally.replaced++;
        }
      }
      out.releaseLock();
    } finally {
      await saver.status;
      ws.engine.close();
    }
    console.log(`reads under rename saves: ${tally.whole} whole, ${tally.replaced} refused`);
    assert.ok(tally.whole > 0, "reads answer while a file is being saved");
  });
});
