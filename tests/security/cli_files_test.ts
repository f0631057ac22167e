/**
 * Files named by CLI options are the caller's, but their content is never echoed: a symlinked
 * --arguments-file (or --config, --input-responses-file, `tools run FILE`) that is not JSON gives a
 * usage error saying where it is wrong, without a byte of it; FIFOs and devices are refused
 * without blocking. Real cli.ts child processes.
 */
import assert from "node:assert/strict";
import { type CliResult, runCli } from "../_support/cli.ts";
import { SECRET, withEnv } from "./_helpers.ts";

/** Runs cli.ts in cwd with read, env and run permissions. */
function cli(args: string[], options: { cwd: string }): Promise<CliResult> {
  return runCli(["--quiet", "--no-prompt", "--allow-read", "--allow-env", "--allow-run"], args, {
    cwd: options.cwd,
    env: { NO_COLOR: "1", INIT_CWD: options.cwd },
    // A blocking read of a FIFO would hang: the child is killed after 30 s and the test fails.
    timeoutMs: 30_000,
  });
}

/** One option each, with the arguments that make it read FILE (the server part never starts). */
const FILE_OPTIONS: [string, (file: string, root: string) => string[]][] = [
  ["op --arguments-file", (f, root) => ["op", "read_file", "--root", root, "--arguments-file", f]],
  [
    "tools call --arguments-file",
    (f, root) => ["tools", "call", "read_file", "--root", root, "--arguments-file", f],
  ],
  ["--config", (f) => ["tools", "list", "--config", f, "--server", "x"]],
  [
    "--input-responses-file",
    (f, root) => ["tools", "list", "--root", root, "--input-responses-file", f],
  ],
];

Deno.test("a symlinked option file that is not JSON: usage error with line and column, never its content", async (t) => {
  await withEnv(async ({ W, O, base }) => {
    // The outside "secret" is not JSON; a link in the workspace points at it.
    await Deno.symlink(`${O}/secret`, `${W}/args.json`);
    await Deno.writeTextFile(`${O}/multi.json`, `{\n  "a": 1,\n  "b": ${SECRET}\n}\n`);
    await Deno.symlink(`${O}/multi.json`, `${W}/multi.json`);
    for (const [label, argv] of FILE_OPTIONS) {
      await t.step(label, async () => {
        const r = await cli(argv(`${W}/args.json`, W), { cwd: base });
        assert.equal(r.code, 2, r.stderr);
        assert.ok(!r.stderr.includes(SECRET), `content echoed: ${r.stderr}`);
        assert.ok(!r.stdout.includes(SECRET), `content echoed: ${r.stdout}`);
        assert.match(r.stderr, /not valid JSON at line 1 column 1/);
      });
    }
    await t.step("the position is line and column of the error", async () => {
      const r = await cli(["op", "read_file", "--root", W, "--arguments-file", `${W}/multi.json`], {
        cwd: base,
      });
      assert.equal(r.code, 2);
      assert.ok(!r.stderr.includes(SECRET));
      assert.match(r.stderr, /--arguments-file .* is not valid JSON at line 3 column 8/);
    });
    await t.step("tools run FILE: a bad line is reported by number, never quoted", async () => {
      await Deno.writeTextFile(`${O}/calls.jsonl`, `${SECRET}\n`);
      await Deno.symlink(`${O}/calls.jsonl`, `${W}/calls.jsonl`);
      const r = await cli(["tools", "run", `${W}/calls.jsonl`, "--root", W, "--output", "jsonl"], {
        cwd: base,
      });
      assert.notEqual(r.code, 0);
      assert.ok(!r.stdout.includes(SECRET), r.stdout);
      assert.ok(!r.stderr.includes(SECRET), r.stderr);
      assert.match(r.stdout, /line 1 is not valid JSON at line 1 column 1/);
    });
    await t.step("inline --arguments is not echoed either", async () => {
      const r = await cli(["op", "read_file", "--root", W, "--arguments", `{"path": ${SECRET}}`], {
        cwd: base,
      });
      assert.equal(r.code, 2);
      assert.ok(!r.stderr.includes(SECRET));
      assert.match(r.stderr, /--arguments is not valid JSON at line 1 column 10/);
    });
  });
});

Deno.test("a FIFO or a device as an option file is refused at once (no blocking read)", async (t) => {
  await withEnv(async ({ W, base }) => {
    const fifo = `${base}/fifo`;
    const mk = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.ok(mk.success);
    for (const [label, argv] of FILE_OPTIONS) {
      for (
        const [what, file, kind] of [["FIFO", fifo, "a FIFO"], ["device", "/dev/zero", "a device"]]
      ) {
        await t.step(`${label}: ${what}`, async () => {
          // Nobody ever writes to the FIFO: a blocking open or read would hang here.
          const r = await cli(argv(file, W), { cwd: base });
          assert.equal(r.code, 2, r.stderr);
          assert.ok(r.stderr.includes(`is ${kind}; give a regular file`), r.stderr);
        });
      }
    }
    await t.step("tools run FIFO", async () => {
      const r = await cli(["tools", "run", fifo, "--root", W], { cwd: base });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /is a FIFO; give a regular file/);
    });
  });
});
