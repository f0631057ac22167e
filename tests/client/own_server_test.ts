/**
 * The bundled MCP tool client against this project's own servers: the bundled stdio server
 * (default target) and serve_http.ts (--endpoint), in both protocol eras, as real child
 * processes on 127.0.0.1.
 */
import assert from "node:assert/strict";
import {
  type HttpServerProcess,
  makeWorkspace,
  MODERN,
  READ_TOOLS,
  readFlag,
  SERVE_STDIO,
  startHttpServer,
} from "../server/_harness.ts";
import {
  assertExit,
  assertFailure,
  closedPort,
  describe,
  type Json,
  lingeringStdioServers,
  runClient,
  spawnClient,
  startRecordingProxy,
  stdioServersFor,
  stdoutJson,
  stdoutLines,
} from "./_client.ts";
import { exists, LONG_SEARCH, makeLongSearchTree, removeDir } from "../_support/fs.ts";
import { runTasks } from "../_support/pool.ts";
import { waitForFile } from "../_support/wait.ts";

const FILES = { "hello.txt": "hi there\n", "sub/a.txt": "alpha\n" };

/** The protocol-version flags and what each must negotiate. */
const VERSIONS = [
  { flag: "auto", era: "modern", version: MODERN },
  { flag: MODERN, era: "modern", version: MODERN },
  { flag: "2025-11-25", era: "legacy", version: "2025-11-25" },
  { flag: "2025-06-18", era: "legacy", version: "2025-06-18" },
  { flag: "2024-11-05", era: "legacy", version: "2024-11-05" },
] as const;

/** Asserts one tools/call envelope on stdout (lossless mcp-json) and returns it. */
function callEnvelope(stdout: Json, era: string, version: string): Json {
  assert.equal(stdout.contractVersion, "1");
  assert.equal(stdout.operation, "tools/call");
  assert.equal(stdout.metadata.era, era);
  assert.equal(stdout.metadata.protocolVersion, version);
  assert.equal(typeof stdout.metadata.rounds, "number");
  const r = stdout.mcpResult;
  assert.ok(Array.isArray(r.content), "the received content array is kept");
  if (era === "modern") {
    assert.equal(r.resultType, "complete");
    assert.equal(r._meta["io.modelcontextprotocol/serverInfo"].name, "wmcp");
  } else {
    assert.equal(r.resultType, undefined, "a legacy result has no resultType");
  }
  return stdout;
}

