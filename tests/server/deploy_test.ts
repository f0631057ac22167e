/**
 * Deployment scopes with real servers: wildcard binds (0.0.0.0 and ::) end to end over loopback
 * only (ready line, Host policy, /healthz, pid file, second start refused, `serve stop`), the
 * reverse-proxy shape (`--allowed-host` on a loopback bind), the launcher's permissions for a
 * wildcard bind, and the configurations refused at start.
 */
import assert from "node:assert/strict";
import { cliArgv } from "../_support/cli.ts";
import { makeWorkspace, modernRequest, readFlag, readReadyLine, SERVE_HTTP } from "./_harness.ts";
import { serverPermissions } from "../../src/cli/server_permissions.ts";

const TOKEN = "deploy-token-0123456789abcdef";

/** Why the IPv6 wildcard test cannot run here, or undefined when it can. */
function noIpv6Loopback(): string | undefined {
  if (Deno.permissions.querySync({ name: "net", host: "[::1]" }).state !== "granted") {
    return "this test process has no net permission for [::1]";
  }
  try {
    Deno.listen({ hostname: "::1", port: 0 }).close();
  } catch {
    return "this machine has no IPv6 loopback";
  }
  return undefined;
}
const IPV6_SKIP = noIpv6Loopback();

/** The ready line with the bind address. */
interface Ready {
  url: string;
  pid: number;
  bind: string;
}

/** A running serve_http.ts child. */
interface Running {
  ready: Ready;
  stderr: () => string;
  status: Promise<Deno.CommandStatus>;
  stop: () => Promise<Deno.CommandStatus>;
}

/** Permission flags of a server on root with a pid file in pidDir, listening on net. */
function serverFlags(
  root: string,
  net: string,
  pidFile?: string,
  read?: string,
  write?: string,
): string[] {
  const pid = pidFile === undefined ? [] : [
    `--allow-read=${pidFile},${pidFile}.tmp`,
    `--allow-write=${pidFile},${pidFile}.tmp`,
    "--allow-sys=uid",
  ];
  return [
    "run",
    "--no-prompt",
    readFlag(root),
    `--allow-net=${net}`,
    "--allow-env=INIT_CWD,WMCP_TOKEN,WMCP_READ_TOKEN,WMCP_STATE_KEY",
    "--unstable-no-legacy-abort",
    ...pid,
    ...(read === undefined ? [] : [`--allow-read=${read}`]),
    ...(write === undefined ? [] : [`--allow-write=${write}`]),
  ];
}

/** Starts serve_http.ts directly and waits for its ready line. */
async function start(
  root: string,
  options: {
    net: string;
    args: string[];
    pidFile?: string;
    env?: Record<string, string>;
    read?: string;
    extraWrite?: string;
  },
): Promise<Running> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      ...serverFlags(root, options.net, options.pidFile, options.read, options.extraWrite),
      SERVE_HTTP,
      "--root",
      root,
      "--port",
      "0",
      ...(options.pidFile === undefined ? [] : ["--pid-file", options.pidFile]),
      ...options.args,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: options.env,
  }).spawn();
  let errText = "";
  const errDone = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stderr) errText += dec.decode(chunk, { stream: true });
  })();
  let ready: Ready;
  try {
    const r = await readReadyLine(child.stdout);
    ready = r.ready as unknown as Ready;
    (async () => {
      try {
        while (!(await r.reader.read()).done) { /* drain */ }
      } catch { /* closed */ }
    })();
  } catch (err) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await errDone;
    throw new Error(`${(err as Error).message}: ${errText}`);
  }
  const status = child.status.then(async (s) => {
    await errDone;
    return s;
  });
  return {
    ready,
    stderr: () => errText,
    status,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      return await status;
    },
  };
}

