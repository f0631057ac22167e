/**
 * How the bundled client connects, proved with real children and sockets: `--protocol-version
 * auto` over stdio starts each server once (ours, modern; a v1 SDK server and
 * server-everything, legacy), and exactly twice only for a server that exits on the
 * server/discover probe; config servers start in the invocation directory (or the entry's
 * `cwd`); failures name their cause (exit code and stderr tail, spawn errors, the unreachable
 * address, an endpoint that speaks the older HTTP+SSE transport).
 *
 * server-everything is installed with `npm ci` from the pinned lock in fixtures/ unless
 * WMCP_SERVER_EVERYTHING_DIR names a directory where that install was already done.
 */
import assert from "node:assert/strict";
import { SERVE_STDIO } from "../server/_harness.ts";
import {
  assertExit,
  assertFailure,
  closedPort,
  describe,
  type Json,
  runClient,
  stdoutJson,
} from "./_client.ts";
import { installNpmFixture } from "./_npm_fixture.ts";
import { withTempDir, writeConfig } from "../_support/fs.ts";

const FIXTURES = new URL("./fixtures/", import.meta.url).pathname.replace(/\/$/, "");
const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;
const V1_SERVER = `${FIXTURES}/v1_server.ts`;
const PAGING_SERVER = `${FIXTURES}/paging_server.ts`;
const PAGING_PAGES = `${FIXTURES}/paging_pages.json`;

/** A config entry that appends one line to countFile each time it starts, then execs command. */
function counted(countFile: string, command: string, args: string[]) {
  return {
    command: "sh",
    args: ["-c", 'echo started >> "$0"; exec "$@"', countFile, command, ...args],
  };
}

async function starts(countFile: string): Promise<number> {
  const text = await Deno.readTextFile(countFile).catch(() => "");
  return text.split("\n").filter((l) => l !== "").length;
}

const v1Args = ["run", "--quiet", "--no-prompt", "--allow-env", "--config", DENO_JSON, V1_SERVER];

/** Runs fn in a fresh temporary directory named by prefix, removed afterwards. */
const withDir = (prefix: string, fn: (dir: string) => Promise<void>) => withTempDir(fn, { prefix });

// ---------------------------------------------------------------------------------------------
// Start once

Deno.test("auto over stdio starts our (modern) server once per run: the probe and the session share the process", async () => {
  await withDir("wmcp-once-ours-", async (dir) => {
    const count = `${dir}/starts`;
    const config = await writeConfig(dir, {
      ours: counted(count, Deno.execPath(), ["run", "--quiet", "-A", SERVE_STDIO, "--root", dir]),
    });
    const target = ["--config", config, "--server", "ours"];
    const info = await runClient(["server-info", ...target, "--output", "json"], { read: [dir] });
    assertExit(info, 0);
    assert.deepEqual([stdoutJson(info).era, stdoutJson(info).protocolVersion], [
      "modern",
      "2026-07-28",
    ]);
    assert.equal(await starts(count), 1, "server-info started the server once");
    const list = await runClient(["tools", "list", ...target, "--output", "json"], { read: [dir] });
    assertExit(list, 0);
    assert.ok(stdoutJson(list).tools.some((t: Json) => t.name === "read_file"));
    assert.equal(await starts(count), 2, "tools list started it once more, not twice");
  });
});

Deno.test("auto over stdio starts a legacy-only v1 SDK server once: the probe's error and initialize on one process", async () => {
  await withDir("wmcp-once-v1-", async (dir) => {
    const count = `${dir}/starts`;
    const config = await writeConfig(dir, {
      v1: counted(count, Deno.execPath(), [...v1Args, "stdio"]),
    });
    const target = ["--config", config, "--server", "v1"];
    const call = await runClient(
      ["tools", "call", "weather", "--arguments", '{"city":"Oslo"}', ...target],
      { read: [dir] },
    );
    assertExit(call, 0);
    const env = stdoutJson(call);
    assert.deepEqual(env.mcpResult.structuredContent, { city: "Oslo", celsius: -3 });
    assert.deepEqual(env.metadata, { era: "legacy", protocolVersion: "2025-11-25", rounds: 1 });
    assert.equal(await starts(count), 1);
    // A forced legacy version sends no probe at all: one start too.
    const forced = await runClient(
      ["server-info", ...target, "--protocol-version", "2025-06-18", "--output", "json"],
      { read: [dir] },
    );
    assertExit(forced, 0);
    assert.equal(stdoutJson(forced).protocolVersion, "2025-06-18");
    assert.equal(await starts(count), 2);
  });
});