Deno.test("client against its own servers: every command over both transports and every era", async (t) => {
  const root = await makeWorkspace(FILES);
  const server = await startHttpServer(root);
  try {
    const transports = [
      { name: "bundled stdio", target: ["--root", root] },
      { name: "http", target: ["--endpoint", server.url] },
    ];
    const read = [root];
    for (const tr of transports) {
      for (const v of VERSIONS) {
        await t.step(`${tr.name} --protocol-version ${v.flag}`, async () => {
          const base = [...tr.target, "--protocol-version", v.flag];
          const [info, list, show, ok, outside] = await runTasks([
            () => runClient(["server-info", ...base], { read }),
            () => runClient(["tools", "list", ...base], { read }),
            () => runClient(["tools", "show", "read_file", ...base], { read }),
            () =>
              runClient([
                "tools",
                "call",
                "read_file",
                "--arguments",
                '{"path":"hello.txt"}',
                ...base,
              ], { read }),
            () =>
              runClient([
                "tools",
                "call",
                "read_file",
                "--arguments",
                '{"path":"../outside.txt"}',
                ...base,
              ], { read }),
          ]);

          assertExit(info, 0);
          const i = stdoutJson(info);
          assert.equal(i.contractVersion, "1");
          assert.equal(i.operation, "server-info");
          assert.equal(i.era, v.era);
          assert.equal(i.protocolVersion, v.version);
          assert.equal(i.serverInfo.name, "wmcp");
          assert.ok(i.capabilities.tools, "the server's capabilities are shown");
          assert.match(i.instructions, /read-only/);
          if (v.era === "modern") assert.ok(i.supportedVersions.includes(MODERN));

          // tools list: one page (default page size 50), lossless; stdout holds only the envelope.
          assertExit(list, 0);
          assert.equal(list.stderr, "", "--server-logs is off: nothing on stderr");
          const l = stdoutJson(list);
          assert.equal(l.contractVersion, "1");
          assert.equal(l.operation, "tools/list");
          assert.deepEqual(l.metadata, { pageCount: 1, era: v.era, protocolVersion: v.version });
          assert.equal(l.pages.length, 1);
          assert.equal(l.pages[0].requestCursor, null);
          const page = l.pages[0].mcpResult;
          assert.deepEqual(page.tools.map((x: Json) => x.name), READ_TOOLS);
          assert.equal(page.nextCursor, undefined);
          if (v.era === "modern") {
            assert.equal(page.resultType, "complete");
            assert.equal(page.ttlMs, 60000);
            assert.equal(page.cacheScope, "public");
          } else {
            assert.equal(page.resultType, undefined);
            assert.equal(page.ttlMs, undefined);
          }

          assertExit(show, 0);
          const s = stdoutJson(show);
          assert.equal(s.operation, "tools/show");
          assert.equal(s.tool.name, "read_file");
          assert.equal(s.tool.inputSchema.properties.path.type, "string");
          assert.equal(s.tool.annotations.readOnlyHint, true);
          assert.equal(s.metadata.era, v.era);
          assert.equal(s.metadata.protocolVersion, v.version);

          assertExit(ok, 0);
          assert.equal(ok.stderr, "");
          const c = callEnvelope(stdoutJson(ok), v.era, v.version);
          assert.equal(c.metadata.rounds, 1);
          assert.equal(c.mcpResult.isError, undefined);
          assert.equal(c.mcpResult.structuredContent.path, "hello.txt");
          assert.equal(c.mcpResult.structuredContent.content, "hi there\n");
          // The text block is written for a model: a header line, then the file text.
          assert.match(
            c.mcpResult.content[0].text,
            /^\[hello\.txt, lines 1-1 of 1, .*\]\nhi there\n$/,
          );

          // A tool error is exit 1 with the whole envelope on stdout (and no client error).
          assertExit(outside, 1);
          assert.equal(outside.stderr, "", describe(outside));
          const o = callEnvelope(stdoutJson(outside), v.era, v.version);
          assert.equal(o.mcpResult.isError, true);
          assert.equal(o.mcpResult.structuredContent, undefined);
          assert.equal(o.mcpResult._meta["wmcp/error"].code, "OUTSIDE_WORKSPACE");
          assert.equal(o.mcpResult._meta["wmcp/error"].argument, "path");
          assert.match(o.mcpResult.content[0].text, /^OUTSIDE_WORKSPACE: /);
        });
      }

      await t.step(
        `${tr.name}: names are case-sensitive, local validation, unknown version`,
        async () => {
          for (const flag of ["auto", "2025-11-25"]) {
            const base = [...tr.target, "--protocol-version", flag];
            const era = flag === "auto" ? "modern" : "legacy";
            const version = flag === "auto" ? MODERN : flag;
            const [wrongCase, invalid, skipped] = await runTasks([
              () => runClient(["tools", "show", "READ_FILE", ...base], { read }),
              () =>
                runClient(["tools", "call", "read_file", "--arguments", '{"path":5}', ...base], {
                  read,
                }),
              () =>
                runClient([
                  "tools",
                  "call",
                  "read_file",
                  "--arguments",
                  '{"path":5}',
                  "--skip-local-validation",
                  ...base,
                ], { read }),
            ]);
            const w = assertFailure(wrongCase, "usage", 2);
            assert.match(w.message, /READ_FILE/);
            assert.match(w.message, /did you mean read_file/);
            assert.equal(wrongCase.stdout, "");

            // Local validation refuses before anything is sent.
            const e = assertFailure(invalid, "usage", 2);
            assert.match(e.message, /inputSchema/);
            assert.ok(e.details.errors.some((x: string) => x.includes("/path")), describe(invalid));
            assert.equal(invalid.stdout, "");

            // Sent anyway: the server answers with a typed INVALID_ARGUMENT tool error.
            assertExit(skipped, 1);
            const sk = callEnvelope(stdoutJson(skipped), era, version);
            assert.equal(sk.mcpResult.isError, true);
            assert.equal(sk.mcpResult._meta["wmcp/error"].code, "INVALID_ARGUMENT");
            assert.equal(sk.mcpResult._meta["wmcp/error"].argument, "path");
          }
          const unknown = await runClient(
            ["server-info", ...tr.target, "--protocol-version", "2099-01-01"],
            { read },
          );
          const u = assertFailure(unknown, "usage", 2);
          assert.match(u.message, /--protocol-version/);
          assert.equal(unknown.stdout, "");
        },
      );
    }

    await t.step(
      "bundled stdio: --server-logs shows the server's log on stderr, never stdout",
      async () => {
        const r = await runClient(["tools", "list", "--root", root, "--server-logs"], { read });
        assertExit(r, 0);
        const l = stdoutJson(r);
        assert.equal(l.pages[0].mcpResult.tools.length, READ_TOOLS.length);
        assert.match(r.stderr, /wmcp: serving .* over stdio/);
      },
    );
  } finally {
    await server.stop();
    await removeDir(root);
  }
});

