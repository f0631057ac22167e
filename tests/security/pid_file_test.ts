/**
 * `serve stop` and forged pid files (issue 8, section 5a): a pid file binds to its server by a
 * secret only the two share, and `/healthz` proves identity by answering a fresh challenge.
 * Forged pids (<= 1), non-loopback urls, a wrong secret, a real server that does not know the
 * file's secret, edited, copied and loose files and files inside the workspace are all refused
 * (exit 4) and nothing is signalled (a stand-in `kill` on PATH records any call); a server
 * refuses to write its pid file inside its workspace; the genuine stop still works.
 * Real server processes write the pid files. `serve stop`'s refusals run in one worker process
 * (tests/security/_stop_worker.ts: serveStop, what `cli serve stop` runs, once per file, with a
 * stop's permissions and the recording kill first on PATH; the test process lacks sys=uid and
 * net on localhost, without which a stop re-runs itself as a child) against the real server, one
 * of them as a real `cli serve stop` child too (the same bytes and exit code); the genuine stop
 * is a real `cli serve stop` process signalling the real server. The refusal of a pid file
 * inside the workspace: a real server started with it spelled through a link, and the placement
 * check serve_http.ts runs (placePidFile) in process for the plain spelling.
 */
import assert from "node:assert/strict";
import { newPidSecret, pidFileProof, placePidFile } from "../../src/server/pid_file.ts";
import {
  makeWorkspace,
  readReadyLine,
  SERVE_HTTP,
  serveStopCommand,
  startHttpServer,
} from "../server/_harness.ts";
import { serverPermissions } from "../../src/cli/server_permissions.ts";
import { type Fixture, setUp, tearDown } from "./_pid_fixture.ts";

const EXIT_REFUSED = 4;

interface StopResult {
  code: number;
  line: Record<string, unknown>;
  stderr: string;
}

function stopResult(code: number, stdout: string, stderr: string): StopResult {
  const text = stdout.trim();
  return { code, line: text === "" ? {} : JSON.parse(text), stderr };
}

/** Runs `cli serve stop` as a real child (read on the pid dir and the workspace); `fake` puts the recording kill first on PATH. */
async function stopReal(f: Fixture, pidFile: string, fake = true): Promise<StopResult> {
  const path = Deno.env.get("PATH") ?? "/usr/bin:/bin";
  const out = await serveStopCommand(pidFile, {
    read: [f.pidDir, f.root],
    args: ["--timeout", "10"],
    env: { PATH: fake ? `${f.fakeBin}:${path}` : path },
  }).output();
  const dec = new TextDecoder();
  return stopResult(out.code, dec.decode(out.stdout), dec.decode(out.stderr));
}

/**
 * One process running `serve stop` (serveStop, what `cli serve stop` runs) once per request,
 * with what a stop needs (read on the pid dir and the workspace, loopback net, run kill, sys
 * uid) and the recording kill first on PATH: the refusals' checks in one child, not one each.
 */
class StopWorker {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: ReadableStreamDefaultReader<string>;
  #buf = "";
  constructor(f: Fixture) {
    const path = Deno.env.get("PATH") ?? "/usr/bin:/bin";
    this.#child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        `--allow-read=${f.pidDir},${f.root}`,
        "--allow-net=127.0.0.1,localhost,[::1]",
        "--allow-run=kill",
        "--allow-sys=uid",
        new URL("./_stop_worker.ts", import.meta.url).pathname,
      ],
      env: { PATH: `${f.fakeBin}:${path}` },
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.#lines = this.#child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  }
  async stop(pidFile: string): Promise<StopResult> {
    const args = ["--pid-file", pidFile, "--timeout", "10"];
    await this.#writer.write(new TextEncoder().encode(JSON.stringify(args) + "\n"));
    while (!this.#buf.includes("\n")) {
      const { value, done } = await this.#lines.read();
      if (done) throw new Error("the stop worker ended");
      this.#buf += value;
    }
    const nl = this.#buf.indexOf("\n");
    const r = JSON.parse(this.#buf.slice(0, nl));
    this.#buf = this.#buf.slice(nl + 1);
    return stopResult(r.code, r.stdout, r.stderr);
  }
  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
    await this.#lines.cancel().catch(() => {});
    await this.#child.status;
  }
}

