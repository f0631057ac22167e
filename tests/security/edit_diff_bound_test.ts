/**
 * Issue 8, class 2 (work bounded whatever the input): edit_file's diff is computed under a
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
