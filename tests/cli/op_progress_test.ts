/**
 * `op`'s progress display (src/cli/op_progress.ts) on a recording line: nothing is drawn for an
 * operation that ends before the delay; a longer one is drawn with its latest counters, then
 * erased once. Ordered by events (the first draw), not by how long anything took.
 */
import assert from "node:assert/strict";
import { startOpProgress } from "../../src/cli/op_progress.ts";
import type { ProgressLine, ProgressUpdate } from "../../src/client/progress.ts";

/** A ProgressLine that records what was asked of it, and tells when the first draw came. */
function recordingLine() {
  const calls: Array<{ update: ProgressUpdate } | "clear"> = [];
  let drawn!: () => void;
  const firstDraw = new Promise<void>((resolve) => (drawn = resolve));
  const line: ProgressLine = {
    update(_name, p) {
      calls.push({ update: p });
      drawn();
    },
    clear() {
      calls.push("clear");
    },
  };
  return { line, calls, firstDraw };
}

Deno.test("op progress: an operation that ends before the delay draws nothing, and stop erases once", async () => {
  const { line, calls } = recordingLine();
  // The delay is far longer than this test: the operation ends before it, on any machine.
  const progress = startOpProgress("search_text", { line, delayMs: 3_600_000 });
  progress.report({ progress: 1, message: "3 files searched" });
  progress.stop();
  progress.stop();
  assert.deepEqual(calls, ["clear"]);
  // The timer is cleared: nothing is drawn afterwards either (a pending timer would also fail
  // the test's resource sanitizer).
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(calls, ["clear"]);
});

Deno.test("op progress: past the delay the latest counters are drawn, and the line is erased at the end", async () => {
  const { line, calls, firstDraw } = recordingLine();
  const progress = startOpProgress("search_text", { line, delayMs: 0, intervalMs: 3_600_000 });
  progress.report({ progress: 1, message: "1 file searched" });
  progress.report({ progress: 1, message: "7 files searched" });
  await firstDraw;
  progress.stop();
  assert.deepEqual(calls, [{ update: { progress: 0, message: "7 files searched" } }, "clear"]);
});

Deno.test("op progress: before any counters arrive the line says running", async () => {
  const { line, calls, firstDraw } = recordingLine();
  const progress = startOpProgress("find_files", { line, delayMs: 0, intervalMs: 3_600_000 });
  await firstDraw;
  progress.stop();
  assert.deepEqual(calls, [{ update: { progress: 0, message: "running" } }, "clear"]);
});
