/**
 * The kernel sandbox (layer 2): servers started by the launcher (`cli.ts serve`, with exactly the
 * tasks' permissions) run in a bubblewrap mount namespace where only the workspace and the
 * runtime exist. Real child processes, real sockets on 127.0.0.1, real stdio pipes. Linux with
 * bwrap only (CI installs it); every lifecycle test also runs with --sandbox off. One test runs the
 * launcher from a copy of the project, whose node_modules it changes.
 */
import assert from "node:assert/strict";
import { makeEnv, SECRET, SECRET_NAME, snapshot, withTimeout } from "./_helpers.ts";
import {
  CLI,
  envelope,
  modernRequest,
  readReadyLine,
  serveStopCommand,
  stdioInput,
} from "../server/_harness.ts";
import { LAUNCHER_FLAGS, skipWithoutBwrap } from "./_sandbox.ts";

const SWAPPER = new URL("./_swapper.py", import.meta.url).pathname;
const dec = new TextDecoder();
const SKIP = skipWithoutBwrap("sandbox_test");

/** A launched server: its ready line, the launcher child and everything it wrote to stderr. */
interface Launched {
  child: Deno.ChildProcess;
  url: string;
  pid: number;
  stderr: () => string;
  status: Promise<Deno.CommandStatus>;
}

async function launchHttp(
  args: string[],
  options: { env?: Record<string, string> } = {},
): Promise<Launched> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...LAUNCHER_FLAGS, CLI, "serve", "http", "--port", "0", ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: options.env,
  }).spawn();
  let errText = "";
  const errDone = (async () => {
    for await (const c of child.stderr) errText += dec.decode(c, { stream: true });
  })();
  try {
    const { ready, reader } = await readReadyLine(child.stdout, "launcher");
    (async () => {
      try {
        while (!(await reader.read()).done) { /* drain */ }
      } catch { /* closed */ }
    })();
    const status = child.status.then(async (s) => (await errDone, s));
    return { child, url: ready.url, pid: ready.pid, stderr: () => errText, status };
  } catch (err) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await errDone;
    throw new Error(`${(err as Error).message}: ${errText}`);
  }
}

async function callTool(url: string, name: string, args: Record<string, unknown>) {
  const r = await modernRequest(url, "tools/call", { name, arguments: args });
  const msg = r.messages.find((m) => "result" in m || "error" in m)!;
  return msg;
}

/** True while a process exists (kill -0). */
async function alive(pid: number): Promise<boolean> {
  const r = await new Deno.Command("kill", { args: ["-0", String(pid)], stderr: "null" }).output();
  return r.success;
}

/** The parent pid of a process, or undefined when it is gone. */
async function parentOf(pid: number): Promise<number | undefined> {
  const r = await new Deno.Command("ps", { args: ["-o", "ppid=", "-p", String(pid)] }).output();
  const n = Number(dec.decode(r.stdout).trim());
  return r.success && n > 0 ? n : undefined;
}

/**
 * Acts on a path as the server sees it: through /proc/PID/root, which resolves in the server's
 * mount namespace (Deno refuses /proc paths without --allow-all, so python3 does it). Returns
 * "ok" (and the content for read), or the errno name.
 */
