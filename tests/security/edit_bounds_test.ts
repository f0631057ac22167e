/**
 * Issue 8, class 2 (work bounded whatever the input): edit_file finds oldText in linear time
 * (KMP for long texts, paced and cancellable), refuses an oversize result before building it,
 * and computes its diff under a
 * small time budget. A change touching thousands of lines gets one coarse hunk, written in
 * linear time, instead of a minimal diff whose cost grows with size times changes (seconds
 * of synchronous work before); both forms are valid unified diffs of exactly the change.
 */
import assert from "node:assert/strict";
import { applyPatch } from "diff";
import { runOperation, Workspace } from "../../mod.ts";
import { coarseDiff, unifiedDiff } from "../../src/workspace/patch.ts";

Deno.test("coarse diffs apply exactly, final newline changes included", () => {
  const cases: [string, string][] = [
    ["x\ny\nz\n", "x\nY\nz\n"],
    ["a\nb", "a\nc"],
    ["a\nb", "a\nb\n"],
    ["", "a\n"],
    ["a\n", ""],
    ["1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nX\n6\n7\nY\n9\n"],
    ["a\nb\nc\n", "a\nb\nc\nd"],
    ["same\n", "same\n"],
  ];
  for (const [before, after] of cases) {
    const d = coarseDiff("f.txt", before, after);
    assert.equal(applyPatch(before, d), after, JSON.stringify({ before, after, d }));
  }
});

Deno.test("a small change keeps jsdiff's minimal diff", () => {
  const r = unifiedDiff("f.txt", "a\nb\nc\n", "a\nB\nc\n");
  assert.equal(r.minimal, true);
  assert.match(r.diff, /^-b$/m);
});

Deno.test("edit_file touching 20,000 lines: a valid coarse diff, the edit applied whole", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-diff-" }));
  try {
    const before = Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join("\n") + "\n";
    const after = before.replaceAll("1", "one");
    await Deno.writeTextFile(`${dir}/big.txt`, before);
    const ws = await Workspace.open({ root: dir, writable: true });
    const out = await runOperation({ workspace: ws }, "edit_file", {
      path: "big.txt",
      edits: [{ oldText: "1", newText: "one", replaceAll: true }],
    }) as { diff: string; changed: boolean; truncated?: boolean };
    assert.equal(out.changed, true);
    assert.equal(await Deno.readTextFile(`${dir}/big.txt`), after);
    assert.equal(out.truncated ?? false, false);
    assert.equal((out.diff.match(/^@@ /gm) ?? []).length, 1, "one coarse hunk");
    assert.equal(applyPatch(before, out.diff), after);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("edit_file: hostile oldText and replaceAll stay linear and refuse oversize results first", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-edit-" }));
  try {
    const text = "a".repeat(4 * 1024 * 1024);
    await Deno.writeTextFile(`${dir}/a.txt`, text);
    const ws = await Workspace.open({ root: dir, writable: true });
    // indexOf's worst case is text x needle (about 34 s here before, in one synchronous call);
    // the search is linear and paced now, so it finishes, and it checks the time budget as it
    // goes: with a 1 ms budget the same search stops with TIME_BUDGET_EXCEEDED (the old code
    // never looked at the budget and answered NO_MATCH half a minute later).
    const needle = "a".repeat(4000) + "b" + "a".repeat(4000);
    const hostile = { path: "a.txt", edits: [{ oldText: needle, newText: "x" }], dryRun: true };
    await assert.rejects(
      runOperation({ workspace: ws }, "edit_file", hostile),
      (e: { code?: string }) => e.code === "NO_MATCH",
    );
    const tight = await Workspace.open({
      root: dir,
      writable: true,
      limits: { maxOperationMs: 1 },
    });
    await assert.rejects(
      runOperation({ workspace: tight }, "edit_file", hostile),
      (e: { code?: string }) => e.code === "TIME_BUDGET_EXCEEDED",
    );
    // replaceAll "a" -> 200 bytes would build an 800 MiB string before: TOO_LARGE first now.
    await assert.rejects(
      runOperation({ workspace: ws }, "edit_file", {
        path: "a.txt",
        edits: [{ oldText: "a", newText: "b".repeat(200), replaceAll: true }],
      }),
      (e: { code?: string; argument?: string }) => e.code === "TOO_LARGE" && e.argument === "edits",
    );
    // A long oldText with replaceAll is rebuilt from the offsets, exactly.
    await Deno.writeTextFile(
      `${dir}/b.txt`,
      "xx" + "long-needle-".repeat(3) + "yy" + "long-needle-".repeat(3),
    );
    await runOperation({ workspace: ws }, "edit_file", {
      path: "b.txt",
      edits: [{ oldText: "long-needle-".repeat(3), newText: "-", replaceAll: true }],
    });
    assert.equal(await Deno.readTextFile(`${dir}/b.txt`), "xx-yy-");
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), text, "nothing written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
