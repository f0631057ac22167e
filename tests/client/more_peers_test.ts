/**
 * The bundled client against more servers people run (besides peers_test.ts): the MCP
 * reference servers `@modelcontextprotocol/server-memory` (stdio) and server-everything's
 * HTTP+SSE mode, a `fastmcp` server (fixtures/fastmcp_server.mjs) over stdio, its httpStream
 * (Streamable HTTP) and the HTTP+SSE endpoint it serves beside it, and the v1 SDK fixture's
 * Streamable HTTP and HTTP+SSE modes. For each: server-info, tools list, a call with
 * structured output (where the server has one) and an error result.
 *
 * The npm servers are installed with `npm ci` from the pinned locks in fixtures/
 * (more-peers.package*.json: fastmcp 4.20.16 and server-memory 2026.8.31;
 * server-everything.package*.json) unless WMCP_MORE_PEERS_DIR / WMCP_SERVER_EVERYTHING_DIR
 * name directories where those installs were already done.
 */
import assert from "node:assert/strict";
import { assertExit, type Json, runClient, stdoutJson } from "./_client.ts";
import { LOOPBACK_ONLY, startServer } from "./_peers.ts";
import { installNpmFixture } from "./_npm_fixture.ts";
import { writeConfig } from "../_support/fs.ts";

const FIXTURES = new URL("./fixtures/", import.meta.url).pathname.replace(/\/$/, "");
const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;
const LEGACY = { era: "legacy", protocolVersion: "2025-11-25" };

/** What one peer should yield through one target. */
interface Expect {
  serverName: string;
  tools: string[];
  structured?: { tool: string; args: Json; structuredContent: Json };
  error?: { tool: string; args: Json; text: RegExp };
  text?: { tool: string; args: Json; text: string };
}

/** server-info, tools list, a structured call, a text call and an error result. */
async function exercise(
  target: string[],
  opts: { read: string[]; env?: Record<string, string>; cwd?: string },
  e: Expect,
) {
  const info = await runClient(["server-info", ...target, "--output", "json"], opts);
  assertExit(info, 0);
  assert.equal(stdoutJson(info).serverInfo.name, e.serverName);
  assert.deepEqual([stdoutJson(info).era, stdoutJson(info).protocolVersion], [
    LEGACY.era,
    LEGACY.protocolVersion,
  ]);

  const list = await runClient(["tools", "list", ...target, "--output", "mcp-json"], opts);
  assertExit(list, 0);
  const names = stdoutJson(list).pages.flatMap((p: Json) => p.mcpResult.tools).map((t: Json) =>
    t.name
  );
  for (const n of e.tools) assert.ok(names.includes(n), `${n} is listed (got ${names})`);

  if (e.structured) {
    const s = e.structured;
    const call = await runClient(
      ["tools", "call", s.tool, "--arguments", JSON.stringify(s.args), ...target],
      opts,
    );
    assertExit(call, 0);
    assert.deepEqual(stdoutJson(call).mcpResult.structuredContent, s.structuredContent);
    assert.deepEqual(stdoutJson(call).metadata, { ...LEGACY, rounds: 1 });
  }
  if (e.text) {
    const call = await runClient(
      ["tools", "call", e.text.tool, "--arguments", JSON.stringify(e.text.args), ...target],
      opts,
    );
    assertExit(call, 0);
    assert.deepEqual(stdoutJson(call).mcpResult.content, [{ type: "text", text: e.text.text }]);
  }
  if (e.error) {
    const call = await runClient(
      ["tools", "call", e.error.tool, "--arguments", JSON.stringify(e.error.args), ...target],
      opts,
    );
    assertExit(call, 1);
    const r = stdoutJson(call).mcpResult;
    assert.equal(r.isError, true);
    assert.match(r.content[0].text, e.error.text);
  }
}

async function installMorePeers() {
  const installed = await installNpmFixture({
    name: "more-peers",
    packageName: "fastmcp",
    version: "4.20.16",
    reuseEnv: "WMCP_MORE_PEERS_DIR",
  });
  const memory = `${installed.dir}/node_modules/@modelcontextprotocol/server-memory`;
  const version = JSON.parse(await Deno.readTextFile(`${memory}/package.json`)).version;
  assert.equal(version, "2026.8.31");
  return { ...installed, memoryEntry: `${memory}/dist/index.js` };
}

const FASTMCP: Expect = {
  serverName: "fastmcp-fixture",
  tools: ["add", "greet", "refuse"],
  structured: { tool: "add", args: { a: 2, b: 40 }, structuredContent: { sum: 42 } },
  text: { tool: "greet", args: { name: "Ada" }, text: "Hello, Ada!" },
  error: { tool: "refuse", args: {}, text: /refused: this tool never runs/ },
};

