/** search_text: literal, regex, word and case rules, context, globs, skips, caps, cancellation. */
import assert from "node:assert/strict";
import { searchText } from "../../src/workspace/search.ts";
import {
  expectError,
  makeTree,
  openWorkspace,
  run,
  runError,
  utf8,
  withTempDir,
} from "./_helpers.ts";

const lineCols = (r: { matches: { path: string; line: number; column: number }[] }) =>
  r.matches.map((m) => `${m.path}:${m.line}:${m.column}`);

Deno.test("search_text: literal search, columns, counts", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "a.txt": "foo\n  foo bar foo\nnothing\n",
      "b/c.txt": "xfoox\n",
      "d.txt": "no match here\n",
      "e.txt": "a.b(c) a-b(c)\n",
      "u.txt": "€€foo\n😀foo\n",
    });
    const ws = await openWorkspace(dir);
    const r = await run(ws, "search_text", { query: "foo" });
    assert.deepStrictEqual(r.matches, [
      { path: "a.txt", line: 1, column: 1, text: "foo" },
      { path: "a.txt", line: 2, column: 3, text: "  foo bar foo" },
      { path: "b/c.txt", line: 1, column: 2, text: "xfoox" },
      // Columns count UTF-16 code units.
      { path: "u.txt", line: 1, column: 3, text: "€€foo" },
      { path: "u.txt", line: 2, column: 3, text: "😀foo" },
    ]);
    assert.equal(r.filesSearched, 5);
    assert.equal(r.filesMatched, 3);
    assert.deepStrictEqual(r.filesSkipped, { binary: 0, tooLarge: 0, unreadable: 0 });
    assert.equal(r.visited, 6);
    assert.equal(r.truncated, false);
    assert.equal(r.truncatedReason, undefined);
    // Regex metacharacters in a literal query are literal.
    const lit = await run(ws, "search_text", { query: "a.b(c)" });
    assert.deepStrictEqual(lineCols(lit), ["e.txt:1:1"]);
    // Searching below a directory; paths stay workspace-relative.
    const sub = await run(ws, "search_text", { query: "foo", path: "b" });
    assert.deepStrictEqual(lineCols(sub), ["b/c.txt:1:2"]);
  });
});

Deno.test("search_text: case-insensitive, including non-ASCII", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "Foo\nFOO\nfoo\nfOo\nbar\nÄRGER\närger\n" });
    const ws = await openWorkspace(dir);
    assert.deepStrictEqual(
      lineCols(await run(ws, "search_text", { query: "foo", caseSensitive: false })),
      ["a.txt:1:1", "a.txt:2:1", "a.txt:3:1", "a.txt:4:1"],
    );
    assert.deepStrictEqual(lineCols(await run(ws, "search_text", { query: "foo" })), [
      "a.txt:3:1",
    ]);
    assert.deepStrictEqual(
      lineCols(await run(ws, "search_text", { query: "ärger", caseSensitive: false })),
      ["a.txt:6:1", "a.txt:7:1"],
    );
    assert.deepStrictEqual(
      lineCols(await run(ws, "search_text", { query: "^f", regex: true, caseSensitive: false })),
      ["a.txt:1:1", "a.txt:2:1", "a.txt:3:1", "a.txt:4:1"],
    );
  });
});

Deno.test("search_text: wholeWord treats non-ASCII letters, digits and _ as word characters", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "w.txt": [
        "foo", // 1 yes
        "foobar", // 2 no
        "barfoo", // 3 no
        "the foo.", // 4 yes, column 5
        "éfoo", // 5 no
        "fooé", // 6 no
        "foo2", // 7 no
        "_foo", // 8 no
        "(foo)", // 9 yes, column 2
        "foo-bar", // 10 yes
        "xfoo foo", // 11 yes, column 6
      ].join("\n") + "\n",
    });
    const ws = await openWorkspace(dir);
    const r = await run(ws, "search_text", { query: "foo", wholeWord: true });
    assert.deepStrictEqual(lineCols(r), [
      "w.txt:1:1",
      "w.txt:4:5",
      "w.txt:9:2",
      "w.txt:10:1",
      "w.txt:11:6",
    ]);
    const ci = await run(ws, "search_text", {
      query: "FOO",
      wholeWord: true,
      caseSensitive: false,
    });
    assert.deepStrictEqual(lineCols(ci), lineCols(r));
    const re = await run(ws, "search_text", { query: "fo+", regex: true, wholeWord: true });
    assert.deepStrictEqual(lineCols(re), lineCols(r));
  });
});

