/**
 * The launcher's lenient argv scan (src/cli/flag_tokens.ts) against the one it replaces,
 * node:util's parseArgs with `strict: false` and `tokens: true`: the same tokens for every
 * command's declared flags and for synthetic flag sets, on hand-picked words and on a generated
 * corpus (a seeded generator, so a failure names a case that can be run again).
 */
import assert from "node:assert/strict";
import { parseArgs } from "node:util";
import { type FlagShape, flagTokens } from "../../src/cli/flag_tokens.ts";
import { flagTokens as declTokens, INFO_FLAGS } from "../../src/cli/declare.ts";
import { DECLARED } from "../../src/cli/commands.ts";
import { seeded } from "../operations/_arbitrary.ts";
import { serverDecl } from "../../src/cli/server_flags.ts";
import type { CommandDecl } from "../../src/cli/declare.ts";

/** node's tokens for the same flag shapes (the reference). */
function nodeTokens(shapes: ReadonlyMap<string, FlagShape>, argv: string[]): unknown[] {
  const options: Record<string, { type: "string" | "boolean"; multiple: true; short?: string }> =
    {};
  for (const [name, s] of shapes) {
    options[name] = { type: s.type, multiple: true };
    if (s.short !== undefined) options[name].short = s.short;
  }
  return parseArgs({ args: argv, options, strict: false, allowPositionals: true, tokens: true })
    .tokens;
}

/** Synthetic flag sets: string and boolean shorts, a long flag named like a short, odd names. */
const SYNTHETIC: ReadonlyMap<string, FlagShape>[] = [
  new Map([
    ["root", { type: "string", short: "r" }],
    ["write", { type: "boolean", short: "w" }],
    ["help", { type: "boolean", short: "h" }],
    ["limit", { type: "string", short: "l" }],
    ["x", { type: "string" }],
    ["verbose", { type: "boolean", short: "v" }],
  ]),
  new Map([
    ["a", { type: "boolean", short: "b" }],
    ["b", { type: "string", short: "a" }],
    ["é", { type: "string", short: "é" }],
    ["__proto__", { type: "string" }],
    ["constructor", { type: "boolean" }],
    ["first", { type: "boolean", short: "f" }],
    ["second", { type: "string", short: "f" }], // the first declaration of -f wins
  ]),
  new Map(),
];

/** A declaration's flags as declare.ts reads them (its info flags included). */
function shapesOf(decl: CommandDecl): ReadonlyMap<string, FlagShape> {
  const shapes = new Map<string, FlagShape>();
  for (const [name, f] of Object.entries({ ...decl.flags, ...INFO_FLAGS })) {
    shapes.set(name, { type: f.kind === "bool" ? "boolean" : "string", short: f.short });
  }
  return shapes;
}

/** The flag sets of every declared command and of both servers, as declare.ts reads them. */
function declaredShapes(): ReadonlyMap<string, FlagShape>[] {
  return [...DECLARED.values(), serverDecl("stdio"), serverDecl("http")].map(shapesOf);
}

const WORDS = [
  "--",
  "-",
  "---",
  "--=",
  "--=x",
  "---x",
  "--root",
  "--root=",
  "--root=a=b",
  "--root=/tmp/x",
  "--write",
  "--write=false",
  "--help",
  "-h",
  "-V",
  "-r",
  "-rDIR",
  "-w",
  "-wv",
  "-wr",
  "-wrX",
  "-vwh",
  "-rw",
  "-l",
  "-lname=3",
  "-x",
  "-xy",
  "-b",
  "-a",
  "-ab",
  "-ba",
  "-bav",
  "-é",
  "-éx",
  "--é",
  "--__proto__",
  "--__proto__=1",
  "--constructor",
  "-f",
  "-fq",
  "-q",
  "-qq",
  "--limit",
  "--limit=maxResults=5",
  "x",
  "serve",
  "stdio",
  "http",
  ".",
  "a b",
  "",
  " ",
  "-1",
  "--1",
  "-\u{1F600}",
  "--\u{1F600}",
  "-\uD800",
  "=",
  "-=",
  "--root==",
  "--no-write",
  "--port",
  "8080",
];

function check(shapes: ReadonlyMap<string, FlagShape>, argv: string[]): void {
  assert.deepStrictEqual(
    flagTokens(shapes, argv),
    nodeTokens(shapes, argv),
    `argv ${JSON.stringify(argv)} with flags ${JSON.stringify([...shapes])}`,
  );
}

Deno.test("flag tokens: every single word and every pair of words, as node:util reads them", () => {
  for (const shapes of [...SYNTHETIC, ...declaredShapes()]) {
    check(shapes, []);
    for (const a of WORDS) {
      check(shapes, [a]);
      for (const b of WORDS) check(shapes, [a, b]);
    }
  }
});

Deno.test("flag tokens: 20,000 generated argvs of up to 8 words, as node:util reads them", () => {
  const random = seeded(0x5eed); // replayable: a failure names its argv
  const sets = [...SYNTHETIC, ...declaredShapes()];
  for (let i = 0; i < 20_000; i++) {
    const shapes = sets[Math.floor(random() * sets.length)];
    const argv = Array.from(
      { length: Math.floor(random() * 9) },
      () => WORDS[Math.floor(random() * WORDS.length)],
    );
    check(shapes, argv);
  }
});

Deno.test("flag tokens: a declaration's scan (declare.ts) is the tokenizer's over its flags", () => {
  const decl = serverDecl("stdio");
  // The wrapper builds the shapes from the declaration (its info flags included) as node's
  // options were built: its tokens are node's for that declaration, word by word.
  const shapes = shapesOf(decl);
  for (const a of WORDS) {
    for (const b of WORDS) {
      assert.deepStrictEqual(declTokens(decl, [a, b]), nodeTokens(shapes, [a, b]));
    }
  }
  const argv = ["--root", "/w", "-h", "--write", "--", "--root", "x"];
  const tokens = declTokens(decl, argv);
  assert.deepStrictEqual(tokens.map((t) => t.kind), [
    "option",
    "option",
    "option",
    "option-terminator",
    "positional",
    "positional",
  ]);
  assert.deepStrictEqual(tokens[0], {
    kind: "option",
    name: "root",
    rawName: "--root",
    index: 0,
    value: "/w",
    inlineValue: false,
  });
  assert.deepStrictEqual(tokens.slice(-2).map((t) => t.kind === "positional" && t.value), [
    "--root",
    "x",
  ]);
});
