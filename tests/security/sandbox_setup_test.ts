/**
 * The sandbox's own setup (security review of issue 8): its HOME lives under the random marker
 * directory, so serving /tmp read-only works and leaves nothing on the host, and when bubblewrap
 * cannot build the sandbox the launcher says so in wmcp's words (`--sandbox required`: exit 2).
 * Real launcher processes with exactly the server tasks' permissions. Linux with bwrap only.
 */
import assert from "node:assert/strict";
import { CLI, readReadyLine, serveStopCommand } from "../server/_harness.ts";
import { LAUNCHER_FLAGS, skipWithoutBwrap } from "./_sandbox.ts";

const dec = new TextDecoder();
const SKIP = skipWithoutBwrap("sandbox_setup_test");

Deno.test({
  name: "sandbox required serves /tmp read-only; no wmcp-home appears on the host",
  ignore: SKIP,
}, async () => {
  const before = await Deno.lstat("/tmp/wmcp-home").then(() => true, () => false);
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      ...LAUNCHER_FLAGS,
      CLI,
      "serve",
      "http",
      "--sandbox",
      "required",
      "--port",
      "0",
      "--root",
      "/tmp",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let errText = "";
  const errDone = (async () => {
    for await (const c of child.stderr) errText += dec.decode(c, { stream: true });
  })();
  try {
    const { ready, reader } = await readReadyLine(child.stdout, "launcher").catch(async (e) => {
      child.kill("SIGKILL");
      await errDone;
      throw new Error(`${e.message}: ${errText}`);
    });
    const h = await fetch(new URL("/healthz", ready.url));
    assert.equal(h.status, 200);
    await h.body?.cancel();
    child.kill("SIGTERM");
    await reader.cancel().catch(() => {});
    assert.equal((await child.status).code, 0, errText);
    await errDone;
    if (!before) {
      await assert.rejects(Deno.lstat("/tmp/wmcp-home"), "nothing left on the host");
    }
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await child.status;
  }
});

Deno.test({
  name: "bubblewrap setup failure: --sandbox required exits 2 with wmcp's message",
  ignore: SKIP,
}, async () => {
  // Serving / read-only leaves bwrap no writable place for the marker directory.
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      ...LAUNCHER_FLAGS,
      CLI,
      "serve",
      "http",
      "--sandbox",
      "required",
      "--port",
      "0",
      "--root",
      "/",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const stderr = dec.decode(out.stderr);
  assert.equal(out.code, 2, stderr);
  assert.match(stderr, /^wmcp: --sandbox required, but bubblewrap could not set up the sandbox: /m);
  assert.equal(dec.decode(out.stdout), "", "no server started");
});

/** Runs the launcher to completion (or to its ready line, then stops it with serve stop). */
function launcher(args: string[], cwd: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [...LAUNCHER_FLAGS, CLI, "serve", "http", ...args],
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test({
  name: "pid file directory: required refuses a shared one; a linked dedicated one is proven",
  ignore: SKIP,
}, async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-piddir-" }));
  try {
    await Deno.mkdir(`${base}/ws`);
    await Deno.mkdir(`${base}/shared`);
    await Deno.writeTextFile(`${base}/shared/bystander.txt`, "not the server's to write\n");
    // A directory holding anything else would be mounted read-write inside: refused.
    const refused = await launcher(
      ["--sandbox", "required", "--port", "0", "--pid-file", `${base}/shared/w.pid`],
      `${base}/ws`,
    ).output();
    assert.equal(refused.code, 2);
    assert.match(dec.decode(refused.stderr), /holds 1 other entry/);
    assert.deepEqual([...Deno.readDirSync(`${base}/shared`)].map((e) => e.name), [
      "bystander.txt",
    ]);
    // A dedicated directory reached through a link (as /var/run -> /run): the server signs the
    // real path, so serve stop proves it and stops it.
    await Deno.mkdir(`${base}/pids`);
    await Deno.symlink(`${base}/pids`, `${base}/linked`);
    const child = launcher(
      ["--sandbox", "required", "--port", "0", "--pid-file", `${base}/linked/w.pid`],
      `${base}/ws`,
    );
    const errDone = child.stderr.pipeTo(new WritableStream());
    try {
      const { reader } = await readReadyLine(child.stdout, "launcher");
      const stop = await serveStopCommand(`${base}/linked/w.pid`, {
        read: [`${base}/linked/w.pid`],
      }).output();
      assert.equal(stop.code, 0, dec.decode(stop.stdout) + dec.decode(stop.stderr));
      assert.match(dec.decode(stop.stdout), /"stopped"/);
      assert.equal((await child.status).code, 0);
      await reader.cancel().catch(() => {});
    } finally {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
      await child.status;
      await errDone.catch(() => {});
    }
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test({
  name: "SIGTERM while bubblewrap is still setting up ends the launcher: no restart without it",
  ignore: Deno.build.os !== "linux",
}, async () => {
  // A bwrap that never starts the server: it says it is running, then waits.
  const dir = await Deno.makeTempDir({ prefix: "wmcp_fake_bwrap_" });
  try {
    const started = `${dir}/started`;
    await Deno.writeTextFile(
      `${dir}/bwrap`,
      `#!/bin/sh\n: > '${started}'\nexec sleep 30\n`,
      { mode: 0o755 },
    );
    const root = await Deno.makeTempDir({ dir, prefix: "root_" });
    const child = new Deno.Command(Deno.execPath(), {
      // The server's sandbox is the subject: no engine broker (its own bwrap would be the fake).
      args: [
        ...LAUNCHER_FLAGS,
        CLI,
        "serve",
        "stdio",
        "--sandbox",
        "auto",
        "--engine",
        "builtin",
        "--root",
        root,
      ],
      env: { PATH: `${dir}:${Deno.env.get("PATH") ?? ""}` },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const out = child.output();
    try {
      // Bounded wait for the fake bwrap to run (the launcher spawned it).
      for (let i = 0; i < 300 && !(await Deno.lstat(started).then(() => true, () => false)); i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(await Deno.lstat(started).then(() => true, () => false), "bwrap was started");
      child.kill("SIGTERM");
      // A server restarted without the sandbox (the bug) would read stdin: end it so the test
      // fails on the assertions below instead of waiting for it.
      await child.stdin.close();
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      const result = await out;
      clearTimeout(timer);
      const stderr = dec.decode(result.stderr);
      assert.equal(result.signal, null, `the launcher ended by itself: ${stderr}`);
      assert.doesNotMatch(stderr, /serving without the kernel sandbox/);
      assert.equal(dec.decode(result.stdout), "", "no server answered");
    } finally {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
      await child.status;
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