Deno.test("search_text: regex anchors match on CRLF files", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "crlf.txt": "foo\r\nfoobar\r\n  foo\r\nfoo\r\n",
      "lf.txt": "foo\nfoo \n",
      "nonl.txt": "x\nfoo",
    });
    const ws = await openWorkspace(dir);
    const r = await run(ws, "search_text", { query: "^foo$", regex: true });
    assert.deepStrictEqual(r.matches, [
      { path: "crlf.txt", line: 1, column: 1, text: "foo" },
      { path: "crlf.txt", line: 4, column: 1, text: "foo" },
      { path: "lf.txt", line: 1, column: 1, text: "foo" },
      { path: "nonl.txt", line: 2, column: 1, text: "foo" },
    ]);
    // The text never carries the \r.
    const lit = await run(ws, "search_text", { query: "foobar" });
    assert.deepStrictEqual(lit.matches, [{ path: "crlf.txt", line: 2, column: 1, text: "foobar" }]);
    const end = await run(ws, "search_text", { query: "o$", regex: true, path: "." });
    assert.deepStrictEqual(lineCols(end), [
      "crlf.txt:1:3",
      "crlf.txt:3:5",
      "crlf.txt:4:3",
      "lf.txt:1:3",
      "nonl.txt:2:3",
    ]);
    // Capture groups, alternation, classes.
    const alt = await run(ws, "search_text", { query: "(bar|\\s+foo)$", regex: true });
    assert.deepStrictEqual(lineCols(alt), ["crlf.txt:2:4", "crlf.txt:3:1"]);
  });
});

Deno.test("search_text: invalid queries are INVALID_ARGUMENT on query", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "a\n" });
    const ws = await openWorkspace(dir);
    await runError(ws, "search_text", { query: "(", regex: true }, "INVALID_ARGUMENT", "query");
    await runError(ws, "search_text", { query: "a[", regex: true }, "INVALID_ARGUMENT", "query");
    await runError(ws, "search_text", { query: "*a", regex: true }, "INVALID_ARGUMENT", "query");
    await runError(ws, "search_text", { query: "" }, "INVALID_ARGUMENT", "query");
    await runError(ws, "search_text", { query: "a\nb" }, "INVALID_ARGUMENT", "query");
    // "(" is fine as a literal.
    const r = await run(ws, "search_text", { query: "(" });
    assert.equal(r.matches.length, 0);
  });
});

Deno.test("search_text: contextLines before and after", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "c.txt": "one\ntwo\nHIT a\nfour\nfive\nsix\nHIT b\n",
      "crlf.txt": "x\r\nHIT\r\ny\r\n",
    });
    const ws = await openWorkspace(dir);
    const r = await run(ws, "search_text", { query: "HIT", contextLines: 2 });
    assert.deepStrictEqual(r.matches, [
      {
        path: "c.txt",
        line: 3,
        column: 1,
        text: "HIT a",
        before: ["one", "two"],
        after: ["four", "five"],
      },
      {
        path: "c.txt",
        line: 7,
        column: 1,
        text: "HIT b",
        before: ["five", "six"],
        after: [],
      },
      { path: "crlf.txt", line: 2, column: 1, text: "HIT", before: ["x"], after: ["y"] },
    ]);
    const first = await run(ws, "search_text", { query: "one", contextLines: 1 });
    assert.deepStrictEqual(first.matches[0].before, []);
    assert.deepStrictEqual(first.matches[0].after, ["two"]);
    // No context keys at all when contextLines is 0.
    const none = await run(ws, "search_text", { query: "one" });
    assert.deepStrictEqual(Object.keys(none.matches[0]).sort(), ["column", "line", "path", "text"]);
    await runError(
      ws,
      "search_text",
      { query: "x", contextLines: 11 },
      "INVALID_ARGUMENT",
      "contextLines",
    );
  });
});

