/**
 * The installed `wmcp` command and the per-command router, as real processes: install into a
 * temporary bin/data directory and run the launcher from an unrelated directory; files named on
 * the command line are reachable wherever they are, while anything the command did not name stays
 * refused (by the containment check, and by the child's Deno permissions: a probe run with exactly
 * the flags the router computes for `op` is refused read, net and run outside them); SIGTERM to
 * the router ends its child. The containment check's refusals (../B, a link to B, B's absolute
 * path) are answers of `op` itself: they run as `main` in process (decision 0052), one of them
 * through the router too, with the same bytes and exit code.
 */
import assert from "node:assert/strict";
import { commandPermissions, UngrantablePathError } from "../../src/cli/command_permissions.ts";
import denoConfig from "../../deno.json" with { type: "json" };
import { errorOf, gone, PROJECT, ROUTER_FLAGS, routerWithChild, type Run } from "./_router.ts";
import { launcherRuntime, launcherScript } from "../../src/cli/install.ts";
import { runInProcess } from "../_support/in_process.ts";

const dec = new TextDecoder();

async function run(
  cmd: string,
  args: string[],
  opts: { cwd: string; stdin?: string; env?: Record<string, string> },
): Promise<Run> {
  const child = new Deno.Command(cmd, {
    args,
    cwd: opts.cwd,
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    // As `deno task` and the launcher set it: the directory the user runs the command from.
    env: { NO_COLOR: "1", INIT_CWD: opts.cwd, ...opts.env },
    signal: AbortSignal.timeout(60_000),
  }).spawn();
  if (opts.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    await w.close();
  }
  const out = await child.output();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** A scratch layout: cwd (unrelated), A (the root), B (outside, with a secret), files elsewhere. */
async function layout() {
  const base = Deno.realPathSync(await Deno.makeTempDir({ prefix: "wmcp_router_" }));
  const dirs = { cwd: `${base}/cwd`, A: `${base}/A`, B: `${base}/B`, files: `${base}/elsewhere` };
  for (const d of Object.values(dirs)) await Deno.mkdir(d);
  await Deno.writeTextFile(`${dirs.A}/a.txt`, "alpha\n");
  await Deno.writeTextFile(`${dirs.B}/secret.txt`, "SECRET-B-91c2\n");
  await Deno.symlink(`${dirs.B}/secret.txt`, `${dirs.A}/link`);
  return { base, ...dirs };
}

/** cli.ts started exactly as the `cli` task starts it (the router's permissions only). */
function router(args: string[], opts: { cwd: string; stdin?: string }): Promise<Run> {
  return run(Deno.execPath(), ["run", ...ROUTER_FLAGS, `${PROJECT}cli.ts`, ...args], opts);
}

Deno.test("installed wmcp: --version, op list and op read_file from an unrelated directory; idempotent; uninstall", async (t) => {
  const L = await layout();
  const bin = `${L.base}/bin`;
  const data = `${L.base}/data`;
  // HOME is a scratch directory: an uninstall must never touch the real default data dir.
  const home = `${L.base}/home`;
  const installer = (extra: string[], dirs = ["--bin-dir", bin, "--data-dir", data]) =>
    run(Deno.execPath(), [
      "run",
      "--quiet",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-run",
      `${PROJECT}src/cli/install.ts`,
      ...dirs,
      ...extra,
    ], { cwd: L.cwd, env: { HOME: home, XDG_DATA_HOME: "" } });
  try {
    const first = await installer([]);
    assert.equal(first.code, 0, first.stderr + first.stdout);
    assert.match(first.stdout, /is not on your PATH/);
    const wmcp = `${bin}/wmcp`;
    const script = await Deno.readTextFile(wmcp);
    assert.ok(!script.includes("--allow-read") && !script.includes("--allow-net"), script);
    // The launcher says how to remove exactly this install.
    assert.ok(
      script.includes(
        `# Remove: deno task -q install --bin-dir ${bin} --data-dir ${data} --uninstall`,
      ),
      script,
    );

    await t.step("--version answers the package version", async () => {
      const r = await run(wmcp, ["--version"], { cwd: L.cwd });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${denoConfig.version}\n`);
      assert.equal(r.stderr, "");
    });
    await t.step("op list", async () => {
      const r = await run(wmcp, ["op", "list", "--output", "json"], { cwd: L.cwd });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(
        JSON.parse(r.stdout).operations.some((o: { name: string }) => o.name === "read_file"),
      );
      assert.equal(r.stderr, "");
    });
    await t.step("op read_file --root outside the cwd", async () => {
      const r = await run(
        wmcp,
        ["op", "read_file", "--root", L.A, "--output", "json", "--arguments", '{"path":"a.txt"}'],
        { cwd: L.cwd },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).content, "alpha\n");
    });
    await t.step(
      "serve stdio runs serve.ts with the launcher's permissions, and serves",
      async () => {
        // The whole CLI's module graph is not loaded for a server start (decision 0070).
        const serveLine = script.split("\n").find((l) => l.includes(`${PROJECT}serve.ts`));
        assert.ok(serveLine !== undefined, script);
        assert.ok(serveLine.includes("--allow-run=bwrap,kill,/proc/self/exe,"), serveLine);
        assert.ok(!serveLine.includes("WMCP_CONFIG_DIR"), serveLine); // the router's, not needed
        const request = {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
          params: {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientInfo": { name: "router-test", version: "0" },
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        };
        const r = await run(wmcp, ["serve", "stdio", "--root", L.A], {
          cwd: L.cwd,
          stdin: JSON.stringify(request) + "\n",
        });
        assert.equal(r.code, 0, r.stderr);
        const answer = JSON.parse(r.stdout.split("\n")[0]);
        assert.equal(answer.id, 1);
        assert.ok(answer.result.tools.some((x: { name: string }) => x.name === "read_file"));
      },
    );
    await t.step(
      "tools call NAME --help through the launcher connects to the bundled server",
      async () => {
        const r = await run(wmcp, ["tools", "call", "read_file", "--help", "--root", L.A], {
          cwd: L.cwd,
        });
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /tools call read_file/);
        assert.match(r.stdout, /startLine/);
      },
    );
    await t.step(
      "a launcher whose checkout is gone says so in one line and how to install again, exit 1",
      async () => {
        // The installed launcher checks for this checkout's cli.ts before it runs Deno.
        assert.ok(script.includes(`if [ ! -f '${PROJECT}cli.ts' ]; then`), script);
        // The same launcher, as the install writes it, for a checkout that has since moved.
        const runtime = launcherRuntime(script);
        assert.ok(runtime !== undefined, script);
        const moved = `${L.base}/moved 'away'`;
        const stale = `${bin}/wmcp-stale`;
        await Deno.writeTextFile(
          stale,
          launcherScript(runtime, { project: moved, installFlags: ["--bin-dir", bin] }),
          { mode: 0o755 },
        );
        const r = await run(stale, ["op", "list"], { cwd: L.cwd });
        assert.equal(r.code, 1, r.stderr);
        assert.equal(r.stdout, "");
        assert.equal(
          r.stderr,
          `wmcp: the checkout ${moved} is gone (moved or deleted): run ` +
            `\`npx -y deno@2.9.6 task -q install --bin-dir ${bin}\` again from its new place\n`,
        );
        await Deno.remove(stale);
      },
    );
    await t.step("re-running the install changes nothing", async () => {
      const before = await Deno.stat(wmcp);
      const again = await installer([]);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(await Deno.readTextFile(wmcp), script);
      assert.equal((await Deno.stat(wmcp)).mtime?.getTime(), before.mtime?.getTime());
      assert.doesNotMatch(again.stdout, /copied Deno/);
    });
    await t.step(
      "--uninstall --bin-dir removes that launcher and the runtime IT names",
      async () => {
        // Another install's runtime in the default data directory: not this launcher's, kept.
        const other = `${home}/.local/share/wmcp/runtime/deno-${Deno.version.deno}`;
        await Deno.mkdir(`${home}/.local/share/wmcp/runtime`, { recursive: true });
        await Deno.writeTextFile(other, "another install's runtime");
        const r = await installer(["--uninstall"], ["--bin-dir", bin]);
        assert.equal(r.code, 0, r.stderr);
        await assert.rejects(Deno.stat(wmcp), Deno.errors.NotFound);
        await assert.rejects(Deno.stat(`${data}/runtime`), Deno.errors.NotFound);
        assert.equal(await Deno.readTextFile(other), "another install's runtime");
      },
    );
  } finally {
    await Deno.remove(L.base, { recursive: true });
  }
});

