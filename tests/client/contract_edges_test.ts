/**
 * Client edge cases the contract states (issue 13, point 5): tool-defined header checks only
 * where headers are sent, --non-interactive declining, ${VAR} secrets in a child's argv, and
 * --transport with the 2025-03-26 / 2024-11-05 revisions. Real children and sockets only.
 */
import assert from "node:assert/strict";
import { makeWorkspace, readReadyLine, startHttpServer } from "../server/_harness.ts";
import {
  assertExit,
  assertFailure,
  describe,
  type Json,
  lingeringStdioServers,
  runClient,
  stdoutJson,
} from "./_client.ts";
import { exists, removeDir, writeConfig } from "../_support/fs.ts";

const FIXTURES = new URL("./fixtures", import.meta.url).pathname;
const CONFIG_DENO = new URL("../../deno.json", import.meta.url).pathname;
const HEADER_SERVER = `${FIXTURES}/header_server.ts`;
const PAGING_SERVER = `${FIXTURES}/paging_server.ts`;
const EDGES_PAGES = `${FIXTURES}/edges_pages.json`;

/** A config entry running the hand-written paging server (initialization era only). */
function pagingEntry(dir: string, extra: string[] = []) {
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
      EDGES_PAGES,
      "--log",
      `${dir}/wire.jsonl`,
      ...extra,
    ],
  };
}

/** The `initialize` requests the paging server received (from its --log). */
async function initializeRequests(dir: string): Promise<Json[]> {
  const text = await Deno.readTextFile(`${dir}/wire.jsonl`);
  return text.trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.raw).map((e) =>
    JSON.parse(e.raw)
  ).filter((m) => m.method === "initialize");
}

