/**
 * search_text's byte-level paths (decision 0035): literal hits found in bytes with multibyte
 * UTF-8, BOMs and hits across scan windows; the regex required-literal prefilter; the match
 * size counted without serializing; whole results equal across pool sizes.
 */
import assert from "node:assert/strict";
import { Workspace } from "../../mod.ts";
import { literalByteFinder } from "../../src/workspace/byte_scan.ts";
import { requiredLiteral } from "../../src/workspace/regex/required_literal.ts";
import type { SearchMatch } from "../../src/workspace/search.ts";
import { matchJsonBytes } from "../../src/workspace/search_matches.ts";
import { jsonBytes } from "../../src/workspace/budget.ts";
import { run, withTempDir } from "./_helpers.ts";

function prng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

const WORDS = [
  "foo",
  "FOO",
  "é",
  "É",
  "fooé",
  "日本",
  "日本語",
  "😀",
  "😀x",
  "ok",
  "OK",
  "o\u212a", // o + KELVIN SIGN: folds to "ok"
  "\u017ft", // LONG S + t: folds to "st"
  "st",
  "\ufeff",
  "\t",
  "x",
];

function randomText(rand: () => number): string {
  const lines: string[] = [];
  const n = Math.floor(rand() * 30);
  for (let i = 0; i < n; i++) {
    const k = Math.floor(rand() * 7);
    lines.push(Array.from({ length: k }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(" "));
  }
  const eol = rand() < 0.3 ? "\r\n" : "\n";
  return (rand() < 0.2 ? "\ufeff" : "") + lines.join(eol) + (rand() < 0.5 ? eol : "");
}

type Line = { path: string; line: number; column: number; text: string };

/** A line-by-line reference over decoded text (the BOM is not text), JavaScript regexes. */
function reference(
  files: [string, string][],
  source: string,
  o: { caseSensitive: boolean; regex: boolean; wholeWord: boolean },
): Line[] {
  const src = o.regex ? source : source.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const body = o.wholeWord ? `(?<![\\p{L}\\p{N}_])(?:${src})(?![\\p{L}\\p{N}_])` : src;
  const re = new RegExp(body, "u" + (o.caseSensitive ? "" : "i"));
  const out: Line[] = [];
  for (const [path, raw] of [...files].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const text = raw.startsWith("\ufeff") ? raw.slice(1) : raw;
    const lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    lines.forEach((l, i) => {
      const line = l.endsWith("\r") ? l.slice(0, -1) : l;
      const m = re.exec(line);
      if (m) out.push({ path, line: i + 1, column: m.index + 1, text: line });
    });
  }
  return out;
}

function lines(r: { matches: unknown }): Line[] {
  return (r.matches as Line[]).map((m) => ({
    path: m.path,
    line: m.line,
    column: m.column,
    text: m.text,
  }));
}

Deno.test("byte scans equal a decoded reference: multibyte UTF-8, BOMs, folding, regex prefilters", async () => {
  await withTempDir(async (dir) => {
    const rand = prng(7);
    const files: [string, string][] = [];
    for (let i = 0; i < 80; i++) {
      const name = `f${String(i).padStart(2, "0")}.txt`;
      const text = randomText(rand);
      files.push([name, text]);
      await Deno.writeTextFile(`${dir}/${name}`, text);
    }
    const ws = await Workspace.open({ root: dir, limits: { maxMatches: 100_000 } });
    const cases: {
      query: string;
      regex: boolean;
      caseSensitive: boolean;
      wholeWord?: boolean;
      ref?: { query: string; caseSensitive: boolean };
    }[] = [
      { query: "é", regex: false, caseSensitive: true },
      { query: "日本語", regex: false, caseSensitive: true },
      { query: "😀x", regex: false, caseSensitive: true },
      { query: "\ufeff", regex: false, caseSensitive: true },
      { query: "ok", regex: false, caseSensitive: false }, // ASCII on bytes, with KELVIN SIGN
      { query: "ST", regex: false, caseSensitive: false }, // ASCII on bytes, with LONG S
      { query: "FOOÉ", regex: false, caseSensitive: false }, // non-ASCII: decoded path
      { query: "foo", regex: false, caseSensitive: true, wholeWord: true },
      { query: "ok", regex: false, caseSensitive: false, wholeWord: true },
      { query: "fooé+", regex: true, caseSensitive: true }, // prefilter "foo"
      { query: "日本[語]?", regex: true, caseSensitive: true }, // prefilter "日本"
      { query: "o[kK]", regex: true, caseSensitive: false }, // one-byte literal: no prefilter
      // A flag group: no prefilter.
      {
        query: "(?i)foo",
        regex: true,
        caseSensitive: true,
        ref: { query: "foo", caseSensitive: false },
      },
      { query: "x|ok", regex: true, caseSensitive: true }, // alternation: no prefilter
      { query: "ok x", regex: true, caseSensitive: false }, // ASCII literal, folded
      { query: "😀x", regex: true, caseSensitive: true, wholeWord: true },
    ];
    for (const { ref, ...c } of cases) {
      const got = await run(ws, "search_text", { ...c, maxMatches: 100_000 });
      const want = reference(files, ref?.query ?? c.query, { wholeWord: false, ...c, ...ref });
      assert.deepEqual(lines(got), want, JSON.stringify(c));
      assert.equal(got.filesSearched, files.length);
    }
  });
});

Deno.test("literal and prefiltered regex hits straddling the 1 MiB scan windows are found", async () => {
  await withTempDir(async (dir) => {
    const W = 1 << 20;
    const filler = "abcdefghi\n"; // 10 bytes a line
    let text = filler.repeat(Math.ceil((2 * W + 50) / filler.length));
    const hit = "NEEDLE_é😀_7";
    // Hits starting 3 bytes before each window boundary (and one exactly on it).
    for (const at of [W - 3, 2 * W - 3, W + 40]) {
      const lineStart = text.lastIndexOf("\n", at - 1) + 1; // ASCII filler: chars = bytes
      text = text.slice(0, lineStart) + hit + text.slice(lineStart + hit.length);
    }
    await Deno.writeTextFile(`${dir}/big.txt`, text);
    const ws = await Workspace.open({ root: dir });
    const want = reference([["big.txt", text]], hit, {
      caseSensitive: true,
      regex: false,
      wholeWord: false,
    });
    assert.equal(want.length, 3);
    assert.deepEqual(lines(await run(ws, "search_text", { query: hit })), want);
    assert.deepEqual(
      lines(await run(ws, "search_text", { query: "needle_", caseSensitive: false })),
      want,
    );
    assert.deepEqual(
      lines(await run(ws, "search_text", { query: "NEEDLE_é😀_[0-9]", regex: true })),
      want,
    );
  });
});

Deno.test("requiredLiteral: only strings every match contains, none where none is required", () => {
  const table: [string, string | null][] = [
    ["fn_[0-9]+\\(", "fn_"],
    ["foo", "foo"],
    ["a|b", null],
    ["foo|bar", null],
    ["(foo|bar)", null],
    ["(foo)?barx", "barx"],
    ["fo?o", "f"],
    ["ab*cd", "cd"],
    ["x{2}y", null],
    ["abc{2}", "ab"],
    ["(?i)abc", null],
    ["a(?i:b)c", null],
    ["[abc]def", "def"],
    ["\\Qa.b\\E+", "a.b"],
    ["a\\.b", "a.b"],
    ["\\d+foo", "foo"],
    ["foo(bar|baz)quxx", "quxx"],
    ["foo\\b", "foo"],
    ["ab+?cd", "ab"],
    [".*", null],
    ["^$", null],
    ["日本[0-9]", "日本"],
    ["x(a|b)*|yz", null],
  ];
  for (const [pattern, want] of table) assert.equal(requiredLiteral(pattern), want, pattern);
});

Deno.test("matchJsonBytes equals the JSON size of a match", () => {
  const rand = prng(3);
  const pieces = ["a", "é", "😀", '"', "\\", "\n", "\u0001", "\ud800", "日", " ", "\u2028"];
  const str = () =>
    Array.from(
      { length: Math.floor(rand() * 12) },
      () => pieces[Math.floor(rand() * pieces.length)],
    ).join("");
  for (let i = 0; i < 300; i++) {
    const m: SearchMatch = {
      path: str() || "p",
      line: Math.floor(rand() * 100000),
      column: 1 + Math.floor(rand() * 5000),
      text: str(),
    };
    if (rand() < 0.3) m.textStartColumn = 1 + Math.floor(rand() * 900);
    if (rand() < 0.4) {
      m.before = Array.from({ length: Math.floor(rand() * 3) }, str);
      m.after = Array.from({ length: Math.floor(rand() * 3) }, str);
    }
    if (rand() < 0.3) {
      m.clippedLines = Array.from({ length: 1 + Math.floor(rand() * 3) }, (_, k) => k * 7);
    }
    assert.equal(matchJsonBytes(m, jsonBytes(m.path)), jsonBytes(m), JSON.stringify(m));
  }
});

Deno.test("whole search results are the same with 1 worker, 2 workers and inline", async () => {
  await withTempDir(async (dir) => {
    const rand = prng(11);
    for (let d = 0; d < 6; d++) {
      await Deno.mkdir(`${dir}/d${d}/sub`, { recursive: true });
      for (let i = 0; i < 25; i++) {
        const where = i % 3 === 0 ? `d${d}/sub` : `d${d}`;
        await Deno.writeTextFile(`${dir}/${where}/f${i}.txt`, randomText(rand));
      }
    }
    await Deno.writeFile(`${dir}/d0/bin.dat`, new Uint8Array([1, 0, 2, 0x66, 0x6f, 0x6f]));
    await Deno.writeFile(`${dir}/d1/latin1.txt`, new Uint8Array([0x66, 0x6f, 0x6f, 0xe9]));
    await Deno.writeTextFile(`${dir}/.gitignore`, "d2/sub/\n");
    const open = (o: { engine?: "inline"; engineSize?: number }, limits = {}) =>
      Workspace.open({ root: dir, ...o, limits: { maxMatches: 100_000, ...limits } });
    const variants = [
      await open({ engineSize: 1 }),
      await open({ engineSize: 2 }),
      await open({ engineSize: 3 }),
      await open({ engine: "inline" }),
    ];
    const capped = [
      await open({ engineSize: 1 }, { maxResultBytes: 6000 }),
      await open({ engineSize: 2 }, { maxResultBytes: 6000 }),
      await open({ engineSize: 1 }, { maxVisited: 90 }),
      await open({ engineSize: 2 }, { maxVisited: 90 }),
    ];
    const queries = [
      { query: "foo" },
      { query: "ok", caseSensitive: false, contextLines: 2 },
      { query: "é", maxMatches: 7 },
      { query: "é", maxMatches: 1 },
      { query: "x", maxMatches: 40, contextLines: 1 },
      { query: "fo+", regex: true, include: ["**/sub/**"] },
      { query: "^$", regex: true, exclude: ["d3"] },
      { query: "nothing-here" },
    ];
    for (const q of queries) {
      const results = [];
      for (const ws of variants) results.push(await run(ws, "search_text", q));
      for (const r of results.slice(1)) assert.deepEqual(r, results[0], JSON.stringify(q));
      if (!q.include && !q.maxMatches) {
        assert.equal(results[0].filesSkipped.binary, 2, "bin.dat, latin1.txt");
      }
      for (let i = 0; i < capped.length; i += 2) {
        const one = await run(capped[i], "search_text", q);
        const two = await run(capped[i + 1], "search_text", q);
        assert.deepEqual(two, one, JSON.stringify(q) + " capped");
      }
    }
    const truncated = await run(capped[1], "search_text", { query: "x" });
    assert.equal(truncated.truncatedReason, "maxResultBytes");
    const visitedCap = await run(capped[3], "search_text", { query: "x" });
    assert.equal(visitedCap.truncatedReason, "maxVisited");
  });
});

Deno.test("context lines: one empty line before the match is one line, in both scan paths", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/a.txt`, "\nfoo\n");
    const ws = await Workspace.open({ root: dir });
    for (
      const args of [{ query: "foo" }, { query: "fo+", regex: true }, { query: "f.o", regex: true }]
    ) {
      const r = await run(ws, "search_text", { ...args, contextLines: 2 });
      assert.deepEqual(r.matches.map((m) => m.before), [[""]], JSON.stringify(args));
    }
  });
});

Deno.test("a long case-insensitive literal is scanned in short windows: a stop is seen within milliseconds", () => {
  const literal = "a".repeat(2000) + "b" + "a".repeat(2000);
  const bf = literalByteFinder(literal, false);
  assert.ok(bf !== null);
  // The longest hit is the literal's bytes (k and s count their non-ASCII folds: 3 and 2).
  assert.equal(bf.pad, literal.length);
  assert.equal(literalByteFinder("Ks", false)?.pad, 5);
  // One 64 KiB chunk of start positions (what search_text hands the finder at a time) was one
  // call, about 100 ms here for this literal; in windows of 4,001 positions it checks 16 times.
  let checks = 0;
  const chunk = "a".repeat(64 * 1024 + bf.pad);
  assert.equal(bf.find(chunk, 0, () => checks++), -1);
  assert.ok(checks >= 15, `stop checks: ${checks}`);
  // A check that throws stops the scan.
  assert.throws(() =>
    bf.find(chunk, 0, () => {
      throw new Error("stopped");
    }), /stopped/);
  // Hits across window boundaries are found where they start, in any case.
  const hit = "a".repeat(2000) + "B" + "A".repeat(2000);
  for (const at of [0, 4000, 4001, 10_000]) {
    const text = "c".repeat(at) + hit + "c".repeat(9000);
    assert.equal(bf.find(text, 0, () => {}), at, `at ${at}`);
  }
});
