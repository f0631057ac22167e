/**
 * The bundled MCP tool client (`cli.ts server-info | tools ...`, run as a real child) against
 * servers we did not write: a v1 SDK legacy server (stdio and Streamable HTTP), the MCP
 * reference server `@modelcontextprotocol/server-everything` (stdio and Streamable HTTP, run
 * with Node), and a hand-written paging server that proves the lossless envelope, the wire
 * traffic (it logs every line it receives), child shutdown escalation and cancellation.
 *
 * server-everything is installed by this file with `npm ci` from the pinned lock in
 * fixtures/ into a temporary directory, unless WMCP_SERVER_EVERYTHING_DIR names a directory
 * where that install was already done (`npm ci` with the same two files).
 */
import assert from "node:assert/strict";
import { LOOPBACK_ONLY, startServer } from "./_peers.ts";
import { installNpmFixture } from "./_npm_fixture.ts";
import { type CliResult, runCli } from "../_support/cli.ts";
import { writeConfig } from "../_support/fs.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;
const FIXTURES = new URL("./fixtures/", import.meta.url).pathname.replace(/\/$/, "");
const PAGING_SERVER = `${FIXTURES}/paging_server.ts`;
const PAGING_PAGES = `${FIXTURES}/paging_pages.json`;
const REPEAT_PAGES = `${FIXTURES}/repeat_pages.json`;
const V1_SERVER = `${FIXTURES}/v1_server.ts`;
const EVERYTHING_VERSION = "2026.8.31";

const LEGACY = { era: "legacy", protocolVersion: "2025-11-25" };

// ---------------------------------------------------------------------------------------------
// helpers

type Run = CliResult;

/** Runs the client as a real child with scoped permissions; fails the test if it hangs. */
function client(
  args: string[],
  opts: { read: string[]; env?: Record<string, string>; stdin?: string; timeoutMs?: number },
): Promise<Run> {
  const env = Deno.env.toObject();
  delete env.INIT_CWD; // every path given here is absolute
  delete env.WMCP_TOKEN;
  return runCli(
    [
      "--quiet",
      "--no-prompt",
      `--allow-read=${opts.read.join(",")}`,
      "--allow-env",
      "--allow-net=127.0.0.1",
      "--allow-run",
    ],
    args,
    {
      env: { ...env, ...opts.env },
      clearEnv: true,
      stdin: opts.stdin,
      timeoutMs: opts.timeoutMs,
    },
  );
}

/** The one JSON document a run printed on stdout. */
function json(run: Run): Json {
  const lines = run.stdout.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `expected one stdout line, got: ${run.stdout}\n${run.stderr}`);
  return JSON.parse(lines[0]);
}

/** The JSON error object a failed run printed on stderr (non-pretty outputs). */
function errorOf(run: Run): Json {
  const line = run.stderr.split("\n").find((l) => l.startsWith('{"error"'));
  assert.ok(line, `no JSON error on stderr: ${run.stderr}`);
  return JSON.parse(line).error;
}

function expectCode(run: Run, code: number): void {
  assert.equal(run.code, code, `exit ${run.code}, expected ${code}\n${run.stdout}\n${run.stderr}`);
}

/** A config entry that runs the hand-written paging server with Deno. */
function pagingEntry(dir: string, pages: string, extra: string[] = []) {
  return {
    command: Deno.execPath(),
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      `--allow-read=${FIXTURES}`,
      `--allow-write=${dir}`,
      PAGING_SERVER,
      "--pages",
      pages,
      "--log",
      `${dir}/wire.jsonl`,
      "--pid-file",
      `${dir}/pids`,
      ...extra,
    ],
  };
}

interface LogEntry {
  pid: number;
  raw?: string;
  event?: string;
  message?: Json;
}

/** What the paging server logged: each received line (parsed) and its events. */
async function wireLog(dir: string): Promise<LogEntry[]> {
  const text = await Deno.readTextFile(`${dir}/wire.jsonl`);
  return text.split("\n").filter((l) => l !== "").map((l) => {
    const e = JSON.parse(l) as LogEntry;
    if (e.raw !== undefined) e.message = JSON.parse(e.raw);
    return e;
  });
}