/** The header fixture over Streamable HTTP (both eras). */
async function startHeaderHttp(): Promise<{ url: string; stop(): Promise<void> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      "--allow-net=127.0.0.1",
      "--allow-read",
      "--allow-env",
      "--config",
      CONFIG_DENO,
      HEADER_SERVER,
      "http",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const { ready, reader } = await readReadyLine(child.stdout, "header fixture");
  (async () => {
    try {
      while (!(await reader.read()).done) { /* drain */ }
    } catch { /* closed */ }
  })();
  return {
    url: ready.url,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 1. x-mcp-header checks apply only where headers are sent (modern-era Streamable HTTP)

Deno.test("x-mcp-header validity is checked only on modern Streamable HTTP; stdio and the legacy era list and call the tool", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-edges-headers-" });
  const http = await startHeaderHttp();
  try {
    const config = await writeConfig(dir, {
      hdr: {
        command: Deno.execPath(),
        args: ["run", "--quiet", "-A", "--config", CONFIG_DENO, HEADER_SERVER, "stdio"],
      },
    });
    const stdio = ["--config", config, "--server", "hdr"];
    const cases = [
      { name: "stdio modern", target: stdio, flag: "auto", era: "modern", checked: false },
      { name: "stdio legacy", target: stdio, flag: "2025-11-25", era: "legacy", checked: false },
      {
        name: "http legacy",
        target: ["--endpoint", http.url],
        flag: "2025-11-25",
        era: "legacy",
        checked: false,
      },
      {
        name: "http modern",
        target: ["--endpoint", http.url],
        flag: "auto",
        era: "modern",
        checked: true,
      },
    ];
    for (const c of cases) {
      await t.step(c.name, async () => {
        const opts = { read: [dir] };
        const common = [...c.target, "--protocol-version", c.flag];
        const list = await runClient(["tools", "list", ...common, "--output", "json"], opts);
        assertExit(list, 0);
        const inv = stdoutJson(list);
        assert.equal(inv.metadata.era, c.era);
        const names = inv.tools.map((x: Json) => x.name);
        const warned = /warning: leaving tool "bad_header" out.*x-mcp-header/.test(list.stderr);
        if (c.checked) {
          assert.deepEqual(names, ["good_header"], describe(list));
          assert.ok(warned, describe(list));
        } else {
          assert.deepEqual(names, ["bad_header", "good_header"], describe(list));
          assert.ok(!warned, describe(list));
          assert.doesNotMatch(list.stderr, /x-mcp-header/);
        }
        // jsonl is the same derived view.
        const jsonl = await runClient(["tools", "list", ...common, "--output", "jsonl"], opts);
        assertExit(jsonl, 0);
        assert.deepEqual(
          jsonl.stdout.trim().split("\n").map((l) => JSON.parse(l).name),
          c.checked ? ["good_header"] : ["bad_header", "good_header"],
        );

        const call = await runClient([
          "tools",
          "call",
          "bad_header",
          "--arguments",
          '{"region":"eu"}',
          ...common,
        ], opts);
        if (c.checked) {
          const e = assertFailure(call, "usage", 2);
          assert.match(e.message, /refusing to call bad_header: region: invalid x-mcp-header/);
          assert.equal(call.stdout, "");
        } else {
          assertExit(call, 0);
          const env = stdoutJson(call);
          assert.deepEqual(env.mcpResult.structuredContent, { region: "eu" });
          assert.equal(env.metadata.era, c.era);
        }
        // A valid declaration is called everywhere (mirrored into Mcp-Param-Region on modern HTTP).
        const good = await runClient([
          "tools",
          "call",
          "good_header",
          "--arguments",
          '{"region":"eu"}',
          ...common,
        ], opts);
        assertExit(good, 0);
        assert.deepEqual(stdoutJson(good).mcpResult.structuredContent, { region: "eu" });
      });
    }
  } finally {
    await http.stop();
    await removeDir(dir);
  }
});

// ---------------------------------------------------------------------------------------------
// 2. --non-interactive: elicitation not advertised; an elicitation/create that comes anyway is
//    declined (not -32601)

Deno.test("--non-interactive does not advertise elicitation and declines an elicitation/create that arrives anyway", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-edges-elicit-" });
  try {
    const config = await writeConfig(dir, {
      fake: pagingEntry(dir),
      form: {
        command: Deno.execPath(),
        args: ["run", "--quiet", "-A", "--config", CONFIG_DENO, `${FIXTURES}/form_server.ts`],
      },
    });
    const opts = { read: [dir] };

    await t.step("a server that asks anyway gets a decline", async () => {
      const r = await runClient([
        "tools",
        "call",
        "elicit_anyway",
        "--config",
        config,
        "--server",
        "fake",
        "--non-interactive",
      ], opts);
      assertExit(r, 0);
      const env = stdoutJson(r);
      assert.deepEqual(env.mcpResult.structuredContent, { result: { action: "decline" } });
      assert.equal(env.metadata.era, "legacy");
      const inits = await initializeRequests(dir);
      assert.ok(inits.length >= 1);
      for (const init of inits) {
        assert.equal(init.params.capabilities.elicitation, undefined, JSON.stringify(init));
      }
    });

    await t.step("with a responses file the capability is declared and answered", async () => {
      await Deno.writeTextFile(`${dir}/wire.jsonl`, "");
      const answers = `${dir}/answers.json`;
      await Deno.writeTextFile(
        answers,
        JSON.stringify({ responses: [{ action: "accept", content: { ok: true } }] }),
      );
      const r = await runClient([
        "tools",
        "call",
        "elicit_anyway",
        "--config",
        config,
        "--server",
        "fake",
        "--input-responses-file",
        answers,
      ], opts);
      assertExit(r, 0);
      assert.deepEqual(stdoutJson(r).mcpResult.structuredContent, {
        result: { action: "accept", content: { ok: true } },
      });
      const inits = await initializeRequests(dir);
      assert.ok(inits.every((i) => i.params.capabilities.elicitation !== undefined));
    });

    for (const version of ["2025-11-25", "2025-06-18"]) {
      await t.step(
        `the form fixture (legacy ${version}) is told no capability was declared`,
        async () => {
          const r = await runClient([
            "tools",
            "call",
            "ask",
            "--config",
            config,
            "--server",
            "form",
            "--non-interactive",
            "--protocol-version",
            version,
          ], opts);
          assertExit(r, 1);
          const env = stdoutJson(r);
          assert.equal(env.mcpResult.isError, true);
          assert.match(env.mcpResult.content[0].text, /did not declare the required capability/);
          assert.doesNotMatch(r.stdout + r.stderr, /-32601|Method not found/);
        },
      );
    }
  } finally {
    await removeDir(dir);
  }
});

