/**
 * The router's fixes, as real processes of cli.ts started exactly as the `cli` task starts it:
 * `tools call NAME --help` connects like the call (bundled server and --config); SIGHUP reaches
 * the scoped child and a child's signal maps to 128+N; a --config entry is loaded first so its
 * child gets run on that command only and no net (the entry probe and a probe script under the
 * planned flags are real children too); auth started with narrower flags re-launches with the
 * router's own auth grant.
 *
 * What the router answers itself, before it starts any child, runs the router (`route(argv)`)
 * in process with its streams captured, its path probe still a real child (decision 0052): plain
 * help, every path put into a permission flag refusing a comma with exit 2, a missing or non-
 * directory bundled root refused with exit 2 before any server starts. `op`'s missing root,
 * which the router's scoped child answers, runs the CLI's main in process. The comma and the
 * missing-root tests each have one real cli.ts run as their anchor (the same exit code, stdout
 * and stderr as in process).
 * The router's VALUE_FLAGS match the commands' option tables; the serve launcher's flags match
 * its task.
 */
import assert from "node:assert/strict";
import {
  commandPermissions,
  UngrantablePathError,
  VALUE_FLAGS,
} from "../../src/cli/command_permissions.ts";
import { probeEntry } from "../../src/cli/entry_probe.ts";
import { runInProcess } from "../_support/in_process.ts";
import { launcherFlags } from "../../src/cli/host_config.ts";
import { DECLARED } from "../../src/cli/commands.ts";
import denoConfig from "../../deno.json" with { type: "json" };
import {
  errorOf,
  gone,
  PROJECT,
  ROUTER_FLAGS,
  routerWithChild,
  type Run,
  taskFlags,
} from "./_router.ts";

const dec = new TextDecoder();

/** cli.ts as the `cli` task starts it, from `cwd`, with extra environment. */
async function router(
  args: string[],
  opts: { cwd: string; env?: Record<string, string>; flags?: string[] },
): Promise<Run> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...(opts.flags ?? ROUTER_FLAGS), `${PROJECT}cli.ts`, ...args],
    cwd: opts.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", INIT_CWD: opts.cwd, ...opts.env },
    signal: AbortSignal.timeout(60_000),
  }).output();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/**
 * The router in process (`route(argv)` with the streams captured; its path probe is a real
 * child), or with `child` the CLI's main, which answers in the scoped child the router starts;
 * with `anchor` also as the real cli.ts `router` runs it: both must answer the same.
 */
async function routed(
  args: string[],
  opts: { cwd: string; env?: Record<string, string>; anchor?: boolean; child?: boolean },
): Promise<Run> {
  const r = await runInProcess(args, {
    cwd: opts.cwd,
    env: { NO_COLOR: "1", ...opts.env },
    router: !opts.child,
  });
  const inProcess = { code: r.code, stdout: r.stdout, stderr: r.stderr };
  if (opts.anchor) {
    const real = await router(args, opts);
    assert.deepStrictEqual(inProcess, real, `in process and as cli.ts: ${args.join(" ")}`);
  }
  return inProcess;
}

async function scratch() {
  const base = Deno.realPathSync(await Deno.makeTempDir({ prefix: "wmcp_scope_" }));
  const dirs = { cwd: `${base}/cwd`, A: `${base}/A`, files: `${base}/elsewhere` };
  for (const d of Object.values(dirs)) await Deno.mkdir(d);
  await Deno.writeTextFile(`${dirs.A}/a.txt`, "alpha\n");
  const config = `${dirs.files}/servers.json`;
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      mcpServers: {
        here: {
          command: Deno.execPath(),
          args: ["run", ...ROUTER_FLAGS, `${PROJECT}cli.ts`, "serve", "stdio", "--root", dirs.A],
        },
        web: { url: "http://127.0.0.1:9/mcp" },
      },
    }),
  );
  return { base, config, ...dirs };
}