Deno.test("client paging: lossless pages, --single-page, --cursor, --max-pages", async (t) => {
  const root = await makeWorkspace(FILES);
  const server = await startHttpServer(root, { args: ["--page-size", "2"] });
  const cfgDir = await Deno.makeTempDir({ prefix: "wmcp-client-cfg-" });
  const read = [root, cfgDir];
  const http = ["--endpoint", server.url];
  try {
    const pagesOf = (l: Json) => l.pages.map((p: Json) => p.mcpResult);
    let firstCursor = "";

    await t.step("modern: the read tools in pages of 2, each kept as received", async () => {
      const r = await runClient(["tools", "list", ...http], { read });
      assertExit(r, 0);
      const l = stdoutJson(r);
      assert.deepEqual(l.metadata, { pageCount: 4, era: "modern", protocolVersion: MODERN });
      const pages = pagesOf(l);
      const sizes = READ_TOOLS.map((_, i) => i).filter((i) => i % 2 === 0)
        .map((i) => Math.min(2, READ_TOOLS.length - i));
      assert.deepEqual(pages.map((p: Json) => p.tools.length), sizes);
      assert.deepEqual(pages.flatMap((p: Json) => p.tools.map((x: Json) => x.name)), READ_TOOLS);
      for (const [n, p] of pages.entries()) {
        assert.equal(p.resultType, "complete");
        assert.equal(p.ttlMs, 60000);
        assert.equal(p.cacheScope, "public");
        if (n < 3) assert.equal(typeof p.nextCursor, "string");
        else assert.ok(!("nextCursor" in p), "the last page has no nextCursor");
      }
      // Each page records the cursor it was requested with.
      assert.deepEqual(
        l.pages.map((p: Json) => p.requestCursor),
        [null, pages[0].nextCursor, pages[1].nextCursor, pages[2].nextCursor],
      );
      firstCursor = pages[0].nextCursor;
    });

    await t.step("forced legacy 2025-11-25: the same pages without modern fields", async () => {
      const r = await runClient(["tools", "list", ...http, "--protocol-version", "2025-11-25"], {
        read,
      });
      assertExit(r, 0);
      const l = stdoutJson(r);
      assert.deepEqual(l.metadata, {
        pageCount: 4,
        era: "legacy",
        protocolVersion: "2025-11-25",
      });
      const pages = pagesOf(l);
      assert.deepEqual(pages.flatMap((p: Json) => p.tools.map((x: Json) => x.name)), READ_TOOLS);
      for (const [n, p] of pages.entries()) {
        assert.ok(!("resultType" in p), "no resultType on a legacy page");
        assert.ok(!("ttlMs" in p) && !("cacheScope" in p));
        assert.equal(typeof p.nextCursor, n < 3 ? "string" : "undefined");
      }
    });

    await t.step("--single-page, --cursor, --max-pages, show across pages", async () => {
      const [single, cursor, capped, show] = await runTasks([
        () => runClient(["tools", "list", "--single-page", ...http], { read }),
        () => runClient(["tools", "list", "--cursor", firstCursor, ...http], { read }),
        () => runClient(["tools", "list", "--max-pages", "2", ...http], { read }),
        () => runClient(["tools", "show", "search_text", ...http], { read }),
      ]);
      assertExit(single, 0);
      const s = stdoutJson(single);
      assert.equal(s.pages.length, 1);
      assert.equal(s.metadata.pageCount, 1);
      assert.equal(s.pages[0].mcpResult.nextCursor, firstCursor, "the next cursor is kept");
      assert.deepEqual(s.pages[0].mcpResult.tools.map((x: Json) => x.name), READ_TOOLS.slice(0, 2));

      assertExit(cursor, 0);
      const c = stdoutJson(cursor);
      assert.equal(c.pages.length, 3);
      assert.equal(c.pages[0].requestCursor, firstCursor);
      assert.deepEqual(
        c.pages.flatMap((p: Json) => p.mcpResult.tools.map((x: Json) => x.name)),
        READ_TOOLS.slice(2),
      );

      const e = assertFailure(capped, "protocol", 4);
      assert.match(e.message, /--max-pages 2/);
      assert.equal(capped.stdout, "");

      assertExit(show, 0);
      const sh = stdoutJson(show);
      assert.equal(sh.tool.name, "search_text");
      assert.equal(sh.metadata.pageCount, 4);
    });

    await t.step("a stdio server from --config pages the same way", async () => {
      const cfg = `${cfgDir}/servers.json`;
      await Deno.writeTextFile(
        cfg,
        JSON.stringify({
          mcpServers: {
            paged: {
              command: Deno.execPath(),
              args: [
                "run",
                "--quiet",
                "--no-prompt",
                readFlag(root),
                SERVE_STDIO,
                "--root",
                root,
                "--page-size",
                "2",
              ],
            },
          },
        }),
      );
      for (const flag of ["auto", "2025-11-25"]) {
        const r = await runClient(
          ["tools", "list", "--config", cfg, "--server", "paged", "--protocol-version", flag],
          { read },
        );
        assertExit(r, 0);
        const l = stdoutJson(r);
        assert.equal(l.metadata.pageCount, 4);
        assert.equal(l.metadata.era, flag === "auto" ? "modern" : "legacy");
        assert.deepEqual(
          l.pages.flatMap((p: Json) => p.mcpResult.tools.map((x: Json) => x.name)),
          READ_TOOLS,
        );
      }
      assert.deepEqual(await lingeringStdioServers(root), []);
    });
  } finally {
    await server.stop();
    await removeDir(root);
    await removeDir(cfgDir);
  }
});