Deno.test("--non-interactive against our write server in the legacy era (stdio and HTTP): delete_path is refused, nothing deleted", async (t) => {
  const root = await makeWorkspace({ "keep.txt": "x" });
  const server = await startHttpServer(root, { write: true });
  try {
    for (
      const tr of [
        { name: "stdio", target: ["--root", root, "--write"] },
        { name: "http", target: ["--endpoint", server.url] },
      ]
    ) {
      for (const version of ["2025-11-25", "2024-11-05"]) {
        await t.step(`${tr.name} ${version}`, async () => {
          const r = await runClient([
            "tools",
            "call",
            "delete_path",
            "--arguments",
            '{"path":"keep.txt"}',
            ...tr.target,
            "--protocol-version",
            version,
            "--non-interactive",
          ], { read: [root] });
          assertExit(r, 1);
          const env = stdoutJson(r);
          assert.equal(env.metadata.era, "legacy");
          assert.equal(env.metadata.protocolVersion, version);
          assert.equal(env.metadata.rounds, 1);
          const err = env.mcpResult._meta["wmcp/error"];
          assert.equal(err.code, "CONFIRMATION_REQUIRED");
          assert.match(err.message, /did not declare the elicitation capability/);
          assert.doesNotMatch(r.stdout + r.stderr, /-32601|Method not found/);
          assert.equal(await exists(`${root}/keep.txt`), true);
        });
      }
    }
    assert.deepEqual(await lingeringStdioServers(root), []);
  } finally {
    await server.stop();
    await removeDir(root);
  }
});

// ---------------------------------------------------------------------------------------------
// 3. ${VAR} expanded into a child's argv: a warning naming a secret-looking variable

Deno.test("${VAR} named like a secret in command or args warns on stderr (name only); env and headers do not", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-edges-vars-" });
  const http = await startHeaderHttp();
  const value = "s3cr3t-VALUE-4711";
  try {
    const config = await writeConfig(dir, {
      fake: {
        command: "${WMCP_TEST_SECRET_DENO}",
        args: [
          ...pagingEntry(dir).args,
          "--pid-file",
          `${dir}/pid-\${WMCP_TEST_API_TOKEN}`,
          "--version",
          "${WMCP_TEST_PLAIN_VERSION}",
        ],
        env: { API_PASSWORD: "${WMCP_TEST_DB_PASSWORD}" },
      },
      remote: {
        url: http.url,
        headers: { authorization: "Bearer ${WMCP_TEST_API_TOKEN}" },
      },
    });
    const env = {
      WMCP_TEST_SECRET_DENO: Deno.execPath(),
      WMCP_TEST_API_TOKEN: value,
      WMCP_TEST_PLAIN_VERSION: "2025-06-18",
      WMCP_TEST_DB_PASSWORD: value,
    };
    const r = await runClient(
      ["tools", "call", "echo", "--arguments", "{}", "--config", config, "--server", "fake"],
      { read: [dir], env },
    );
    assertExit(r, 0);
    assert.equal(stdoutJson(r).metadata.protocolVersion, "2025-06-18", "the expansion happened");
    assert.ok(await exists(`${dir}/pid-${value}`), "the secret did reach the argv");
    const warnings = r.stderr.split("\n").filter((l) => l.startsWith("wmcp: warning:"));
    assert.deepEqual(warnings, [
      "wmcp: warning: mcpServers.fake.command expands ${WMCP_TEST_SECRET_DENO} into the " +
      "server's command line, which other local users can read (ps); pass secrets through " +
      '"env" instead',
      `wmcp: warning: mcpServers.fake.args[${
        pagingEntry(dir).args.length + 1
      }] expands \${WMCP_TEST_API_TOKEN} into the server's command line, which other local ` +
      'users can read (ps); pass secrets through "env" instead',
    ], describe(r));
    assert.ok(!r.stderr.includes(value), "the value never appears");
    assert.ok(!r.stdout.includes(value));
    assert.doesNotMatch(r.stderr, /WMCP_TEST_DB_PASSWORD|WMCP_TEST_PLAIN_VERSION/);

    const h = await runClient(
      ["server-info", "--config", config, "--server", "remote"],
      { read: [dir], env },
    );
    assertExit(h, 0);
    assert.equal(h.stderr, "", "no warning for a header expansion");
  } finally {
    await http.stop();
    await removeDir(dir);
  }
});

// ---------------------------------------------------------------------------------------------
// 4. --transport, and the 2025-03-26 / 2024-11-05 revisions in the era matrix