Deno.test("auto over stdio starts server-everything 2026.8.31 once", async () => {
  const installed = await installNpmFixture({
    name: "server-everything",
    packageName: "@modelcontextprotocol/server-everything",
    version: "2026.8.31",
    reuseEnv: "WMCP_SERVER_EVERYTHING_DIR",
  });
  try {
    await withDir("wmcp-once-everything-", async (dir) => {
      const count = `${dir}/starts`;
      const entry = `${installed.packageDir}/dist/index.js`;
      const config = await writeConfig(dir, {
        everything: counted(count, "node", [entry, "stdio"]),
      });
      const ok = await runClient(
        [
          "tools",
          "call",
          "echo",
          "--arguments",
          '{"message":"once"}',
          "--config",
          config,
          "--server",
          "everything",
        ],
        { read: [dir] },
      );
      assertExit(ok, 0);
      assert.deepEqual(stdoutJson(ok).mcpResult.content, [{ type: "text", text: "Echo: once" }]);
      assert.equal(stdoutJson(ok).metadata.era, "legacy");
      assert.equal(await starts(count), 1);
    });
  } finally {
    await installed.cleanup();
  }
});

Deno.test("a stdio server that exits on the server/discover probe is started exactly twice: the probe, then initialize without a probe", async () => {
  await withDir("wmcp-once-closer-", async (dir) => {
    const config = await writeConfig(dir, {
      closer: {
        command: Deno.execPath(),
        args: [
          "run",
          "--quiet",
          "--no-prompt",
          `--allow-read=${FIXTURES}`,
          `--allow-write=${dir}`,
          PAGING_SERVER,
          "--pages",
          PAGING_PAGES,
          "--log",
          `${dir}/wire.jsonl`,
          "--pid-file",
          `${dir}/pids`,
          "--exit-before-initialize",
        ],
      },
    });
    const run = await runClient(
      ["tools", "list", "--config", config, "--server", "closer", "--output", "json"],
      { read: [dir] },
    );
    assertExit(run, 0);
    assert.equal(stdoutJson(run).metadata.era, "legacy");
    const pids = (await Deno.readTextFile(`${dir}/pids`)).split("\n").filter((l) => l !== "");
    assert.equal(pids.length, 2, "started exactly twice");
    const log = (await Deno.readTextFile(`${dir}/wire.jsonl`)).split("\n").filter((l) => l)
      .map((l) => JSON.parse(l));
    const methods = (pid: string) =>
      log.filter((e) => String(e.pid) === pid && e.raw).map((e) => JSON.parse(e.raw).method);
    assert.deepEqual(methods(pids[0]), ["server/discover"]);
    assert.ok(log.some((e) => String(e.pid) === pids[0] && e.event === "exit-before-initialize"));
    assert.deepEqual(methods(pids[1]).slice(0, 3), [
      "initialize",
      "notifications/initialized",
      "tools/list",
    ]);
    assert.ok(!methods(pids[1]).includes("server/discover"), "no second probe");
  });
});

// ---------------------------------------------------------------------------------------------
// Working directory of config servers