Deno.test("client output modes and argument sources", async (t) => {
  const root = await makeWorkspace(FILES);
  const server = await startHttpServer(root, { args: ["--page-size", "2"] });
  const argsDir = await Deno.makeTempDir({ prefix: "wmcp-client-args-" });
  const read = [root, argsDir];
  const http = ["--endpoint", server.url];
  const call = ["tools", "call", "read_file", "--arguments", '{"path":"hello.txt"}', ...http];
  try {
    await t.step("tools list: json (derived), jsonl (one tool a line), pretty (text)", async () => {
      const [json, jsonl, pretty] = await runTasks([
        () => runClient(["tools", "list", "--output", "json", ...http], { read }),
        () => runClient(["tools", "list", "--output", "jsonl", ...http], { read }),
        () => runClient(["tools", "list", "--output", "pretty", ...http], { read }),
      ]);
      assertExit(json, 0);
      const j = stdoutJson(json);
      assert.equal(j.operation, "tools/list");
      assert.match(j.derived, /not lossless/);
      assert.ok(!("pages" in j) && !("contractVersion" in j));
      assert.deepEqual(j.tools.map((x: Json) => x.name), READ_TOOLS);
      assert.equal(j.metadata.pageCount, 4);
      assert.equal(j.metadata.toolCount, READ_TOOLS.length);
      assert.equal(j.metadata.era, "modern");

      assertExit(jsonl, 0);
      const lines = stdoutLines(jsonl);
      assert.deepEqual(lines.map((x: Json) => x.name), READ_TOOLS);
      assert.ok(lines.every((x: Json) => typeof x.inputSchema === "object"));

      assertExit(pretty, 0);
      assert.equal(pretty.stderr, "");
      assert.ok(!pretty.stdout.trimStart().startsWith("{"), "pretty is not JSON");
      // A table: name, access, argument signature (required first, optional in brackets).
      assert.match(pretty.stdout, /^TOOL +ACCESS +ARGUMENTS$/m);
      assert.match(pretty.stdout, /^read_file +read-only +path, \[startLine\], \[endLine\]/m);
      assert.match(
        pretty.stdout,
        new RegExp(`^${READ_TOOLS.length} tools, 4 page\\(s\\), modern 2026-07-28$`, "m"),
      );
    });

    await t.step("tools call: json, jsonl, pretty", async () => {
      const [json, jsonl, pretty] = await runTasks([
        () => runClient([...call, "--output", "json"], { read }),
        () => runClient([...call, "--output", "jsonl"], { read }),
        () => runClient([...call, "--output", "pretty"], { read }),
      ]);
      assertExit(json, 0);
      const j = stdoutJson(json);
      assert.equal(j.operation, "tools/call");
      assert.match(j.derived, /not lossless/);
      assert.equal(j.isError, false);
      assert.equal(j.structuredContent.content, "hi there\n");
      assert.equal(j.text[0], j.text[0].split("\n")[0] + "\nhi there\n", "header, then the text");
      assert.ok(!("error" in j) && !("media" in j));
      assert.equal(j.metadata.era, "modern");
      assert.ok(!("mcpResult" in j));

      assertExit(jsonl, 0);
      assert.deepEqual(stdoutJson(jsonl), j);

      assertExit(pretty, 0);
      assert.ok(
        !pretty.stdout.includes("contractVersion"),
        "pretty shows the content, no envelope",
      );
      // The file's text as text, after its header line; one final newline, not two.
      assert.equal(pretty.stdout, j.text[0], "pretty prints the header and the text");
    });

    await t.step("tools call: derived views show the typed error and the media block", async () => {
      const tool = (name: string, args: string, output: string) =>
        runClient(["tools", "call", name, "--arguments", args, ...http, "--output", output], {
          read,
        });
      const [err, errPretty, media, mediaPretty] = await runTasks([
        () => tool("read_file", '{"path":"../x"}', "json"),
        () => tool("read_file", '{"path":"../x"}', "pretty"),
        () => tool("read_media", '{"path":"hello.txt"}', "json"),
        () => tool("read_media", '{"path":"hello.txt"}', "pretty"),
      ]);
      assertExit(err, 1);
      const e = stdoutJson(err);
      assert.equal(e.isError, true);
      assert.equal(e.error.code, "OUTSIDE_WORKSPACE");
      assert.equal(e.error.argument, "path");
      assert.equal(e.structuredContent, null);
      assert.match(e.text[0], /^OUTSIDE_WORKSPACE: /);
      assertExit(errPretty, 1);
      assert.equal(errPretty.stdout, e.text[0] + "\n");

      assertExit(media, 0);
      const m = stdoutJson(media);
      assert.deepEqual(m.media, [{
        type: "resource",
        mimeType: "text/plain",
        uri: "wmcp://workspace/hello.txt",
        bytes: 9,
      }]);
      assert.equal(m.structuredContent.size, 9);
      assert.ok(!("data" in m.structuredContent));
      assertExit(mediaPretty, 0);
      // One summary line; the bytes are for programs.
      assert.equal(
        mediaPretty.stdout,
        `hello.txt: text/plain, 9 bytes, sha256 ${m.structuredContent.sha256}\n`,
      );
    });

    await t.step("pretty failures are human text on stderr", async () => {
      const r = await runClient(["tools", "show", "READ_FILE", "--output", "pretty", ...http], {
        read,
      });
      assertExit(r, 2);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, /^error \(usage\): no tool named "READ_FILE"/);
    });

    await t.step("--arguments-file, --arguments-stdin; two sources are a usage error", async () => {
      const file = `${argsDir}/args.json`;
      await Deno.writeTextFile(file, '{"path":"sub/a.txt"}');
      const base = ["tools", "call", "read_file", ...http];
      const [fromFile, fromStdin, two, bad] = await runTasks([
        () => runClient([...base, "--arguments-file", file], { read }),
        () => runClient([...base, "--arguments-stdin"], { read, stdin: '{"path":"sub/a.txt"}\n' }),
        () => runClient([...base, "--arguments-file", file, "--arguments", "{}"], { read }),
        () => runClient([...base, "--arguments", "[1]"], { read }),
      ]);
      for (const r of [fromFile, fromStdin]) {
        assertExit(r, 0);
        assert.equal(stdoutJson(r).mcpResult.structuredContent.content, "alpha\n");
      }
      const e = assertFailure(two, "usage", 2);
      assert.match(e.message, /at most one/);
      assert.equal(two.stdout, "");
      assertFailure(bad, "usage", 2);
    });
  } finally {
    await server.stop();
    await removeDir(root);
    await removeDir(argsDir);
  }
});