Deno.test("--transport: values, defaults and conflicts are usage errors (exit 2)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-edges-transport-" });
  try {
    const config = await writeConfig(dir, {
      local: pagingEntry(dir),
      remote: { url: "http://127.0.0.1:9/mcp" },
      old: { type: "sse", url: "http://127.0.0.1:9/sse" },
    });
    const cases: [string[], RegExp][] = [
      [["--transport", "websocket"], /--transport must be stdio, http or sse, got "websocket"/],
      [["--transport", "http"], /--transport http needs --endpoint URL/],
      [["--transport", "sse"], /--transport sse needs --endpoint URL/],
      [["--transport", "stdio", "--endpoint", "http://127.0.0.1:9/mcp"], /--endpoint takes/],
      [
        ["--transport", "http", "--config", config, "--server", "local"],
        /--transport http contradicts server local \(stdio\)/,
      ],
      [
        ["--transport", "sse", "--config", config, "--server", "remote"],
        /--transport sse contradicts server remote \(http\)/,
      ],
      [
        ["--bearer-token-env", "HOME", "--config", config, "--server", "remote"],
        /--bearer-token-env applies to --endpoint only/,
      ],
      [["--bearer-token-env", "HOME"], /--bearer-token-env applies to --endpoint only/],
      [
        ["--transport", "http", "--config", config, "--server", "old"],
        /--transport http contradicts server old \(sse\)/,
      ],
      [
        [
          "--transport",
          "sse",
          "--endpoint",
          "http://127.0.0.1:9/sse",
          "--protocol-version",
          "2026-07-28",
        ],
        /HTTP\+SSE transport carries only the initialization era/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await runClient(["server-info", ...args], { read: [dir] });
      const e = assertFailure(r, "usage", 2);
      assert.match(e.message, message, describe(r));
    }
  } finally {
    await removeDir(dir);
  }
});

Deno.test("forced 2025-03-26 and 2024-11-05 against our stdio and HTTP servers: that revision is negotiated and used", async (t) => {
  const root = await makeWorkspace({ "hello.txt": "hi there\n" });
  const server = await startHttpServer(root);
  try {
    for (
      const tr of [
        { name: "stdio", target: ["--root", root] },
        { name: "http", target: ["--endpoint", server.url] },
        {
          name: "http --transport http",
          target: ["--transport", "http", "--endpoint", server.url],
        },
      ]
    ) {
      for (const version of ["2025-03-26", "2024-11-05"]) {
        await t.step(`${tr.name} ${version}`, async () => {
          const info = await runClient(
            ["server-info", ...tr.target, "--protocol-version", version],
            { read: [root] },
          );
          assertExit(info, 0);
          const i = stdoutJson(info);
          assert.equal(i.era, "legacy");
          assert.equal(i.protocolVersion, version);
          assert.equal(i.serverInfo.name, "wmcp");
          const call = await runClient([
            "tools",
            "call",
            "read_file",
            "--arguments",
            '{"path":"hello.txt"}',
            ...tr.target,
            "--protocol-version",
            version,
          ], { read: [root] });
          assertExit(call, 0);
          const env = stdoutJson(call);
          assert.deepEqual(env.metadata, { era: "legacy", protocolVersion: version, rounds: 1 });
          assert.equal(env.mcpResult.structuredContent.content, "hi there\n");
          assert.equal(env.mcpResult.resultType, undefined);
        });
      }
    }
    assert.deepEqual(await lingeringStdioServers(root), []);
  } finally {
    await server.stop();
    await removeDir(root);
  }
});

Deno.test("auto against a legacy-only server that answers 2025-03-26: legacy 2025-03-26; a different forced version is exit 4", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-edges-0326-" });
  try {
    const config = await writeConfig(dir, {
      old: pagingEntry(dir, ["--version", "2025-03-26"]),
    });
    const target = ["--config", config, "--server", "old"];
    const auto = await runClient(["server-info", ...target], { read: [dir] });
    assertExit(auto, 0);
    const i = stdoutJson(auto);
    assert.deepEqual([i.era, i.protocolVersion], ["legacy", "2025-03-26"]);
    const inits = await initializeRequests(dir);
    assert.equal(inits.at(-1).params.protocolVersion, "2025-11-25", "auto offers the newest");

    const call = await runClient(
      ["tools", "call", "echo", "--arguments", '{"message":"hi"}', ...target],
      { read: [dir] },
    );
    assertExit(call, 0);
    assert.deepEqual(stdoutJson(call).metadata, {
      era: "legacy",
      protocolVersion: "2025-03-26",
      rounds: 1,
    });

    const forced = await runClient(
      ["server-info", ...target, "--protocol-version", "2024-11-05"],
      { read: [dir] },
    );
    const e = assertFailure(forced, "protocol", 4);
    assert.match(e.message, /2025-03-26/, describe(forced));
  } finally {
    await removeDir(dir);
  }
});