Deno.test("router: tools call NAME --help connects like the call (bundled and --config); other help stays in process", async () => {
  const L = await scratch();
  try {
    for (
      const args of [
        ["tools", "call", "read_file", "--help", "--root", L.A],
        ["tools", "call", "read_file", "-h", "--config", L.config, "--server", "here"],
      ]
    ) {
      const r = await router(args, { cwd: L.cwd });
      assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stdout, /tools call read_file/, r.stdout);
      assert.match(r.stdout, /startLine/, r.stdout);
      assert.doesNotMatch(r.stderr, /PERMISSION|NotCapable/, r.stderr);
    }
    // Plain help needs nothing: the router answers it in its own process (here the router in
    // process), even when the root does not exist.
    const plain = await routed(["tools", "--help", "--root", "/nonexistent-wmcp"], { cwd: L.cwd });
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /tools/);
  } finally {
    await Deno.remove(L.base, { recursive: true });
  }
});

Deno.test("router: a comma in any granted path is exit 2 in words (credentials, invocation and worker directories)", async () => {
  const L = await scratch();
  try {
    for (const dir of ["/tmp/x,/etc", "/tmp/x,/"]) {
      // The first case is the anchor: the real router answers the same.
      const r = await routed(["tools", "list", "--endpoint", "http://127.0.0.1:9/mcp"], {
        cwd: L.cwd,
        env: { WMCP_CONFIG_DIR: dir },
        anchor: dir === "/tmp/x,/etc",
      });
      assert.equal(r.code, 2, r.stderr);
      const e = errorOf(r);
      assert.equal(e.code, "USAGE");
      assert.match(e.message, /credentials directory .*comma/);
      const auth = await routed(["auth", "status"], {
        cwd: L.cwd,
        env: { WMCP_CONFIG_DIR: dir },
      });
      assert.equal(auth.code, 2, auth.stderr);
      assert.match(errorOf(auth).message, /credentials directory .*comma/);
    }
    // The invocation directory, granted to a --config whose entry is not loaded first.
    const commaDir = `${L.base}/c,d`;
    await Deno.mkdir(commaDir);
    const r = await routed(["tools", "list", "--config", L.config], { cwd: commaDir });
    assert.equal(r.code, 2, r.stderr);
    assert.match(errorOf(r).message, /invocation directory .*comma/);
    // The search worker directory (a checkout path with a comma).
    assert.throws(
      () =>
        commandPermissions(["op", "read_file", "--root", L.A], {
          invocationDir: L.cwd,
          deno: ["deno"],
          workerDir: "/co,py/src/workspace",
        }),
      (e) => e instanceof UngrantablePathError && /worker directory/.test(e.message),
    );
  } finally {
    await Deno.remove(L.base, { recursive: true });
  }
});

Deno.test("router: a missing root is exit 2 USAGE for tools as for op (no server started)", async () => {
  const L = await scratch();
  try {
    for (const args of [["tools", "list"], ["server-info"], ["op", "list_directory"]]) {
      // `tools list` is the anchor: the real router answers the same. The router refuses a
      // bundled server's missing root itself; `op` it hands to its scoped child, whose main
      // answers (in process here).
      const r = await routed([...args, "--root", "/nonexistent-wmcp-root"], {
        cwd: L.cwd,
        anchor: args[0] === "tools",
        child: args[0] === "op",
      });
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      const e = errorOf(r);
      assert.equal(e.code, "USAGE");
      assert.match(e.message, /\/nonexistent-wmcp-root/);
      assert.doesNotMatch(r.stderr, /bubblewrap|sandbox/i);
    }
    // A file is not a root either.
    const f = await routed(["tools", "list", "--root", `${L.A}/a.txt`], { cwd: L.cwd });
    assert.equal(f.code, 2, f.stderr);
    assert.match(errorOf(f).message, /not a directory/);
  } finally {
    await Deno.remove(L.base, { recursive: true });
  }
});