async function nothingSignalled(f: Fixture, label: string): Promise<void> {
  await assert.rejects(Deno.stat(`${f.fakeBin}/kill.log`), `${label}: kill was never run`);
  const h = await fetch(f.server.url.replace(/\/mcp$/, "/healthz"));
  assert.equal(h.status, 200, `${label}: the server still serves`);
  await h.body?.cancel();
}

async function writeForged(path: string, record: Record<string, unknown>): Promise<void> {
  await Deno.writeTextFile(path, JSON.stringify(record) + "\n", { mode: 0o600 });
  await Deno.chmod(path, 0o600);
}

async function expectRefused(
  f: Fixture,
  w: StopWorker,
  path: string,
  reason: string,
  label: string,
) {
  const r = await w.stop(path);
  assert.equal(r.code, EXIT_REFUSED, `${label}: ${JSON.stringify(r)}`);
  assert.equal(r.line.event, "refused", label);
  assert.equal(r.line.reason, reason, label);
  assert.equal(typeof r.line.message, "string", label);
  await nothingSignalled(f, label);
}

Deno.test("the pid file: mode 0600, nothing left beside it, bound to the server by a challenge proof", async () => {
  const f = await setUp();
  try {
    const info = await Deno.stat(f.pidFile);
    assert.equal(info.mode! & 0o777, 0o600);
    assert.deepEqual(
      [...Deno.readDirSync(f.pidDir)].map((e) => e.name),
      ["server.pid"],
      "no temporary file left",
    );
    assert.equal(f.record.pid, f.server.pid);
    assert.equal(f.record.url, f.server.url);
    assert.equal(f.record.root, f.root);
    assert.match(String(f.record.secret), /^[A-Za-z0-9_-]{43}$/);
    const base = f.server.url.replace(/\/mcp$/, "");
    const plain = await (await fetch(`${base}/healthz`)).json();
    assert.deepEqual(plain, { status: "ok", pid: f.server.pid }, "no challenge, no proof");
    const c1 = "a".repeat(64);
    const c2 = "b".repeat(64);
    const p1 = (await (await fetch(`${base}/healthz?challenge=${c1}`)).json()).proof;
    const p2 = (await (await fetch(`${base}/healthz?challenge=${c2}`)).json()).proof;
    assert.notEqual(p1, p2, "each challenge has its own answer: a replay proves nothing");
    const claim = {
      pid: f.server.pid,
      url: f.server.url,
      root: f.root,
      path: f.pidFile,
    };
    assert.equal(p1, pidFileProof(String(f.record.secret), { challenge: c1, ...claim }));
    assert.notEqual(p1, pidFileProof(newPidSecret(), { challenge: c1, ...claim }));
    assert.ok(!JSON.stringify([plain, p1, p2]).includes(String(f.record.secret)));
  } finally {
    await tearDown(f);
  }
});

