/**
 * Commands as data (src/cli/declare.ts), in process: a declaration parses argv through stricli
 * into typed values, every mistake is a UsageError in wmcp's words, and help is rendered from
 * the same declaration.
 */
import assert from "node:assert/strict";
import {
  type CommandDecl,
  flagsOf,
  parseCommand,
  renderHelp,
  rootsOf,
  scanWords,
} from "../../src/cli/declare.ts";
import { CONFIG_PRINT, DECLARED, OP, SERVE_STOP, TOOLS_LIST } from "../../src/cli/commands.ts";
import { UsageError } from "../../src/config.ts";

const DEMO = {
  path: ["demo", "run"],
  usage: ["[--root DIR] [WORD ...]"],
  about: "A command for this test.",
  flags: {
    root: { kind: "dir", help: "a directory" },
    write: { kind: "bool", help: "write too" },
    limit: { kind: "limit", multiple: true, help: "a limit, repeatable" },
    output: { kind: "choice", choices: ["json", "pretty"], help: "the format" },
    timeout: { kind: "seconds", help: "how long" },
  },
  words: true,
  examples: ["demo run --root . a b"],
} as const satisfies CommandDecl;

async function usageError(decl: CommandDecl, argv: string[]): Promise<string> {
  const err = await parseCommand(decl, argv).then(() => undefined, (e) => e);
  assert.ok(err instanceof UsageError, `${argv.join(" ")}: ${err}`);
  return err.message;
}

Deno.test("declare: flags parse into typed values, in order, with free words and after --", async () => {
  const { values, words } = await parseCommand(DEMO, [
    "a",
    "--root=src",
    "--limit",
    "maxResults=5",
    "k=v",
    "--write",
    "--limit=maxBytes=9",
    "--",
    "--not-a-flag",
  ]);
  assert.deepEqual(values.root, "src");
  assert.equal(values.write, true);
  assert.deepEqual(values.limit, ["maxResults=5", "maxBytes=9"]);
  assert.equal(values.output, undefined);
  assert.deepEqual(words, ["a", "k=v", "--not-a-flag"]);
  // -h and -V are every command's.
  assert.equal((await parseCommand(DEMO, ["-h"])).values.help, true);
  assert.equal((await parseCommand(DEMO, ["-V"])).values.version, true);
});

Deno.test("declare: each mistake is a usage error in wmcp's words", async () => {
  assert.equal(await usageError(DEMO, ["--roo", "x"]), "unknown flag --roo (did you mean --root?)");
  assert.equal(await usageError(DEMO, ["--wirte"]), "unknown flag --wirte (did you mean --write?)");
  assert.equal(await usageError(DEMO, ["-x"]), "unknown flag -x (did you mean -h?)");
  assert.equal(
    await usageError(DEMO, ["--root"]),
    "--root needs a value (write --root=VALUE for a value starting with '-')",
  );
  assert.equal(
    await usageError(DEMO, ["--root", "--write"]),
    "--root needs a value (write --root=VALUE for a value starting with '-')",
  );
  assert.equal(
    await usageError(DEMO, ["--root", "a", "--root", "b"]),
    '--root is given twice ("a", then "b"); give it once',
  );
  assert.equal(
    await usageError(DEMO, ["--output", "jsno"]),
    'unknown --output "jsno" (did you mean json?); --output takes json, pretty',
  );
  assert.equal(
    await usageError(DEMO, ["--timeout", "0"]),
    "--timeout must be a positive number of seconds",
  );
  assert.equal(await usageError(SERVE_STOP, ["stray"]), 'unexpected argument "stray"');
  assert.equal(
    await usageError(TOOLS_LIST, ["--max-pages", "0"]),
    "--max-pages must be a positive integer",
  );
  assert.equal(await usageError(TOOLS_LIST, ["--keep-going"]), "unknown flag --keep-going");
  assert.equal(
    await usageError(DEMO, ["--root", "-x"]),
    "--root needs a value (write --root=VALUE for a value starting with '-')",
  );
  // A value starting with '-' goes after '='.
  assert.equal((await parseCommand(DEMO, ["--root=-odd"])).values.root, "-odd");
});

Deno.test("declare: help is rendered from the declaration; flagsOf lists what parses", async () => {
  const help = renderHelp(DEMO, "mywmcp");
  assert.match(help, /^Usage: mywmcp demo run \[--root DIR\] \[WORD \.\.\.\]\n\nA command/);
  for (const line of ["--root DIR", "--write", "--limit name=N", "--output json|pretty"]) {
    assert.ok(help.includes(`\n  ${line} `), `${line} in:\n${help}`);
  }
  assert.match(help, /\nExample:\n {2}mywmcp demo run --root \. a b\n$/);
  // Every declared command: every flag in its help, and each listed flag parses.
  for (const [path, decl] of DECLARED) {
    const text = renderHelp(decl, "wmcp");
    assert.ok(text.startsWith("Usage:"), path);
    for (const [name, f] of Object.entries(decl.flags)) {
      assert.ok(text.includes(`--${name}`), `${path} --${name}`);
      const value = f.kind === "bool"
        ? []
        : [f.kind === "choice" ? f.choices![0] : /seconds|count/.test(f.kind) ? "5" : "x"];
      await parseCommand(decl, [`--${name}`, ...value]);
    }
  }
  assert.deepEqual(flagsOf(CONFIG_PRINT), [
    "--host",
    "--root",
    "--read-only-root",
    "--write",
    "--http",
    "--name",
    "--via",
    "--help",
    "-h",
    "--version",
    "-V",
  ]);
});

Deno.test("declare: scanWords reads the words leniently (unknown flags skipped)", () => {
  assert.deepEqual(scanWords(OP, ["--root", "read_file", "list", "--bogus", "path=a"]), [
    "list",
    "path=a",
  ]);
  assert.deepEqual(scanWords(OP, ["--write", "read_file", "--", "--x"]), ["read_file", "--x"]);
});

Deno.test("declare: rootsOf keeps --root and --read-only-root in command-line order, nothing after --", () => {
  const argv = ["read_file", "--root", "a", "--read-only-root=b", "--write", "--root", "c"];
  assert.deepEqual(rootsOf(OP, [...argv, "--", "--root", "d"]), [
    { path: "a" },
    { path: "b", readOnly: true },
    { path: "c" },
  ]);
  assert.deepEqual(rootsOf(CONFIG_PRINT, ["--host", "generic"]), []);
});