/** The process that served the session: the one that received `initialize`. */
function sessionPid(log: LogEntry[]): number {
  const hit = log.find((e) => e.message?.method === "initialize");
  assert.ok(hit, "the server never received initialize");
  return hit.pid;
}

async function pids(dir: string): Promise<number[]> {
  return (await Deno.readTextFile(`${dir}/pids`)).split("\n").filter((l) => l !== "").map(
    Number,
  );
}

const HAS_PROC = await Deno.stat("/proc/self/stat").then(() => true, () => false);

/** Whether a process is gone (an unreaped zombie counts as gone: it runs nothing). */
async function isGone(pid: number): Promise<boolean> {
  if (HAS_PROC) {
    try {
      const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
      const state = stat.slice(stat.lastIndexOf(")") + 2).charAt(0);
      return state === "Z" || state === "X";
    } catch {
      return true;
    }
  }
  const { code } = await new Deno.Command("kill", {
    args: ["-0", String(pid)],
    stdout: "null",
    stderr: "null",
  }).output();
  return code !== 0;
}

// ---------------------------------------------------------------------------------------------
// 1. A v1 SDK (1.32.2) legacy server

/** Config entry: the v1 fixture over stdio (its path comes from ${WMCP_TEST_V1_SERVER}). */
function v1StdioEntry() {
  return {
    command: Deno.execPath(),
    // ${VAR} in args: the config file's expansion, resolved from the client's environment.
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      "--allow-env",
      "--config",
      DENO_JSON,
      "${WMCP_TEST_V1_SERVER}",
      "stdio",
    ],
    env: { V1_FIXTURE: "1" },
  };
}

