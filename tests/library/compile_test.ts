/**
 * `deno task compile`: where Deno's runtime cannot be downloaded it fails with one clear line
 * (exit 3); where it can, the built binary answers --version and runs an operation.
 */
import assert from "node:assert/strict";
import { RUNTIME_UNREACHABLE_EXIT, runtimeUrl } from "../../scripts/compile.ts";
import { ROOT, runDeno } from "./_run.ts";

/** The compile task's command (as deno.json gives it), as an argument list after `deno`. */
async function compileCommand(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const argv = (config.tasks.compile as string).trim().split(/\s+/);
  assert.equal(argv[0], "deno");
  return argv.slice(1);
}

/** Whether the runtime can be downloaded, asked with the task's own permissions (null: yes). */
async function probe(): Promise<string | null> {
  const r = await runDeno([...await compileCommand(), "--probe"], { cwd: ROOT });
  return r.code === 0 ? null : r.stderr.trim() || `probe exit ${r.code}`;
}

const unavailable = await probe();
if (unavailable !== null) {
  console.error(`compile_test: building the binary is skipped: ${unavailable} (${runtimeUrl()})`);
}

/** Runs the compile task with an output path. */
async function compileTask(output: string) {
  return await runDeno([...await compileCommand(), "--output", output], {
    cwd: ROOT,
    timeoutMs: 300_000,
  });
}

Deno.test({
  name: "compile without a reachable runtime: one line saying why and what to do, exit 3",
  ignore: unavailable === null,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "wmcp-compile-" });
    try {
      const r = await compileTask(`${dir}/wmcp`);
      assert.equal(r.code, RUNTIME_UNREACHABLE_EXIT);
      assert.equal(r.stdout, "");
      const lines = r.stderr.trimEnd().split("\n");
      assert.equal(lines.length, 1, r.stderr);
      assert.match(
        lines[0],
        /^wmcp compile: cannot download Deno's runtime \(https:\/\/dl\.deno\.land\//,
      );
      assert.match(lines[0], /Run `deno task compile` on a machine that reaches dl\.deno\.land/);
      assert.match(lines[0], /DENORT_BIN/);
      await assert.rejects(Deno.stat(`${dir}/wmcp`), Deno.errors.NotFound);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "the compiled wmcp binary answers --version and runs an operation",
  ignore: unavailable !== null,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "wmcp-compile-" });
    try {
      const r = await compileTask(`${dir}/wmcp`);
      assert.equal(r.code, 0, r.stderr);
      const run = async (args: string[]) => {
        const out = await new Deno.Command(`${dir}/wmcp`, { args, cwd: dir, stdin: "null" })
          .output();
        return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
      };
      const version = await run(["--version"]);
      assert.equal(version.code, 0);
      assert.match(version.stdout, /\d+\.\d+\.\d+/);
      await Deno.writeTextFile(`${dir}/hello.txt`, "hi\n");
      const op = await run([
        "op",
        "get_file_info",
        "--root",
        dir,
        "--arguments",
        '{"path":"hello.txt"}',
      ]);
      assert.equal(op.code, 0);
      assert.equal(JSON.parse(op.stdout).size, 3);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