Deno.test("serve stop refuses forged pid files and signals nothing", async (t) => {
  const f = await setUp();
  const other = await makeWorkspace();
  const stranger = await startHttpServer(other);
  const bystander = new Deno.Command("sleep", { args: ["60"] }).spawn();
  const w = new StopWorker(f);
  try {
    await t.step("pid <= 1", async () => {
      for (const pid of [-1, 0, 1]) {
        const path = `${f.pidDir}/forged-${pid}.pid`;
        await writeForged(path, { ...f.record, pid });
        await expectRefused(f, w, path, "pid-out-of-range", `pid ${pid}`);
      }
    });
    await t.step("non-loopback or non-http urls", async () => {
      const port = new URL(f.server.url).port;
      const urls = [
        "http://10.1.2.3:9/mcp",
        "http://evil.example/mcp",
        `https://127.0.0.1:${port}/mcp`,
        `http://user:pw@127.0.0.1:${port}/mcp`,
        "not a url",
      ];
      for (const [i, url] of urls.entries()) {
        const path = `${f.pidDir}/url-${i}.pid`;
        await writeForged(path, { ...f.record, url });
        await expectRefused(f, w, path, "url-not-loopback", url);
      }
    });
    await t.step("no secret (forged, or an older format)", async () => {
      const path = `${f.pidDir}/old.pid`;
      await writeForged(path, { pid: f.server.pid, url: f.server.url, startedAt: "x" });
      await expectRefused(f, w, path, "no-secret", "no secret");
    });
    await t.step("the genuine server, a wrong secret", async () => {
      const path = `${f.pidDir}/wrong-secret.pid`;
      await writeForged(path, { ...f.record, secret: newPidSecret() });
      await expectRefused(f, w, path, "unproven", "wrong secret");
      // The anchor: a real `cli serve stop` child answers with the same bytes and exit code.
      const real = await stopReal(f, path);
      assert.deepStrictEqual(real, await w.stop(path), "in the worker as in a real child");
      await nothingSignalled(f, "wrong secret, real child");
    });
    await t.step("the genuine secret and url, another live process's pid", async () => {
      const path = `${f.pidDir}/other-pid.pid`;
      await writeForged(path, { ...f.record, pid: bystander.pid });
      await expectRefused(f, w, path, "unproven", "edited pid");
      assert.equal(
        (await new Deno.Command("kill", { args: ["-0", String(bystander.pid)] }).output()).code,
        0,
        "the bystander lives",
      );
    });
    await t.step("a real server that does not know the file's secret", async () => {
      const path = `${f.pidDir}/stranger.pid`;
      await writeForged(path, {
        pid: stranger.pid,
        url: stranger.url,
        startedAt: "x",
        root: other,
        secret: newPidSecret(),
      });
      await expectRefused(f, w, path, "unproven", "stranger");
      const h = await fetch(stranger.url.replace(/\/mcp$/, "/healthz"));
      assert.equal(h.status, 200, "the stranger still serves");
      await h.body?.cancel();
    });
    await t.step("an exact copy of the genuine file elsewhere", async () => {
      const path = `${f.pidDir}/copy.pid`;
      await Deno.copyFile(f.pidFile, path);
      await Deno.chmod(path, 0o600);
      await expectRefused(f, w, path, "unproven", "copy");
    });
    await t.step("a copy inside the workspace it names", async () => {
      const path = `${f.root}/server.pid`;
      await Deno.copyFile(f.pidFile, path);
      await Deno.chmod(path, 0o600);
      await expectRefused(f, w, path, "inside-workspace", "inside the workspace");
    });
    await t.step("the genuine file made writable by others", async () => {
      await Deno.chmod(f.pidFile, 0o666);
      try {
        await expectRefused(f, w, f.pidFile, "writable-by-others", "mode 0666");
      } finally {
        await Deno.chmod(f.pidFile, 0o600);
      }
    });
    await t.step("the genuine file stops the genuine server (real kill)", async () => {
      const r = await stopReal(f, f.pidFile, false);
      assert.equal(r.code, 0, JSON.stringify(r));
      assert.deepEqual([r.line.event, r.line.pid], ["stopped", f.server.pid]);
      assert.equal((await f.server.status).code, 0);
      await assert.rejects(Deno.stat(f.pidFile), "the pid file is removed on exit");
      const again = await w.stop(f.pidFile);
      assert.equal(again.code, 3, "nothing to stop");
    });
  } finally {
    await w.close();
    bystander.kill("SIGKILL");
    await bystander.status;
    await stranger.stop();
    await Deno.remove(other, { recursive: true });
    await tearDown(f);
  }
});

