/**
 * Caps are reported, never silent (23), and read-only mode refuses every write (24).
 */
import assert from "node:assert/strict";
import { availableOperations, OPERATIONS } from "../../mod.ts";
import {
  type Env,
  expectError,
  PATH_OP_NAMES,
  PATH_OPS,
  run,
  snapshot,
  withEnv,
} from "./_helpers.ts";

/** Adds files f1.txt..fN.txt (each "needle N\n") to W. */
async function addFiles(env: Env, n: number): Promise<void> {
  for (let i = 1; i <= n; i++) await Deno.writeTextFile(`${env.W}/f${i}.txt`, `needle ${i}\n`);
}

Deno.test("23. read_file over maxReadBytes is truncated with nextStartLine", async () => {
  await withEnv(async (env) => {
    const { ws, W } = env;
    const lines = Array.from({ length: 9 }, (_, i) => `line${i + 1}\n`).join("");
    await Deno.writeTextFile(`${W}/lines.txt`, lines);
    const r = await run(ws, "read_file", { path: "lines.txt" });
    assert.equal(r.truncated, true);
    assert.equal(r.content, "line1\nline2\n");
    assert.equal(r.nextStartLine, 3);
    assert.equal(r.totalLines, 9);
    const next = await run(ws, "read_file", { path: "lines.txt", startLine: r.nextStartLine });
    assert.equal(next.content, "line3\nline4\n");
    assert.equal(next.nextStartLine, 5);
    const whole = await run(ws, "read_file", { path: "lines.txt", startLine: 8 });
    assert.equal(whole.truncated, false);
    assert.equal(whole.nextStartLine, undefined);
    await expectError(
      run(ws, "read_file", { path: "lines.txt", maxBytes: 17 }),
      "INVALID_ARGUMENT",
      "maxBytes",
    );
    await Deno.writeTextFile(`${W}/long.txt`, "x".repeat(40));
    const long = await run(ws, "read_file", { path: "long.txt" });
    assert.equal(long.truncated, true);
    assert.equal(long.content, "x".repeat(16));
  }, { limits: { maxReadBytes: 16 } });
});

Deno.test("23. read_media over maxMediaBytes is TOO_LARGE", async () => {
  await withEnv(async (env) => {
    const { ws, W } = env;
    await Deno.writeFile(`${W}/ok.bin`, new Uint8Array(8));
    await Deno.writeFile(`${W}/big.bin`, new Uint8Array(9));
    assert.equal((await run(ws, "read_media", { path: "ok.bin" })).size, 8);
    const err = await expectError(run(ws, "read_media", { path: "big.bin" }), "TOO_LARGE", "path");
    assert.deepEqual(err.details, { size: 9, limit: 8 });
  }, { limits: { maxMediaBytes: 8 } });
});

Deno.test("23. write_file and edit_file over maxWriteBytes are TOO_LARGE and write nothing", async () => {
  await withEnv(async (env) => {
    const { ws, W, base } = env;
    await Deno.writeTextFile(`${W}/small.txt`, "abc\n");
    await Deno.writeTextFile(`${W}/big.txt`, "0123456789\n");
    const before = await snapshot(base);
    await expectError(
      run(ws, "write_file", { path: "new.txt", content: "123456789" }),
      "TOO_LARGE",
      "content",
    );
    await expectError(
      run(ws, "edit_file", { path: "big.txt", edits: [{ oldText: "0", newText: "a" }] }),
      "TOO_LARGE",
      "path",
    );
    await expectError(
      run(ws, "edit_file", {
        path: "small.txt",
        edits: [{ oldText: "abc", newText: "abcdefghij" }],
      }),
      "TOO_LARGE",
      "edits",
    );
    assert.deepEqual(await snapshot(base), before);
  }, { limits: { maxWriteBytes: 8 } });
});

Deno.test("23. list_directory beyond maxListEntries pages with nextCursor", async () => {
  await withEnv(async (env) => {
    const { ws } = env;
    await addFiles(env, 5); // with a/ and inside.txt: 7 entries
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await run(ws, "list_directory", cursor ? { path: ".", cursor } : { path: "." });
      pages++;
      assert.equal(page.total, 7);
      assert.equal(page.truncated, false);
      const entries = page.entries as { path: string }[];
      assert.ok(entries.length <= 3);
      seen.push(...entries.map((e) => e.path));
      cursor = page.nextCursor as string | undefined;
    } while (cursor);
    assert.equal(pages, 3);
    assert.equal(new Set(seen).size, 7);
    await expectError(run(ws, "list_directory", { limit: 4 }), "INVALID_ARGUMENT", "limit");
    await expectError(
      run(ws, "list_directory", { cursor: "bm90IGEgY3Vyc29y" }),
      "INVALID_ARGUMENT",
      "cursor",
    );
  }, { limits: { maxListEntries: 3 } });
});