Deno.test("router: SIGHUP is forwarded (exit 129, no orphan); a child ended by SIGALRM is exit 142", async () => {
  const L = await scratch();
  try {
    {
      const { child, grandchild } = await routerWithChild(L);
      child.kill("SIGHUP");
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      const status = await child.status;
      clearTimeout(timer);
      assert.equal(status.signal, null, "the router exited by itself (not killed by SIGHUP)");
      assert.equal(status.code, 129);
      assert.ok(await gone(grandchild), "the scoped child outlived the router");
      await child.stdin.close().catch(() => {});
    }
    {
      const { child, grandchild } = await routerWithChild(L);
      Deno.kill(grandchild, "SIGALRM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      const status = await child.status;
      clearTimeout(timer);
      assert.equal(status.signal, null);
      assert.equal(status.code, 142);
      await child.stdin.close().catch(() => {});
    }
  } finally {
    await Deno.remove(L.base, { recursive: true });
  }
});

Deno.test("router: a --config entry is loaded first: stdio gets run on its command and read on its cwd only, no net; HTTP gets net and run only on the browser opener", async () => {
  const L = await scratch();
  try {
    const self = Deno.build.os === "linux" ? "/proc/self/exe" : Deno.execPath();
    const stdio = await probeEntry(
      { path: L.config, server: "here", read: [L.config] },
      { deno: self, invocationDir: L.cwd },
    );
    assert.deepEqual(stdio, {
      kind: "stdio",
      command: Deno.execPath(),
      cwd: L.cwd,
      pathEnv: false,
    });
    const web = await probeEntry(
      { path: L.config, server: "web", read: [L.config] },
      { deno: self, invocationDir: L.cwd },
    );
    assert.deepEqual(web, { kind: "http" });
    const missing = await probeEntry(
      { path: L.config, server: "nope", read: [L.config] },
      { deno: self, invocationDir: L.cwd },
    );
    assert.ok(missing !== undefined && "error" in missing, JSON.stringify(missing));

    const ctx = {
      invocationDir: L.cwd,
      deno: [Deno.execPath()],
      configDir: `${L.base}/creds`,
      browser: "xdg-open",
    };
    const argv = ["tools", "list", "--config", L.config, "--server", "here"];
    const plan = commandPermissions(argv, { ...ctx, configEntry: stdio });
    assert.equal(plan.kind, "child");
    if (plan.kind !== "child") return;
    // Under exactly those flags: the entry's command runs, others do not; no net; the cwd is
    // readable, its parent (the rest of the disk) is not.
    const probe = `${L.files}/probe.ts`;
    await Deno.writeTextFile(
      probe,
      `const out = {};
const tryIt = async (name, f) => { try { await f(); out[name] = "allowed"; }
  catch (e) { out[name] = e instanceof Deno.errors.NotCapable ? "refused" : String(e); } };
await tryIt("runEntry", () => new Deno.Command(${
        JSON.stringify(Deno.execPath())
      }, { args: ["--version"] }).output());
await tryIt("runOther", () => new Deno.Command("true").output());
await tryIt("net", () => Deno.connect({ hostname: "127.0.0.1", port: 9 }));
await tryIt("readCwd", () => Deno.stat(${JSON.stringify(L.cwd)}));
await tryIt("readAbove", () => Deno.readTextFile(${JSON.stringify(`${L.A}/a.txt`)}));
await tryIt("readCreds", () => Deno.stat(${JSON.stringify(ctx.configDir)}));
console.log(JSON.stringify(out));`,
    );
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...plan.flags, probe],
      cwd: L.cwd,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(r.code, 0, dec.decode(r.stderr));
    assert.deepEqual(JSON.parse(dec.decode(r.stdout)), {
      runEntry: "allowed",
      runOther: "refused",
      net: "refused",
      readCwd: "allowed",
      readAbove: "refused",
      readCreds: "refused",
    });
    const http = commandPermissions(["tools", "list", "--config", L.config, "--server", "web"], {
      ...ctx,
      configEntry: web,
    });
    assert.equal(http.kind, "child");
    if (http.kind !== "child") return;
    assert.ok(http.flags.includes("--allow-net"), http.flags.join(" "));
    assert.ok(http.flags.includes("--allow-run=xdg-open"), http.flags.join(" "));
    assert.ok(!http.flags.some((f) => f.startsWith("--allow-read=") && f.includes(L.cwd)));
    // Not loaded first (no entry): today's wide grant.
    const wide = commandPermissions(argv, ctx);
    assert.equal(wide.kind, "child");
    if (wide.kind === "child") assert.ok(wide.flags.includes("--allow-run"));

    // Through the router for real: the stdio entry answers with the narrow grant.
    const real = await router(
      ["tools", "call", "read_file", "path=a.txt", "--config", L.config, "--server", "here"],
      { cwd: L.cwd },
    );
    assert.equal(real.code, 0, real.stderr);
    assert.match(real.stdout, /alpha/);
  } finally {
    await Deno.remove(L.base, { recursive: true });
  }
});

