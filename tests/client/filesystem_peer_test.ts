/**
 * The bundled MCP tool client (`cli.ts server-info | tools ...`, run as a real child) against
 * the MCP reference filesystem server `@modelcontextprotocol/server-filesystem` 2026.8.31,
 * run with Node over stdio through a `--config` file, serving one temporary directory.
 *
 * The server is installed by this file with `npm ci` from the pinned pair
 * fixtures/server-filesystem.package{,-lock}.json into a temporary directory, unless
 * WMCP_SERVER_FILESYSTEM_DIR names a directory where that install was already done.
 *
 * What the server sends is also captured here without the client (a raw JSON-RPC exchange
 * with the same server over stdio), so the client's lossless envelope is compared with the
 * wire, byte for byte.
 */
import assert from "node:assert/strict";
import {
  assertExit,
  assertFailure,
  describe,
  type Json,
  runClient,
  stdoutJson,
  stdoutLines,
} from "./_client.ts";
import { installNpmFixture } from "./_npm_fixture.ts";

const VERSION = "2026.8.31";
const LEGACY = { era: "legacy", protocolVersion: "2025-11-25" };
const TOOL_NAMES = [
  "read_file",
  "read_text_file",
  "read_media_file",
  "read_multiple_files",
  "write_file",
  "edit_file",
  "create_directory",
  "list_directory",
  "list_directory_with_sizes",
  "directory_tree",
  "move_file",
  "search_files",
  "get_file_info",
  "list_allowed_directories",
];
const NOTES = "first line\nsecond line\nthird line\n";
const SECRET = "outside the served directory\n";

/**
 * tools/list exactly as the server answers it: initialize (no client capabilities, so no
 * roots request), notifications/initialized, tools/list, over the server's own stdio.
 */
async function rawToolsList(entry: string, served: string): Promise<string> {
  const child = new Deno.Command("node", {
    args: [entry, served],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const send = (m: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  const next = async (id: number): Promise<string> => {
    while (true) {
      const nl = buf.indexOf("\n");
      if (nl !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (JSON.parse(line).id === id) return line;
        continue;
      }
      const { value, done } = await lines.read();
      if (done) throw new Error(`the server closed stdout before answering request ${id}`);
      buf += value;
    }
  };
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "raw-wire-capture", version: "0" },
      },
    });
    await next(1);
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
    const line = await next(2);
    // The result's own text, as sent (JSON.parse/stringify keeps the key order).
    return JSON.stringify(JSON.parse(line).result);
  } finally {
    clearTimeout(timer);
    await writer.close().catch(() => {});
    await lines.cancel().catch(() => {});
    try {
      child.kill("SIGTERM");
    } catch { /* gone */ }
    await child.status;
  }
}

/** Command lines of live processes running the filesystem server on `served`. */
async function serversFor(entry: string, served: string): Promise<string[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "args"], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) =>
    l.includes(entry) && l.includes(served)
  );
}