Deno.test("tools run: JSONL of calls, --keep-going, worst exit code, invalid lines", async (t) => {
  const root = await makeWorkspace(FILES);
  const dir = await Deno.makeTempDir({ prefix: "wmcp-client-run-" });
  const read = [root, dir];
  try {
    const calls = `${dir}/calls.jsonl`;
    await Deno.writeTextFile(
      calls,
      [
        '{"name":"read_file","arguments":{"path":"hello.txt"}}',
        "",
        '{"name":"read_file","arguments":{"path":"../outside.txt"}}',
        '{"name":"workspace_info"}',
        "",
      ].join("\n"),
    );
    const invalid = `${dir}/invalid.jsonl`;
    await Deno.writeTextFile(
      invalid,
      [
        '{"name":"workspace_info"}',
        "this is not json",
        '{"name":"read_file","arguments":{"path":"../outside.txt"}}',
      ].join("\n"),
    );
    const base = ["--root", root];
    const [keepGoing, stops, bad, badStop, stdin] = await runTasks([
      () => runClient(["tools", "run", calls, "--keep-going", ...base], { read }),
      () => runClient(["tools", "run", calls, ...base], { read }),
      () => runClient(["tools", "run", invalid, "--keep-going", ...base], { read }),
      () => runClient(["tools", "run", invalid, ...base], { read }),
      async () =>
        runClient(["tools", "run", "-", "--keep-going", ...base], {
          read,
          stdin: await Deno.readTextFile(calls),
        }),
    ]);

    await t.step("--keep-going: three envelopes with index and line, exit 1", () => {
      for (const r of [keepGoing, stdin]) {
        assertExit(r, 1);
        const out = stdoutLines(r);
        assert.equal(out.length, 3, describe(r));
        assert.deepEqual(out.map((x: Json) => [x.index, x.line]), [[0, 1], [1, 3], [2, 4]]);
        for (const x of out) {
          assert.equal(x.contractVersion, "1");
          assert.equal(x.operation, "tools/call");
          assert.equal(x.metadata.era, "modern");
        }
        assert.equal(out[0].mcpResult.structuredContent.content, "hi there\n");
        assert.equal(out[1].mcpResult.isError, true);
        assert.equal(out[1].mcpResult._meta["wmcp/error"].code, "OUTSIDE_WORKSPACE");
        assert.equal(out[2].mcpResult.structuredContent.mode, "read-only");
      }
    });

    await t.step("without --keep-going: stops after the failing call", () => {
      assertExit(stops, 1);
      const out = stdoutLines(stops);
      assert.deepEqual(out.map((x: Json) => x.index), [0, 1]);
      assert.equal(out[1].mcpResult.isError, true);
    });

    await t.step("an invalid line is a usage envelope; the worst exit code wins", () => {
      assertExit(bad, 2);
      const out = stdoutLines(bad);
      assert.equal(out.length, 3, describe(bad));
      assert.equal(out[0].mcpResult.structuredContent.mode, "read-only");
      assert.equal(out[1].index, 1);
      assert.equal(out[1].line, 2);
      assert.equal(out[1].clientError.class, "usage");
      assert.equal(out[1].clientError.exitCode, 2);
      assert.ok(!("mcpResult" in out[1]));
      assert.equal(out[2].mcpResult.isError, true);

      assertExit(badStop, 2);
      assert.deepEqual(stdoutLines(badStop).map((x: Json) => x.index), [0, 1]);
    });
  } finally {
    await removeDir(root);
    await removeDir(dir);
  }
});

Deno.test("client bearer token from --bearer-token-env; never printed", async () => {
  const token = `tok-${crypto.randomUUID()}`;
  const root = await makeWorkspace(FILES);
  const server = await startHttpServer(root, { env: { WMCP_TOKEN: token } });
  const read = [root];
  try {
    const http = ["--endpoint", server.url];
    const call = ["tools", "call", "read_file", "--arguments", '{"path":"hello.txt"}', ...http];
    const runs = await runTasks(
      ["auto", "2025-11-25"].flatMap((flag) => {
        const v = ["--protocol-version", flag];
        return [
          () =>
            runClient([...call, ...v, "--bearer-token-env", "WMCP_TEST_BEARER"], {
              read,
              env: { WMCP_TEST_BEARER: token },
            }),
          () => runClient([...call, ...v], { read }),
          () =>
            runClient([...call, ...v, "--bearer-token-env", "WMCP_TEST_BEARER"], {
              read,
              env: { WMCP_TEST_BEARER: `${token}-wrong` },
            }),
          () => runClient(["tools", "list", ...http, ...v], { read }),
        ];
      }),
    );
    for (let i = 0; i < runs.length; i += 4) {
      const [good, none, wrong, list] = runs.slice(i, i + 4);
      assertExit(good, 0);
      assert.equal(stdoutJson(good).mcpResult.structuredContent.content, "hi there\n");
      // A 401 is an HTTP-level refusal: the SDK raises an SdkHttpError (status 401), not a
      // JSON-RPC error, so the client classifies it as a transport failure.
      for (const r of [none, wrong, list]) {
        assertFailure(r, "transport", 3);
        assert.equal(r.stdout, "");
      }
    }
    for (const r of runs) {
      assert.ok(!r.stdout.includes(token) && !r.stderr.includes(token), "the token never leaks");
    }
    const unset = await runClient([...call, "--bearer-token-env", "WMCP_TEST_UNSET_VAR"], { read });
    assertFailure(unset, "usage", 2);
  } finally {
    await server.stop();
    await removeDir(root);
  }
});

Deno.test("client confirmation through --input-responses-file and --non-interactive", async (t) => {
  const root = await makeWorkspace(FILES);
  const server = await startHttpServer(root, { write: true });
  const dir = await Deno.makeTempDir({ prefix: "wmcp-client-answers-" });
  const read = [root, dir];
  try {
    const accept = `${dir}/accept.json`;
    const decline = `${dir}/decline.json`;
    await Deno.writeTextFile(
      accept,
      JSON.stringify({ responses: [{ action: "accept", content: { confirm: true } }] }),
    );
    await Deno.writeTextFile(decline, JSON.stringify({ responses: [{ action: "decline" }] }));
    const transports = [
      { name: "bundled", target: ["--root", root, "--write"] },
      { name: "http", target: ["--endpoint", server.url] },
    ];
    for (const tr of transports) {
      for (const flag of ["auto", "2025-11-25"]) {
        await t.step(`${tr.name} ${flag}`, async () => {
          const modern = flag === "auto";
          const name = (kind: string) => `victim-${tr.name}-${flag}-${kind}.txt`;
          for (const kind of ["accept", "decline", "none"]) {
            await Deno.writeTextFile(`${root}/${name(kind)}`, "x");
          }
          const del = (kind: string, extra: string[]) =>
            runClient([
              "tools",
              "call",
              "delete_path",
              "--arguments",
              JSON.stringify({ path: name(kind) }),
              ...tr.target,
              "--protocol-version",
              flag,
              ...extra,
            ], { read });
          const [acc, dec, none] = await runTasks([
            () => del("accept", ["--input-responses-file", accept]),
            () => del("decline", ["--input-responses-file", decline]),
            () => del("none", ["--non-interactive"]),
          ]);

          assertExit(acc, 0);
          const a = stdoutJson(acc);
          assert.equal(a.mcpResult.structuredContent.deleted, true);
          assert.equal(a.metadata.era, modern ? "modern" : "legacy");
          // Modern: input_required, then the retry with the answer; legacy: elicitation/create
          // inside the one tools/call.
          assert.equal(a.metadata.rounds, modern ? 2 : 1);
          assert.equal(await exists(`${root}/${name("accept")}`), false);

          assertExit(dec, 1);
          const d = stdoutJson(dec);
          assert.equal(d.mcpResult.isError, true);
          assert.equal(d.mcpResult._meta["wmcp/error"].code, "CONFIRMATION_REQUIRED");
          assert.equal(d.mcpResult._meta["wmcp/error"].details.action, "decline");
          assert.equal(await exists(`${root}/${name("decline")}`), true);

          // Non-interactive: the client does not advertise elicitation, so the server says so.
          assertExit(none, 1);
          const n = stdoutJson(none);
          assert.equal(n.mcpResult.isError, true);
          assert.equal(n.mcpResult._meta["wmcp/error"].code, "CONFIRMATION_REQUIRED");
          assert.match(
            n.mcpResult._meta["wmcp/error"].message,
            /did not declare the elicitation capability/,
          );
          assert.match(n.mcpResult.content[0].text, /^CONFIRMATION_REQUIRED: .*confirm: true/);
          assert.equal(n.metadata.rounds, 1);
          assert.equal(await exists(`${root}/${name("none")}`), true);
        });
      }
    }
    assert.deepEqual(await lingeringStdioServers(root), []);
  } finally {
    await server.stop();
    await removeDir(root);
    await removeDir(dir);
  }
});