Deno.test("v1 SDK legacy server over stdio (config file): auto falls back to legacy; list, show, call; forced 2026-07-28 is exit 4", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-peers-v1-" });
  try {
    const config = await writeConfig(dir, { v1: v1StdioEntry() });
    const opts = { read: [dir], env: { WMCP_TEST_V1_SERVER: V1_SERVER } };
    const target = ["--config", config, "--server", "v1"];

    const list = await client(["tools", "list", ...target, "--output", "mcp-json"], opts);
    expectCode(list, 0);
    const env = json(list);
    assert.equal(env.contractVersion, "1");
    assert.equal(env.operation, "tools/list");
    assert.deepEqual(env.metadata, { pageCount: 1, ...LEGACY });
    assert.equal(env.pages.length, 1);
    assert.equal(env.pages[0].requestCursor, null);
    const tools = env.pages[0].mcpResult.tools;
    assert.deepEqual(tools.map((t: Json) => t.name), ["greet", "weather", "fail"]);
    assert.ok(!("resultType" in env.pages[0].mcpResult));

    const show = await client(["tools", "show", "weather", ...target, "--output", "json"], opts);
    expectCode(show, 0);
    const shown = json(show);
    assert.equal(shown.operation, "tools/show");
    assert.deepEqual(shown.tool, tools[1]);
    assert.deepEqual(shown.tool.outputSchema.required, ["city", "celsius"]);
    assert.deepEqual(shown.metadata, { ...LEGACY, pageCount: 1 });

    const weather = await client(
      ["tools", "call", "weather", "--arguments", '{"city":"Lisbon"}', ...target],
      opts,
    );
    expectCode(weather, 0);
    const w = json(weather);
    assert.equal(w.operation, "tools/call");
    assert.deepEqual(w.mcpResult, {
      content: [{ type: "text", text: '{"city":"Lisbon","celsius":18}' }],
      structuredContent: { city: "Lisbon", celsius: 18 },
    });
    assert.deepEqual(w.metadata, { ...LEGACY, rounds: 1 });

    const greet = await client(
      ["tools", "call", "greet", "--arguments", '{"name":"Ada"}', ...target, "--output", "json"],
      opts,
    );
    expectCode(greet, 0);
    assert.deepEqual(json(greet).text, ["Hello, Ada!"]);

    const fail = await client(["tools", "call", "fail", ...target], opts);
    expectCode(fail, 1);
    assert.equal(json(fail).mcpResult.isError, true);

    const info = await client(["server-info", ...target, "--output", "json"], opts);
    expectCode(info, 0);
    const i = json(info);
    assert.deepEqual(i.serverInfo, { name: "v1-fixture", version: "1.0.0" });
    assert.deepEqual([i.era, i.protocolVersion], ["legacy", "2025-11-25"]);

    // A forced legacy revision the v1 SDK also speaks is used as asked.
    const older = await client(
      ["tools", "list", ...target, "--protocol-version", "2025-06-18"],
      opts,
    );
    expectCode(older, 0);
    assert.deepEqual(json(older).metadata, {
      pageCount: 1,
      era: "legacy",
      protocolVersion: "2025-06-18",
    });

    const modern = await client(
      ["tools", "list", ...target, "--protocol-version", "2026-07-28"],
      opts,
    );
    expectCode(modern, 4);
    assert.equal(modern.stdout, "");
    assert.equal(errorOf(modern).class, "protocol");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("v1 SDK legacy server over Streamable HTTP: config url and headers (${VAR}) and --endpoint; forced 2026-07-28 is exit 4", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-peers-v1http-" });
  const token = "fixture-token-0123456789";
  const server = await startServer(Deno.execPath(), [
    "run",
    "--quiet",
    "--no-prompt",
    "--allow-env=V1_FIXTURE_TOKEN",
    "--allow-net=127.0.0.1",
    "--config",
    DENO_JSON,
    V1_SERVER,
    "http",
  ], { env: { V1_FIXTURE_TOKEN: token }, readyEvent: "ready" });
  try {
    const url = new URL(server.ready.url);
    assert.equal(url.hostname, "127.0.0.1");
    const config = await writeConfig(dir, {
      v1http: {
        url: "http://127.0.0.1:${WMCP_TEST_PORT}/mcp",
        headers: { Authorization: "Bearer ${WMCP_TEST_TOKEN}" },
      },
    });
    const opts = { read: [dir], env: { WMCP_TEST_PORT: url.port, WMCP_TEST_TOKEN: token } };
    const target = ["--config", config, "--server", "v1http"];

    const list = await client(["tools", "list", ...target], opts);
    expectCode(list, 0);
    const env = json(list);
    assert.deepEqual(env.metadata, { pageCount: 1, ...LEGACY });
    assert.deepEqual(env.pages[0].mcpResult.tools.map((t: Json) => t.name), [
      "greet",
      "weather",
      "fail",
    ]);

    const show = await client(["tools", "show", "greet", ...target], opts);
    expectCode(show, 0);
    assert.deepEqual(json(show).tool, env.pages[0].mcpResult.tools[0]);

    const call = await client(
      ["tools", "call", "weather", "--arguments", '{"city":"Oslo"}', ...target],
      opts,
    );
    expectCode(call, 0);
    assert.deepEqual(json(call).mcpResult.structuredContent, { city: "Oslo", celsius: -3 });

    const endpoint = ["--endpoint", url.href, "--bearer-token-env", "WMCP_TEST_TOKEN"];
    const viaEndpoint = await client(
      ["tools", "call", "greet", "--arguments", '{"name":"Grace"}', ...endpoint],
      opts,
    );
    expectCode(viaEndpoint, 0);
    assert.deepEqual(json(viaEndpoint).mcpResult, {
      content: [{ type: "text", text: "Hello, Grace!" }],
    });
    assert.deepEqual(json(viaEndpoint).metadata, { ...LEGACY, rounds: 1 });

    for (const t of [target, endpoint]) {
      const modern = await client(
        ["tools", "list", ...t, "--protocol-version", "2026-07-28"],
        opts,
      );
      expectCode(modern, 4);
      assert.equal(errorOf(modern).class, "protocol");
    }
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

// ---------------------------------------------------------------------------------------------
// 2. @modelcontextprotocol/server-everything (the MCP reference server), with Node

/** Installs server-everything (pinned lock) and returns its entry script. */
async function installEverything(): Promise<{ entry: string; cleanup: () => Promise<void> }> {
  const installed = await installNpmFixture({
    name: "server-everything",
    packageName: "@modelcontextprotocol/server-everything",
    version: EVERYTHING_VERSION,
    reuseEnv: "WMCP_SERVER_EVERYTHING_DIR",
  });
  return { entry: `${installed.packageDir}/dist/index.js`, cleanup: installed.cleanup };
}

/** Lists every page in mcp-json and checks the page chain; returns the tools. */
function checkPages(env: Json): Json[] {
  assert.equal(env.contractVersion, "1");
  assert.equal(env.operation, "tools/list");
  assert.equal(env.metadata.pageCount, env.pages.length);
  assert.ok(env.pages.length >= 1);
  env.pages.forEach((p: Json, i: number) => {
    const prev = i === 0 ? null : env.pages[i - 1].mcpResult.nextCursor;
    assert.equal(p.requestCursor, prev);
    if (i < env.pages.length - 1) assert.equal(typeof p.mcpResult.nextCursor, "string");
    else assert.ok(p.mcpResult.nextCursor === undefined, "the last page has no nextCursor");
  });
  const tools = env.pages.flatMap((p: Json) => p.mcpResult.tools);
  const names = tools.map((t: Json) => t.name);
  assert.equal(new Set(names).size, names.length, "no tool is listed twice");
  for (const n of ["echo", "get-sum", "get-structured-content"]) {
    assert.ok(names.includes(n), `${n} is listed`);
  }
  return tools;
}

/** list, show, call and run against server-everything through one target. */
async function exerciseEverything(
  target: string[],
  opts: { read: string[]; env?: Record<string, string> },
  dir: string,
): Promise<void> {
  const list = await client(["tools", "list", ...target, "--output", "mcp-json"], opts);
  expectCode(list, 0);
  const env = json(list);
  assert.deepEqual([env.metadata.era, env.metadata.protocolVersion], ["legacy", "2025-11-25"]);
  const tools = checkPages(env);

  const show = await client(["tools", "show", "get-sum", ...target], opts);
  expectCode(show, 0);
  assert.deepEqual(json(show).tool, tools.find((t: Json) => t.name === "get-sum"));

  const echo = await client(
    ["tools", "call", "echo", "--arguments", '{"message":"hello peers"}', ...target],
    opts,
  );
  expectCode(echo, 0);
  assert.deepEqual(json(echo).mcpResult.content, [{ type: "text", text: "Echo: hello peers" }]);

  const sum = await client(
    ["tools", "call", "get-sum", "--arguments", '{"a":2,"b":40}', ...target, "--output", "json"],
    opts,
  );
  expectCode(sum, 0);
  assert.deepEqual(json(sum).text, ["The sum of 2 and 40 is 42."]);

  // structuredContent checked against the tool's outputSchema (draft-07 from this server).
  const structured = await client(
    ["tools", "call", "get-structured-content", "--arguments", '{"location":"Chicago"}', ...target],
    opts,
  );
  expectCode(structured, 0);
  assert.deepEqual(json(structured).mcpResult.structuredContent, {
    temperature: 36,
    conditions: "Light rain / drizzle",
    humidity: 82,
  });

  const jsonl = `${dir}/calls.jsonl`;
  await Deno.writeTextFile(
    jsonl,
    [
      { name: "echo", arguments: { message: "one" } },
      { name: "get-sum", arguments: { a: 1, b: 2 } },
      { name: "echo", arguments: { message: "three" } },
    ].map((l) => JSON.stringify(l)).join("\n") + "\n",
  );
  const run = await client(["tools", "run", jsonl, ...target], opts);
  expectCode(run, 0);
  const lines = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((l) => [l.index, l.line, l.operation]), [
    [0, 1, "tools/call"],
    [1, 2, "tools/call"],
    [2, 3, "tools/call"],
  ]);
  assert.deepEqual(lines.map((l) => l.mcpResult.content[0].text), [
    "Echo: one",
    "The sum of 1 and 2 is 3.",
    "Echo: three",
  ]);
}

Deno.test("server-everything 2026.8.31 over stdio (config file) and Streamable HTTP (127.0.0.1 only): every page, show, call, run", async (t) => {
  const { entry, cleanup } = await installEverything();
  const dir = await Deno.makeTempDir({ prefix: "wmcp-peers-everything-" });
  try {
    await t.step("stdio through a config file (node ENTRY stdio)", async () => {
      const config = await writeConfig(dir, {
        everything: { command: "node", args: ["${WMCP_TEST_EVERYTHING}", "stdio"] },
      });
      const target = ["--config", config, "--server", "everything"];
      const opts = { read: [dir], env: { WMCP_TEST_EVERYTHING: entry } };
      await exerciseEverything(target, opts, dir);

      // Its progress notifications (every 0.4 s) keep resetting a 2 s inactivity timeout (five
      // intervals, so a busy machine cannot make it fire) through a call three times longer...
      const long = ["tools", "call", "trigger-long-running-operation"];
      const args = ["--arguments", '{"duration":6,"steps":15}'];
      const kept = await client([...long, ...args, "--timeout", "2", ...target], opts);
      expectCode(kept, 0);
      assert.match(json(kept).mcpResult.content[0].text, /completed/);
      // ...while --max-timeout caps the whole call.
      const capped = await client(
        [...long, ...args, "--timeout", "5", "--max-timeout", "0.8", ...target],
        opts,
      );
      expectCode(capped, 7);
      assert.equal(errorOf(capped).class, "timeout");
    });

    await t.step(
      "Streamable HTTP (node ENTRY streamableHttp, PORT=0, bound to 127.0.0.1)",
      async () => {
        // The server listens on every interface by default (app.listen(PORT)); the preload
        // makes it bind 127.0.0.1 and report the port it got.
        const server = await startServer(
          "node",
          ["--import", LOOPBACK_ONLY, entry, "streamableHttp"],
          { env: { PORT: "0" }, readyEvent: "listening", cwd: dir },
        );
        try {
          assert.equal(server.ready.address, "127.0.0.1");
          const url = `http://127.0.0.1:${server.ready.port}/mcp`;
          await exerciseEverything(["--endpoint", url], { read: [dir] }, dir);
        } finally {
          await server.stop();
        }
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
    await cleanup();
  }
});

// ---------------------------------------------------------------------------------------------
// 3. A hand-written paging server: the lossless envelope

const FIXTURE_PAGES = JSON.parse(await Deno.readTextFile(PAGING_PAGES)) as {
  requestCursor: string | null;
  result: Json;
}[];

Deno.test("paging server: every page comes back as sent (unknown fields, _meta, ttlMs/cacheScope, empty-string cursor); json keeps the invalid-header tool over stdio (headers are not sent there)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-peers-paging-" });
  try {
    const config = await writeConfig(dir, { fake: pagingEntry(dir, PAGING_PAGES) });
    const opts = { read: [dir] };
    const target = ["--config", config, "--server", "fake"];

    const list = await client(["tools", "list", ...target, "--output", "mcp-json"], opts);
    expectCode(list, 0);
    const env = json(list);
    assert.deepEqual(Object.keys(env).sort(), [
      "contractVersion",
      "metadata",
      "operation",
      "pages",
    ]);
    assert.deepEqual(env.metadata, { pageCount: 3, ...LEGACY });
    // Deep-equal to what the server sent, page by page: nothing added, dropped or reshaped.
    assert.deepEqual(
      env.pages,
      FIXTURE_PAGES.map((p) => ({ requestCursor: p.requestCursor, mcpResult: p.result })),
    );
    assert.deepEqual(env.pages.map((p: Json) => p.requestCursor), [null, "", "page-2"]);
    for (const p of env.pages) assert.ok(!("resultType" in p.mcpResult), "no resultType added");
    const first = env.pages[0].mcpResult;
    assert.equal(first.nextCursor, "");
    assert.deepEqual([first.ttlMs, first.cacheScope], [1500, "private"]);
    assert.deepEqual(first["x-unknown-top"], { list: [1, "two", false], empty: {} });
    assert.deepEqual(first._meta, { "example.com/page": 0, "example.com/trace": "p0" });
    assert.equal(first.tools[0]["x-vendor-rank"], 7);
    assert.equal(first.tools[1].name, "bad_header", "the mcp-json pages keep the invalid tool");

    // x-mcp-header is checked only where headers are sent (modern Streamable HTTP; issue 13):
    // over stdio the derived inventory keeps the tool with the invalid annotation, silently.
    const flat = await client(["tools", "list", ...target, "--output", "json"], opts);
    expectCode(flat, 0);
    const inv = json(flat);
    assert.deepEqual(inv.tools.map((t: Json) => t.name), ["alpha", "bad_header", "echo", "slow"]);
    assert.deepEqual(inv.tools[0], FIXTURE_PAGES[0].result.tools[0], "unknown tool fields kept");
    assert.equal(inv.metadata.toolCount, 4);
    assert.doesNotMatch(flat.stderr, /x-mcp-header/);

    // An explicit empty-string cursor is a cursor, not "no cursor".
    const single = await client(
      ["tools", "list", ...target, "--single-page", "--cursor", ""],
      opts,
    );
    expectCode(single, 0);
    assert.deepEqual(json(single).pages, [
      { requestCursor: "", mcpResult: FIXTURE_PAGES[1].result },
    ]);

    // A call result comes back whole, unknown fields and _meta included.
    const call = await client(
      ["tools", "call", "echo", "--arguments", '{"message":"hi","n":2}', ...target],
      opts,
    );
    expectCode(call, 0);
    assert.deepEqual(json(call), {
      contractVersion: "1",
      operation: "tools/call",
      mcpResult: {
        content: [{ type: "text", text: '{"message":"hi","n":2}' }],
        structuredContent: { message: "hi", n: 2 },
        _meta: { "example.com/served-by": "fake-paging" },
        "x-unknown-result-field": { kept: true },
      },
      metadata: { ...LEGACY, rounds: 1 },
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("paging server that repeats a cursor: the client stops with exit 4 instead of looping", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-peers-repeat-" });
  try {
    const config = await writeConfig(dir, { loop: pagingEntry(dir, REPEAT_PAGES) });
    const run = await client(
      ["tools", "list", "--config", config, "--server", "loop", "--output", "mcp-json"],
      { read: [dir], timeoutMs: 30_000 },
    );
    expectCode(run, 4);
    assert.equal(run.stdout, "");
    const error = errorOf(run);
    assert.equal(error.class, "protocol");
    assert.match(error.message, /again/);
    const log = await wireLog(dir);
    const pid = sessionPid(log);
    const lists = log.filter((e) => e.pid === pid && e.message?.method === "tools/list");
    assert.deepEqual(lists.map((e) => e.message.params?.cursor ?? null), [null, "again"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ---------------------------------------------------------------------------------------------
// 4. Wire capture

Deno.test("wire: tools run sends one tools/call per line (no batch, in order, distinct ids); tools show sends only tools/list", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-peers-wire-" });
  try {
    const config = await writeConfig(dir, { fake: pagingEntry(dir, PAGING_PAGES) });
    const target = ["--config", config, "--server", "fake"];
    const jsonl = ["one", "two", "three"].map((m, i) =>
      JSON.stringify({ name: "echo", arguments: { message: m, n: i + 1 } })
    ).join("\n") + "\n";

    const run = await client(["tools", "run", "-", ...target], { read: [dir], stdin: jsonl });
    expectCode(run, 0);
    const out = run.stdout.trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assert.deepEqual(out.map((o) => o.mcpResult.structuredContent.message), [
      "one",
      "two",
      "three",
    ]);

    let log = await wireLog(dir);
    for (const e of log) {
      if (e.raw === undefined) continue;
      assert.ok(!Array.isArray(e.message), `a JSON-RPC batch was sent: ${e.raw}`);
      assert.equal(e.message.jsonrpc, "2.0");
    }
    const calls = log.filter((e) => e.message?.method === "tools/call");
    assert.equal(calls.length, 3, "three separate tools/call requests");
    assert.deepEqual(calls.map((e) => e.message.params.name), ["echo", "echo", "echo"]);
    assert.deepEqual(calls.map((e) => e.message.params.arguments), [
      { message: "one", n: 1 },
      { message: "two", n: 2 },
      { message: "three", n: 3 },
    ]);
    const ids = calls.map((e) => e.message.id);
    assert.ok(ids.every((id) => id !== undefined && id !== null), "requests, not notifications");
    assert.equal(new Set(ids.map((id) => JSON.stringify(id))).size, 3, "distinct ids");
    assert.equal(new Set(calls.map((e) => e.pid)).size, 1, "one session");

    await Deno.remove(`${dir}/wire.jsonl`);
    const show = await client(["tools", "show", "echo", ...target], { read: [dir] });
    expectCode(show, 0);
    assert.deepEqual(json(show).tool, FIXTURE_PAGES[1].result.tools[0]);
    log = await wireLog(dir);
    const pid = sessionPid(log);
    const methods = log.filter((e) => e.pid === pid && e.message).map((e) => e.message.method);
    // The negotiation probe runs on the same process (the server is started once).
    assert.deepEqual(methods, [
      "server/discover",
      "initialize",
      "notifications/initialized",
      "tools/list",
      "tools/list",
      "tools/list",
    ]);
    assert.deepEqual(new Set(log.map((e) => e.pid)), new Set([pid]), "one server process");
    assert.ok(!log.some((e) => e.message?.method === "tools/get"), "never tools/get");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ---------------------------------------------------------------------------------------------
// 5. Child shutdown escalation and cancellation

Deno.test("a stdio server that ignores stdin EOF and SIGTERM does not outlive the client", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-peers-stubborn-" });
  let started: number[] = [];
  try {
    const config = await writeConfig(dir, {
      stubborn: pagingEntry(dir, PAGING_PAGES, ["--stubborn"]),
    });
    const run = await client(
      ["tools", "list", "--config", config, "--server", "stubborn", "--output", "json"],
      { read: [dir], timeoutMs: 30_000 },
    );
    expectCode(run, 0);
    // alpha, bad_header (listed over stdio: its x-mcp-header is inert here), echo, slow.
    assert.equal(json(run).tools.length, 4);
    const returned = Date.now();
    started = await pids(dir);
    assert.ok(started.length >= 1);
    const alive = new Set(started);
    while (alive.size > 0 && Date.now() - returned < 6_000) {
      for (const pid of [...alive]) if (await isGone(pid)) alive.delete(pid);
      if (alive.size > 0) await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual([...alive], [], "every server process is gone within 6 s");
    const log = await wireLog(dir);
    const pid = sessionPid(log);
    // It really was stubborn: it saw stdin close and a SIGTERM, and was killed anyway.
    assert.ok(log.some((e) => e.pid === pid && e.event === "stdin-eof"));
    assert.ok(log.some((e) => e.pid === pid && e.event === "SIGTERM"));
  } finally {
    // If the client hung, nothing above read the pid file: read it here.
    if (started.length === 0) started = await pids(dir).catch(() => []);
    for (const pid of started) {
      if (!(await isGone(pid))) {
        try {
          Deno.kill(pid, "SIGKILL"); // only if the assertion above failed: leave nothing behind
        } catch { /* gone */ }
      }
    }
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a slow tool past --timeout exits 7 and the server receives notifications/cancelled", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-peers-slow-" });
  try {
    const config = await writeConfig(dir, { fake: pagingEntry(dir, PAGING_PAGES) });
    const run = await client(
      // 2 s: well past what the fixture needs to answer tools/list on a busy machine, well
      // before the 5 s that `slow` takes.
      ["tools", "call", "slow", "--timeout", "2", "--config", config, "--server", "fake"],
      { read: [dir], timeoutMs: 30_000 },
    );
    expectCode(run, 7);
    assert.equal(errorOf(run).class, "timeout");
    const log = await wireLog(dir);
    const call = log.find((e) => e.message?.method === "tools/call");
    assert.ok(call, "the call was sent");
    assert.equal(call.message.params.name, "slow");
    const cancelled = log.filter((e) => e.message?.method === "notifications/cancelled");
    assert.equal(cancelled.length, 1, "one notifications/cancelled");
    assert.equal(cancelled[0].pid, call.pid);
    assert.equal(cancelled[0].message.params.requestId, call.message.id);
    assert.ok(!("id" in cancelled[0].message), "a notification, not a request");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
