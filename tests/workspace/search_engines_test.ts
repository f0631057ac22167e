/**
 * The native search engine against the built-in one (decision 0054): every search_text case of
 * the contract table (tests/contract/cases.ts), and a table of cases where ripgrep's rules differ
 * from wmcp's (gitignore, hidden names, .git, BOM, CRLF, binary files, Unicode classes and case
 * folding, anchors, quotes, odd names, links, FIFOs, caps, hostile patterns), each run on one
 * workspace with a real engine broker (ripgrep and find in their own sandbox) and without, in
 * process. Results must be identical but for the documented exception (INTERFACES.md,
 * "search_text engines"): a file the native engine did not read is counted as searched, so
 * `filesSkipped.binary` and `filesSkipped.unreadable` count only files that were read, and
 * `filesSearched` holds the others; their sum is the same. Every case also asserts the native
 * path ran: the prefilter answered (or, for a pattern without a ripgrep form, was not asked).
 */
import assert from "node:assert/strict";
import { runOperation, Workspace, WorkspaceError } from "../../mod.ts";
import { CASES } from "../contract/cases.ts";
import { type Case, CONFIGS, type Fixture, materialize, type Paths } from "../contract/_model.ts";
import { configOf } from "../contract/_adapters.ts";
import { makeTempDir, removeDir } from "../_support/fs.ts";
import { nativeAvailable, startNative, type TestNative } from "../_support/native.ts";
import { rgPrefilter } from "../../src/workspace/regex/rg.ts";
import { LINES_MIN_MATCHES } from "../../src/workspace/native/client.ts";

const NUL_EARLY = new Uint8Array([...new TextEncoder().encode("needle\n"), 0, 1, 2, 10]);
const NUL_LATE = new TextEncoder().encode(`needle\n${"x".repeat(9000)}\n\0\n`);
const NOT_UTF8 = new Uint8Array([...new TextEncoder().encode("needle "), 0xff, 0xfe, 10]);

/** One extra case: a fixture and the search_text arguments (paths relative to the root). */
interface Extra {
  name: string;
  fixture: Fixture;
  args: Record<string, unknown>;
  limits?: Record<string, number>;
  /** The answer must have come with candidate lines for this many files (decision 0067). */
  linesFiles?: number;
}

const TREE: Fixture = {
  ".gitignore": "ignored/\n*.log\n!keep.log\n",
  "a.txt": "needle one\nNEEDLE two\n",
  "ignored/x.txt": "needle ignored\n",
  "b.log": "needle in a log\n",
  "keep.log": "needle kept\n",
  "sub/.gitignore": "*.md\n!/sub/ok.md\n",
  "sub/c.md": "needle md\n",
  "sub/d.txt": "needle sub\n",
  ".hidden/e.txt": "needle hidden\n",
  ".env": "needle=1\n",
  ".git/config": "needle in git\n",
  "repo/.git": "gitdir: ../elsewhere needle\n",
  "-x/f.txt": "needle dash\n",
  "with space.txt": "needle space\n",
  "caf\u00e9/\u00e9.txt": "needle accent\n",
};

/**
 * A case of the candidate lines (decision 0067): its search asks for LINES_MIN_MATCHES matches
 * unless it names its own maxMatches, on a workspace whose limit allows more.
 */
function asksLines(e: Extra): Extra {
  return {
    ...e,
    args: { maxMatches: LINES_MIN_MATCHES, ...e.args },
    limits: { maxMatches: 2 * LINES_MIN_MATCHES, ...e.limits },
  };
}