Deno.test("config stdio servers start in the invocation directory (cwd, or INIT_CWD), or the entry's cwd (relative to it)", async () => {
  await withDir("wmcp-cwd-", async (dir) => {
    await Deno.mkdir(`${dir}/sub`);
    const script = (name: string) =>
      `#!/bin/sh\necho ${name} >> "${dir}/ran"\nexec "${Deno.execPath()}" ${
        v1Args.map((a) => `"${a}"`).join(" ")
      } stdio\n`;
    await Deno.writeTextFile(`${dir}/server.sh`, script("top"));
    await Deno.writeTextFile(`${dir}/sub/server.sh`, script("sub"));
    await writeConfig(dir, {
      rel: { command: "sh", args: ["./server.sh"] },
      sub: { command: "sh", args: ["./server.sh"], cwd: "sub" },
    });
    const list = (server: string) => ["tools", "list", "--config", "mcp.json", "--server", server];

    // From the directory itself: the relative config path and the relative script both resolve.
    const here = await runClient([...list("rel"), "--output", "json"], { read: [dir], cwd: dir });
    assertExit(here, 0);
    assert.deepEqual(stdoutJson(here).tools.map((t: Json) => t.name), ["greet", "weather", "fail"]);

    // Under `deno task` the client runs in the checkout; INIT_CWD names where the user was.
    const task = await runClient([...list("rel"), "--output", "json"], {
      read: [dir],
      cwd: FIXTURES,
      env: { INIT_CWD: dir },
    });
    assertExit(task, 0);

    // An entry's relative cwd is taken from the invocation directory.
    const sub = await runClient([...list("sub"), "--output", "json"], { read: [dir], cwd: dir });
    assertExit(sub, 0);
    assert.deepEqual((await Deno.readTextFile(`${dir}/ran`)).split("\n").filter((l) => l), [
      "top",
      "top",
      "sub",
    ]);

    // A cwd that does not exist is named as the cause.
    await writeConfig(dir, { gone: { command: "sh", args: ["./server.sh"], cwd: "nowhere" } });
    const gone = await runClient(list("gone"), { read: [dir], cwd: dir });
    const e = assertFailure(gone, "transport", 3);
    assert.match(e.message, /working directory .*nowhere does not exist/);
  });
});

// ---------------------------------------------------------------------------------------------
// Failure messages

Deno.test("a stdio server that dies at start: exit code (or signal) and the last lines of its stderr; --server-logs still passes stderr through", async () => {
  await withDir("wmcp-dies-", async (dir) => {
    const config = await writeConfig(dir, {
      dies: {
        command: "sh",
        args: ["-c", "echo 'starting up' >&2; echo 'fatal: no API key' >&2; exit 3"],
      },
      chatty: {
        command: "sh",
        args: ["-c", 'i=0; while [ $i -lt 500 ]; do echo "noise $i" >&2; i=$((i+1)); done; exit 9'],
      },
      killed: { command: "sh", args: ["-c", "kill -9 $$"] },
      missing: { command: `${dir}/no-such-server` },
    });
    const target = (name: string) => ["server-info", "--config", config, "--server", name];

    const dies = await runClient(target("dies"), { read: [dir] });
    const e = assertFailure(dies, "transport", 3);
    assert.match(e.message, /exited with code 3/);
    assert.match(e.message, /starting up\n {2}fatal: no API key$/);
    assert.deepEqual(e.details, {
      exitCode: 3,
      signal: null,
      stderrTail: ["starting up", "fatal: no API key"],
    });

    // The tail is bounded: the last 12 lines only.
    const chatty = await runClient(target("chatty"), { read: [dir] });
    const c = assertFailure(chatty, "transport", 3);
    assert.match(c.message, /exited with code 9/);
    assert.deepEqual(
      c.details.stderrTail,
      Array.from({ length: 12 }, (_, i) => `noise ${488 + i}`),
    );

    const killed = await runClient(target("killed"), { read: [dir] });
    assert.match(assertFailure(killed, "transport", 3).message, /killed by SIGKILL/);

    const missing = await runClient(target("missing"), { read: [dir] });
    assert.match(
      assertFailure(missing, "transport", 3).message,
      /cannot start the server: ".*no-such-server" was not found \(ENOENT\)/,
    );

    // With --server-logs the server's stderr is shown as it comes, and the error still names it.
    const logs = await runClient([...target("dies"), "--server-logs"], { read: [dir] });
    assertExit(logs, 3);
    const lines = logs.stderr.split("\n");
    assert.ok(lines.includes("fatal: no API key"), describe(logs));
    const json = JSON.parse(lines.find((l) => l.startsWith('{"error"'))!);
    assert.match(json.error.message, /fatal: no API key/);
  });
});

