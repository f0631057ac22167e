/**
 * Deno permissions are the second wall: cli.ts run as a child process with read/write
 * granted for W only refuses a link to O with a typed error (exit 1), and without read
 * permission for the root it stops with a usage error naming --allow-read (exit 2).
 */
import assert from "node:assert/strict";
import { type CliResult, runCli } from "../_support/cli.ts";
import { SECRET, snapshot, withEnv } from "./_helpers.ts";

const PROJECT = new URL("../../", import.meta.url);

/** Runs cli.ts from the project directory with exactly the given Deno flags. */
function cli(denoFlags: string[], cliArgs: string[]): Promise<CliResult> {
  return runCli(["--no-prompt", ...denoFlags], cliArgs, {
    cwd: decodeURIComponent(PROJECT.pathname),
    env: { NO_COLOR: "1" },
  });
}

/** The last JSON line of stderr (Deno may print download notices before it). */
function errorJson(
  stderr: string,
): { error: { code: string; argument?: string; message: string } } {
  const lines = stderr.trim().split("\n").filter((l) => l.startsWith("{"));
  assert.ok(lines.length > 0, `no JSON on stderr: ${stderr}`);
  return JSON.parse(lines[lines.length - 1]);
}

Deno.test("cli.ts with permissions for W only refuses a symlink to O (exit 1, typed JSON)", async (t) => {
  await withEnv(async ({ W, O, base }) => {
    await Deno.symlink(`${O}/secret`, `${W}/link`);
    await Deno.symlink(O, `${W}/dirlink`);
    const grants = [`--allow-read=${W}`, `--allow-write=${W}`];
    const before = await snapshot(base);
    const cases: [string, Record<string, unknown>, string[]][] = [
      ["read_file", { path: "link" }, []],
      ["read_file", { path: `${O}/secret` }, []],
      ["list_directory", { path: "dirlink" }, []],
      ["write_file", { path: "link", content: "pwned", ifExists: "overwrite", confirm: true }, [
        "--write",
      ]],
      ["write_file", { path: "dirlink/new.txt", content: "pwned" }, ["--write"]],
    ];
    for (const [op, args, extra] of cases) {
      await t.step(`${op} ${JSON.stringify(args)}`, async () => {
        const r = await cli(grants, [
          "op",
          op,
          "--root",
          W,
          "--output",
          "json",
          "--arguments",
          JSON.stringify(args),
          ...extra,
        ]);
        assert.equal(r.code, 1, r.stderr);
        assert.equal(r.stdout, "");
        const { error } = errorJson(r.stderr);
        assert.equal(error.code, "OUTSIDE_WORKSPACE");
        assert.equal(error.argument, "path");
        assert.ok(!r.stderr.includes(SECRET));
      });
    }
    assert.deepEqual(await snapshot(base), before);
    await t.step("the same child reads inside W", async () => {
      const r = await cli(grants, [
        "op",
        "read_file",
        "--root",
        W,
        "--output",
        "json",
        "--arguments",
        '{"path":"inside.txt"}',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).path, "inside.txt");
    });
  });
});

Deno.test("cli.ts without --allow-read for the root is a usage error naming --allow-read (exit 2)", async (t) => {
  await withEnv(async ({ W, O }) => {
    const args = [
      "op",
      "read_file",
      "--root",
      W,
      "--output",
      "json",
      "--arguments",
      '{"path":"inside.txt"}',
    ];
    for (const flags of [[], [`--allow-read=${O}`], [`--allow-write=${W}`]]) {
      await t.step(flags.join(" ") || "no permissions", async () => {
        const r = await cli(flags, args);
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stdout, "");
        const { error } = errorJson(r.stderr);
        assert.equal(error.code, "USAGE");
        assert.match(error.message, /--allow-read/);
      });
    }
    await t.step("--write without --allow-write names --allow-write", async () => {
      const r = await cli([`--allow-read=${W}`], [...args, "--write"]);
      assert.equal(r.code, 2, r.stderr);
      const { error } = errorJson(r.stderr);
      assert.equal(error.code, "USAGE");
      assert.match(error.message, /--allow-write/);
    });
  });
});