Deno.test("client transport failures: closed port, missing command", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-client-tr-" });
  try {
    const cfg = `${dir}/servers.json`;
    await Deno.writeTextFile(
      cfg,
      JSON.stringify({
        mcpServers: { ghost: { command: `${dir}/no-such-server`, args: ["--stdio"] } },
      }),
    );
    const port = closedPort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const read = [dir];
    const runs = await runTasks([
      ...["auto", MODERN, "2025-11-25"].map((flag) => () =>
        runClient(["tools", "list", "--endpoint", url, "--protocol-version", flag], { read })
      ),
      () => runClient(["server-info", "--config", cfg, "--server", "ghost"], { read }),
      () =>
        runClient([
          "tools",
          "list",
          "--config",
          cfg,
          "--server",
          "ghost",
          "--protocol-version",
          "2025-11-25",
        ], { read }),
    ]);
    for (const r of runs) {
      assertFailure(r, "transport", 3);
      assert.equal(r.stdout, "");
    }
  } finally {
    await removeDir(dir);
  }
});

// When connecting fails (here: --connect-timeout on a stdio server that never answers), the
// SDK has already forgotten the child; the session kills it from the pid it recorded at start,
// so a configured server that ignores stdin EOF does not outlive the client.
Deno.test({
  name: "a stdio server that never answers is stopped after the connect timeout",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "wmcp-client-mute-" });
    // A unique duration marks this test's processes in `ps`.
    const marker = `sleep 777.${Math.floor(Math.random() * 1e6)}`;
    const left = async () => {
      const out = await new Deno.Command("ps", { args: ["-eo", "pid=,args="], stdout: "piped" })
        .output();
      return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l.endsWith(marker));
    };
    try {
      const cfg = `${dir}/servers.json`;
      const [command, arg] = marker.split(" ");
      await Deno.writeTextFile(
        cfg,
        JSON.stringify({ mcpServers: { mute: { command, args: [arg] } } }),
      );
      for (const flag of ["auto", "2025-11-25"]) {
        const r = await runClient([
          "server-info",
          "--config",
          cfg,
          "--server",
          "mute",
          "--connect-timeout",
          "0.5",
          "--protocol-version",
          flag,
        ], { read: [dir] });
        const e = assertFailure(r, "timeout", 7);
        // The SDK's connect (or probe) timer fired: mapped to the client's one timeout message.
        assert.equal(
          e.message,
          "timed out: no response within the client's time limits (--connect-timeout 0.5 s)",
        );
      }
      let still = await left();
      for (let i = 0; i < 40 && still.length > 0; i++) {
        await sleep(50);
        still = await left();
      }
      assert.deepEqual(still, [], "the unanswering server was left running");
    } finally {
      for (const l of await left()) {
        try {
          Deno.kill(Number(l.trim().split(/\s+/)[0]), "SIGKILL");
        } catch { /* gone */ }
      }
      await removeDir(dir);
    }
  },
});

const makeLongTree = () => makeLongSearchTree("wmcp-client-long-");

/** How long a whole search of the long tree may take on a loaded machine (ms). */
const LONG_CALL_MS = 600_000;

/** search_text arguments that cross every line of the long tree and match nothing. */
const SLOW_SEARCH = JSON.stringify(LONG_SEARCH);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Interrupts (SIGINT) a client's long search_text over HTTP, through a recording proxy, once
 * the call is running on the server (its first progress notification came back: the server
 * sends one when the call starts); returns the run, what the proxy saw, and whether the
 * server logged that it cancelled the operation.
 */
async function interruptOverHttp(root: string, server: HttpServerProcess, flag: string) {
  const proxy = startRecordingProxy(server.url);
  try {
    const logged = server.stderr().split('"event":"cancelled"').length;
    const run = spawnClient([
      "tools",
      "call",
      "search_text",
      "--endpoint",
      proxy.url,
      "--arguments",
      SLOW_SEARCH,
      "--protocol-version",
      flag,
    ], { read: [root] });
    await proxy.seen("tools/call");
    await proxy.seenProgress();
    run.child.kill("SIGINT");
    const r = await run.done;
    // The server stops a cancelled operation within 100 ms; the wait ends on its log line (the
    // limit only bounds a failure, for a loaded machine).
    const cancelled = await server.waitStderr(
      (text) => text.split('"event":"cancelled"').length > logged,
      10_000,
    );
    return { r, requests: [...proxy.requests], cancelled };
  } finally {
    await proxy.close();
  }
}

