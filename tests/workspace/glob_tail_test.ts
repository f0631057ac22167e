/**
 * The literal-tail check before the glob's RE2 program (src/workspace/globs.ts): a name that does
 * not end with a base-name glob's literal tail is refused without the program, and the program
 * decides every other. It must never change an answer: compiled with and without it, the
 * predicates agree on every pattern set and path here (chosen cases, then seeded ones over an
 * alphabet of the glob syntax's pieces, with and without hidden names).
 */
import assert from "node:assert/strict";
import { compileGlobs, literalTail } from "../../src/workspace/globs.ts";
import { seeded } from "../operations/_arbitrary.ts";

Deno.test("literalTail is what follows a glob's last wildcard, class or escape", () => {
  const cases: [string, string][] = [
    ["*.rs", ".rs"],
    ["main.rs", "main.rs"],
    ["*", ""],
    ["a?", ""],
    ["*.[ch]", ""],
    ["[ab]c.txt", "c.txt"],
    ["a\\*", ""],
    ["a\\.rs", ".rs"],
    ["x]y", "y"],
    ["é*ü.ts", "ü.ts"],
  ];
  for (const [glob, tail] of cases) assert.equal(literalTail(glob), tail, glob);
});

/** Both predicates of one pattern set, with the tail check and without. */
function both(patterns: string[], dot: boolean) {
  const options = { dot, argument: "pattern" };
  return {
    withTails: compileGlobs(patterns, options),
    without: compileGlobs(patterns, { ...options, tailFilter: false }),
  };
}

const PATHS = [
  "a.rs",
  ".rs",
  "..rs",
  ".a.rs",
  "src/lib.rs",
  "src/.hidden.rs",
  "src/lib.rs/",
  "src/lib.rsx",
  "b.ts",
  "dir/b.ts/",
  "main.rs",
  "x]y",
  "a*",
  "a.",
  "c.txt",
  "ac.txt",
  "é/üü.ts",
  "deep/er/and/deeper.rs",
  "rs",
  "",
];

Deno.test("the tail check never changes what a glob set matches: chosen patterns", () => {
  const sets = [
    ["*.rs"],
    ["main.rs"],
    ["*.{rs,ts}"],
    ["{a,b}.rs"],
    ["{a,}.rs"],
    ["*.rs", "*.ts"],
    ["*.rs", "*"],
    ["*.rs", "src/*.rs"],
    ["!*.rs"],
    ["[ab]c.txt"],
    ["a\\*"],
    ["x]y"],
    ["**/*.rs"],
    [".rs"],
    ["*.", "?rs"],
    ["üü.ts", "*ü.ts"],
  ];
  for (const patterns of sets) {
    for (const dot of [false, true]) {
      const { withTails, without } = both(patterns, dot);
      for (const p of PATHS) {
        assert.equal(withTails(p), without(p), `${JSON.stringify(patterns)} dot=${dot} on ${p}`);
      }
    }
  }
});

Deno.test("the tail check never changes what a glob set matches: seeded patterns", () => {
  const globPieces = ["*", "?", ".", "a", "b", "rs", "[ab]", "[!a]", "{a,b}", "{,x}", "\\*", "é"];
  const namePieces = [".", "a", "b", "rs", "x", "*", "é", "/"];
  const random = seeded(0x7a11);
  const pick = (xs: string[], max: number) => {
    let out = "";
    const n = 1 + Math.floor(random() * max);
    for (let k = 0; k < n; k++) out += xs[Math.floor(random() * xs.length)];
    return out;
  };
  let compared = 0;
  for (let i = 0; i < 400; i++) {
    const patterns = Array.from(
      { length: 1 + Math.floor(random() * 3) },
      () => pick(globPieces, 5),
    );
    const dot = random() < 0.5;
    let predicates;
    try {
      predicates = both(patterns, dot);
    } catch {
      continue; // a pattern the glob syntax refuses: refused with the check and without alike
    }
    for (let k = 0; k < 40; k++) {
      const path = pick(namePieces, 7);
      assert.equal(
        predicates.withTails(path),
        predicates.without(path),
        `${JSON.stringify(patterns)} dot=${dot} on ${JSON.stringify(path)}`,
      );
      compared++;
    }
  }
  assert.ok(compared > 10_000, `${compared} comparisons`);
});