Deno.test(`server-filesystem ${VERSION} over stdio (config file): lossless list, show, call, run; outside the allowed directory is the server's isError (exit 1)`, async (t) => {
  const install = await installNpmFixture({
    name: "server-filesystem",
    packageName: "@modelcontextprotocol/server-filesystem",
    version: VERSION,
    reuseEnv: "WMCP_SERVER_FILESYSTEM_DIR",
  });
  const entry = `${install.packageDir}/dist/index.js`;
  // The real path: the server compares resolved paths (on macOS /tmp is a symlink).
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-peers-filesystem-" }));
  const served = `${base}/served`;
  const outside = `${base}/outside`;
  const clientDir = `${base}/client`;
  try {
    for (const d of [served, `${served}/docs`, outside, clientDir]) await Deno.mkdir(d);
    await Deno.writeTextFile(`${served}/notes.txt`, NOTES);
    await Deno.writeTextFile(`${served}/docs/readme.md`, "# docs\n");
    await Deno.writeTextFile(`${outside}/secret.txt`, SECRET);
    await Deno.symlink(`${outside}/secret.txt`, `${served}/escape.txt`);

    const config = `${clientDir}/mcp.json`;
    await Deno.writeTextFile(
      config,
      JSON.stringify({ mcpServers: { fs: { command: "node", args: [entry, served] } } }, null, 2),
    );
    const target = ["--config", config, "--server", "fs"];
    // The client reads only its own directory (config, JSONL); the server reads `served`.
    const opts = { read: [clientDir] };
    const call = (name: string, args: Json, extra: string[] = []) =>
      runClient(
        ["tools", "call", name, "--arguments", JSON.stringify(args), ...target, ...extra],
        opts,
      );

    const wire = await rawToolsList(entry, served);
    const wireResult = JSON.parse(wire);

    await t.step("server-info: legacy 2025-11-25 after the auto probe", async () => {
      const r = await runClient(["server-info", ...target, "--output", "json"], opts);
      assertExit(r, 0);
      assert.deepEqual(stdoutJson(r), {
        ...LEGACY,
        serverInfo: { name: "secure-filesystem-server", version: "0.2.0" },
        capabilities: { tools: { listChanged: true } },
        instructions: null,
      });
    });

    await t.step("tools list: one page, exactly as sent; json keeps every tool", async () => {
      const r = await runClient(["tools", "list", ...target, "--output", "mcp-json"], opts);
      assertExit(r, 0);
      const env = stdoutJson(r);
      assert.equal(env.contractVersion, "1");
      assert.equal(env.operation, "tools/list");
      assert.deepEqual(env.metadata, { pageCount: 1, ...LEGACY });
      assert.equal(env.pages.length, 1);
      assert.equal(env.pages[0].requestCursor, null);
      assert.ok(!("nextCursor" in env.pages[0].mcpResult), "the only page has no nextCursor");
      // Lossless: the page is the wire result, same keys, same order, nothing added.
      assert.equal(JSON.stringify(env.pages[0].mcpResult), wire);
      assert.deepEqual(env.pages[0].mcpResult.tools.map((x: Json) => x.name), TOOL_NAMES);
      // Fields beyond name/inputSchema survive (title, annotations, execution, outputSchema).
      const read = env.pages[0].mcpResult.tools[1];
      assert.deepEqual(Object.keys(read), [
        "name",
        "title",
        "description",
        "inputSchema",
        "annotations",
        "execution",
        "outputSchema",
      ]);
      assert.deepEqual(read.execution, { taskSupport: "forbidden" });

      const derived = await runClient(["tools", "list", ...target, "--output", "json"], opts);
      assertExit(derived, 0);
      const d = stdoutJson(derived);
      assert.equal(typeof d.derived, "string");
      assert.deepEqual(d.tools, wireResult.tools);
      assert.deepEqual(d.metadata, { pageCount: 1, toolCount: TOOL_NAMES.length, ...LEGACY });
      assert.ok(!derived.stderr.includes("leaving tool"), describe(derived));

      const jsonl = await runClient(["tools", "list", ...target, "--output", "jsonl"], opts);
      assertExit(jsonl, 0);
      assert.deepEqual(stdoutLines(jsonl), wireResult.tools);
    });

    await t.step(
      "tools show read_text_file: the listed definition; wrong case is exit 2",
      async () => {
        const r = await runClient(["tools", "show", "read_text_file", ...target], opts);
        assertExit(r, 0);
        const shown = stdoutJson(r);
        assert.equal(shown.operation, "tools/show");
        assert.deepEqual(shown.tool, wireResult.tools[1]);
        assert.deepEqual(shown.tool.inputSchema.required, ["path"]);
        assert.deepEqual(shown.metadata, { ...LEGACY, pageCount: 1 });

        const wrong = await runClient(["tools", "show", "Read_Text_File", ...target], opts);
        const e = assertFailure(wrong, "usage", 2);
        assert.match(e.message, /did you mean read_text_file/);
        assert.equal(wrong.stdout, "");
      },
    );

    await t.step(
      "tools call: a read and a directory listing (structuredContent checked)",
      async () => {
        const read = await call("read_text_file", { path: `${served}/notes.txt` });
        assertExit(read, 0);
        assert.deepEqual(stdoutJson(read), {
          contractVersion: "1",
          operation: "tools/call",
          mcpResult: {
            content: [{ type: "text", text: NOTES }],
            structuredContent: { content: NOTES },
          },
          metadata: { ...LEGACY, rounds: 1 },
        });

        const head = await call("read_text_file", { path: `${served}/notes.txt`, head: 1 }, [
          "--output",
          "json",
        ]);
        assertExit(head, 0);
        const h = stdoutJson(head);
        assert.equal(h.isError, false);
        assert.deepEqual(h.text, ["first line"]);
        assert.deepEqual(h.structuredContent, { content: "first line" });

        const list = await call("list_directory", { path: served });
        assertExit(list, 0);
        const l = stdoutJson(list).mcpResult;
        assert.equal(l.content.length, 1);
        assert.equal(l.content[0].type, "text");
        // Entries come in the directory's own order: compare them as a set.
        assert.deepEqual(l.content[0].text.split("\n").sort(), [
          "[DIR] docs",
          "[FILE] escape.txt",
          "[FILE] notes.txt",
        ]);
        assert.deepEqual(l.structuredContent, { content: l.content[0].text });
      },
    );

    await t.step("tools run: three calls in order on one connection", async () => {
      const jsonl = `${clientDir}/calls.jsonl`;
      await Deno.writeTextFile(
        jsonl,
        [
          { name: "read_text_file", arguments: { path: `${served}/notes.txt`, head: 2 } },
          { name: "list_directory", arguments: { path: `${served}/docs` } },
          { name: "list_allowed_directories", arguments: {} },
        ].map((x) => JSON.stringify(x)).join("\n") + "\n",
      );
      const r = await runClient(["tools", "run", jsonl, ...target], opts);
      assertExit(r, 0);
      const lines = stdoutLines(r);
      assert.deepEqual(lines.map((x) => [x.index, x.line, x.operation]), [
        [0, 1, "tools/call"],
        [1, 2, "tools/call"],
        [2, 3, "tools/call"],
      ]);
      assert.deepEqual(lines.map((x) => x.mcpResult.content[0].text), [
        "first line\nsecond line",
        "[FILE] readme.md",
        `Allowed directories:\n${served}`,
      ]);
      for (const x of lines) assert.deepEqual(x.metadata, { ...LEGACY, rounds: 1 });
    });

    await t.step("outside the allowed directory: the server's isError result, exit 1", async () => {
      const denied = (p: string, kind = "path") =>
        `Access denied - ${kind} outside allowed directories: ${p} not in ${served}`;
      const cases: [string, string][] = [
        [`${outside}/secret.txt`, denied(`${outside}/secret.txt`)],
        // The server normalizes `..` before its check.
        [`${served}/../outside/secret.txt`, denied(`${outside}/secret.txt`)],
        // A symlink inside the served directory pointing out of it.
        [`${served}/escape.txt`, denied(`${outside}/secret.txt`, "symlink target")],
      ];
      for (const [path, text] of cases) {
        const r = await call("read_text_file", { path });
        assertExit(r, 1);
        assert.deepEqual(stdoutJson(r), {
          contractVersion: "1",
          operation: "tools/call",
          mcpResult: { content: [{ type: "text", text }], isError: true },
          metadata: { ...LEGACY, rounds: 1 },
        });
        // A tool error is a result, not a client failure: no error object on stderr.
        assert.ok(!r.stderr.includes('{"error"'), describe(r));
        assert.ok(!r.stdout.includes(SECRET.trim()), "the secret never shows");
      }

      const list = await call("list_directory", { path: outside }, ["--output", "json"]);
      assertExit(list, 1);
      assert.deepEqual(stdoutJson(list).text, [denied(outside)]);
      assert.equal(stdoutJson(list).isError, true);

      // In a run, the isError line is exit 1: it stops there unless --keep-going.
      const jsonl = `${clientDir}/mixed.jsonl`;
      await Deno.writeTextFile(
        jsonl,
        [
          { name: "list_allowed_directories", arguments: {} },
          { name: "read_text_file", arguments: { path: `${outside}/secret.txt` } },
          { name: "list_allowed_directories", arguments: {} },
        ].map((x) => JSON.stringify(x)).join("\n") + "\n",
      );
      const stop = await runClient(["tools", "run", jsonl, ...target], opts);
      assertExit(stop, 1);
      assert.deepEqual(stdoutLines(stop).map((x) => x.mcpResult.isError ?? false), [false, true]);
      const all = await runClient(["tools", "run", jsonl, "--keep-going", ...target], opts);
      assertExit(all, 1);
      assert.deepEqual(stdoutLines(all).map((x) => x.mcpResult.isError ?? false), [
        false,
        true,
        false,
      ]);
    });

    await t.step("arguments failing read_text_file's draft-07 inputSchema are exit 2", async () => {
      const r = await call("read_text_file", { path: 5 });
      const e = assertFailure(r, "usage", 2);
      assert.match(e.message, /\/path must be string/);
      assert.equal(r.stdout, "");
    });

    await t.step("a forced 2026-07-28 is exit 4 against this legacy-only server", async () => {
      const r = await runClient(
        ["tools", "list", ...target, "--protocol-version", "2026-07-28"],
        opts,
      );
      assertFailure(r, "protocol", 4);
      assert.equal(r.stdout, "");
    });

    await t.step("no server process outlives the client runs", async () => {
      const deadline = Date.now() + 5_000;
      let left = await serversFor(entry, served);
      while (left.length > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        left = await serversFor(entry, served);
      }
      assert.deepEqual(left, []);
    });
  } finally {
    await Deno.remove(base, { recursive: true });
    await install.cleanup();
  }
});