Deno.test("23. find_files and search_text caps give truncated with a reason", async () => {
  await withEnv(async (env) => {
    const { ws } = env;
    await addFiles(env, 5);
    const f = await run(ws, "find_files", { pattern: "f*.txt" });
    assert.equal((f.matches as unknown[]).length, 2);
    assert.equal(f.truncated, true);
    assert.equal(f.truncatedReason, "maxResults");
    const s = await run(ws, "search_text", { query: "needle" });
    assert.equal((s.matches as unknown[]).length, 2);
    assert.equal(s.truncated, true);
    assert.equal(s.truncatedReason, "maxMatches");
    await expectError(
      run(ws, "find_files", { pattern: "*", maxResults: 3 }),
      "INVALID_ARGUMENT",
      "maxResults",
    );
    await expectError(
      run(ws, "search_text", { query: "x", maxMatches: 3 }),
      "INVALID_ARGUMENT",
      "maxMatches",
    );
    const exact = await run(ws, "find_files", { pattern: "f1.txt" });
    assert.equal(exact.truncated, false);
    assert.equal(exact.truncatedReason, undefined);
  }, { limits: { maxResults: 2, maxMatches: 2 } });
});

Deno.test("23. files over maxSearchFileBytes are counted as skipped, not silently dropped", async () => {
  await withEnv(async (env) => {
    const { ws, W } = env;
    await Deno.writeTextFile(`${W}/big.txt`, "needle " + "x".repeat(100) + "\n");
    await Deno.writeTextFile(`${W}/small.txt`, "needle\n");
    const s = await run(ws, "search_text", { query: "needle" });
    assert.deepEqual((s.matches as { path: string }[]).map((m) => m.path), ["small.txt"]);
    assert.equal((s.filesSkipped as { tooLarge: number }).tooLarge, 1);
  }, { limits: { maxSearchFileBytes: 20 } });
});

Deno.test("23. the maxVisited cap gives truncated on every walk", async () => {
  await withEnv(async (env) => {
    const { ws } = env;
    await addFiles(env, 5);
    const l = await run(ws, "list_directory", { path: ".", depth: 10 });
    assert.equal(l.truncated, true);
    assert.ok((l.entries as unknown[]).length <= 3);
    const f = await run(ws, "find_files", { pattern: "**" });
    assert.equal(f.truncated, true);
    assert.equal(f.truncatedReason, "maxVisited");
    const s = await run(ws, "search_text", { query: "needle" });
    assert.equal(s.truncated, true);
    assert.equal(s.truncatedReason, "maxVisited");
  }, { limits: { maxVisited: 3 } });
});

Deno.test("23. the maxDepth cap is reported, never silent", async () => {
  await withEnv(async (env) => {
    const { ws, W } = env;
    await Deno.mkdir(`${W}/d1/d2/d3`, { recursive: true });
    await Deno.writeTextFile(`${W}/d1/d2/d3/deep.txt`, "needle\n");
    const f = await run(ws, "find_files", { pattern: "**/deep.txt" });
    assert.deepEqual(f.matches, []);
    assert.equal(f.truncated, true);
    assert.equal(f.truncatedReason, "maxDepth");
    const s = await run(ws, "search_text", { query: "needle" });
    assert.equal(s.truncated, true);
    assert.equal(s.truncatedReason, "maxDepth");
  }, { limits: { maxDepth: 2 } });
});

Deno.test("24. read-only mode: every write operation is READ_ONLY and changes nothing", async (t) => {
  await withEnv(async (env) => {
    const { ws, base, O, W } = env;
    await Deno.symlink(`${O}/secret`, `${W}/leaf`);
    assert.equal(ws.writable, false);
    const attempts = ["inside.txt", "new.txt", "a", "a/new", "leaf", "../outside/secret"];
    for (const op of PATH_OPS.filter((o) => o.write)) {
      await t.step(op.label, async () => {
        for (const p of attempts) {
          const before = await snapshot(base);
          await expectError(run(ws, op.name, op.args(p)), "READ_ONLY", undefined, op.label);
          assert.deepEqual(await snapshot(base), before);
        }
      });
    }
    await t.step("read operations still work", async () => {
      assert.equal((await run(ws, "read_file", { path: "inside.txt" })).path, "inside.txt");
      await run(ws, "list_directory", {});
    });
  }, { writable: false });
});

Deno.test("24. availableOperations(false) offers no write operation", () => {
  const writes = [
    "write_file",
    "edit_file",
    "create_directory",
    "move_path",
    "copy_path",
    "delete_path",
  ];
  const ro = availableOperations(false).map((o) => o.name);
  for (const w of writes) assert.ok(!ro.includes(w), `${w} offered in read-only mode`);
  assert.ok(availableOperations(false).every((o) => !o.needsWrite));
  assert.ok(availableOperations(false).every((o) => o.annotations.readOnlyHint));
  const rw = availableOperations(true).map((o) => o.name);
  for (const w of writes) assert.ok(rw.includes(w));
  // Every path-taking operation is covered by the attack table.
  let pathTaking = 0;
  for (const op of OPERATIONS) {
    const shape = (op.inputSchema as unknown as { shape?: Record<string, unknown> }).shape;
    const keys = Object.keys(shape ?? {});
    if (keys.some((k) => ["path", "source", "destination"].includes(k))) {
      assert.ok(PATH_OP_NAMES.includes(op.name), `${op.name} is missing from PATH_OPS`);
      pathTaking++;
    }
  }
  assert.equal(pathTaking, PATH_OP_NAMES.length);
});