Deno.test("search_text: include and exclude globs", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "a.md": "needle\n",
      "a.ts": "needle\n",
      "docs/b.md": "needle\n",
      "docs/old/c.md": "needle\n",
      "src/d.ts": "needle\n",
      "src/gen/e.ts": "needle\n",
    });
    const ws = await openWorkspace(dir);
    const paths = (r: { matches: { path: string }[] }) => r.matches.map((m) => m.path);
    assert.deepStrictEqual(
      paths(await run(ws, "search_text", { query: "needle", include: ["*.md"] })),
      ["a.md", "docs/b.md", "docs/old/c.md"],
    );
    assert.deepStrictEqual(
      paths(await run(ws, "search_text", { query: "needle", include: ["src/**/*.ts"] })),
      ["src/d.ts", "src/gen/e.ts"],
    );
    assert.deepStrictEqual(
      paths(
        await run(ws, "search_text", {
          query: "needle",
          include: ["*.md", "*.ts"],
          exclude: ["old", "src/gen"],
        }),
      ),
      ["a.md", "a.ts", "docs/b.md", "src/d.ts"],
    );
    assert.deepStrictEqual(
      paths(await run(ws, "search_text", { query: "needle", exclude: ["*.md"] })),
      ["a.ts", "src/d.ts", "src/gen/e.ts"],
    );
    // Globs are relative to path.
    assert.deepStrictEqual(
      paths(await run(ws, "search_text", { query: "needle", path: "docs", include: ["old/*.md"] })),
      ["docs/old/c.md"],
    );
    // Pruned directories are not visited at all.
    const pruned = await run(ws, "search_text", { query: "needle", exclude: ["docs"] });
    const full = await run(ws, "search_text", { query: "needle" });
    assert.equal(pruned.visited, full.visited - 3);
    assert.equal(pruned.filesSearched, full.filesSearched - 2);
  });
});

Deno.test("search_text: binary and too-large files are skipped and counted", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "text.txt": "needle\n",
      "nul.bin": new Uint8Array([...utf8("needle\n"), 0, 1, 2]),
      "latin1.txt": new Uint8Array([...utf8("needle caf"), 0xe9, 0x0a]),
      "big.txt": "needle " + "x".repeat(100) + "\n",
    });
    const ws = await openWorkspace(dir, { limits: { maxSearchFileBytes: 1000 } });
    const r = await run(ws, "search_text", { query: "needle", maxFileBytes: 50 });
    assert.deepStrictEqual(lineCols(r), ["text.txt:1:1"]);
    assert.deepStrictEqual(r.filesSkipped, { binary: 2, tooLarge: 1, unreadable: 0 });
    assert.equal(r.filesSearched, 1);
    assert.equal(r.filesMatched, 1);
    // With the default (the workspace limit) the big file is searched.
    const r2 = await run(ws, "search_text", { query: "needle" });
    assert.deepStrictEqual(lineCols(r2), ["big.txt:1:1", "text.txt:1:1"]);
    assert.deepStrictEqual(r2.filesSkipped, { binary: 2, tooLarge: 0, unreadable: 0 });
    const e = await runError(
      ws,
      "search_text",
      { query: "x", maxFileBytes: 1001 },
      "INVALID_ARGUMENT",
      "maxFileBytes",
    );
    assert.deepStrictEqual(e.details, { limit: 1000 });
  });
});