const EXTRAS: Extra[] = [
  // Candidate lines (decision 0067): runs of lines rg gave, scanned as the file would be; asked
  // for when maxMatches is at least LINES_MIN_MATCHES.
  asksLines({
    name: "lines: context at the start and the end, an empty last line",
    fixture: { "ctx.txt": "needle top\nx\ny\nz\nq\nmid needle\n\n" },
    args: { query: "needle", contextLines: 2 },
    linesFiles: 1,
  }),
  asksLines({
    name: "lines: CRLF, adjacent matches, runs apart",
    fixture: {
      "crlf.txt": "a\r\nneedle 1\r\nneedle 2\r\nb\r\nc\r\nd\r\ne\r\nf\r\nneedle 3\r\n",
      "far.txt": `needle\n${"x\n".repeat(50)}needle\n${"y\n".repeat(50)}`,
    },
    args: { query: "needle", contextLines: 1 },
    linesFiles: 2,
  }),
  asksLines({
    name: "lines: no newline at the end, a regex translated for ripgrep",
    fixture: {
      "fn.txt": "fn_4123(\nfn_4x(\nfn_41234(a\nfn_49\nend fn_4000(",
      "other.txt": "fn_4 only\n",
    },
    args: { query: "fn_4[0-9]{3}\\(", regex: true, contextLines: 1 },
    linesFiles: 1,
  }),
  asksLines({
    // [0-9&&] has no ripgrep form: its required literal fn_4 is the pattern, a superset.
    name: "lines: a regex whose candidate lines do not all match",
    fixture: {
      "fn.txt": "fn_4123(\nfn_4x(\nfn_41&3(a\nfn_49\nend fn_4000(",
      "other.txt": "fn_4 only\n",
    },
    args: { query: "fn_4[0-9&&]{3}\\(", regex: true, contextLines: 1 },
    linesFiles: 2,
  }),
  asksLines({
    name: "lines: a file with maxMatches candidate lines is read",
    fixture: { "many.txt": "needle\n".repeat(1001), "few.txt": "needle\nx\n" },
    args: { query: "needle" },
    linesFiles: 1,
  }),
  asksLines({
    name: "lines: a long line clipped, with context; wholeWord",
    fixture: { "long.txt": `a\n${"w ".repeat(700)}needle ${"z".repeat(900)}\nneedles\n` },
    args: { query: "needle", wholeWord: true, contextLines: 1 },
    linesFiles: 1,
  }),
  asksLines({
    name: "lines: a non-ASCII or NUL file beside a plain one is read",
    fixture: { "plain.txt": "needle\n", "accent.txt": "caf\u00e9 needle\n", "nul.txt": NUL_LATE },
    args: { query: "needle", contextLines: 1 },
    linesFiles: 1,
  }),
  asksLines({
    name: "lines: not asked for below LINES_MIN_MATCHES (named files are read)",
    fixture: { "plain.txt": "needle\n" },
    args: { query: "needle", maxMatches: LINES_MIN_MATCHES - 1 },
    linesFiles: 0,
  }),
  // Review of decision 0067 (branch review-lines): hostile inputs to the lines path.
  asksLines({
    name: "lines: context 10 around adjacent matches near the start and the end",
    fixture: {
      "c10.txt": `needle 1\nneedle 2\n${"x\n".repeat(12)}needle 3\n${
        "y\n".repeat(9)
      }needle 4\nlast`,
    },
    args: { query: "needle", contextLines: 10 },
    linesFiles: 1,
  }),
  asksLines({
    name: "lines: the total reaches maxMatches across files (truncated, with context)",
    fixture: {
      "t1.txt": "needle\nx\n".repeat(600),
      "t2.txt": "needle\nx\n".repeat(600),
      "t3.txt": "needle\n",
    },
    args: { query: "needle", contextLines: 1 },
    linesFiles: 3,
  }),
  asksLines({
    name: "lines: very long lines as context on both sides, clipped",
    fixture: {
      "ll.txt": `${"a".repeat(1500)}\n${"b".repeat(1200)} needle ${"c".repeat(1300)}\n${
        "d".repeat(2000)
      }\n`,
    },
    args: { query: "needle", contextLines: 1 },
    linesFiles: 1,
  }),
  asksLines({
    name: "lines: names that look like options or rg records",
    fixture: {
      "-e": "needle dash e\n",
      "--files": "needle files\n",
      "a.txt:12:needle": "needle colon\n",
      "12-3": "needle digits\n",
      "x\ty.txt": "needle tab\n",
      "cr\r.txt": "needle cr\n",
    },
    args: { query: "needle" },
    linesFiles: 6,
  }),
  asksLines({
    name: "lines: mixed CRLF and LF, a lone CR inside a line, anchors",
    fixture: { "mix.txt": "needle\r\nx needle\nneedle\rneedle\nneedle\r\r\nend\r\n" },
    args: { query: "^needle$|\\Aneedle\\z", regex: true, contextLines: 1 },
  }),
  asksLines({
    name: "lines: a literal around a lone CR, with context",
    fixture: { "lone.txt": "a\rb\nneedle\rmore\nc\r\n" },
    args: { query: "needle", contextLines: 1 },
    linesFiles: 1,
  }),
  asksLines({
    name: "lines: a Kelvin sign query, case-insensitive, over ASCII text",
    fixture: { "k.txt": "kilo\nKILO\nnothing\n" },
    args: { query: "\u212aILO", caseSensitive: false },
    linesFiles: 1,
  }),
  asksLines({
    name: "lines: a long s regex, case-insensitive, over ASCII text",
    fixture: { "s.txt": "sun\nSUN\nmoon\n" },
    args: { query: "(?i)\u017fun", regex: true },
    linesFiles: 1,
  }),
  asksLines({
    name: "lines: \\x escapes, counted repetition, alternation, \\b \\B",
    fixture: { "x.txt": "needle\nneedleneedle\nxneedle\nneedles\n" },
    args: {
      query: "\\x6eeedle|(?:needle){2}|\\Bneedle|\\bneedle\\b",
      regex: true,
      contextLines: 1,
    },
    linesFiles: 1,
  }),
  asksLines({
    name: "lines: an empty-matching regex gives every line",
    fixture: { "e.txt": "x\n\ny\r\n\n", "one.txt": "z" },
    args: { query: "q*", regex: true, contextLines: 2 },
    linesFiles: 2,
  }),
  asksLines({
    name: "lines: include, exclude and .gitignore together",
    fixture: {
      ".gitignore": "*.log\nskip/\n",
      "a.txt": "needle a\n",
      "b.log": "needle b\n",
      "skip/c.txt": "needle c\n",
      "keep/d.txt": "needle d\n",
      "keep/e.md": "needle e\n",
    },
    args: { query: "needle", include: ["**/*.txt"], exclude: ["keep/**"] },
  }),
  asksLines({
    // Found by review: with --crlf rg removed "\r" from every class and from ".", so a
    // translated regex could not match a lone CR that RE2 matches inside a line (the file was
    // not named, and counted searched without a match). rg now runs without --crlf.
    name: "a translated . or \\s matches a lone CR inside a line (rg without --crlf)",
    fixture: { "cr.txt": "needle\rx\n", "plain.txt": "needle x\n" },
    args: { query: "needle.x", regex: true },
  }),
  asksLines({
    // Found by review: with --crlf rg ended a last line without "\n" with "\r\n", so a last
    // line "needle\r" came as "needle\r\r": one CR was stripped, RE2's $ did not match, and a
    // context line kept a CR the built-in engine strips.
    name: "a last line ending in a lone CR without a newline",
    fixture: { "end.txt": "x\nneedle\r", "ctx.txt": "needle\nlast\r" },
    args: { query: "needle$", regex: true, contextLines: 1 },
    linesFiles: 2,
  }),
  { name: "gitignore, nested, negated", fixture: TREE, args: { query: "needle" } },
  {
    name: "gitignore off, hidden on",
    fixture: TREE,
    args: { query: "needle", respectGitignore: false, includeHidden: true },
  },
  {
    name: "hidden on, gitignore on",
    fixture: TREE,
    args: { query: "needle", includeHidden: true },
  },
  { name: "base below the root", fixture: TREE, args: { query: "needle", path: "sub" } },
  {
    name: "base whose name starts with a dash",
    fixture: TREE,
    args: { query: "needle", path: "-x" },
  },
  {
    name: "include and exclude globs",
    fixture: TREE,
    args: { query: "needle", include: ["**/*.txt"], exclude: ["sub/**"] },
  },
  {
    name: "BOM then an anchored regex",
    fixture: { "bom.txt": "\uFEFFneedle first\nneedle second\n" },
    args: { query: "^needle", regex: true },
  },
  {
    name: "CRLF and $",
    fixture: { "crlf.txt": "x needle\r\ny\r\n", "lf.txt": "needle\n" },
    args: { query: "needle$", regex: true },
  },
  {
    name: "binary by an early NUL, text with a late one, invalid UTF-8",
    fixture: { "early.bin": NUL_EARLY, "late.txt": NUL_LATE, "bad.txt": NOT_UTF8 },
    args: { query: "needle" },
  },
  {
    name: "Unicode simple case folding",
    fixture: { "f.txt": "K kelvin\n\u212a sign\n\u017fun\nSUN\n\u03a3\u03c3\u03c2\nstra\u00dfe\n" },
    args: { query: "k", caseSensitive: false },
  },
  {
    name: "case folding of a long s and sigma",
    fixture: { "f.txt": "\u017fun\nSUN\nsun\n\u03a3\u03c3\u03c2 x\n" },
    args: { query: "\u03c3", caseSensitive: false },
  },
  {
    name: "ASCII \\w beside non-ASCII letters",
    fixture: { "w.txt": "caf\u00e9\ncafe\n\u00e9t\u00e9 x\nab_9\n" },
    args: { query: "\\w+\u00e9", regex: true },
  },
  {
    // One discriminating line per file: the prefilter decides per file.
    name: "ASCII \\b around non-ASCII letters",
    fixture: { "b1.txt": "x\u00e9cafe\n", "b2.txt": "cafe\u00e9\n", "b3.txt": "cafe\n" },
    args: { query: "\\b\\w{2}fe\\b", regex: true },
  },
  {
    name: "negated Perl classes \\W \\S \\D",
    fixture: {
      "w.txt": "a\u00e9b\n",
      "w2.txt": "a b\n",
      "d.txt": "x\u0661\n",
      "s.txt": "x\u00a0y\n",
    },
    args: { query: "a\\Wb|x\\D|x\\Sy", regex: true },
  },
  {
    name: "negated class with a Perl class",
    fixture: { "n1.txt": "a\u00e9\n", "n2.txt": "a!\n", "n3.txt": "ab\n" },
    args: { query: "a[^\\w]", regex: true },
  },
  {
    name: "\\B between an ASCII and a non-ASCII letter",
    fixture: { "b1.txt": "ab\u00e9\n", "b2.txt": "ab\n" },
    args: { query: "\\w\\B\\W", regex: true },
  },
  {
    name: "Unicode property classes",
    fixture: { "p.txt": "\u03b1\u03b2\u03b3\nabc\n\u0410\u0411\n" },
    args: { query: "\\p{Greek}+|\\p{Cyrillic}", regex: true },
  },
  {
    name: "\\Q...\\E quote and line anchors \\A \\z",
    fixture: { "q.txt": "a.*b\nanything\nx a.*b\nend a.*b\n" },
    args: { query: "\\A\\Qa.*b\\E\\z", regex: true },
  },
  {
    name: "alternation without a required literal",
    fixture: { "alt.txt": "foo\nbar\nbaz\n", "none.txt": "nothing\n" },
    args: { query: "fo+|ba[rz]", regex: true },
  },
  {
    name: "inline flags and counted repetition",
    fixture: { "i.txt": "FOOO\nfoo\nfo\n" },
    args: { query: "(?i)fo{2,}", regex: true },
  },
  {
    name: "a pattern matching the empty string",
    fixture: { "e.txt": "x\n\ny\n", "empty.txt": "" },
    args: { query: "z*", regex: true, maxMatches: 10 },
  },
  {
    name: "wholeWord beside non-ASCII letters",
    fixture: { "ww.txt": "\u00e9needle\nneedle\u00e9\nneedle\n_needle\n" },
    args: { query: "needle", wholeWord: true },
  },
  {
    name: "links are not followed, FIFOs not read",
    fixture: {
      "real.txt": "needle real\n",
      "link.txt": { link: "real.txt" },
      "dirlink": { link: "." },
      "pipe": { fifo: true },
    },
    args: { query: "needle" },
  },
  {
    name: "maxFileBytes: a large file with the query is tooLarge",
    fixture: { "big.txt": `needle ${"x".repeat(200)}\n`, "small.txt": "needle\n" },
    args: { query: "needle", maxFileBytes: 64 },
  },
  {
    name: "maxMatches stops in the middle, with context",
    fixture: {
      "m1.txt": "n needle\nn needle\nafter\n",
      "m2.txt": "needle\n",
      "m3.txt": "needle\n",
    },
    args: { query: "needle", maxMatches: 3, contextLines: 1 },
  },
  {
    name: "a tiny result budget",
    fixture: { "r.txt": "needle one\nneedle two\nneedle three\n" },
    args: { query: "needle" },
    limits: { maxResultBytes: 1024 },
  },
  {
    name: "a catastrophic-looking regex is linear in both",
    fixture: { "a.txt": `${"a".repeat(5000)}\n` },
    args: { query: "(a+)+$", regex: true },
  },
  {
    name: "a regex over the program limit fails the same way",
    fixture: { "a.txt": "aaa\n" },
    args: { query: "[a-z]{999}[a-z]{999}[a-z]{999}", regex: true },
  },
  {
    name: "a lookahead is refused the same way",
    fixture: { "a.txt": "aaa\n" },
    args: { query: "a(?=b)", regex: true },
  },
  {
    name: "no match anywhere",
    fixture: TREE,
    args: { query: "zzz_not_there" },
  },
];