const HOLD_SERVER = new URL("./fixtures/hold_server.ts", import.meta.url).pathname;
const DENO_CONFIG = new URL("../../deno.json", import.meta.url).pathname;

/**
 * The client's inactivity timeout in the fixture tests (s): thirty progress intervals
 * (PROGRESS_INTERVAL_MS is 100 ms), so a busy machine that delays a notification (or the first
 * tools/list answer of a fresh server) by a second or two still gets through in time.
 */
const HOLD_TIMEOUT_S = 3;

/** A temp dir with an mcp.json naming the hold fixture (stdio) as server "hold". */
async function holdFixture(): Promise<{ dir: string; config: string }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-client-hold-" }));
  const config = `${dir}/mcp.json`;
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      mcpServers: {
        hold: {
          command: Deno.execPath(),
          args: ["run", "--quiet", "-A", "--config", DENO_CONFIG, HOLD_SERVER],
        },
      },
    }),
  );
  return { dir, config };
}

/** Starts a client calling the fixture's `tool`; its marker files go to a fresh subdirectory. */
async function callHold(
  fixture: { dir: string; config: string },
  o: { tool: "hold" | "mute"; flag: string; limits: string[]; extra?: string[] },
) {
  const marks = await Deno.makeTempDir({ dir: fixture.dir, prefix: `${o.tool}-` });
  const run = spawnClient([
    "tools",
    "call",
    o.tool,
    "--config",
    fixture.config,
    "--server",
    "hold",
    "--protocol-version",
    o.flag,
    "--arguments",
    JSON.stringify({ dir: marks }),
    ...o.limits,
    ...(o.extra ?? []),
  ], { read: [fixture.dir] });
  // Each resolves when the fixture writes its marker (a watcher on the directory), false after ms.
  const started = (ms = 30_000) => waitForFile(`${marks}/started`, ms);
  const cancelled = (ms = 10_000) => waitForFile(`${marks}/cancelled`, ms);
  return { run, marks, started, cancelled };
}

// Each of these orders its steps on what the fixture server did (DIR/started, DIR/cancelled)
// and on outcomes, never on how fast the machine is: the call lasts as long as the test says.
Deno.test("client timers against a call whose length the test controls", async (t) => {
  const fixture = await holdFixture();
  const limits = ["--timeout", String(HOLD_TIMEOUT_S)];
  try {
    for (const flag of ["auto", "2025-11-25"]) {
      await t.step(
        `${flag}: progress resets the inactivity timer (held 2.5 x --timeout)`,
        async () => {
          const call = await callHold(fixture, { tool: "hold", flag, limits });
          assert.ok(await call.started(), "the call never started");
          // The call outlives the inactivity timeout two and a half times by the test's own
          // clock; only progress resetting the timer lets it complete.
          await sleep(HOLD_TIMEOUT_S * 2500);
          await Deno.writeTextFile(`${call.marks}/release`, "");
          const r = await call.run.done;
          assertExit(r, 0);
          const text = JSON.parse(stdoutJson(r).mcpResult.content[0].text);
          assert.equal(text.released, true);
          assert.ok(
            !(await exists(`${call.marks}/cancelled`)),
            "a completed call was not cancelled",
          );
        },
      );
    }

    await t.step(
      "the same call without progress ends on the inactivity timer, and is cancelled",
      async () => {
        const call = await callHold(fixture, { tool: "mute", flag: "auto", limits });
        // Never released: only the client's inactivity timer can end it.
        const r = await call.run.done;
        const e = assertFailure(r, "timeout", 7);
        assert.equal(e.details.timer, "inactivity", describe(r));
        assert.ok(await exists(`${call.marks}/started`), "the call had started");
        assert.ok(
          await call.cancelled(),
          "the server never saw the cancellation",
        );
      },
    );

    for (const flag of ["auto", "2025-11-25"]) {
      await t.step(
        `${flag}: --max-timeout holds while progress arrives; one message whichever timer fires`,
        async () => {
          const both = [...limits, "--max-timeout", String(HOLD_TIMEOUT_S * 2)];
          // Never released: `hold` keeps progress flowing, so only the total timer can end it;
          // `mute` sends none, so its inactivity timer fires first.
          // One at a time up to the call (a fresh client and server each; starting them all at
          // once on a busy machine only adds contention), then all three run out together.
          const started = async (c: Awaited<ReturnType<typeof callHold>>) => {
            assert.ok(await c.started(), "the call never started");
            return c;
          };
          const hold = await started(await callHold(fixture, { tool: "hold", flag, limits: both }));
          const json = await started(
            await callHold(fixture, {
              tool: "hold",
              flag,
              limits: both,
              extra: ["--output", "json"],
            }),
          );
          const mute = await started(await callHold(fixture, { tool: "mute", flag, limits: both }));
          const [rh, rj, rm] = await Promise.all([hold.run.done, json.run.done, mute.run.done]);
          const eh = assertFailure(rh, "timeout", 7);
          const em = assertFailure(rm, "timeout", 7);
          assert.equal(eh.details.timer, "total", describe(rh));
          assert.equal(em.details.timer, "inactivity", describe(rm));
          assert.equal(eh.message, em.message, "one message whichever timer fires");
          assert.match(
            eh.message,
            new RegExp(
              `^timed out: .*--timeout ${HOLD_TIMEOUT_S} s.*--max-timeout ${2 * HOLD_TIMEOUT_S} s`,
            ),
          );
          // The lossless envelope says no result arrived; the derived view has nothing to show
          // (it must not claim isError: false for a call that never completed).
          assert.ok(!("mcpResult" in stdoutJson(rh)), describe(rh));
          assert.equal(assertFailure(rj, "timeout", 7).details.timer, "total");
          assert.equal(rj.stdout, "", describe(rj));
          for (const c of [hold, json, mute]) {
            assert.ok(
              await c.cancelled(),
              `the server never saw the cancellation of ${c.marks}`,
            );
          }
        },
      );
    }

    await t.step(
      "SIGINT during the call: exit 7, and the server sees the cancellation",
      async () => {
        const call = await callHold(fixture, { tool: "hold", flag: "auto", limits });
        assert.ok(await call.started(), "the call never started");
        call.run.child.kill("SIGINT");
        const r = await call.run.done;
        const e = assertFailure(r, "timeout", 7);
        assert.match(e.message, /interrupted|cancelled/);
        assert.ok(await call.cancelled(), "the server never saw it");
      },
    );
  } finally {
    await removeDir(fixture.dir);
  }
});

