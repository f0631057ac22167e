/** compileQuery: RE2 columns in UTF-16 units, wholeWord around regexes, case folding, engines. */
import assert from "node:assert/strict";
import { compileQuery, MAX_REGEX_LENGTH } from "../../src/workspace/query.ts";
import { WorkspaceError } from "../../src/workspace/errors.ts";
import { makeTree, openWorkspace, run, withTempDir } from "./_helpers.ts";

const find = (query: string, line: string, opts: Record<string, boolean> = {}, from = 0) =>
  compileQuery({ query, regex: true, ...opts }).find(line, from);

Deno.test("regex columns are UTF-16 indexes, also after characters outside the BMP", () => {
  const lines = [
    "foo",
    "😀foo",
    "😀😀 foo",
    "𝒜𝒜𝒜-foo",
    "é😀ä foo 😀 foo",
    "\u{10400}\u{10428}x foo",
  ];
  for (const line of lines) {
    const literal = compileQuery({ query: "foo" }).find(line, 0);
    assert.equal(literal, line.indexOf("foo"));
    assert.equal(find("fo+", line), literal, line);
    assert.equal(find("f[o]{2}", line), literal, line);
    assert.equal(find("(?:x|f)oo", line), literal, line);
  }
  // The match itself outside the BMP, and "." as one code point (two units).
  assert.equal(find("😀", "ab😀"), 2);
  assert.equal(find("b.c", "ab😀c"), 1);
  assert.equal(find("b.c", "ab😀c".replace("😀", "")), -1);
  assert.equal(find("a.c", "xa😀c"), 1);
  assert.equal(find("c", "😀😀c"), 4);
  // from is a UTF-16 index too, and the character before it is seen (\b, ^).
  assert.equal(find("foo", "😀foo foo", {}, 3), 6);
  assert.equal(find("\\bfoo", "😀xfoo foo", {}, 4), 7);
  assert.equal(find("^foo", "foo foo", {}, 1), -1);
});

Deno.test("regex columns equal JavaScript's on safe patterns (both engines agree here)", () => {
  const patterns = ["o+", "[a-z]+o", "\\d+", "^\\s*\\w", "(ab|b)c", "x?y", "é+", "$"];
  const lines = ["foo", "  a1bc", "😀 éé 12", "xyz", "ab😀bc", "", "😀"];
  for (const p of patterns) {
    const js = new RegExp(p, "u");
    for (const line of lines) {
      const m = js.exec(line);
      assert.equal(find(p, line), m ? m.index : -1, `${p} on ${line}`);
    }
  }
});

Deno.test("wholeWord regexes: Unicode word boundaries, any end that is a boundary", () => {
  const ww = (q: string, line: string, opts: Record<string, boolean> = {}) =>
    find(q, line, { wholeWord: true, ...opts });
  assert.equal(ww("fo+", "foo"), 0);
  assert.equal(ww("fo+", "foobar"), -1);
  assert.equal(ww("fo+", "xfoo foo"), 5);
  assert.equal(ww("fo+", "éfoo foo"), 5); // é is a letter
  assert.equal(ww("fo+", "2foo_ foo!"), 6); // digits and _ are word characters
  assert.equal(ww("fo+", "😀foo"), 2); // an emoji is not: column after the surrogate pair
  assert.equal(ww("fo+", "\u{1D49C}foo"), -1); // 𝒜 is a letter outside the BMP
  assert.equal(ww("fo+", "\u{1D49C} foo"), 3);
  // Lazy: the lookaround form backtracked to a longer end; the RE2 form finds it too.
  assert.equal(ww("fo+?", "foo bar"), 0);
  assert.equal(ww("a|ab", "ab"), 0);
  // An alternation is bounded as a whole.
  assert.equal(ww("foo|bar", "foobar bar"), 7);
  // Case-insensitive, and the boundary class is not folded into other characters.
  assert.equal(ww("FOO", "xfoo Foo", { caseSensitive: false }), 5);
  // A \Q the query leaves open does not swallow the boundary.
  assert.equal(ww("\\Qa.b", "xa.b a.b"), 5);
  assert.equal(ww("\\Qa.b", "a.bc"), -1);
  // The query's own groups and flags stay inside it.
  assert.equal(ww("(?i)f(o)+", "xFOO FOO"), 5);
  // Many failed candidates on one line: linear (finishes at once).
  const line = "ab".repeat(50_000) + " ab";
  assert.equal(ww("ab", line), 100_001);
  // From inside a line the boundary is the character before `from`.
  assert.equal(find("foo", "foo foo", { wholeWord: true }, 1), 4);
  assert.equal(find("foo", "xfoo", { wholeWord: true }, 1), -1);
  assert.equal(find("foo", " foo", { wholeWord: true }, 1), 1);
  assert.equal(find("foo", "😀foo", { wholeWord: true }, 2), 2);
});

