/**
 * Files named by CLI options are the caller's, but their content is never echoed: a symlinked
 * --arguments-file (or --config, --input-responses-file, `tools run FILE`) that is not JSON gives a
 * usage error saying where it is wrong, without a byte of it; FIFOs and devices are refused
 * without blocking. What a command answers is not a property of the process boundary, so the cases
 * run the CLI's `main(argv)` in process (decision 0052). Anchors run as real cli.ts child processes
 * (the router, its probe and the scoped child, killed after 30 s if a read blocks) and must answer
 * the same exit code, stdout and stderr as in process: one non-JSON file, and a FIFO and a device
 * before any in-process run reads one (a blocking read fails the test there, by the child's
 * watchdog, instead of hanging the test process).
 */
import assert from "node:assert/strict";
import { type CliResult, runCli } from "../_support/cli.ts";
import { runInProcess } from "../_support/in_process.ts";
import { SECRET, withEnv } from "./_helpers.ts";

/** Runs the CLI in cwd: main(argv) in this process, or a real cli.ts child (read, env, run). */
function cli(args: string[], options: { cwd: string; real?: boolean }): Promise<CliResult> {
  if (!options.real) return runInProcess(args, { cwd: options.cwd, env: { NO_COLOR: "1" } });
  return runCli(["--quiet", "--no-prompt", "--allow-read", "--allow-env", "--allow-run"], args, {
    cwd: options.cwd,
    env: { NO_COLOR: "1", INIT_CWD: options.cwd },
    // A blocking read of a FIFO would hang: the child is killed after 30 s and the test fails.
    timeoutMs: 30_000,
  });
}

/**
 * Runs as a real child first, then in process: both must answer the same exit code and bytes.
 * The child comes first so that a blocking read fails there (its watchdog) before main reads the
 * same file in this process.
 */
async function anchored(args: string[], options: { cwd: string }): Promise<CliResult> {
  const real = await cli(args, { ...options, real: true });
  const inProcess = await cli(args, options);
  assert.deepStrictEqual(
    { code: inProcess.code, stdout: inProcess.stdout, stderr: inProcess.stderr },
    { code: real.code, stdout: real.stdout, stderr: real.stderr },
    `in process and as a real child: ${args.join(" ")}`,
  );
  return inProcess;
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
        // The first option's case is the anchor: a real child answers the same.
        const args = argv(`${W}/args.json`, W);
        const r = label === FILE_OPTIONS[0][0]
          ? await anchored(args, { cwd: base })
          : await cli(args, { cwd: base });
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
    const kinds = [["FIFO", fifo, "a FIFO"], ["device", "/dev/zero", "a device"]] as const;
    // The anchors, outside any step: a real child that blocks on the FIFO or reads /dev/zero
    // without end is killed by its watchdog and ends the test here, before main reads either
    // in this process. The FIFO through the first option, the device through the second.
    for (const [i, [what, file, kind]] of kinds.entries()) {
      const [label, argv] = FILE_OPTIONS[i];
      const r = await anchored(argv(file, W), { cwd: base });
      assert.equal(r.code, 2, `${label}: ${what}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`is ${kind}; give a regular file`), r.stderr);
    }
    for (const [label, argv] of FILE_OPTIONS) {
      for (const [what, file, kind] of kinds) {
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