Deno.test("a server refuses a pid file inside its workspace, however it is spelled", async () => {
  const root = await makeWorkspace();
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-pid-" }));
  await Deno.symlink(root, `${outside}/link`);
  try {
    // The placement check serve_http.ts runs before it writes (plain spelling, in process).
    const plain = `${root}/server.pid`;
    await assert.rejects(placePidFile(plain, root), /inside the served workspace/);
    await assert.rejects(Deno.lstat(plain), "no pid file written");
    await assert.rejects(Deno.lstat(`${plain}.tmp`), "no temporary file left");
    // A real server given the file spelled through a link to its workspace.
    const pidFile = `${outside}/link/server.pid`;
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        `--allow-read=${root},${outside}`,
        `--allow-write=${pidFile},${pidFile}.tmp`,
        "--allow-net=127.0.0.1",
        SERVE_HTTP,
        "--root",
        root,
        "--port",
        "0",
        "--pid-file",
        pidFile,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, stderr);
    assert.match(stderr, /inside the served workspace/);
    assert.equal(new TextDecoder().decode(out.stdout), "", "it never started");
    await assert.rejects(Deno.lstat(pidFile), "no pid file written");
    await assert.rejects(Deno.lstat(`${pidFile}.tmp`), "no temporary file left");
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("several roots: the pid file lies inside none of them; the record names them all and serve stop proves it", async () => {
  const A = await makeWorkspace();
  const B = await makeWorkspace();
  const run = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-pid-" }));
  try {
    // The placement check serve_http.ts runs, in process: a later (read-only) root counts too.
    await assert.rejects(placePidFile(`${B}/server.pid`, [A, B]), new RegExp(`workspace ${B}`));
    await assert.rejects(Deno.lstat(`${B}/server.pid.tmp`), "no temporary file left");
    assert.equal(await placePidFile(`${run}/server.pid`, [A, B]), `${run}/server.pid`);
    // A real server, with exactly the permissions serverPermissions gives these flags.
    const serve = (pidFile: string) => {
      const args = ["--root", A, "--read-only-root", B, "--port", "0", "--pid-file", pidFile];
      return new Deno.Command(Deno.execPath(), {
        args: ["run", ...serverPermissions("http", args), SERVE_HTTP, ...args],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      });
    };
    const refused = await serve(`${B}/server.pid`).output();
    const stderr = new TextDecoder().decode(refused.stderr);
    assert.equal(refused.code, 2, stderr);
    assert.match(stderr, new RegExp(`inside the served workspace ${B}`));
    await assert.rejects(Deno.lstat(`${B}/server.pid`), "no pid file written");
    const pidFile = `${run}/server.pid`;
    const child = serve(pidFile).spawn();
    const errText = new Response(child.stderr).text();
    try {
      const { ready, reader } = await readReadyLine(child.stdout);
      void reader.cancel();
      const record = JSON.parse(await Deno.readTextFile(pidFile));
      assert.deepEqual([record.pid, record.root, record.roots], [ready.pid, A, [A, B]]);
      // A copy inside the later root: a real `serve stop` refuses it, signalling nothing.
      const copy = `${B}/copy.pid`;
      await Deno.copyFile(pidFile, copy);
      await Deno.chmod(copy, 0o600);
      const refusedStop = await serveStopCommand(copy, { read: [B] }).output();
      const r = stopResult(
        refusedStop.code,
        new TextDecoder().decode(refusedStop.stdout),
        new TextDecoder().decode(refusedStop.stderr),
      );
      assert.deepEqual([r.code, r.line.reason], [EXIT_REFUSED, "inside-workspace"], r.stderr);
      const stop = await serveStopCommand(pidFile, { read: [run] }).output();
      assert.equal(stop.code, 0, new TextDecoder().decode(stop.stderr));
      assert.equal(JSON.parse(new TextDecoder().decode(stop.stdout)).event, "stopped");
      assert.equal((await child.status).code, 0, await errText);
    } finally {
      try {
        child.kill("SIGKILL");
      } catch { /* exited */ }
      await child.status;
      await errText.catch(() => {});
    }
  } finally {
    for (const d of [A, B, run]) await Deno.remove(d, { recursive: true });
  }
});
