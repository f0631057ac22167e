/** The content renderers (src/server/content.ts) on results whose text has edge cases. */
import assert from "node:assert/strict";
import { errorText, mediaUri, renderContent } from "../../src/server/content.ts";

const text = (tool: string, result: Record<string, unknown>) => {
  const blocks = renderContent(tool, result);
  assert.equal(blocks.length, 1);
  return (blocks[0] as { text: string }).text;
};

Deno.test("search_text: grep-style lines, shared context once, -- between groups", () => {
  const out = text("search_text", {
    matches: [
      { path: "a.ts", line: 2, column: 5, text: "two x", before: ["one"], after: ["three x"] },
      // Adjacent to the first: its before-context is the first match, which stays a match line.
      { path: "a.ts", line: 3, column: 7, text: "three x", before: ["two x"], after: ["four"] },
      { path: "a.ts", line: 9, column: 1, text: "x nine", before: ["eight"], after: [] },
      { path: "b.ts", line: 1, column: 1, text: "x", textStartColumn: 500, after: ["b2"] },
    ],
    filesSearched: 5,
    filesMatched: 2,
    filesSkipped: { binary: 1, tooLarge: 0, unreadable: 2 },
    visited: 9,
    truncated: true,
    truncatedReason: "maxMatches",
  });
  assert.equal(
    out,
    [
      "a.ts-1- one",
      "a.ts:2:5: two x",
      "a.ts:3:7: three x",
      "a.ts-4- four",
      "--",
      "a.ts-8- eight",
      "a.ts:9:1: x nine",
      "--",
      "b.ts:1:1: …x",
      "b.ts-2- b2",
      "4 matching lines in 2 files (5 files searched; skipped: 1 binary, 2 unreadable); " +
      "truncated at maxMatches: narrow `path` or `include` to see the rest.",
    ].join("\n"),
  );
});

Deno.test("list_directory and find_files: one entry per line, a trailer when paged or cut", () => {
  const listed = text("list_directory", {
    path: ".",
    entries: [
      { path: "d", type: "directory", size: null, mtime: null },
      { path: "d/f", type: "file", size: 3, mtime: null },
      { path: "l", type: "symlink", size: null, mtime: null },
    ],
    total: 7,
    nextCursor: "abc",
    truncated: false,
  });
  assert.equal(
    listed,
    "d/\nd/f (3 bytes)\nl (symlink)\n" +
      "[3 of 7 entries; for the next page call list_directory again with cursor: abc]",
  );
  assert.equal(
    text("find_files", {
      path: ".",
      matches: [],
      visited: 1,
      truncated: false,
    }),
    "No matches (1 entry visited).",
  );
});

Deno.test("read_file: the header says what a model needs to continue", () => {
  assert.equal(
    text("read_file", {
      path: "big.log",
      content: "a\n",
      size: 9_000_000,
      startLine: 1,
      endLine: 1,
      sha256Skipped: { reason: "maxHashBytes", limit: 1, size: 9_000_000 },
      truncated: true,
      truncatedReason: "maxBytes",
      nextStartLine: 2,
    }),
    "[big.log, lines 1-1, 9000000 bytes, sha256 and total lines not computed (file over " +
      "maxHashBytes), truncated (maxBytes): continue with startLine 2]\na\n",
  );
});

Deno.test("read_media: image, audio (resource blob for 2024-11-05 clients), other", () => {
  const r = { path: "a b/c#.wav", mimeType: "audio/wav", size: 1, sha256: "0".repeat(64) };
  const audio = renderContent("read_media", { ...r, data: "AA==" });
  assert.deepEqual(audio[1], { type: "audio", data: "AA==", mimeType: "audio/wav" });
  const old = renderContent("read_media", { ...r, data: "AA==" }, { audio: false });
  assert.deepEqual(old[1], {
    type: "resource",
    resource: { uri: "wmcp://workspace/a%20b/c%23.wav", mimeType: "audio/wav", blob: "AA==" },
  });
  assert.equal(mediaUri("x/../y"), "wmcp://workspace/x/../y");
});

Deno.test("errorText: the code first, and what a model must know", () => {
  assert.equal(
    errorText({ code: "NOT_FOUND", message: "no such file or directory", argument: "path" }),
    "NOT_FOUND: no such file or directory (argument `path`).",
  );
  assert.equal(
    errorText({ code: "CONFIRMATION_REQUIRED", message: "deleting x needs confirmation" }),
    "CONFIRMATION_REQUIRED: deleting x needs confirmation; pass confirm: true to proceed.",
  );
  assert.equal(
    errorText({
      code: "CONFIRMATION_REQUIRED",
      message: "delete_path was not confirmed (decline); nothing was changed",
      argument: "confirm",
      details: { action: "decline" },
    }),
    "CONFIRMATION_REQUIRED: delete_path was not confirmed (decline); nothing was changed.",
  );
  assert.equal(
    errorText({ code: "TOO_LARGE", message: "too big", details: { size: 9, limit: 8 } }),
    "TOO_LARGE: too big; the limit is 8.",
  );
  assert.equal(
    errorText({
      code: "AMBIGUOUS_MATCH",
      message: "edits[0].oldText occurs twice",
      argument: "edits[0].oldText",
      details: { candidates: [3, 7] },
    }),
    "AMBIGUOUS_MATCH: edits[0].oldText occurs twice; candidate lines: 3, 7.",
  );
});