type Outcome = { ok: true; value: Record<string, unknown> } | { ok: false; error: unknown };

async function run(ws: Workspace, args: Record<string, unknown>): Promise<Outcome> {
  try {
    const value = await runOperation({ workspace: ws }, "search_text", args);
    return { ok: true, value: JSON.parse(JSON.stringify(value)) };
  } catch (err) {
    if (!(err instanceof WorkspaceError)) throw err;
    return { ok: false, error: JSON.parse(JSON.stringify(err.toJSON())) };
  }
}

/** The result with the counters the engines may split differently summed (the documented exception). */
function comparable(o: Outcome): unknown {
  if (!o.ok) return o;
  const v = structuredClone(o.value) as {
    filesSearched: number;
    filesSkipped: { binary: number; unreadable: number; tooLarge: number };
  };
  const examined = v.filesSearched + v.filesSkipped.binary + v.filesSkipped.unreadable;
  return { ...v, filesSearched: examined, filesSkipped: { tooLarge: v.filesSkipped.tooLarge } };
}

/**
 * The two engines on one root: a workspace each per set of limits (opened once and shared by the
 * cases that use those limits: a workspace keeps no file state between calls), and the broker's
 * counters.
 */
interface Engines {
  root: string;
  native: TestNative;
  /** The builtin and the native workspace for these limits. */
  workspaces(limits: Record<string, number>): Promise<[Workspace, Workspace]>;
  close(): Promise<void>;
}