Deno.test('a stdio server that ends under a request: its exit code (or signal) and the last lines of its stderr, not a bare "Connection closed"', async () => {
  await withDir("wmcp-dies-later-", async (dir) => {
    const dying = (method: string, signal?: string) => ({
      command: Deno.execPath(),
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        `--allow-read=${FIXTURES}`,
        ...(signal ? ["--allow-run"] : []),
        PAGING_SERVER,
        "--pages",
        PAGING_PAGES,
        "--die-on",
        method,
        ...(signal ? ["--die-by", signal] : []),
      ],
    });
    const config = await writeConfig(dir, {
      list: dying("tools/list"),
      call: dying("tools/call"),
      killed: dying("tools/call", "SIGKILL"),
    });
    const run = (server: string, ...args: string[]) =>
      runClient([...args, "--config", config, "--server", server], { read: [dir] });
    const tail = ["dying on tools/call", "last words \x1b]0;pwned\x07"];

    // Connected (the probe and initialize answered), then the server exits under tools/list.
    const list = await run("list", "tools", "list");
    const l = assertFailure(list, "transport", 3);
    assert.match(l.message, /^the server exited with code 5 before it answered tools\/list; /);
    assert.deepEqual(l.details, {
      exitCode: 5,
      signal: null,
      stderrTail: ["dying on tools/list", tail[1]],
    });

    // Under tools/call (the tool is listed first, then called).
    const call = await run("call", "tools", "call", "echo", "message=hi");
    const c = assertFailure(call, "transport", 3);
    assert.match(c.message, /^the server exited with code 5 before it answered tools\/call; /);
    assert.match(c.message, /the last lines of its stderr:\n {2}dying on tools\/call\n {2}last/);
    assert.deepEqual(c.details, { exitCode: 5, signal: null, stderrTail: tail });

    const killed = await run("killed", "tools", "call", "echo", "message=hi");
    const k = assertFailure(killed, "transport", 3);
    assert.match(k.message, /^the server was killed by SIGKILL before it answered tools\/call; /);
    assert.deepEqual(k.details, { exitCode: null, signal: "SIGKILL", stderrTail: tail });

    // Shown to a person as one line, the server's terminal sequence escaped.
    const pretty = await run(
      "call",
      "tools",
      "call",
      "echo",
      "message=hi",
      "--output",
      "pretty",
    );
    assertExit(pretty, 3);
    assert.ok(!pretty.stderr.includes("\x1b]"), describe(pretty));
    assert.match(
      pretty.stderr,
      /error \(transport\): the server exited with code 5 before it answered tools\/call; .*last words \\u001b\]0;pwned\\u0007\n$/,
    );
  });
});

Deno.test("an unreachable URL names the address and the OS reason", async () => {
  const port = closedPort();
  const url = `http://127.0.0.1:${port}/mcp`;
  for (const extra of [[], ["--transport", "sse"], ["--protocol-version", "2025-11-25"]]) {
    const run = await runClient(["server-info", "--endpoint", url, ...extra], {
      read: [FIXTURES],
    });
    const e = assertFailure(run, "transport", 3);
    assert.match(
      e.message,
      new RegExp(`^cannot reach ${url.replaceAll(".", "\\.")}: .*refused`, "i"),
    );
  }
});