Deno.test("router: files named on the command line are reachable from anywhere; nothing else is", async (t) => {
  const L = await layout();
  const E = L.files;
  try {
    await Deno.writeTextFile(`${E}/args.json`, '{"path":"a.txt"}');
    await Deno.writeTextFile(
      `${E}/plan.jsonl`,
      '{"name":"read_file","arguments":{"path":"a.txt"}}\n',
    );
    await Deno.writeTextFile(`${E}/responses.json`, '{"responses":[]}');
    await Deno.writeTextFile(
      `${E}/servers.json`,
      JSON.stringify({
        mcpServers: {
          here: {
            command: Deno.execPath(),
            args: ["run", ...ROUTER_FLAGS, `${PROJECT}cli.ts`, "serve", "stdio", "--root", L.A],
          },
        },
      }),
    );
    const cwd = L.cwd;
    await t.step(
      "op --arguments-file elsewhere (relative; tools call below names one absolute)",
      async () => {
        const r = await router(
          [
            "op",
            "read_file",
            "--root",
            L.A,
            "--output",
            "json",
            "--arguments-file",
            "../elsewhere/args.json",
          ],
          { cwd },
        );
        assert.equal(r.code, 0, r.stderr);
        assert.equal(JSON.parse(r.stdout).content, "alpha\n");
      },
    );
    await t.step("op --root A refuses ../B and a link to B (OUTSIDE_WORKSPACE)", async () => {
      const argv = (path: string) => [
        "op",
        "read_file",
        "--root",
        L.A,
        "--output",
        "json",
        "--arguments",
        JSON.stringify({ path }),
      ];
      for (const path of ["../B/secret.txt", "link", `${L.B}/secret.txt`]) {
        const r = await runInProcess(argv(path), { cwd, env: { NO_COLOR: "1" } });
        assert.equal(r.code, 1, r.stderr);
        assert.equal(errorOf(r).code, "OUTSIDE_WORKSPACE");
        assert.ok(!r.stdout.includes("SECRET") && !r.stderr.includes("SECRET"));
        if (path !== "link") continue;
        // The anchor: through the router and its scoped child, the same bytes and exit code.
        const real = await router(argv(path), { cwd });
        assert.deepStrictEqual(real, { code: r.code, stdout: r.stdout, stderr: r.stderr });
      }
    });
    await t.step("op with a root that is a link: read through its real path", async () => {
      await Deno.symlink(L.A, `${L.base}/alink`);
      const r = await router(
        [
          "op",
          "read_file",
          "--root",
          "../alink",
          "--output",
          "json",
          "--arguments",
          '{"path":"a.txt"}',
        ],
        { cwd },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).content, "alpha\n");
    });
    await t.step("tools call --config elsewhere with --arguments-file elsewhere", async () => {
      const r = await router([
        "tools",
        "call",
        "read_file",
        "--config",
        `${E}/servers.json`,
        "--server",
        "here",
        "--arguments-file",
        `${E}/args.json`,
        "--output",
        "json",
      ], { cwd });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).structuredContent.content, "alpha\n");
    });
    await t.step(
      "tools run FILE elsewhere, with --input-responses-file elsewhere (bundled server)",
      async () => {
        const r = await router([
          "tools",
          "run",
          `${E}/plan.jsonl`,
          "--root",
          L.A,
          "--input-responses-file",
          `${E}/responses.json`,
        ], { cwd });
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /alpha/);
      },
    );
    await t.step("a path Deno's flags cannot name is a plain usage error", async () => {
      const r = await router(
        ["op", "read_file", "--root", `${L.base}/a,b`, "--arguments", '{"path":"a.txt"}'],
        { cwd },
      );
      assert.equal(r.code, 2, r.stderr);
      assert.match(errorOf(r).message, /cannot grant access to --root .*comma/);
    });
  } finally {
    await Deno.remove(L.base, { recursive: true });
  }
});