Deno.test("plans: --no-auth reaches only its endpoint and no credentials; auth status gets no net or browser", () => {
  const ctx = {
    invocationDir: "/work",
    deno: [Deno.execPath()],
    configDir: "/home/u/.config/wmcp",
    browser: "xdg-open",
  };
  const flagsOf = (argv: string[]) => {
    const plan = commandPermissions(argv, ctx);
    assert.equal(plan.kind, "child");
    return plan.kind === "child" ? plan.flags : [];
  };
  const signedIn = flagsOf(["tools", "list", "--endpoint", "http://127.0.0.1:3000/mcp"]);
  assert.ok(signedIn.includes("--allow-net"), signedIn.join(" "));
  assert.ok(signedIn.includes("--allow-sys=uid"), signedIn.join(" "));
  assert.ok(signedIn.some((f) => f.includes(ctx.configDir)), signedIn.join(" "));

  for (
    const [endpoint, peer] of [
      ["http://127.0.0.1:3000/mcp", "127.0.0.1:3000"],
      ["https://mcp.example.com/mcp", "mcp.example.com:443"],
      ["http://[::1]:8765/mcp", "[::1]:8765"],
      ["http://localhost/mcp", "localhost:80"],
    ]
  ) {
    const flags = flagsOf(["tools", "list", "--endpoint", endpoint, "--no-auth"]);
    assert.ok(flags.includes(`--allow-net=${peer}`), flags.join(" "));
    assert.ok(!flags.includes("--allow-net"), flags.join(" "));
    assert.ok(!flags.some((f) => f.includes(ctx.configDir)), flags.join(" "));
    assert.ok(!flags.some((f) => f.startsWith("--allow-sys")), flags.join(" "));
  }

  const status = flagsOf(["auth", "status"]);
  assert.ok(!status.some((f) => f.startsWith("--allow-net")), status.join(" "));
  assert.ok(!status.some((f) => f.startsWith("--allow-run")), status.join(" "));
  assert.ok(status.some((f) => f.startsWith("--allow-read=") && f.includes(ctx.configDir)));
  const login = flagsOf(["auth", "login", "--endpoint", "http://127.0.0.1:3000/mcp"]);
  assert.ok(
    login.includes("--allow-net") && login.includes("--allow-run=xdg-open"),
    login.join(" "),
  );
  const headless = flagsOf([
    "auth",
    "login",
    "--endpoint",
    "http://127.0.0.1:3000/mcp",
    "--no-browser",
  ]);
  assert.ok(!headless.some((f) => f.startsWith("--allow-run")), headless.join(" "));
});

Deno.test("plans: resources, prompts and ping get exactly the grants tools list gets for the same target; prompts get reads its --arguments-file", () => {
  const ctx = {
    invocationDir: "/work",
    deno: [Deno.execPath()],
    configDir: "/home/u/.config/wmcp",
    browser: "xdg-open",
  };
  const targets = [
    ["--root", "/work/project"],
    ["--endpoint", "http://127.0.0.1:3000/mcp"],
    ["--endpoint", "http://127.0.0.1:3000/mcp", "--no-auth"],
  ];
  const commands = [
    ["resources", "list"],
    ["resources", "templates"],
    ["resources", "read", "file:///x"],
    ["prompts", "list"],
    ["prompts", "get", "greet", "city=Lisbon"],
    ["ping"],
  ];
  for (const target of targets) {
    const tools = commandPermissions(["tools", "list", ...target], ctx);
    assert.equal(tools.kind, "child");
    for (const command of commands) {
      const plan = commandPermissions([...command, ...target], ctx);
      assert.deepEqual(plan, tools, [...command, ...target].join(" "));
    }
  }
  const file = commandPermissions(
    ["prompts", "get", "greet", "--arguments-file", "args.json", "--root", "/work/project"],
    ctx,
  );
  assert.equal(file.kind, "child");
  if (file.kind === "child") {
    assert.ok(
      file.flags.some((f) => f.startsWith("--allow-read=") && f.includes("/work/args.json")),
      file.flags.join(" "),
    );
  }
});