Deno.test("a secret expanded into a config url never appears in the client's output", async () => {
  const KEY = "supersecretvalue123";
  const PASSWORD = "hunter2passwordvalue";
  const env = { MY_API_KEY: KEY, MY_PASSWORD: PASSWORD };
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-redact-" }));
  // An endpoint that answers every POST 500, and one that looks like an HTTP+SSE server.
  const failing = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("boom", { status: 500 }),
  );
  const sse = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) =>
      req.method === "GET"
        ? new Response("event: endpoint\ndata: /messages?sessionId=1\n\n", {
          headers: { "content-type": "text/event-stream" },
        })
        : new Response("no", { status: 405 }),
  );
  try {
    const cases: [string, number][] = [
      ["unreachable", closedPort()],
      ["http error", failing.addr.port],
      ["sse", sse.addr.port],
    ];
    for (const [name, port] of cases) {
      for (const auth of ["", "user:${MY_PASSWORD}@"]) {
        const config = `${dir}/mcp.json`;
        await Deno.writeTextFile(
          config,
          JSON.stringify({
            mcpServers: {
              u: { url: `http://${auth}127.0.0.1:${port}/mcp?api_key=\${MY_API_KEY}` },
            },
          }),
        );
        const run = await runClient(["server-info", "--config", config, "--server", "u"], {
          read: [dir],
          env,
        });
        const what = `${name} ${auth}: ${describe(run)}`;
        assert.notEqual(run.code, 0, what);
        for (const secret of [KEY, PASSWORD]) {
          assert.ok(!run.stdout.includes(secret) && !run.stderr.includes(secret), what);
        }
        if (name === "unreachable") {
          assert.match(
            run.stderr,
            // The url came from an expansion: shown as its template, naming the field.
            new RegExp(
              `cannot reach http://127\\.0\\.0\\.1:${port}/mcp\\?api_key=\\*\\*\\* ` +
                `\\(mcpServers\\.u\\.url\\):`,
            ),
            what,
          );
        }
        if (name === "sse") assert.match(run.stderr, /speaks the older HTTP\+SSE transport/, what);
      }
    }
  } finally {
    await failing.shutdown();
    await sse.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

/** Starts the v1 fixture in HTTP+SSE mode; returns its /sse URL. */
async function startSseServer(env: Record<string, string> = {}) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      "--allow-env",
      "--allow-net=127.0.0.1",
      "--config",
      DENO_JSON,
      V1_SERVER,
      "sse",
    ],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const deadline = Date.now() + 30_000;
  while (!text.includes("\n") && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  const url = JSON.parse(text.split("\n")[0]).url as string;
  return {
    url,
    async stop() {
      child.kill("SIGTERM");
      await reader.cancel().catch(() => {});
      await child.status;
    },
  };
}

Deno.test("HTTP+SSE: type sse and --transport sse are served through that transport; as Streamable HTTP the endpoint gets a plain statement", async () => {
  const token = "sse-fixture-token-0123";
  const server = await startSseServer({ V1_FIXTURE_TOKEN: token });
  try {
    await withDir("wmcp-sse-", async (dir) => {
      const config = await writeConfig(dir, {
        sse: { type: "sse", url: server.url, headers: { Authorization: "Bearer ${SSE_TOKEN}" } },
        wrong: { url: server.url, headers: { Authorization: "Bearer ${SSE_TOKEN}" } },
        odd: { type: "websocket", url: server.url },
      });
      const opts = { read: [dir], env: { SSE_TOKEN: token } };
      const call = await runClient(
        [
          "tools",
          "call",
          "weather",
          "--arguments",
          '{"city":"Lisbon"}',
          "--config",
          config,
          "--server",
          "sse",
        ],
        opts,
      );
      assertExit(call, 0);
      assert.deepEqual(stdoutJson(call).mcpResult.structuredContent, {
        city: "Lisbon",
        celsius: 18,
      });
      assert.deepEqual(stdoutJson(call).metadata, {
        era: "legacy",
        protocolVersion: "2025-11-25",
        rounds: 1,
      });

      const endpoint = ["--endpoint", server.url, "--bearer-token-env", "SSE_TOKEN"];
      const fail = await runClient(
        ["tools", "call", "fail", ...endpoint, "--transport", "sse"],
        opts,
      );
      assertExit(fail, 1);
      assert.equal(stdoutJson(fail).mcpResult.isError, true);

      for (const t of [["--config", config, "--server", "wrong"], endpoint]) {
        const wrong = await runClient(["server-info", ...t], opts);
        const e = assertFailure(wrong, "transport", 3);
        assert.match(e.message, /speaks the older HTTP\+SSE transport/);
        assert.match(e.message, /"type": "sse"|--transport sse/);
      }

      const modern = await runClient(
        ["server-info", ...endpoint, "--transport", "sse", "--protocol-version", "2026-07-28"],
        opts,
      );
      assert.match(assertFailure(modern, "usage", 2).message, /initialization era/);
      const odd = await runClient(["server-info", "--config", config, "--server", "odd"], opts);
      assert.match(assertFailure(odd, "usage", 2).message, /type must be one of/);
    });
  } finally {
    await server.stop();
  }
});