Deno.test("search_text: .gitignore respected unless respectGitignore is false; hidden names", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      ".gitignore": "dist/\n*.gen.ts\n",
      "dist/out.js": "needle\n",
      "a.gen.ts": "needle\n",
      "a.ts": "needle\n",
      "sub/.gitignore": "local.txt\n",
      "sub/local.txt": "needle\n",
      ".hidden.txt": "needle\n",
      ".git/config": "needle\n",
    });
    const ws = await openWorkspace(dir);
    const paths = (r: { matches: { path: string }[] }) => r.matches.map((m) => m.path);
    assert.deepStrictEqual(paths(await run(ws, "search_text", { query: "needle" })), ["a.ts"]);
    assert.deepStrictEqual(
      paths(await run(ws, "search_text", { query: "needle", respectGitignore: false })),
      ["a.gen.ts", "a.ts", "dist/out.js", "sub/local.txt"],
    );
    assert.deepStrictEqual(
      paths(await run(ws, "search_text", { query: "needle", includeHidden: true })),
      [".hidden.txt", "a.ts"],
    );
    assert.deepStrictEqual(
      paths(
        await run(ws, "search_text", {
          query: "needle",
          includeHidden: true,
          respectGitignore: false,
        }),
      ),
      [".git/config", ".hidden.txt", "a.gen.ts", "a.ts", "dist/out.js", "sub/local.txt"],
    );
  });
});

Deno.test("search_text: maxMatches truncation", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "m\nm\nm\n", "b.txt": "m\nm\n" });
    const ws = await openWorkspace(dir, { limits: { maxMatches: 4 } });
    const r = await run(ws, "search_text", { query: "m", maxMatches: 2 });
    assert.deepStrictEqual(lineCols(r), ["a.txt:1:1", "a.txt:2:1"]);
    assert.equal(r.truncated, true);
    assert.equal(r.truncatedReason, "maxMatches");
    const r4 = await run(ws, "search_text", { query: "m" });
    assert.deepStrictEqual(lineCols(r4), ["a.txt:1:1", "a.txt:2:1", "a.txt:3:1", "b.txt:1:1"]);
    assert.equal(r4.truncatedReason, "maxMatches");
    assert.equal(r4.filesMatched, 2);
    // Exactly maxMatches matches: not truncated.
    const exact = await run(ws, "search_text", {
      query: "m",
      path: ".",
      include: ["a.txt"],
      maxMatches: 3,
    });
    assert.equal(exact.matches.length, 3);
    assert.equal(exact.truncated, false);
    await runError(
      ws,
      "search_text",
      { query: "m", maxMatches: 5 },
      "INVALID_ARGUMENT",
      "maxMatches",
    );
  });
});

Deno.test("search_text: a 3000-character line is clipped around the match", async () => {
  await withTempDir(async (dir) => {
    const line = "x".repeat(2000) + "foo" + "y".repeat(997);
    const early = "foo" + "z".repeat(2997);
    const late = "w".repeat(2997) + "foo";
    await makeTree(dir, { "long.txt": `${line}\n${early}\n${late}\nshort foo\n` });
    const ws = await openWorkspace(dir);
    const r = await run(ws, "search_text", { query: "foo", contextLines: 1 });
    const [m1, m2, m3, m4] = r.matches;
    assert.equal(m1.column, 2001);
    assert.equal(m1.textStartColumn, 1901);
    assert.equal(m1.text, line.slice(1900, 2900));
    assert.equal(m1.text.length, 1000);
    assert.equal(m1.textStartColumn! + m1.text.indexOf("foo"), m1.column);
    // Context lines are clipped to the same length.
    assert.equal(m1.after![0], early.slice(0, 1000));
    assert.equal(m2.column, 1);
    assert.equal(m2.textStartColumn, undefined);
    assert.equal(m2.text, early.slice(0, 1000));
    assert.equal(m3.column, 2998);
    assert.equal(m3.textStartColumn, 2001);
    assert.equal(m3.text, late.slice(2000));
    assert.ok(m3.text.endsWith("foo"));
    assert.equal(m4.text, "short foo");
    assert.equal(m4.textStartColumn, undefined);
  });
});

Deno.test("search_text: errors on the starting path", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "f.txt": "x" });
    const ws = await openWorkspace(dir);
    await runError(ws, "search_text", { query: "x", path: "f.txt" }, "NOT_A_DIRECTORY", "path");
    await runError(ws, "search_text", { query: "x", path: "missing" }, "NOT_FOUND", "path");
    await runError(
      ws,
      "search_text",
      { query: "x", include: [""] },
      "INVALID_ARGUMENT",
      "include[0]",
    );
  });
});

