/**
 * Cold start (decision 0036): the command `config print` gives hosts (serve.ts, the launcher
 * alone) answers a modern tools/list sent as the very first line, with the operations'
 * precomputed JSON Schemas; in process, the first answers of both eras come before any engine
 * worker starts. Nothing here is timed.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { stdioEntry } from "../../src/cli/host_config.ts";
import { jsonSchemas, OPERATIONS } from "../../src/operations/registry.ts";
import { startStdioServer } from "../../src/server/stdio_server.ts";
import { Workspace } from "../../src/workspace/workspace.ts";
import { envelope, READ_TOOLS } from "./_harness.ts";

type Json = Record<string, unknown>;

const MODERN_LIST = { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: envelope() } };
const LEGACY = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "cold-start-test", version: "0" },
    },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
];

/** Checks a tools/list result: the read tools, each with its operation's JSON Schemas. */
function assertReadTools(result: Json, ctx: string): void {
  const tools = result.tools as Json[];
  assert.deepEqual(tools.map((t) => t.name), READ_TOOLS, ctx);
  for (const tool of tools) {
    const op = OPERATIONS.find((o) => o.name === tool.name)!;
    assert.deepEqual(tool.inputSchema, jsonSchemas(op).input, `${ctx}: ${op.name} inputSchema`);
  }
}

/** Reads JSON lines until `id` is answered; the iterator stays open for the next call. */
async function answerOf(lines: AsyncIterator<string>, id: number): Promise<Json> {
  for (let next = await lines.next(); !next.done; next = await lines.next()) {
    const msg = JSON.parse(next.value) as Json;
    if (msg.id === id) return msg;
  }
  throw new Error(`stream ended before the answer to ${id}`);
}

/** Lines of a web or Node byte stream. */
async function* linesOf(
  stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): AsyncGenerator<string> {
  const dec = new TextDecoder();
  let buf = "";
  for await (const chunk of stream) {
    buf += dec.decode(chunk as Uint8Array, { stream: true });
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      yield buf.slice(0, nl);
      buf = buf.slice(nl + 1);
    }
  }
}

Deno.test("cold start: the host's command answers a modern tools/list sent as its first line", async () => {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "wmcp-cold-" }));
  try {
    const entry = stdioEntry({ deno: Deno.execPath(), root, write: false });
    assert.ok(entry.args.some((a) => a.endsWith("/serve.ts")), "the launcher's own entry");
    const child = new Deno.Command(entry.command, {
      args: entry.args,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(child.stderr).text();
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(JSON.stringify(MODERN_LIST) + "\n"));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    try {
      const answer = await answerOf(linesOf(child.stdout)[Symbol.asyncIterator](), 1);
      assertReadTools(answer.result as Json, "modern, first line");
    } finally {
      clearTimeout(timer);
      await w.close();
      const status = await child.status;
      assert.equal(status.code, 0, await stderr);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("cold start: both eras' first answers come before any engine worker starts", async () => {
  const root = await Deno.makeTempDir({ prefix: "wmcp-cold-" });
  try {
    await Deno.writeTextFile(`${root}/a.txt`, "a\n");
    for (
      const [era, messages, id] of [["modern", [MODERN_LIST], 1], ["legacy", LEGACY, 2]] as const
    ) {
      const workspace = await Workspace.open({ root, writable: false });
      const input = new PassThrough();
      const output = new PassThrough();
      const server = startStdioServer({ workspace, input, output, log: () => {} });
      const lines = linesOf(output)[Symbol.asyncIterator]();
      try {
        for (const m of messages) input.write(JSON.stringify(m) + "\n");
        const answer = await answerOf(lines, id);
        assertReadTools(answer.result as Json, era);
        assert.equal(workspace.engine.live, 0, `${era}: no worker started`);
        // The counter does see workers: a walk starts one.
        const params: Json = { name: "find_files", arguments: { pattern: "*.txt" } };
        if (era === "modern") params._meta = envelope();
        input.write(JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params }) + "\n");
        const found = await answerOf(lines, 9);
        assert.equal((found.result as Json).isError, undefined, JSON.stringify(found));
        assert.ok(workspace.engine.live >= 1, `${era}: find_files ran on a worker`);
      } finally {
        await server.close();
      }
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("serve.ts: a kind other than stdio or http is a usage error that starts nothing; --help and -V answer", async () => {
  const serve = (args: string[]) =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        new URL("../../serve.ts", import.meta.url).pathname,
        ...args,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  for (const [args, hint] of [[[], ""], [["htp"], " (did you mean http?)"]] as const) {
    const out = await serve([...args]);
    assert.equal(out.code, 2);
    assert.equal(new TextDecoder().decode(out.stdout), "");
    const err = JSON.parse(new TextDecoder().decode(out.stderr).trim()) as { error: Json };
    assert.equal(err.error.code, "USAGE");
    const message = String(err.error.message);
    if (hint !== "") assert.ok(message.includes(hint), message);
    assert.ok(message.endsWith("; see `serve.ts --help`"), message);
  }
  const help = await serve(["--help"]);
  assert.equal(help.code, 0);
  const text = new TextDecoder().decode(help.stdout);
  assert.match(text, /^serve\.ts \d+\.\d+\.\d+: the serve launcher/);
  assert.ok(text.includes("serve.ts stdio --help"), text);
  assert.equal(new TextDecoder().decode(help.stderr), "");
  for (const flag of ["-V", "--version"]) {
    const v = await serve([flag]);
    assert.equal(v.code, 0);
    assert.match(new TextDecoder().decode(v.stdout), /^\d+\.\d+\.\d+\n$/);
  }
});