Deno.test("client timeouts and cancellation on a long search_text", async (t) => {
  const long = await makeLongTree();
  const read = [long];
  const search = ["tools", "call", "search_text", "--root", long, "--arguments", SLOW_SEARCH];
  try {
    await t.step(
      "a long search completes under an inactivity timeout reset by progress",
      async () => {
        // The search takes seconds (about 6 on an idle machine), several times the 2 s
        // inactivity timer; the server's progress cadence (every 100 ms, from the start of the
        // call, its walk included: 20 intervals, so a busy machine cannot make it fire) keeps
        // resetting it. On a loaded machine the same search takes a minute or more, past the
        // bundled server's 60 s time budget, so this one call goes to the same server started
        // from --config with a budget (and a run limit) no load reaches: the step waits for the
        // search to end, however long that takes, and asserts what it asserted.
        const cfgDir = await Deno.makeTempDir({ prefix: "wmcp-client-long-cfg-" });
        const cfg = `${cfgDir}/servers.json`;
        await Deno.writeTextFile(
          cfg,
          JSON.stringify({
            mcpServers: {
              long: {
                command: Deno.execPath(),
                args: [
                  "run",
                  "--quiet",
                  "--no-prompt",
                  readFlag(long),
                  SERVE_STDIO,
                  "--root",
                  long,
                  "--limit",
                  `maxOperationMs=${LONG_CALL_MS}`,
                ],
              },
            },
          }),
        );
        const r = await runClient(
          [
            "tools",
            "call",
            "search_text",
            "--config",
            cfg,
            "--server",
            "long",
            "--arguments",
            SLOW_SEARCH,
            "--timeout",
            "2",
          ],
          { read: [long, cfgDir], timeoutMs: LONG_CALL_MS },
        ).finally(() => removeDir(cfgDir));
        assertExit(r, 0);
        const c = stdoutJson(r);
        assert.equal(c.mcpResult.structuredContent.filesSearched, 2000);
        assert.equal(c.mcpResult.structuredContent.matches.length, 0);
      },
    );

    await t.step("SIGINT during the run: exit 7 and the bundled server is gone", async () => {
      const run = spawnClient(search, { read });
      // The SIGINT listener is in place before the server is spawned: whether the signal lands
      // while connecting or during the call, the client stops with exit 7 and stops the server.
      const deadline = Date.now() + 30_000;
      while ((await stdioServersFor(long)).length === 0) {
        assert.ok(Date.now() < deadline, "the bundled server never started");
        await sleep(25);
      }
      run.child.kill("SIGINT");
      const r = await run.done;
      const e = assertFailure(r, "timeout", 7);
      assert.match(e.message, /interrupted|cancelled/);
      assert.deepEqual(await lingeringStdioServers(long, 10_000), [], "the bundled server is gone");
    });

    await t.step(
      "modern HTTP: SIGINT closes the request's stream; the server cancels",
      async () => {
        const server = await startHttpServer(long);
        try {
          const { r, cancelled } = await interruptOverHttp(long, server, "auto");
          assertFailure(r, "timeout", 7);
          assert.ok(cancelled, `the server did not cancel the search: ${server.stderr()}`);
        } finally {
          await server.stop();
        }
      },
    );
  } finally {
    await removeDir(long);
  }
});

// The SDK sends notifications/cancelled without awaiting it; closing the HTTP transport at
// once would abort that POST and the legacy server would run the operation to completion.
// Session.close lets pending sends settle (at most 1 s) first.
Deno.test({
  name: "legacy HTTP: an interrupted call is cancelled on the server (notifications/cancelled)",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const root = await makeLongTree();
    const server = await startHttpServer(root);
    try {
      const { r, requests, cancelled } = await interruptOverHttp(root, server, "2025-11-25");
      assertFailure(r, "timeout", 7);
      assert.ok(requests.some((x) => x.rpc === "notifications/cancelled"), "cancel was sent");
      assert.ok(cancelled, `the server did not cancel the search: ${server.stderr()}`);
    } finally {
      await server.stop();
      await removeDir(root);
    }
  },
});

// A legacy HTTP session is ended with DELETE (transport.terminateSession) when the client is
// done; otherwise each run would hold a server session until its 30-minute idle sweep.
Deno.test({
  name: "legacy HTTP: the client ends its session with DELETE",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const root = await makeWorkspace(FILES);
    const server = await startHttpServer(root);
    const proxy = startRecordingProxy(server.url);
    try {
      const r = await runClient(
        ["server-info", "--endpoint", proxy.url, "--protocol-version", "2025-11-25"],
        { read: [root] },
      );
      assertExit(r, 0);
      const init = proxy.requests.find((x) => x.sessionId !== null);
      assert.ok(init, "the session was used");
      assert.ok(
        proxy.requests.some((x) => x.httpMethod === "DELETE" && x.sessionId === init.sessionId),
        `no DELETE for the session: ${JSON.stringify(proxy.requests)}`,
      );
    } finally {
      await proxy.close();
      await server.stop();
      await removeDir(root);
    }
  },
});