/** Writes n small files in n/100 directories. */
async function bigTree(dir: string, n: number): Promise<void> {
  const dirs = Math.ceil(n / 100);
  for (let d = 0; d < dirs; d++) await Deno.mkdir(`${dir}/d${String(d).padStart(3, "0")}`);
  const body = "lorem ipsum dolor sit amet\nneedle in a haystack\n".repeat(20);
  const jobs: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const d = String(Math.floor(i / 100)).padStart(3, "0");
    jobs.push(Deno.writeTextFile(`${dir}/d${d}/f${String(i).padStart(5, "0")}.txt`, body));
    if (jobs.length === 256) await Promise.all(jobs.splice(0));
  }
  await Promise.all(jobs);
}

/**
 * One 5,000-file tree for the tests below (they only search it), made on first use and removed
 * when the test module unloads.
 */
let shared: Promise<string> | undefined;
function sharedBigTree(): Promise<string> {
  shared ??= (async () => {
    const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-search-big-" }));
    globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
    await bigTree(dir, 5000);
    return dir;
  })();
  return shared;
}

Deno.test("search_text: cancellation rejects with CANCELLED promptly (abort after 20 ms)", async () => {
  const dir = await sharedBigTree();
  const ws = await openWorkspace(dir, { limits: { maxMatches: 100_000 } });
  const controller = new AbortController();
  let abortedAt = 0;
  const timer = setTimeout(() => {
    abortedAt = performance.now();
    controller.abort();
  }, 20);
  try {
    const p = searchText(ws, { query: "needle", maxMatches: 100_000 }, {
      signal: controller.signal,
    });
    const e = await expectError(p, "CANCELLED");
    // What happened, not how fast: the abort came while it ran and the search ended CANCELLED
    // (the 100 ms guarantee is the engine's, in its own tests).
    assert.ok(abortedAt > 0, "the search was still running when aborted");
    assert.ok(e.message.length > 0);
  } finally {
    clearTimeout(timer);
  }
});

Deno.test("search_text: progress is reported, and abort from the first progress callback cancels", async () => {
  const dir = await sharedBigTree();
  const ws = await openWorkspace(dir, {
    limits: { maxMatches: 100_000, maxResultBytes: 64 * 1024 * 1024 },
  });
  // First a full run: the progress it reports (if it runs long enough to) only grows.
  const seen: { filesSearched: number; matches: number }[] = [];
  const full = await searchText(ws, { query: "needle", maxMatches: 100_000 }, {
    onProgress: (p) => seen.push(p),
  });
  assert.equal(full.filesSearched, 5000);
  assert.equal(full.matches.length, 100_000);
  assert.equal(full.truncated, false);
  for (let i = 1; i < seen.length; i++) {
    assert.ok(seen[i].filesSearched >= seen[i - 1].filesSearched);
  }
  if (seen.length > 0) assert.ok(seen[0].filesSearched > 0 && seen[0].filesSearched < 5000);

  // Then abort on the first progress callback.
  const controller = new AbortController();
  let calls = 0;
  const p = searchText(ws, { query: "needle", maxMatches: 100_000 }, {
    signal: controller.signal,
    onProgress: () => {
      calls++;
      if (!controller.signal.aborted) controller.abort();
    },
  });
  let resolved = false;
  try {
    await p;
    resolved = true;
  } catch (err) {
    assert.equal((err as { code?: string }).code, "CANCELLED");
    assert.equal(calls, 1, "no progress after the abort");
  }
  // Only a run too short to report progress may complete: once progress came (and the abort
  // with it) the search must end CANCELLED.
  if (resolved) assert.equal(calls, 0, "a search that reported progress was aborted");
});

Deno.test("search_text: through runOperation, an aborted signal cancels and progress is mapped", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "x\n" });
    const ws = await openWorkspace(dir);
    const controller = new AbortController();
    controller.abort();
    await expectError(
      (async () => await run(ws, "search_text", { query: "x" }, { signal: controller.signal }))(),
      "CANCELLED",
    );
    await expectError(
      (async () => await run(ws, "list_directory", {}, { signal: controller.signal }))(),
      "CANCELLED",
    );
    const r = await run(ws, "search_text", { query: "x" }, { onProgress: () => {} });
    assert.equal(r.matches.length, 1);
  });
});