Deno.test("router: op's child is refused read outside its root, net and run (a probe under the same flags)", async () => {
  const L = await layout();
  try {
    const plan = commandPermissions(
      ["op", "read_file", "--root", L.A, "--arguments", '{"path":"a.txt"}'],
      { invocationDir: L.cwd, deno: [Deno.execPath()], workerDir: `${PROJECT}src/workspace` },
    );
    assert.equal(plan.kind, "child");
    if (plan.kind !== "child") return;
    const probe = `${L.base}/probe.ts`;
    await Deno.writeTextFile(
      probe,
      `const out = {};
const tryIt = async (name, f) => { try { await f(); out[name] = "allowed"; }
  catch (e) { out[name] = e instanceof Deno.errors.NotCapable ? "refused" : String(e); } };
await tryIt("readInside", () => Deno.readTextFile(${JSON.stringify(`${L.A}/a.txt`)}));
await tryIt("readOutside", () => Deno.readTextFile(${JSON.stringify(`${L.B}/secret.txt`)}));
await tryIt("writeInside", () => Deno.writeTextFile(${JSON.stringify(`${L.A}/w.txt`)}, "x"));
await tryIt("net", () => Deno.connect({ hostname: "127.0.0.1", port: 9 }));
await tryIt("run", () => new Deno.Command("true").output());
await tryIt("envHome", () => Deno.env.get("HOME"));
console.log(JSON.stringify(out));`,
    );
    // The probe file itself is loaded as the entry (module loading needs no read permission).
    const r = await run(Deno.execPath(), ["run", ...plan.flags, probe], { cwd: L.cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      readInside: "allowed",
      readOutside: "refused",
      writeInside: "refused",
      net: "refused",
      run: "refused",
      envHome: "refused",
    });
    assert.throws(
      () => commandPermissions(["op", "read_file"], { invocationDir: "/a,b", deno: ["deno"] }),
      UngrantablePathError,
    );
  } finally {
    await Deno.remove(L.base, { recursive: true });
  }
});