Deno.test("wholeWord regexes equal the former lookaround form on a table of patterns x lines", () => {
  const patterns = ["fo+", "-?foo", " foo", "a|ab", "fo+?", "o", "\\w+", "é+", "[^ ]+", "x?o", "$"];
  const lines = [
    "foo",
    " foo",
    "-foo",
    "xfoo -foo",
    "ab a",
    "😀foo é éé",
    "𝒜o o",
    "",
    "foo_ foo",
    "a-b",
  ];
  for (const p of patterns) {
    const js = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${p})(?![\\p{L}\\p{N}_])`, "u");
    for (const line of lines) {
      const m = js.exec(line);
      assert.equal(find(p, line, { wholeWord: true }), m ? m.index : -1, `${p} on "${line}"`);
    }
  }
  // Where they differ: V8 lets an empty match fall between the halves of a surrogate pair.
  assert.equal(/(?<![\p{L}])(?:x?)(?![\p{L}])/u.exec("𝒜")?.index, 1);
  assert.equal(find("x?", "𝒜", { wholeWord: true }), -1);
});

Deno.test("case-insensitive regexes fold Unicode (RE2 simple folding)", () => {
  const ci = { caseSensitive: false };
  assert.equal(find("ärger", "xÄRGER", ci), 1);
  assert.equal(find("\u{10400}", "x\u{10428}", ci), 1); // Deseret, outside the BMP
  assert.equal(find("k", "\u212a", ci), 0); // Kelvin sign
  assert.equal(find("(?-i:k)", "K", ci), -1);
  assert.equal(find("ärger", "xÄRGER"), -1);
});

Deno.test("engines: regexes are given lines; literals are whole-text and unchanged", () => {
  assert.equal(compileQuery({ query: "a", regex: true }).wholeText, false);
  for (const opts of [{}, { caseSensitive: false }, { wholeWord: true }]) {
    const m = compileQuery({ query: "a.b(", ...opts });
    assert.equal(m.wholeText, true);
    assert.equal(m.find("xx\na.b(\n", 0), 3);
    assert.equal(m.find("xx\na.b(\n", 4), -1);
  }
  // Escaped literals with every regex metacharacter match only themselves.
  const meta = "^(a+)+$|[x]{2}\\1.*?/";
  for (const opts of [{}, { caseSensitive: false }, { wholeWord: true }]) {
    assert.equal(compileQuery({ query: meta, ...opts }).find(`q ${meta} q`, 0), 2);
  }
});

Deno.test("a regex longer than MAX_REGEX_LENGTH is INVALID_ARGUMENT naming the limit", () => {
  assert.throws(
    () => compileQuery({ query: "a".repeat(MAX_REGEX_LENGTH + 1), regex: true }),
    (e: unknown) =>
      e instanceof WorkspaceError && e.code === "INVALID_ARGUMENT" && e.argument === "query" &&
      e.details?.limit === MAX_REGEX_LENGTH,
  );
  // The same text as a literal has no such limit.
  assert.equal(compileQuery({ query: "a".repeat(MAX_REGEX_LENGTH + 1) }).find("a", 0), -1);
});

Deno.test("search_text reports RE2 regex columns in UTF-16 units, as literal columns", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "e.txt": "😀😀 foo\r\n𝒜foo 😀foo\nplain foo\n" });
    const ws = await openWorkspace(dir);
    const cols = async (args: Record<string, unknown>) =>
      (await run(ws, "search_text", args)).matches.map((m) => `${m.line}:${m.column}`);
    assert.deepEqual(await cols({ query: "foo" }), ["1:6", "2:3", "3:7"]);
    assert.deepEqual(await cols({ query: "fo+$", regex: true }), ["1:6", "2:9", "3:7"]);
    assert.deepEqual(await cols({ query: "fo+", regex: true, wholeWord: true }), [
      "1:6",
      "2:9",
      "3:7",
    ]);
    assert.deepEqual(await cols({ query: "FOO", wholeWord: true, caseSensitive: false }), [
      "1:6",
      "2:9",
      "3:7",
    ]);
  });
});