async function bothEngines(root: string): Promise<Engines> {
  const native = await startNative(root);
  const open = new Map<string, Promise<[Workspace, Workspace]>>();
  return {
    root,
    native,
    workspaces(limits) {
      const key = JSON.stringify(Object.entries(limits).sort());
      let pair = open.get(key);
      if (!pair) {
        pair = Promise.all([
          Workspace.open({ root, limits }),
          Workspace.open({ root, limits, prefilter: native }),
        ]);
        open.set(key, pair);
      }
      return pair;
    },
    async close() {
      for (const pair of open.values()) for (const ws of await pair) ws.engine.close();
      await native.close();
    },
  };
}

/** Runs one search through both engines and asserts they agree. */
async function agree(
  e: Engines,
  args: Record<string, unknown>,
  limits: Record<string, number> = {},
  linesFiles?: number,
): Promise<void> {
  const [builtinWs, nativeWs] = await e.workspaces(limits);
  const answeredBefore = e.native.answered;
  const linesBefore = e.native.linesFiles;
  const b = await run(builtinWs, args);
  const n = await run(nativeWs, args);
  assert.deepStrictEqual(comparable(n), comparable(b), JSON.stringify({ native: n, builtin: b }));
  if (b.ok && n.ok) {
    const skipped = (o: Outcome) => (o.ok ? o.value.filesSkipped : {}) as { binary: number };
    assert.ok(skipped(n).binary <= skipped(b).binary, "native counts only binary files it read");
  }
  // The native path ran: the prefilter answered, unless the query has no ripgrep form (or the
  // arguments were refused before any search).
  const prefilterable = rgPrefilter({
    query: String(args.query),
    regex: args.regex === true,
  }) !== null;
  if (b.ok && prefilterable) {
    assert.equal(
      e.native.answered,
      answeredBefore + 1,
      `the prefilter answered (${e.native.fallbacks.join("; ")})`,
    );
  }
  if (linesFiles !== undefined) {
    assert.equal(e.native.linesFiles - linesBefore, linesFiles, "files answered with their lines");
  }
}

