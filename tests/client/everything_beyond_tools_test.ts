/**
 * The client beyond tools (issue 20 §5) against the MCP reference server
 * `@modelcontextprotocol/server-everything` (pinned lock in fixtures/, run with Node), over stdio
 * (a config entry) and Streamable HTTP (127.0.0.1 only): `resources list`, `resources read` of a
 * text and a blob resource, `resources templates`, `prompts list`, `prompts get` with arguments
 * (and one refused locally), and `ping`. Each command runs in process (runInProcess); one ping runs
 * as a real client child too, answering the same way. Second suite (real peers).
 *
 * server-everything is installed with `npm ci` into a temporary directory, unless
 * WMCP_SERVER_EVERYTHING_DIR names a directory where that install was already done.
 */
import assert from "node:assert/strict";
import { installNpmFixture } from "./_npm_fixture.ts";
import { LOOPBACK_ONLY, startServer } from "./_peers.ts";
import { type Json, runClient, stderrError, stdoutJson, stdoutLines } from "./_client.ts";
import { runInProcess } from "../_support/in_process.ts";
import { withTempDir, writeConfig } from "../_support/fs.ts";

const FEATURES = "demo://resource/static/document/features.md";
const LEGACY = ["legacy", "2025-11-25"];

/** The commands and their checks, through one target (`--config ...` or `--endpoint URL`). */
async function exercise(target: string[]): Promise<void> {
  const run = (args: string[]) => runInProcess([...args, ...target]);

  const list = await run(["resources", "list"]);
  assert.equal(list.code, 0, list.stderr);
  const env = stdoutJson(list);
  assert.equal(env.operation, "resources/list");
  assert.deepEqual([env.metadata.era, env.metadata.protocolVersion], LEGACY);
  assert.equal(env.pages[0].requestCursor, null);
  const resources = env.pages.flatMap((p: Json) => p.mcpResult.resources);
  const features = resources.find((r: Json) => r.uri === FEATURES);
  assert.deepEqual([features?.name, features?.mimeType], ["features.md", "text/markdown"]);

  const read = stdoutJson(await run(["resources", "read", FEATURES]));
  assert.equal(read.operation, "resources/read");
  const [content] = read.mcpResult.contents;
  assert.equal(content.uri, FEATURES);
  assert.match(content.text, /^# Everything Server - Features\n/);
  const text = await run(["resources", "read", FEATURES, "--output", "pretty"]);
  assert.equal(text.stdout, content.text.endsWith("\n") ? content.text : `${content.text}\n`);

  const templates = stdoutLines(await run(["resources", "templates", "--output", "jsonl"]));
  const uris = templates.map((t: Json) => t.uriTemplate);
  assert.ok(uris.includes("demo://resource/dynamic/text/{resourceId}"), uris.join(" "));
  assert.ok(uris.includes("demo://resource/dynamic/blob/{resourceId}"), uris.join(" "));
  // A blob from a template: kept whole in the envelope, a note with its size for people.
  const blobUri = "demo://resource/dynamic/blob/1";
  const blob = stdoutJson(await run(["resources", "read", blobUri])).mcpResult.contents[0];
  assert.equal(typeof blob.blob, "string");
  const bytes = atob(blob.blob).length;
  const note = await run(["resources", "read", blobUri, "--output", "pretty"]);
  assert.equal(note.stdout, `[blob ${blob.mimeType}, ${bytes} bytes]\n`);

  const prompts = stdoutJson(await run(["prompts", "list", "--output", "json"])).prompts;
  const args = prompts.find((p: Json) => p.name === "args-prompt");
  assert.deepEqual(args.arguments.map((a: Json) => [a.name, a.required]), [
    ["city", true],
    ["state", false],
  ]);
  const get = await run(["prompts", "get", "args-prompt", "city=Lisbon", "state=Lisboa"]);
  assert.equal(get.code, 0, get.stderr);
  assert.deepEqual(stdoutJson(get).mcpResult.messages, [
    { role: "user", content: { type: "text", text: "What's weather in Lisbon, Lisboa?" } },
  ]);
  const shown = await run(["prompts", "get", "args-prompt", "city=Oslo", "--output", "pretty"]);
  assert.equal(shown.stdout, "user:\nWhat's weather in Oslo?\n");
  const missing = await run(["prompts", "get", "args-prompt", "state=X", "--output", "json"]);
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(stderrError(missing).message, /missing required argument `city`/);

  const ping = stdoutJson(await run(["ping"]));
  assert.deepEqual([ping.operation, ping.metadata.method, ping.mcpResult], ["ping", "ping", {}]);
  const pretty = await run(["ping", "--output", "pretty"]);
  assert.match(pretty.stdout, /^ping: answered in [0-9.]+ ms \(legacy 2025-11-25\)\n$/);
}

Deno.test("server-everything over stdio and Streamable HTTP: resources, templates, prompts, ping", async (t) => {
  const installed = await installNpmFixture({
    name: "server-everything",
    packageName: "@modelcontextprotocol/server-everything",
    version: "2026.8.31",
    reuseEnv: "WMCP_SERVER_EVERYTHING_DIR",
  });
  const entry = `${installed.packageDir}/dist/index.js`;
  try {
    await withTempDir(async (dir) => {
      await t.step("stdio through a config file", async () => {
        const config = await writeConfig(dir, {
          everything: { command: "node", args: [entry, "stdio"] },
        });
        const target = ["--config", config, "--server", "everything"];
        await exercise(target);
        // A real client child answers the same way as the run in process.
        const child = await runClient(["ping", ...target, "--output", "json"], { read: [dir] });
        assert.equal(child.code, 0, child.stderr);
        assert.deepEqual(stdoutJson(child).metadata.method, "ping");
      });
      await t.step("Streamable HTTP on 127.0.0.1", async () => {
        const server = await startServer(
          "node",
          ["--import", LOOPBACK_ONLY, entry, "streamableHttp"],
          { env: { PORT: "0" }, readyEvent: "listening", cwd: dir },
        );
        try {
          assert.equal(server.ready.address, "127.0.0.1");
          await exercise(["--endpoint", `http://127.0.0.1:${server.ready.port}/mcp`]);
        } finally {
          await server.stop();
        }
      });
    });
  } finally {
    await installed.cleanup();
  }
});
