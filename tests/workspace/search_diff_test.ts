/** search_text against a plain line-by-line reference, on seeded random texts (CRLF, long lines, no final newline). */
import assert from "node:assert/strict";
import { openWorkspace, run, withTempDir } from "./_helpers.ts";

function prng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

const WORDS = [
  "foo",
  "Foo",
  "FOO",
  "bar",
  "foobar",
  "xfoo",
  "foo_",
  "é",
  "fooé",
  "  ",
  "\t",
  "baz",
  "qux",
];

function randomText(rand: () => number): string {
  const lines: string[] = [];
  const n = Math.floor(rand() * 40);
  for (let i = 0; i < n; i++) {
    const k = Math.floor(rand() * 8);
    lines.push(Array.from({ length: k }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(" "));
  }
  const eol = rand() < 0.3 ? "\r\n" : "\n";
  return lines.join(eol) + (rand() < 0.5 ? eol : "");
}

function reference(
  files: [string, string][],
  query: string,
  opts: { caseSensitive: boolean; wholeWord: boolean; regex: boolean },
) {
  const src = opts.regex ? query : query.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const body = opts.wholeWord ? `(?<![\\p{L}\\p{N}_])(?:${src})(?![\\p{L}\\p{N}_])` : src;
  const re = new RegExp(body, "u" + (opts.caseSensitive ? "" : "i"));
  const out: { path: string; line: number; column: number; text: string }[] = [];
  for (const [path, text] of files) {
    const lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    lines.forEach((raw, i) => {
      const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      const m = re.exec(line);
      if (m) out.push({ path, line: i + 1, column: m.index + 1, text: line });
    });
  }
  return out;
}

Deno.test("search_text equals a line-by-line reference on 200 random files, for every mode", async () => {
  await withTempDir(async (dir) => {
    const rand = prng(42);
    const files: [string, string][] = [];
    for (let i = 0; i < 200; i++) {
      const name = `f${String(i).padStart(3, "0")}.txt`;
      const text = randomText(rand);
      files.push([name, text]);
      await Deno.writeTextFile(`${dir}/${name}`, text);
    }
    const ws = await openWorkspace(dir, { limits: { maxMatches: 100_000 } });
    for (const query of ["foo", "é", "foo b", "^foo", "o$", "fo+\\b"]) {
      for (const caseSensitive of [true, false]) {
        for (const wholeWord of [false, true]) {
          for (const regex of [false, true]) {
            if (!regex && /[\^$\\+]/.test(query)) continue;
            const got = await run(ws, "search_text", {
              query,
              caseSensitive,
              wholeWord,
              regex,
              maxMatches: 100_000,
            });
            const want = reference(files, query, { caseSensitive, wholeWord, regex });
            const label = JSON.stringify({ query, caseSensitive, wholeWord, regex });
            assert.deepEqual(
              (got.matches as { path: string; line: number; column: number; text: string }[]).map((
                m,
              ) => ({ path: m.path, line: m.line, column: m.column, text: m.text })),
              want,
              label,
            );
            assert.equal(got.filesMatched, new Set(want.map((m) => m.path)).size, label);
          }
        }
      }
    }
  });
});

Deno.test("search_text context lines at file edges and across CRLF", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/a.txt`, "one\r\ntwo\r\nthree hit\r\nfour\r\nfive");
    await Deno.writeTextFile(`${dir}/b.txt`, "hit first\nsecond\n");
    const ws = await openWorkspace(dir);
    const r = await run(ws, "search_text", { query: "hit", contextLines: 3 });
    const ms = r.matches as { path: string; line: number; before?: string[]; after?: string[] }[];
    assert.deepEqual(ms.map((m) => [m.path, m.line, m.before, m.after]), [
      ["a.txt", 3, ["one", "two"], ["four", "five"]],
      ["b.txt", 1, [], ["second"]],
    ]);
  });
});
