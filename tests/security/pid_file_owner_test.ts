/**
 * Pid files that are not this user's small regular file (security review of issue 8): a pid file
 * owned by another user is refused even when its server proves the secret (nothing signalled,
 * and a server will not adopt or replace it); `serve stop` without sys=uid refuses rather than
 * skip the owner check; a FIFO, a link to /dev/zero and an oversized file are refused without
 * blocking or growing memory, by `serve stop` and at server start; and the documented
 * `deno task cli serve stop --pid-file F`, run from a directory that does not hold F, re-runs
 * itself with the permissions it needs and stops the server (exit 0).
 * Real server processes, real `cli serve stop` processes, a stand-in `kill` that records calls.
 */
import assert from "node:assert/strict";
import { cliArgv } from "../_support/cli.ts";
import { makeWorkspace, SERVE_HTTP } from "../server/_harness.ts";
import { setUp, tearDown } from "./_pid_fixture.ts";

const EXIT_REFUSED = 4;
const NOBODY = 65534;
const dec = new TextDecoder();
/** This test process's uid (the test task grants run, not sys). */
const MY_UID = Number(dec.decode(new Deno.Command("id", { args: ["-u"] }).outputSync().stdout));

/** The shared pid-file fixture, with its teardown as `done`. */
async function fixture() {
  const f = await setUp();
  return { ...f, done: () => tearDown(f) };
}

/** `cli serve stop` with read on the pid file's directory and a recording kill first on PATH. */
async function stop(
  pidDir: string,
  pidFile: string,
  fakeBin: string,
  extra: string[] = ["--allow-sys=uid"],
) {
  const path = Deno.env.get("PATH") ?? "/usr/bin:/bin";
  const out = await new Deno.Command(Deno.execPath(), {
    args: cliArgv([
      "--no-prompt",
      `--allow-read=${pidDir}`,
      "--allow-net=127.0.0.1",
      "--allow-run=kill",
      ...extra,
    ], [
      "serve",
      "stop",
      "--pid-file",
      pidFile,
      "--timeout",
      "10",
    ]),
    env: { PATH: `${fakeBin}:${path}` },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  const text = dec.decode(out.stdout).trim();
  return {
    code: out.code,
    line: text === "" ? {} : JSON.parse(text),
    stderr: dec.decode(out.stderr),
  };
}

async function killNeverRun(fakeBin: string, label: string) {
  await assert.rejects(Deno.stat(`${fakeBin}/kill.log`), `${label}: kill was never run`);
}

Deno.test({
  name: "a pid file owned by another user is refused, even when its server proves the secret",
  ignore: MY_UID !== 0, // chown to nobody needs root
  fn: async () => {
    const f = await fixture();
    try {
      await Deno.chmod(f.pidDir, 0o1777);
      await Deno.chown(f.pidFile, NOBODY, NOBODY);
      await Deno.chmod(f.pidFile, 0o644);
      const r = await stop(f.pidDir, f.pidFile, f.fakeBin);
      assert.equal(r.code, EXIT_REFUSED, JSON.stringify(r));
      assert.equal(r.line.reason, "not-owned");
      await killNeverRun(f.fakeBin, "not owned");

      // A second server on that pid file neither adopts nor replaces it.
      const pidPaths = `${f.pidFile},${f.pidFile}.tmp`;
      const before = await Deno.readTextFile(f.pidFile);
      const second = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--no-prompt",
          `--allow-read=${f.root},${pidPaths}`,
          `--allow-write=${pidPaths}`,
          "--allow-net=127.0.0.1",
          "--allow-sys=uid",
          SERVE_HTTP,
          "--root",
          f.root,
          "--port",
          "0",
          "--pid-file",
          f.pidFile,
        ],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(second.code, 2, dec.decode(second.stderr));
      assert.match(dec.decode(second.stderr), /owned by uid 65534/);
      assert.equal(await Deno.readTextFile(f.pidFile), before, "the file is untouched");
    } finally {
      await f.done();
    }
  },
});

Deno.test("serve stop without sys=uid refuses instead of skipping the owner check", async () => {
  const f = await fixture();
  try {
    const r = await stop(f.pidDir, f.pidFile, f.fakeBin, []);
    assert.equal(r.code, EXIT_REFUSED, JSON.stringify(r));
    assert.equal(r.line.reason, "owner-unknown");
    assert.match(String(r.line.message), /--allow-sys=uid/);
    await killNeverRun(f.fakeBin, "no sys=uid");
  } finally {
    await f.done();
  }
});

Deno.test("FIFO, link to /dev/zero and oversized pid files are refused without blocking", async () => {
  const f = await fixture();
  const other = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-pidbad-" }));
  try {
    const fifo = `${other}/fifo.pid`;
    const mk = await new Deno.Command("mkfifo", { args: ["-m", "600", fifo] }).output();
    assert.ok(mk.success);
    const zero = `${other}/zero.pid`;
    await Deno.symlink("/dev/zero", zero);
    const big = `${other}/big.pid`;
    const record = JSON.parse(await Deno.readTextFile(f.pidFile));
    await Deno.writeTextFile(
      big,
      JSON.stringify({ ...record, pad: "x".repeat(100 * 1024) }),
      { mode: 0o600 },
    );
    for (const [file, label] of [[fifo, "fifo"], [zero, "/dev/zero"], [big, "oversized"]]) {
      const r = await stop(other, file, f.fakeBin);
      assert.equal(r.code, EXIT_REFUSED, `${label}: ${JSON.stringify(r)}`);
      assert.equal(r.line.reason, "unusable", label);
    }
    await killNeverRun(f.fakeBin, "bad files");
    // A server started on a FIFO pid file refuses it (exit 2) instead of hanging.
    const start = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        `--allow-read=${f.root},${fifo},${fifo}.tmp`,
        `--allow-write=${fifo},${fifo}.tmp`,
        "--allow-net=127.0.0.1",
        "--allow-sys=uid",
        SERVE_HTTP,
        "--root",
        f.root,
        "--port",
        "0",
        "--pid-file",
        fifo,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000),
    }).output();
    assert.equal(start.code, 2, dec.decode(start.stderr));
    assert.match(dec.decode(start.stderr), /not a regular file/);
  } finally {
    await Deno.remove(other, { recursive: true });
    await f.done();
  }
});

Deno.test("`deno task cli serve stop` run from elsewhere re-runs itself with what it needs", async () => {
  const f = await fixture();
  const elsewhere = await makeWorkspace();
  try {
    const config = new URL("../../deno.json", import.meta.url).pathname;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--config", config, "cli", "serve", "stop", "--pid-file", f.pidFile],
      cwd: elsewhere,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      clearEnv: true,
      env: { NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "" },
      signal: AbortSignal.timeout(60_000),
    }).output();
    const stderr = dec.decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    const line = JSON.parse(dec.decode(out.stdout).trim());
    assert.deepEqual([line.event, line.pid], ["stopped", f.server.pid]);
    assert.equal((await f.server.status).code, 0);
  } finally {
    await Deno.remove(elsewhere, { recursive: true });
    await f.done();
  }
});