Deno.test("router: ping and resources list reach the bundled server on --root through a scoped child", async () => {
  const L = await scratch();
  try {
    const ping = await router(["ping", "--root", L.A, "--output", "json"], { cwd: L.cwd });
    assert.equal(ping.code, 0, ping.stderr);
    assert.equal(JSON.parse(ping.stdout).operation, "ping");
    const list = await router(["resources", "list", "--root", L.A], { cwd: L.cwd });
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(JSON.parse(list.stdout).pages[0].mcpResult.resources, []);
    const missing = await router(["prompts", "list", "--root", `${L.A}/nope`], { cwd: L.cwd });
    assert.equal(missing.code, 2, missing.stderr);
  } finally {
    await Deno.remove(L.base, { recursive: true });
  }
});

Deno.test("auth: cli.ts started with narrower flags re-launches with the router's auth grant", async () => {
  const L = await scratch();
  try {
    const creds = `${L.base}/creds`;
    await Deno.writeTextFile(`${L.files}/secret`, "s3cret-value\n");
    // No run on /proc/self/exe (so no router child), no sys, no read: only Deno by its path.
    const r = await router(["auth", "status", "--output", "json"], {
      cwd: L.cwd,
      env: { WMCP_CONFIG_DIR: creds },
      flags: ["--quiet", "--no-prompt", "--allow-env", `--allow-run=${Deno.execPath()}`],
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).directory, `${creds}/auth`);
  } finally {
    await Deno.remove(L.base, { recursive: true });
  }
});

Deno.test("VALUE_FLAGS: the routed commands' value-taking flags, none a boolean of another", () => {
  const routed = [...DECLARED.values()].filter((d) =>
    ["op", "tools", "server-info", "auth", "config"].includes(d.path[0])
  );
  const kinds = new Map<string, Set<boolean>>();
  for (const d of routed) {
    for (const [name, f] of Object.entries(d.flags)) {
      kinds.set(name, (kinds.get(name) ?? new Set()).add(f.kind !== "bool"));
    }
  }
  for (const [name, takes] of kinds) {
    // The router reads argv before it knows which command parses it: one reading per name.
    assert.equal(takes.size, 1, `--${name} takes a value in one command and not in another`);
    assert.equal(VALUE_FLAGS.has(name), takes.has(true), `--${name}`);
  }
  for (const k of VALUE_FLAGS) {
    assert.ok(kinds.has(k), `VALUE_FLAGS has --${k}, no command takes it`);
  }
  // What the router's grants are read from.
  for (const k of ["root", "config", "arguments-file", "input-responses-file", "endpoint"]) {
    assert.ok(VALUE_FLAGS.has(k), k);
  }
  assert.ok(!VALUE_FLAGS.has("write") && !VALUE_FLAGS.has("no-auth"));
});

Deno.test("the serve launcher's flags (host config snippets) are the serve:stdio task's", () => {
  assert.deepEqual(launcherFlags(), taskFlags(denoConfig.tasks["serve:stdio"]));
  assert.deepEqual(launcherFlags(), taskFlags(denoConfig.tasks["serve:stdio:write"]));
  // The HTTP tasks run serve.ts with the same flags (the installed launcher and the npm package
  // take launcherFlags() itself; decision 0070).
  for (const name of ["start", "start:write", "serve:http", "serve:http:write"]) {
    assert.deepEqual(
      taskFlags((denoConfig.tasks as Record<string, string>)[name]),
      launcherFlags(),
    );
  }
});
