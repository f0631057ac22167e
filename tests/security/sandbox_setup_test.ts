/**
 * The sandbox's own setup (security review of issue 8): its HOME lives under the random marker
 * directory, so serving /tmp read-only works and leaves nothing on the host, and when bubblewrap
 * cannot build the sandbox the launcher says so in wmcp's words (`--sandbox required`: exit 2).
 * Real launcher processes with exactly the server tasks' permissions. Linux with bwrap only.
 */
import assert from "node:assert/strict";
import { CLI, readReadyLine } from "../server/_harness.ts";

const LAUNCHER_FLAGS = [
  "run",
  "--quiet",
  "--no-prompt",
  "--allow-env=INIT_CWD,DENO_DIR,XDG_CACHE_HOME,HOME",
  "--allow-run=bwrap,kill,/proc/self/exe",
];
const dec = new TextDecoder();
const HAVE_BWRAP = await new Deno.Command("bwrap", {
  args: ["--die-with-parent", "--unshare-user", "--ro-bind", "/", "/", "true"],
  stdout: "null",
  stderr: "null",
}).output().then((o) => o.success, () => false);
const SKIP = !HAVE_BWRAP && !Deno.env.get("WMCP_REQUIRE_SANDBOX_TESTS");

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