const available = await nativeAvailable();
const REQUIRED = Deno.env.get("WMCP_REQUIRE_SANDBOX_TESTS") === "1";

Deno.test({
  name: "the native engine can run here (bwrap and rg installed)",
  ignore: !REQUIRED && !available,
  fn: () => assert.ok(available, "CI installs bubblewrap and ripgrep (.ci/run)"),
});

Deno.test({
  name: "search_text engines agree on every search case of the contract table",
  ignore: !available,
  async fn(t) {
    // One root, each case in its own directory (its paths spelled below it), one broker.
    const base = await makeTempDir("wmcp-engines-");
    const root = `${base}/ws`;
    const outside = `${base}/outside`;
    await Deno.mkdir(root);
    await Deno.mkdir(outside);
    await Deno.writeTextFile(`${outside}/secret.txt`, "secret\n");
    const engines = await bothEngines(root);
    try {
      // The one-root cases: this compares the engines on one root.
      const cases = CASES.filter((c: Case) =>
        c.op === "search_text" && !CONFIGS[configOf(c)].readOnlyRoot
      );
      assert.ok(cases.length >= 5, "the contract table has search cases");
      for (const [i, c] of cases.entries()) {
        await t.step(c.name, async () => {
          const id = `case-${i}`;
          const dir = `${root}/${id}`;
          await Deno.mkdir(dir);
          await materialize(dir, c.fixture ?? {}, outside);
          const p = ((rel: string) => (rel === "." ? id : `${id}/${rel}`)) as Paths;
          p.abs = (rel: string) => (rel === "." ? dir : `${dir}/${rel}`);
          p.out = (rel: string) => `${outside}/${rel}`;
          const limits = CONFIGS[configOf(c)].limits as Record<string, number>;
          await agree(engines, c.args(p), limits);
        });
      }
    } finally {
      await engines.close();
      await removeDir(base);
    }
  },
});

Deno.test({
  name: "search_text engines agree where ripgrep's rules differ from wmcp's",
  ignore: !available,
  async fn(t) {
    // One root, each case in its own directory (searched as `path`), one broker.
    const base = await makeTempDir("wmcp-engines-");
    const engines = await bothEngines(base);
    try {
      for (const [i, c] of EXTRAS.entries()) {
        await t.step(c.name, async () => {
          const id = `extra-${i}`;
          await Deno.mkdir(`${base}/${id}`);
          await materialize(`${base}/${id}`, c.fixture, `${base}/outside`);
          const path = typeof c.args.path === "string" ? `${id}/${c.args.path}` : id;
          await agree(engines, { ...c.args, path }, c.limits, c.linesFiles);
        });
      }
    } finally {
      await engines.close();
      await removeDir(base);
    }
  },
});