Deno.test("server-memory 2026.8.31 (stdio) and a fastmcp 4.20.16 server (stdio, httpStream, its /sse)", async (t) => {
  const peers = await installMorePeers();
  const dir = await Deno.makeTempDir({ prefix: "wmcp-more-peers-" });
  try {
    // The fastmcp fixture resolves `fastmcp` from a node_modules beside it.
    await Deno.copyFile(`${FIXTURES}/fastmcp_server.mjs`, `${dir}/fastmcp_server.mjs`);
    await Deno.symlink(`${peers.dir}/node_modules`, `${dir}/node_modules`);

    await t.step("server-memory over stdio (config file, env)", async () => {
      const config = await writeConfig(dir, {
        memory: {
          command: "node",
          args: [peers.memoryEntry],
          env: { MEMORY_FILE_PATH: `${dir}/memory.jsonl` },
        },
      });
      const target = ["--config", config, "--server", "memory"];
      const entity = { name: "Ada", entityType: "person", observations: ["wrote notes"] };
      await exercise(target, { read: [dir] }, {
        serverName: "memory-server",
        tools: ["create_entities", "read_graph", "add_observations"],
        structured: {
          tool: "create_entities",
          args: { entities: [entity] },
          structuredContent: { entities: [entity] },
        },
        error: {
          tool: "add_observations",
          args: { observations: [{ entityName: "Nobody", contents: ["x"] }] },
          text: /Nobody not found/,
        },
      });
      // The graph it wrote is the one the next run reads (same file, through the entry's env).
      const graph = await runClient(["tools", "call", "read_graph", ...target], { read: [dir] });
      assertExit(graph, 0);
      assert.deepEqual(stdoutJson(graph).mcpResult.structuredContent.entities, [entity]);
    });

    await t.step("fastmcp over stdio", async () => {
      const config = await writeConfig(dir, {
        fastmcp: { command: "node", args: ["./fastmcp_server.mjs", "stdio"] },
      });
      // A relative script: the server starts in the directory the client was run from.
      await exercise(
        ["--config", config, "--server", "fastmcp"],
        { read: [dir], cwd: dir },
        FASTMCP,
      );
    });

    await t.step(
      "fastmcp httpStream (Streamable HTTP) and the HTTP+SSE endpoint beside it",
      async () => {
        const server = await startServer(
          "node",
          ["--import", LOOPBACK_ONLY, `${dir}/fastmcp_server.mjs`, "http"],
          { readyEvent: "listening", cwd: dir },
        );
        try {
          assert.equal(server.ready.address, "127.0.0.1");
          const base = `http://127.0.0.1:${server.ready.port}`;
          await exercise(["--endpoint", `${base}/mcp`], { read: [dir] }, FASTMCP);
          const config = await writeConfig(dir, { sse: { type: "sse", url: `${base}/sse` } });
          await exercise(["--config", config, "--server", "sse"], { read: [dir] }, FASTMCP);
        } finally {
          await server.stop();
        }
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
    await peers.cleanup();
  }
});

Deno.test("server-everything 2026.8.31 in its HTTP+SSE mode (type sse)", async () => {
  const installed = await installNpmFixture({
    name: "server-everything",
    packageName: "@modelcontextprotocol/server-everything",
    version: "2026.8.31",
    reuseEnv: "WMCP_SERVER_EVERYTHING_DIR",
  });
  const dir = await Deno.makeTempDir({ prefix: "wmcp-everything-sse-" });
  const server = await startServer(
    "node",
    ["--import", LOOPBACK_ONLY, `${installed.packageDir}/dist/index.js`, "sse"],
    { env: { PORT: "0" }, readyEvent: "listening", cwd: dir },
  );
  try {
    const config = await writeConfig(dir, {
      everything: { type: "sse", url: `http://127.0.0.1:${server.ready.port}/sse` },
    });
    const target = ["--config", config, "--server", "everything"];
    const info = await runClient(["server-info", ...target, "--output", "json"], { read: [dir] });
    assertExit(info, 0);
    assert.deepEqual([stdoutJson(info).era, stdoutJson(info).protocolVersion], [
      LEGACY.era,
      LEGACY.protocolVersion,
    ]);
    const list = await runClient(["tools", "list", ...target, "--output", "json"], {
      read: [dir],
    });
    assertExit(list, 0);
    assert.ok(stdoutJson(list).tools.some((t: Json) => t.name === "get-structured-content"));
    const call = await runClient(
      [
        "tools",
        "call",
        "get-structured-content",
        "--arguments",
        '{"location":"Chicago"}',
        ...target,
      ],
      { read: [dir] },
    );
    assertExit(call, 0);
    assert.deepEqual(stdoutJson(call).mcpResult.structuredContent, {
      temperature: 36,
      conditions: "Light rain / drizzle",
      humidity: 82,
    });
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
    await installed.cleanup();
  }
});

Deno.test("v1 SDK fixture over Streamable HTTP and over HTTP+SSE (SSEServerTransport)", async () => {
  for (const mode of ["http", "sse"]) {
    const server = await startServer(Deno.execPath(), [
      "run",
      "--quiet",
      "--no-prompt",
      "--allow-env",
      "--allow-net=127.0.0.1",
      "--config",
      DENO_JSON,
      `${FIXTURES}/v1_server.ts`,
      mode,
    ], { readyEvent: "ready" });
    try {
      const target = [
        "--endpoint",
        server.ready.url,
        ...(mode === "sse" ? ["--transport", "sse"] : []),
      ];
      await exercise(target, { read: [FIXTURES] }, {
        serverName: "v1-fixture",
        tools: ["greet", "weather", "fail"],
        structured: {
          tool: "weather",
          args: { city: "Oslo" },
          structuredContent: { city: "Oslo", celsius: -3 },
        },
        text: { tool: "greet", args: { name: "Grace" }, text: "Hello, Grace!" },
        error: { tool: "fail", args: {}, text: /it failed/ },
      });
    } finally {
      await server.stop();
    }
  }
});