Deno.test("router: op with --root A --read-only-root B --write: B read by absolute path, B refuses writes, A takes them, C is outside; the plan writes A only", async () => {
  const L = await layout();
  try {
    const C = `${L.base}/C`;
    await Deno.mkdir(C);
    await Deno.writeTextFile(`${C}/c.txt`, "charlie\n");
    const roots = ["--root", L.A, "--read-only-root", L.B, "--write"];
    const plan = commandPermissions(["op", "read_file", ...roots], {
      invocationDir: L.cwd,
      deno: [Deno.execPath()],
      workerDir: `${PROJECT}src/workspace`,
    });
    assert.equal(plan.kind, "child");
    if (plan.kind !== "child") return;
    const read = plan.flags.find((f) => f.startsWith("--allow-read="))!.split("=")[1].split(",");
    assert.ok(read.includes(L.A) && read.includes(L.B), read.join(","));
    assert.deepEqual(plan.flags.filter((f) => f.startsWith("--allow-write")), [
      `--allow-write=${L.A}`,
    ]);
    // Through the real router: its scoped child opens both roots, in order.
    const op = (name: string, args: Record<string, unknown>) =>
      router(["op", name, ...roots, "--arguments", JSON.stringify(args)], { cwd: L.cwd });
    const readB = await op("read_file", { path: `${L.B}/secret.txt` });
    assert.equal(readB.code, 0, readB.stderr);
    assert.equal(JSON.parse(readB.stdout).content, "SECRET-B-91c2\n");
    // A relative path addresses the first root.
    const readA = await op("read_file", { path: "a.txt" });
    assert.equal(JSON.parse(readA.stdout).content, "alpha\n", readA.stderr);
    const writeB = await op("write_file", { path: `${L.B}/new.txt`, content: "x" });
    assert.equal(writeB.code, 1, writeB.stderr);
    assert.equal(errorOf(writeB).code, "READ_ONLY");
    await assert.rejects(Deno.stat(`${L.B}/new.txt`), Deno.errors.NotFound);
    const writeA = await op("write_file", { path: "new.txt", content: "written\n" });
    assert.equal(writeA.code, 0, writeA.stderr);
    assert.equal(await Deno.readTextFile(`${L.A}/new.txt`), "written\n");
    const outside = await op("read_file", { path: `${C}/c.txt` });
    assert.equal(outside.code, 1, outside.stderr);
    assert.equal(errorOf(outside).code, "OUTSIDE_WORKSPACE");
  } finally {
    await Deno.remove(L.base, { recursive: true });
  }
});

Deno.test("router: SIGTERM to the router ends its child", async () => {
  const L = await layout();
  try {
    // op --arguments-stdin waits on stdin, which this test never closes.
    const { child, grandchild } = await routerWithChild(L);
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const status = await child.status;
    clearTimeout(timer);
    assert.equal(status.signal, null, "the router exited by itself (not killed)");
    assert.equal(status.code, 143);
    assert.ok(await gone(grandchild), "the scoped child outlived the router");
    await child.stdin.close().catch(() => {});
  } finally {
    await Deno.remove(L.base, { recursive: true });
  }
});

Deno.test("no documented task command shows Deno's Task banner: each uses -q, and -q prints nothing on stderr", async () => {
  const offenders: string[] = [];
  for (
    const doc of [
      "README.md",
      "INTERFACES.md",
      "RUNTIME.md",
      "bench/README.md",
      "docs/deployment.md",
      ".ci/run",
    ]
  ) {
    const text = await Deno.readTextFile(`${PROJECT}${doc}`);
    for (const [i, line] of text.split("\n").entries()) {
      if (/deno(@[\d.]+)? task (?!-q\b)[^\s`]/.test(line)) {
        offenders.push(`${doc}:${i + 1}: ${line}`);
      }
    }
  }
  assert.deepEqual(offenders, []);
  const cwd = await Deno.makeTempDir({ prefix: "wmcp_banner_" });
  try {
    const r = await run(
      Deno.execPath(),
      ["task", "-q", "--config", `${PROJECT}deno.json`, "cli", "--version"],
      { cwd },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${denoConfig.version}\n`);
    assert.equal(r.stderr, "");
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});