async function inServerRoot(
  pid: number,
  action: "read" | "stat" | "write",
  path: string,
): Promise<string> {
  const script = `
import os, sys, errno
action, path = sys.argv[1], sys.argv[2]
try:
    if action == "read":
        print("ok:" + open(path).read(), end="")
    elif action == "stat":
        os.stat(path); print("ok", end="")
    else:
        open(path, "w").write("x"); print("ok", end="")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)), end="")
`;
  const r = await new Deno.Command("python3", {
    args: ["-c", script, action, `/proc/${pid}/root${path}`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(r.success, dec.decode(r.stderr));
  return dec.decode(r.stdout);
}

async function goneWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!(await alive(pid))) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !(await alive(pid));
}

function containmentOf(msg: Record<string, unknown>): Record<string, unknown> {
  const sc = (msg.result as { structuredContent: { containment: Record<string, unknown> } })
    .structuredContent;
  return sc.containment;
}

Deno.test({
  name: "sandbox: the server's mount namespace holds the workspace and nothing outside it",
  ignore: SKIP,
}, async () => {
  const env = await makeEnv();
  const { W, O, base } = env;
  await Deno.symlink(O, `${W}/dirlink`);
  await Deno.symlink("../outside", `${W}/rellink`);
  const server = await launchHttp(["--sandbox", "required", "--root", W]);
  try {
    // Seen through the server's own root (/proc/PID/root resolves in its mount namespace).
    const pid = server.pid;
    assert.equal(await inServerRoot(pid, "read", `${W}/inside.txt`), "ok:inside content\n");
    // Outside it exists; inside the server's namespace it does not, so a link leads nowhere.
    // (From out here an absolute link target would resolve against our own root, so the
    // relative link is followed and the absolute one's target is looked up directly.)
    assert.equal(await inServerRoot(pid, "read", `${W}/rellink/secret`), "ENOENT");
    assert.equal(await inServerRoot(pid, "stat", O), "ENOENT");
    assert.equal(await inServerRoot(pid, "stat", `${O}/secret`), "ENOENT");
    assert.equal(await inServerRoot(pid, "stat", `${base}/outside/secretdir`), "ENOENT");
    assert.equal(await inServerRoot(pid, "stat", "/etc/passwd"), "ENOENT");
    assert.equal(await inServerRoot(pid, "stat", "/home"), "ENOENT");
    // Read-only: the workspace mount itself refuses writes, whoever writes through it.
    assert.equal(await inServerRoot(pid, "write", `${W}/kernel-write.txt`), "EROFS");
    await assert.rejects(Deno.stat(`${W}/kernel-write.txt`), Deno.errors.NotFound);
    const info = await callTool(server.url, "workspace_info", {});
    assert.deepEqual(containmentOf(info), {
      inProcess: true,
      sandbox: "bubblewrap",
      denoPermissions: "scoped",
      root: "mount",
    });
    // The root is a mount point: swapped on the host, the server still serves the directory it
    // was started on, which is why it no longer re-checks the root's identity (decision 0059).
    await Deno.rename(W, `${W}-moved`);
    await Deno.mkdir(W);
    await Deno.writeTextFile(`${W}/inside.txt`, "swapped in\n");
    const read = await callTool(server.url, "read_file", { path: "inside.txt" });
    const sc = (read.result as { structuredContent: { content: string } }).structuredContent;
    assert.equal(sc.content, "inside content\n");
  } finally {
    server.child.kill("SIGTERM");
    assert.equal((await server.status).code, 0);
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test({
  name: "sandbox: --write makes the workspace (and only it) writable in the kernel",
  ignore: SKIP,
}, async () => {
  const env = await makeEnv();
  const server = await launchHttp(["--sandbox", "required", "--root", env.W, "--write"]);
  try {
    const pid = server.pid;
    assert.equal(await inServerRoot(pid, "write", `${env.W}/kernel-write.txt`), "ok");
    assert.equal(await Deno.readTextFile(`${env.W}/kernel-write.txt`), "x");
    assert.equal(await inServerRoot(pid, "stat", env.O), "ENOENT");
    // The runtime's files are read-only inside.
    const project = new URL("../../", import.meta.url).pathname;
    assert.equal(await inServerRoot(pid, "write", `${project}sandbox-probe.txt`), "EROFS");
  } finally {
    server.child.kill("SIGTERM");
    assert.equal((await server.status).code, 0);
    await Deno.remove(env.base, { recursive: true });
  }
});

/** Two roots beside W and O: A (a --root) and B (a --read-only-root), each with a file. */
async function twoRoots(base: string): Promise<{ A: string; B: string }> {
  const A = `${base}/rootA`;
  const B = `${base}/rootB`;
  await Deno.mkdir(A);
  await Deno.mkdir(B);
  await Deno.writeTextFile(`${A}/a.txt`, "alpha\n");
  await Deno.writeTextFile(`${B}/b.txt`, "bravo\n");
  return { A, B };
}

/** The wmcp error code of a tools/call answer, or undefined when it succeeded. */
function errorCode(msg: Record<string, unknown>): string | undefined {
  const r = msg.result as { isError?: boolean; _meta?: Record<string, { code: string }> };
  return r.isError ? r._meta?.["wmcp/error"]?.code : undefined;
}

Deno.test({
  name:
    "sandbox: serve stdio --root A --read-only-root B --write through the launcher: B read by absolute path, B READ_ONLY, A written, outside OUTSIDE_WORKSPACE",
  ignore: SKIP,
}, async () => {
  const env = await makeEnv();
  const { A, B } = await twoRoots(env.base);
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      ...LAUNCHER_FLAGS,
      CLI,
      "serve",
      "stdio",
      "--sandbox",
      "required",
      "--root",
      A,
      "--read-only-root",
      B,
      "--write",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  try {
    const io = stdioInput(child.stdin);
    await io.initialize();
    const calls: [string, Record<string, unknown>][] = [
      ["read_file", { path: `${B}/b.txt` }],
      ["write_file", { path: `${B}/new.txt`, content: "no\n" }],
      ["write_file", { path: "new.txt", content: "written\n" }],
      ["read_file", { path: `${env.O}/secret` }],
      ["write_file", { path: `${env.O}/planted.txt`, content: "no\n" }],
      ["workspace_info", {}],
    ];
    for (const [i, [name, args]] of calls.entries()) {
      await io.send({
        jsonrpc: "2.0",
        id: 10 + i,
        method: "tools/call",
        params: { name, arguments: args },
      });
    }
    const rd = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const answers = () => text.split("\n").filter((l) => l.trim()).length;
    await withTimeout(
      (async () => {
        while (answers() < calls.length + 1) {
          const { value, done } = await rd.read();
          if (done) break;
          text += value;
        }
      })(),
      30_000,
      "the answers",
    );
    await io.close();
    while (!(await rd.read()).done) { /* drain until exit */ }
    const byId = new Map(
      text.trim().split("\n").map((l) => JSON.parse(l)).map((m) => [m.id, m]),
    );
    const read = byId.get(10);
    assert.equal(errorCode(read), undefined, JSON.stringify(read));
    assert.equal(read.result.structuredContent.content, "bravo\n");
    assert.equal(errorCode(byId.get(11)), "READ_ONLY", JSON.stringify(byId.get(11)));
    await assert.rejects(Deno.stat(`${B}/new.txt`), Deno.errors.NotFound);
    assert.equal(errorCode(byId.get(12)), undefined, JSON.stringify(byId.get(12)));
    assert.equal(await Deno.readTextFile(`${A}/new.txt`), "written\n");
    assert.equal(errorCode(byId.get(13)), "OUTSIDE_WORKSPACE", JSON.stringify(byId.get(13)));
    assert.ok(!JSON.stringify(byId.get(13)).includes(SECRET));
    assert.equal(errorCode(byId.get(14)), "OUTSIDE_WORKSPACE", JSON.stringify(byId.get(14)));
    await assert.rejects(Deno.stat(`${env.O}/planted.txt`), Deno.errors.NotFound);
    assert.equal(containmentOf(byId.get(15)).sandbox, "bubblewrap");
    const status = await withTimeout(child.status, 20_000, "exit after stdin closed");
    const err = await stderr;
    assert.equal(status.code, 0, err);
    assert.ok(err.includes(`serving ${A}, ${B} (read-only root) over stdio (read-write)`), err);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await child.status;
    await stderr.catch(() => {});
    await Deno.remove(env.base, { recursive: true });
  }
});

Deno.test({
  name:
    "sandbox: with --root A --read-only-root B --write the kernel mounts A read-write, B read-only, and nothing else of theirs",
  ignore: SKIP,
}, async () => {
  const env = await makeEnv();
  const { A, B } = await twoRoots(env.base);
  const server = await launchHttp([
    "--sandbox",
    "required",
    "--read-only-root",
    B,
    "--root",
    A,
    "--write",
  ]);
  try {
    const pid = server.pid;
    assert.equal(await inServerRoot(pid, "read", `${B}/b.txt`), "ok:bravo\n");
    assert.equal(await inServerRoot(pid, "write", `${B}/kernel-write.txt`), "EROFS");
    assert.equal(await inServerRoot(pid, "write", `${A}/kernel-write.txt`), "ok");
    assert.equal(await Deno.readTextFile(`${A}/kernel-write.txt`), "x");
    assert.equal(await inServerRoot(pid, "stat", env.W), "ENOENT");
    assert.equal(await inServerRoot(pid, "stat", env.O), "ENOENT");
    // The server starts in the first root (B here): a relative path is B's.
    const read = await callTool(server.url, "read_file", { path: "b.txt" });
    assert.equal(errorCode(read), undefined, JSON.stringify(read));
  } finally {
    server.child.kill("SIGTERM");
    assert.equal((await server.status).code, 0);
    await Deno.remove(env.base, { recursive: true });
  }
});

Deno.test({
  name:
    "sandbox: directories swapped for links to the outside during every walking and writing tool: zero outside bytes or names, nothing outside changed",
  ignore: SKIP,
}, async () => {
  const env = await makeEnv();
  const { W, O, base } = env;
  // W/swap is a directory; W/swaplink points outside; the swapper exchanges them endlessly.
  await Deno.mkdir(`${W}/swap`);
  await Deno.writeTextFile(`${W}/swap/f.txt`, "swap inside\n");
  await Deno.symlink(`${O}/secretdir`, `${W}/swaplink`);
  await Deno.symlink(O, `${W}/dirlink`);
  const outsideBefore = await snapshot(O);
  const server = await launchHttp(["--sandbox", "required", "--root", W, "--write"]);
  const swapper = new Deno.Command("python3", {
    args: [SWAPPER, `${W}/swap`, `${W}/swaplink`, "60"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = swapper.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let swaps = 0;
  let swapperErr = "";
  try {
    assert.equal((await out.read()).value?.trim(), "ready");
    const calls: [string, Record<string, unknown>][] = [
      ["search_text", { query: "SECRET" }],
      ["search_text", { query: "inner", path: "swap" }],
      ["find_files", { pattern: "**/*" }],
      ["find_files", { pattern: "**/*.txt", path: "swap" }],
      ["list_directory", { path: "swap", depth: 3 }],
      ["read_file", { path: "swap/inner.txt" }],
      ["read_file", { path: "swap/f.txt" }],
      ["write_file", { path: "swap/planted.txt", content: "planted" }],
      ["write_file", { path: "swap/written.txt", content: "pwned", ifExists: "overwrite" }],
    ];
    const ROUNDS = 25;
    let answered = 0;
    await withTimeout(
      (async () => {
        for (let round = 0; round < ROUNDS; round++) {
          const results = await Promise.all(
            calls.map(([name, args]) => callTool(server.url, name, args)),
          );
          for (const [i, r] of results.entries()) {
            const text = JSON.stringify(r);
            assert.ok(!text.includes(SECRET), `outside content returned: ${text}`);
            assert.ok(!text.includes(SECRET_NAME), `outside name returned: ${text}`);
            if (calls[i][0] === "find_files" || calls[i][0] === "list_directory") {
              // inner.txt exists only in the outside directory the link points to.
              assert.ok(!text.includes("inner.txt"), `outside name returned: ${text}`);
            }
            answered++;
          }
        }
      })(),
      120_000,
      "the race rounds",
    );
    assert.equal(answered, ROUNDS * calls.length);
  } finally {
    await swapper.stdin.close().catch(() => {});
    let rest = "";
    for (let r = await out.read(); !r.done; r = await out.read()) rest += r.value;
    swaps = Number(rest.trim());
    swapperErr = dec.decode(await new Response(swapper.stderr).arrayBuffer());
    await swapper.status;
    server.child.kill("SIGTERM");
    await server.status;
  }
  try {
    assert.ok(swaps > 0, `the swapper ran: ${swapperErr}`);
    assert.deepEqual(await snapshot(O), outsideBefore, "nothing outside changed");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

/** The project directory (what the launcher mounts read-only for its server). */
const PROJECT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
/** What `serve.ts stdio` and its server load from the project: copied for the test below. */
const STDIO_PROJECT_FILES = [
  "src",
  "generated",
  "serve.ts",
  "serve_stdio.ts",
  "deno.json",
  "deno.lock",
  "node_modules",
];

Deno.test({
  name:
    "sandbox: the server inside never sets up node_modules: a link another Deno run has removed does not end it",
  ignore: SKIP,
}, async () => {
  const env = await makeEnv();
  // A copy of the project whose node_modules has lost its .bin links, as it has for a moment while
  // a deno cache in the project (config print's) redoes them. Deno with the project's
  // nodeModulesDir "auto" creates them again on its next run; inside the sandbox that is EROFS,
  // which ended the server after the stdio entry's first answer (when its npm modules load). The
  // launcher runs with node_modules as it is (manual), so that the state it finds is the one the
  // server sees, as when the removal comes after the launcher's own check.
  const copy = `${env.base}/project`;
  await Deno.mkdir(copy);
  const cp = await new Deno.Command("cp", {
    args: ["-a", ...STDIO_PROJECT_FILES.map((f) => `${PROJECT}/${f}`), `${copy}/`],
    stderr: "piped",
  }).output();
  assert.ok(cp.success, dec.decode(cp.stderr));
  const bin = `${copy}/node_modules/.bin`;
  const links = (await Array.fromAsync(Deno.readDir(bin))).map((e) => e.name);
  assert.ok(links.length > 0, "the lockfile's packages have .bin links (else remove another)");
  for (const name of links) await Deno.remove(`${bin}/${name}`);
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      ...LAUNCHER_FLAGS,
      "--node-modules-dir=manual",
      `--config=${copy}/deno.json`,
      `${copy}/serve.ts`,
      "stdio",
      "--sandbox",
      "required",
      "--engine",
      "builtin",
      "--root",
      env.W,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const errText = new Response(child.stderr).text();
  const input = stdioInput(child.stdin);
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const answers: Record<string, unknown>[] = [];
  let pending = "";
  /** Reads answers until `id` is answered; false when stdout ended first. */
  const answerTo = async (id: number | string) => {
    while (!answers.some((m) => m.id === id)) {
      const { value, done } = await lines.read();
      if (done) return false;
      pending += value;
      const parts = pending.split("\n");
      pending = parts.pop()!;
      for (const l of parts) if (l.trim() !== "") answers.push(JSON.parse(l));
    }
    return true;
  };
  try {
    const meta = { _meta: envelope() };
    await input.send({ jsonrpc: "2.0", id: "probe", method: "server/discover", params: meta });
    assert.ok(await withTimeout(answerTo("probe"), 60_000, "server/discover"));
    const call = { name: "read_file", arguments: { path: "inside.txt" }, ...meta };
    await input.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: call });
    const answered = await withTimeout(answerTo(2), 60_000, "tools/call");
    await input.close();
    const status = await child.status;
    const stderr = await errText;
    assert.ok(answered, `the server ended before it answered (exit ${status.code}): ${stderr}`);
    assert.ok(JSON.stringify(answers.find((m) => m.id === 2)).includes("inside content"));
    assert.equal(status.code, 0, stderr);
    // It left node_modules as it was: nothing was created there (nor could be).
    assert.deepEqual(await Array.fromAsync(Deno.readDir(bin)), []);
  } finally {
    await input.close().catch(() => {});
    try {
      child.kill("SIGKILL");
    } catch { /* ended */ }
    await child.status;
    await errText.catch(() => {});
    await Deno.remove(env.base, { recursive: true });
  }
});

Deno.test("sandbox: without bwrap, required fails with a usage error and auto says why and serves", async (t) => {
  const env = await makeEnv();
  // A PATH without bwrap (and without anything else).
  const emptyPath = await Deno.makeTempDir({ prefix: "wmcp-nobwrap-" });
  try {
    await t.step("required: exit 2, a USAGE error naming bwrap, nothing served", async () => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [...LAUNCHER_FLAGS, CLI, "serve", "http", "--sandbox", "required", "--root", env.W],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        env: { PATH: emptyPath },
      }).output();
      assert.equal(out.code, 2, dec.decode(out.stderr));
      assert.equal(dec.decode(out.stdout), "", "no ready line");
      const err = JSON.parse(dec.decode(out.stderr).trim().split("\n").pop()!);
      assert.equal(err.error.code, "USAGE");
      assert.match(err.error.message, /--sandbox required.*bwrap.*not on PATH/);
    });
    await t.step("auto: one stderr line saying why, then it serves unsandboxed", async () => {
      const server = await launchHttp(["--root", env.W], { env: { PATH: emptyPath } });
      try {
        const lines = server.stderr().split("\n").filter((l) => /kernel sandbox/.test(l));
        assert.equal(lines.length, 1, server.stderr());
        assert.match(lines[0], /bwrap.*not on PATH/);
        const info = await callTool(server.url, "workspace_info", {});
        assert.equal(containmentOf(info).sandbox, "none");
        const read = await callTool(server.url, "read_file", { path: "inside.txt" });
        assert.ok(JSON.stringify(read).includes("inside content"));
      } finally {
        server.child.kill("SIGTERM");
        assert.equal((await server.status).code, 0);
      }
    });
    await t.step("a bad --sandbox value is a usage error", async () => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [...LAUNCHER_FLAGS, CLI, "serve", "http", "--sandbox", "maybe", "--root", env.W],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 2);
      assert.match(dec.decode(out.stderr), /--sandbox takes auto, required or off/);
    });
  } finally {
    await Deno.remove(emptyPath, { recursive: true });
    await Deno.remove(env.base, { recursive: true });
  }
});

Deno.test("sandbox: a forged WMCP_SANDBOX does not make an unsandboxed server report the layer", async () => {
  const env = await makeEnv();
  const marker = `/run/wmcp-sandbox-${"ab".repeat(16)}`;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      `--allow-read=${env.W},${marker}`,
      "--allow-net=127.0.0.1",
      "--allow-env=INIT_CWD,WMCP_SANDBOX",
      new URL("../../serve_http.ts", import.meta.url).pathname,
      "--root",
      env.W,
      "--port",
      "0",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
    env: { WMCP_SANDBOX: `bubblewrap:${marker}` },
  }).spawn();
  const { ready, reader } = await readReadyLine(child.stdout);
  try {
    const info = await callTool(ready.url, "workspace_info", {});
    // Nor makes it trust the root as a mount point: it stays checked on every request.
    assert.deepEqual(containmentOf(info), {
      inProcess: true,
      sandbox: "none",
      denoPermissions: "scoped",
      root: "identity",
    });
  } finally {
    child.kill("SIGTERM");
    await reader.cancel().catch(() => {});
    await child.status;
    await Deno.remove(env.base, { recursive: true });
  }
});

for (const mode of ["required", "off"] as const) {
  Deno.test({
    name:
      `sandbox ${mode}: ready line, pid file and \`serve stop\` name the server; no process survives`,
    ignore: SKIP && mode === "required",
  }, async () => {
    const env = await makeEnv();
    const runDir = `${env.base}/run`;
    await Deno.mkdir(runDir);
    const pidFile = `${runDir}/server.pid`;
    const server = await launchHttp(["--sandbox", mode, "--root", env.W, "--pid-file", pidFile]);
    try {
      const record = JSON.parse(await Deno.readTextFile(pidFile));
      assert.deepEqual([record.pid, record.url], [server.pid, server.url]);
      const health = await (await fetch(new URL("/healthz", server.url))).json();
      assert.equal(health.pid, server.pid);
      const between = await parentOf(server.pid); // bwrap when sandboxed, else the launcher
      assert.ok(between !== undefined);
      const info = await callTool(server.url, "workspace_info", {});
      assert.equal(containmentOf(info).sandbox, mode === "required" ? "bubblewrap" : "none");
      const stop = await serveStopCommand(pidFile, { read: [runDir] }).output();
      assert.equal(stop.code, 0, dec.decode(stop.stderr));
      assert.equal(JSON.parse(dec.decode(stop.stdout)).event, "stopped");
      assert.equal((await withTimeout(server.status, 20_000, "launcher exit")).code, 0);
      assert.match(server.stderr(), /SIGTERM: stopping/, "the server shut down gracefully");
      await assert.rejects(Deno.stat(pidFile), Deno.errors.NotFound, "pid file removed");
      assert.ok(await goneWithin(server.pid, 5000), "the server is gone");
      assert.ok(await goneWithin(between!, 5000), "bwrap (or the launcher) is gone");
    } finally {
      try {
        server.child.kill("SIGKILL");
      } catch { /* exited */ }
      await server.status;
      await Deno.remove(env.base, { recursive: true });
    }
  });

  Deno.test({
    name: `sandbox ${mode}: SIGTERM to the launcher stops the server gracefully${
      mode === "required" ? "; SIGKILL leaves no orphan" : ""
    }`,
    ignore: SKIP && mode === "required",
  }, async () => {
    const env = await makeEnv();
    try {
      const a = await launchHttp(["--sandbox", mode, "--root", env.W]);
      a.child.kill("SIGTERM");
      assert.equal((await withTimeout(a.status, 20_000, "launcher exit")).code, 0);
      assert.match(a.stderr(), /SIGTERM: stopping/);
      assert.ok(await goneWithin(a.pid, 5000));

      // SIGKILL cannot be forwarded: only bwrap's --die-with-parent takes the server down with
      // the launcher (without the sandbox the server outlives it, as before).
      if (mode === "required") {
        const b = await launchHttp(["--sandbox", mode, "--root", env.W]);
        const between = await parentOf(b.pid);
        b.child.kill("SIGKILL");
        assert.ok(await goneWithin(b.pid, 10_000), "the server died with its launcher");
        if (between !== undefined) assert.ok(await goneWithin(between, 10_000), "bwrap too");
        await withTimeout(b.status, 10_000, "the launcher's pipes close");
      }
    } finally {
      await Deno.remove(env.base, { recursive: true });
    }
  });

  Deno.test({
    name: `sandbox ${mode}: the stdio server works through the launcher (pipes pass through)`,
    ignore: SKIP && mode === "required",
  }, async () => {
    const env = await makeEnv();
    const child = new Deno.Command(Deno.execPath(), {
      args: [...LAUNCHER_FLAGS, CLI, "serve", "stdio", "--sandbox", mode, "--root", env.W],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    try {
      const io = stdioInput(child.stdin);
      const send = io.send;
      await io.initialize();
      await send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "read_file", arguments: { path: "inside.txt" } },
      });
      await send({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "workspace_info", arguments: {} },
      });
      const rd = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      await withTimeout(
        (async () => {
          while (text.split("\n").filter((l) => l.trim()).length < 3) {
            const { value, done } = await rd.read();
            if (done) break;
            text += value;
          }
        })(),
        30_000,
        "three answers",
      );
      await io.close();
      while (!(await rd.read()).done) { /* drain until exit */ }
      const byId = new Map(
        text.trim().split("\n").map((l) => JSON.parse(l)).map((m) => [m.id, m]),
      );
      assert.match(JSON.stringify(byId.get(2)), /inside content/);
      assert.equal(
        containmentOf(byId.get(3)).sandbox,
        mode === "required" ? "bubblewrap" : "none",
      );
      const status = await withTimeout(child.status, 20_000, "exit after stdin closed");
      assert.equal(status.code, 0);
    } finally {
      await child.stderr.cancel().catch(() => {});
      try {
        child.kill("SIGKILL");
      } catch { /* exited */ }
      await Deno.remove(env.base, { recursive: true });
    }
  });
}