/** Runs serve_http.ts to its exit (a refused start). */
async function runToExit(
  root: string,
  options: {
    net: string;
    args: string[];
    pidFile?: string;
    env?: Record<string, string>;
    read?: string;
  },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      ...serverFlags(root, options.net, options.pidFile, options.read),
      SERVE_HTTP,
      "--root",
      root,
      "--port",
      "0",
      ...(options.pidFile === undefined ? [] : ["--pid-file", options.pidFile]),
      ...options.args,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: options.env,
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/** `cli serve stop` with exactly the permissions it needs (loopback in both families). */
async function serveStop(pidDir: string, pidFile: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: cliArgv([
      "--quiet",
      "--no-prompt",
      `--allow-read=${pidDir}`,
      "--allow-net=127.0.0.1,localhost,[::1]",
      "--allow-run=kill",
      "--allow-sys=uid",
    ], [
      "serve",
      "stop",
      "--pid-file",
      pidFile,
    ]),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  return {
    code: out.code,
    line: text.trim() === "" ? {} : JSON.parse(text) as Record<string, unknown>,
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/** GET /healthz over a raw socket to a loopback address with this Host header; the status. */
async function statusWithHost(hostname: string, port: number, host: string): Promise<number> {
  const conn = await Deno.connect({ hostname, port });
  try {
    await conn.write(
      new TextEncoder().encode(
        `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      ),
    );
    let text = "";
    const buf = new Uint8Array(4096);
    const deadline = Date.now() + 30_000;
    while (!text.includes("\r\n") && Date.now() < deadline) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    return Number(text.split(" ")[1]);
  } finally {
    conn.close();
  }
}

/** The pid file's directory and path, outside the workspace. */
async function pidPlace(): Promise<{ dir: string; file: string }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-deploy-pid-" }));
  return { dir, file: `${dir}/server.pid` };
}

/**
 * The whole wildcard story for one address family: `bind` is what --host gets, `loopback` the
 * address the ready line must name (and the only one this test connects to).
 */
async function wildcardEndToEnd(bind: string, loopback: string, net: string): Promise<void> {
  const root = await makeWorkspace({ "a.txt": "alpha\n" });
  const pid = await pidPlace();
  const env = { WMCP_TOKEN: TOKEN };
  const server = await start(root, {
    net,
    pidFile: pid.file,
    args: ["--host", bind, "--allowed-host", "lan.example"],
    env,
  });
  try {
    const port = Number(new URL(server.ready.url).port);
    const urlHost = loopback.includes(":") ? `[${loopback}]` : loopback;
    // The ready line names the loopback URL that reaches the wildcard, and the bind separately.
    assert.equal(server.ready.url, `http://${urlHost}:${port}/mcp`);
    assert.equal(server.ready.bind, `${bind.includes(":") ? `[${bind}]` : bind}:${port}`);
    // /healthz and the MCP endpoint answer at that URL; the token is still required.
    const health = await fetch(new URL("/healthz", server.ready.url));
    assert.equal(health.status, 200);
    assert.equal((await health.json()).pid, server.ready.pid);
    const list = await modernRequest(server.ready.url, "tools/list", {}, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(list.status, 200);
    assert.equal((await modernRequest(server.ready.url, "tools/list")).status, 401);
    // Host policy of a wildcard bind: loopback names and --allowed-host, nothing else.
    const hosts: [string, number][] = [
      [`127.0.0.1:${port}`, 200],
      [`localhost:${port}`, 200],
      [`[::1]:${port}`, 200],
      ["lan.example", 200],
      [`lan.example:${port}`, 200],
      [`0.0.0.0:${port}`, 403],
      [`[::]:${port}`, 403],
      ["other.example", 403],
    ];
    for (const [host, want] of hosts) {
      assert.equal(await statusWithHost(loopback, port, host), want, `Host: ${host}`);
    }
    // The pid file records the same loopback URL, so its check and `serve stop` reach it.
    const record = JSON.parse(await Deno.readTextFile(pid.file));
    assert.deepEqual([record.pid, record.url], [server.ready.pid, server.ready.url]);
    const second = await runToExit(root, {
      net,
      pidFile: pid.file,
      args: ["--host", bind],
      env,
    });
    assert.equal(second.code, 4, second.stderr);
    assert.match(second.stderr, /already running/);
    const stop = await serveStop(pid.dir, pid.file);
    assert.equal(stop.code, 0, stop.stderr);
    assert.deepEqual([stop.line.event, stop.line.pid], ["stopped", server.ready.pid]);
    assert.equal((await server.status).code, 0);
    assert.match(server.stderr(), /bound to \S+, every interface/);
    await assert.rejects(Deno.stat(pid.file), "the pid file is removed on exit");
    assert.equal((await serveStop(pid.dir, pid.file)).code, 3, "nothing left to stop");
  } finally {
    await server.stop();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(pid.dir, { recursive: true });
  }
}

Deno.test("wildcard bind 0.0.0.0: loopback ready URL, Host policy, /healthz, pid file, second start refused, serve stop", async () => {
  await wildcardEndToEnd("0.0.0.0", "127.0.0.1", "0.0.0.0,127.0.0.1,localhost,[::1]");
});

Deno.test({
  name:
    "wildcard bind ::: loopback ready URL, Host policy, /healthz, pid file, second start refused, serve stop",
  ignore: IPV6_SKIP !== undefined,
  fn: async () => {
    await wildcardEndToEnd("::", "::1", "[::],127.0.0.1,localhost,[::1]");
  },
});

for (
  const [spelling, bind, loopback, net] of [
    ["0", "0.0.0.0", "127.0.0.1", "0.0.0.0,127.0.0.1,localhost,[::1]"],
    ["::0", "[::]", "[::1]", "[::],127.0.0.1,localhost,[::1]"],
    ["[::]", "[::]", "[::1]", "[::],127.0.0.1,localhost,[::1]"],
  ] as const
) {
  Deno.test({
    name:
      `--host ${spelling} is a wildcard bind: loopback URL, every-interface note, pid file, launcher grant`,
    ignore: bind.includes(":") && IPV6_SKIP !== undefined,
    fn: async () => {
      // The launcher grants net for the same normal form the server binds.
      const flags = serverPermissions("http", ["--root", "/tmp", "--host", spelling]);
      assert.ok(flags.includes(`--allow-net=${net}`), flags.join(" "));
      const root = await makeWorkspace();
      const pid = await pidPlace();
      // No --allowed-host: the server says on stderr that only loopback names are accepted.
      const server = await start(root, {
        net,
        pidFile: pid.file,
        args: ["--host", spelling],
        env: { WMCP_TOKEN: TOKEN },
      });
      try {
        const port = Number(new URL(server.ready.url).port);
        assert.equal(server.ready.url, `http://${loopback}:${port}/mcp`);
        assert.equal(server.ready.bind, `${bind}:${port}`);
        assert.equal((await fetch(new URL("/healthz", server.ready.url))).status, 200);
        const record = JSON.parse(await Deno.readTextFile(pid.file));
        assert.equal(record.url, server.ready.url);
        // stderr is complete once the server has exited (its log lines follow the ready line).
        assert.equal((await server.stop()).code, 0);
        assert.match(server.stderr(), /bound to \S+, every interface/);
        assert.match(
          server.stderr(),
          /note: a wildcard bind accepts only loopback Host names unless --allowed-host/,
        );
      } finally {
        await server.stop();
        await Deno.remove(root, { recursive: true });
        await Deno.remove(pid.dir, { recursive: true });
      }
    },
  });
}

Deno.test({
  name: "--host [::1] (brackets) binds the IPv6 loopback and announces it",
  ignore: IPV6_SKIP !== undefined,
  fn: async () => {
    const root = await makeWorkspace();
    const server = await start(root, { net: "[::1]", args: ["--host", "[::1]"] });
    try {
      const port = Number(new URL(server.ready.url).port);
      assert.equal(server.ready.url, `http://[::1]:${port}/mcp`);
      assert.equal(server.ready.bind, `[::1]:${port}`);
      assert.equal((await fetch(new URL("/healthz", server.ready.url))).status, 200);
    } finally {
      await server.stop();
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test("scale-out: a confirmation started on one instance is accepted on another with the same token files and state key, refused when the tokens are listed in another order", async () => {
  const root = await makeWorkspace({ "victim.txt": "x\n", "other.txt": "y\n" });
  const secrets = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-deploy-scale-" }));
  const OTHER = "second-token-0123456789abcdef";
  await Deno.writeTextFile(`${secrets}/key`, "k".repeat(48));
  await Deno.writeTextFile(`${secrets}/tokens`, `${TOKEN}\n${OTHER}\n`);
  await Deno.writeTextFile(`${secrets}/reordered`, `${OTHER}\n${TOKEN}\n`);
  const instance = (tokens: string) =>
    start(root, {
      net: "127.0.0.1",
      args: [
        "--write",
        "--token-file",
        `${secrets}/${tokens}`,
        "--state-key-file",
        `${secrets}/key`,
      ],
      read: secrets,
      extraWrite: root,
    });
  const a = await instance("tokens");
  const b = await instance("tokens");
  const c = await instance("reordered");
  const auth = { authorization: `Bearer ${TOKEN}` };
  const capabilities = { elicitation: { form: {} } };
  // Starts a delete_path on A; returns the answer a person gave, to be sent to another instance.
  const startOnA = async (path: string) => {
    const first = await modernRequest(a.ready.url, "tools/call", {
      name: "delete_path",
      arguments: { path },
    }, { capabilities, headers: auth });
    const result = first.messages[0].result as { resultType?: string; requestState?: string };
    assert.equal(result.resultType, "input_required", JSON.stringify(first.messages[0]));
    assert.equal(typeof result.requestState, "string");
    return {
      name: "delete_path",
      arguments: { path },
      inputResponses: { confirm: { action: "accept", content: { confirm: true } } },
      requestState: result.requestState,
    };
  };
  try {
    const accepted = await modernRequest(b.ready.url, "tools/call", await startOnA("victim.txt"), {
      capabilities,
      headers: auth,
    });
    const ok = accepted.messages[0].result as { isError?: boolean; structuredContent?: unknown };
    assert.notEqual(ok?.isError, true, JSON.stringify(accepted.messages[0]));
    await assert.rejects(Deno.stat(`${root}/victim.txt`), "B deleted the file");
    // The same token is token 1 on C (listed second): the state is bound to token 0 on A.
    const refused = await modernRequest(c.ready.url, "tools/call", await startOnA("other.txt"), {
      capabilities,
      headers: auth,
    });
    const error = refused.messages[0].error as { code: number } | undefined;
    assert.equal(error?.code, -32602, JSON.stringify(refused.messages[0]));
    assert.ok((await Deno.stat(`${root}/other.txt`)).isFile, "nothing was deleted");
  } finally {
    await Promise.all([a.stop(), b.stop(), c.stop()]);
    await Deno.remove(root, { recursive: true });
    await Deno.remove(secrets, { recursive: true });
  }
});

Deno.test("behind a reverse proxy: a loopback bind with --allowed-host and a token", async () => {
  const root = await makeWorkspace();
  const server = await start(root, {
    net: "127.0.0.1",
    args: ["--allowed-host", "mcp.example.com"],
    env: { WMCP_TOKEN: TOKEN },
  });
  try {
    const port = Number(new URL(server.ready.url).port);
    assert.equal(server.ready.url, `http://127.0.0.1:${port}/mcp`);
    assert.equal(server.ready.bind, `127.0.0.1:${port}`);
    // The Host the proxy forwards (the public name, with or without a port) is accepted...
    assert.equal(await statusWithHost("127.0.0.1", port, "mcp.example.com"), 200);
    assert.equal(await statusWithHost("127.0.0.1", port, "MCP.example.com:443"), 200);
    // ...any other name is refused (DNS rebinding), whatever the socket it came in on.
    assert.equal(await statusWithHost("127.0.0.1", port, "evil.example.com"), 403);
    assert.equal(await statusWithHost("127.0.0.1", port, "example.com"), 403);
  } finally {
    await server.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("configurations refused at start (exit 2, nothing served)", async (t) => {
  const root = await makeWorkspace();
  const pid = await pidPlace();
  const tokenDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-deploy-tok-" }));
  try {
    await t.step("a wildcard bind without a token", async () => {
      for (const host of ["0.0.0.0", "::"]) {
        const r = await runToExit(root, { net: "0.0.0.0,[::]", args: ["--host", host] });
        assert.equal(r.code, 2);
        assert.match(r.stderr, /without authentication/);
        assert.equal(r.stdout, "", "no ready line");
      }
    });
    await t.step("a non-loopback --allowed-host without a token", async () => {
      const r = await runToExit(root, {
        net: "127.0.0.1",
        args: ["--allowed-host", "mcp.example.com"],
      });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /--allowed-host mcp\.example\.com without authentication/);
      // A loopback name needs none.
      const ok = await start(root, { net: "127.0.0.1", args: ["--allowed-host", "localhost"] });
      assert.equal((await ok.stop()).code, 0);
    });
    await t.step("--pid-file with a concrete non-loopback bind", async () => {
      const r = await runToExit(root, {
        net: "192.0.2.10",
        pidFile: pid.file,
        args: ["--host", "192.0.2.10"],
        env: { WMCP_TOKEN: TOKEN },
      });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /--pid-file needs a loopback or wildcard --host/);
      await assert.rejects(Deno.stat(pid.file), "no pid file was written");
    });
    await t.step("one token both read-write and read-only; a short read token", async () => {
      await Deno.writeTextFile(`${tokenDir}/rw`, `${TOKEN}\n`);
      await Deno.writeTextFile(`${tokenDir}/ro`, `other-token-0123456789\n${TOKEN}\n`);
      await Deno.writeTextFile(`${tokenDir}/short`, "short\n");
      const both = await runToExit(root, {
        net: "127.0.0.1",
        args: ["--token-file", `${tokenDir}/rw`, "--read-token-file", `${tokenDir}/ro`],
        read: tokenDir,
      });
      assert.equal(both.code, 2);
      assert.match(both.stderr, /both read-write and read-only/);
      const short = await runToExit(root, {
        net: "127.0.0.1",
        args: ["--read-token-file", `${tokenDir}/short`],
        read: tokenDir,
      });
      assert.equal(short.code, 2);
      assert.match(short.stderr, /at least 16 characters/);
    });
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(pid.dir, { recursive: true });
    await Deno.remove(tokenDir, { recursive: true });
  }
});

Deno.test("launcher permissions: a wildcard bind may also reach itself over loopback; read-token passthrough", () => {
  const flags = (args: string[]) => serverPermissions("http", ["--root", "/tmp", ...args]);
  assert.ok(flags(["--host", "0.0.0.0"]).includes("--allow-net=0.0.0.0,127.0.0.1,localhost,[::1]"));
  assert.ok(flags(["--host", "::"]).includes("--allow-net=[::],127.0.0.1,localhost,[::1]"));
  assert.ok(flags(["--host", "[::1]"]).includes("--allow-net=[::1]"));
  assert.ok(flags([]).includes("--allow-net=127.0.0.1,localhost,[::1]"));
  assert.ok(flags(["--host", "192.0.2.10"]).includes("--allow-net=192.0.2.10"));
  const env = flags([]).find((f) => f.startsWith("--allow-env="))!;
  assert.match(env, /WMCP_TOKEN,WMCP_READ_TOKEN,/);
  const read = flags(["--read-token-file", "/etc/wmcp/read.tokens"])
    .find((f) => f.startsWith("--allow-read="))!;
  assert.ok(read.split("=")[1].split(",").includes("/etc/wmcp/read.tokens"));
});

Deno.test("the launcher serves a wildcard bind end to end: second start refused, serve stop", async () => {
  const root = await makeWorkspace();
  const pid = await pidPlace();
  const config = new URL("../../deno.json", import.meta.url).pathname;
  const launch = (...extra: string[]) =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "task",
        "--config",
        config,
        "serve:http",
        "--root",
        root,
        "--host",
        "0.0.0.0",
        "--port",
        "0",
        "--pid-file",
        pid.file,
        ...extra,
      ],
      cwd: root,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { WMCP_TOKEN: TOKEN, NO_COLOR: "1" },
    });
  const child = launch().spawn();
  const errText: string[] = [];
  const errDone = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stderr) errText.push(dec.decode(chunk, { stream: true }));
  })();
  try {
    const { ready, reader } = await readReadyLine(child.stdout, "launcher");
    void (async () => {
      try {
        while (!(await reader.read()).done) { /* drain */ }
      } catch { /* closed */ }
    })();
    const port = Number(new URL(ready.url).port);
    assert.equal(ready.url, `http://127.0.0.1:${port}/mcp`);
    assert.equal((await fetch(new URL("/healthz", ready.url))).status, 200);
    const second = await launch().output();
    assert.equal(second.code, 4, new TextDecoder().decode(second.stderr));
    const stop = await serveStop(pid.dir, pid.file);
    assert.equal(stop.code, 0, stop.stderr);
    assert.equal((await child.status).code, 0);
  } finally {
    try {
      child.kill("SIGTERM");
    } catch { /* gone */ }
    await child.status;
    await errDone;
    await Deno.remove(root, { recursive: true });
    await Deno.remove(pid.dir, { recursive: true });
  }
});
