/**
 * Differential test of the stdio face of the fast path (src/server/stdio_fast.ts): the same
 * lines are sent to a stdio server with the fast path and to one without it (startStdioServer
 * over in-memory streams, the SDK's real stdio transport behind), on one workspace; the answers
 * by id must be equal (atime and progress ticks after the first ignored, as in
 * fast_path_test.ts), the fast server must have answered the fast lines itself, and a request
 * cancelled by notifications/cancelled gets no answer from either. A connection opened by
 * initialize (2025 era) keeps every line on the SDK path. The stdio server's own process
 * behaviour stays covered by stdio_test.ts.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { Workspace } from "../../mod.ts";
import { startStdioServer } from "../../src/server/stdio_server.ts";
import { makeTree, removeDir } from "../_support/fs.ts";
import { envelope } from "./_harness.ts";

type Message = Record<string, unknown>;

function request(id: number, method: string, params: Record<string, unknown> = {}): Message {
  return {
    jsonrpc: "2.0",
    id,
    method,
    params: { ...params, _meta: { ...envelope(), ...(params._meta as object ?? {}) } },
  };
}

/** Sends lines to one server and collects its answers until every id in `expect` is answered. */
async function run(
  workspace: Workspace,
  fastPath: boolean,
  lines: (Message | string)[],
  expect: (string | number)[],
): Promise<{ byId: Map<unknown, unknown>; notes: unknown[]; taken: number }> {
  const input = new PassThrough();
  const output = new PassThrough();
  const server = startStdioServer({ workspace, input, output, fastPath, log: () => {} });
  const byId = new Map<unknown, unknown>();
  const notes: unknown[] = [];
  let buffered = "";
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer for ${expect}`)), 20_000);
    output.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      let nl;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const m = JSON.parse(buffered.slice(0, nl)) as Message;
        buffered = buffered.slice(nl + 1);
        if ("id" in m && !("method" in m)) byId.set(m.id, normalized(m));
        else if (m.method !== "notifications/progress" || progressOf(m) === 1) notes.push(m);
        if (expect.every((id) => byId.has(id))) {
          clearTimeout(timer);
          resolve();
        }
      }
    });
  });
  for (const line of lines) {
    input.write((typeof line === "string" ? line : JSON.stringify(line)) + "\n");
    await new Promise((r) => setTimeout(r, 5)); // in order, as a client sends them one by one
  }
  await done;
  await new Promise((r) => setTimeout(r, 300)); // nothing more comes (cancelled: no answer)
  const taken = server.fastPathTaken();
  await server.close();
  return { byId, notes, taken };
}

function progressOf(m: Message): unknown {
  return (m.params as { progress?: unknown }).progress;
}

function normalized(m: Message): unknown {
  return JSON.parse(
    JSON.stringify(m).replace(/"atime":"[^"]*"/g, '"atime":"-"').replace(
      /accessed: [^\\"]*/g,
      "accessed: -",
    ),
  );
}

Deno.test("stdio fast path answers like the SDK path, and stays off on a 2025-era connection", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-fast-stdio-" }));
  await makeTree(root, { "a.txt": "hello\nworld\n", "sub/b.txt": "hello again\n" });
  const workspace = await Workspace.open({ root, writable: true, engine: "inline" });
  try {
    const call = (id: number, name: string, args: Record<string, unknown>, meta = {}) =>
      request(id, "tools/call", { name, arguments: args, _meta: meta });
    const modern: (Message | string)[] = [
      request(1, "server/discover"), // the probe: the SDK's
      request(2, "tools/list"), // pins the modern era: the SDK's
      request(3, "tools/list"),
      request(4, "server/discover"),
      call(5, "read_file", { path: "a.txt" }),
      call(6, "get_file_info", { path: "a.txt" }),
      call(7, "list_directory", { path: "." }),
      call(8, "workspace_info", {}),
      call(9, "find_files", { pattern: "*.txt" }),
      call(10, "search_text", { query: "hello" }),
      call(11, "read_file", { path: "../x" }),
      call(12, "read_file", { path: 5 }),
      call(13, "nope", {}),
      call(14, "read_file", { path: "a.txt" }, { progressToken: "p" }),
      call(15, "create_directory", { path: "sub", parents: true }),
      request(16, "tools/list", { cursor: "bad" }),
      call(17, "read_file", { path: "a.txt" }, {
        "io.modelcontextprotocol/clientInfo": { name: 5 },
      }),
      request(18, "ping"),
      '{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"read_file"',
      call(20, "read_file", { path: "sub/b.txt" }),
    ];
    const ids = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 20];
    const sdk = await run(workspace, false, modern, ids);
    const fast = await run(workspace, true, modern, ids);
    for (const id of ids) assert.deepStrictEqual(fast.byId.get(id), sdk.byId.get(id), `id ${id}`);
    assert.deepStrictEqual(fast.notes, sdk.notes);
    assert.equal(sdk.taken, 0);
    // 3, 4 (list, discover once pinned), 5-12 (read tools, failures as results), 20.
    assert.equal(fast.taken, 11);

    // A call cancelled in the same read as it arrived: no answer (the SDK sends none for a
    // cancelled request either); the connection goes on.
    const cancel: (Message | string)[] = [
      request(1, "tools/list"),
      JSON.stringify(call(2, "search_text", { query: "hello" })) + "\n" +
      JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: 2 },
      }),
      request(3, "tools/list"),
    ];
    const cancelled = await run(workspace, true, cancel, [1, 3]);
    assert.equal(cancelled.byId.has(2), false, "a cancelled request is not answered");
    assert.equal(cancelled.taken, 2);

    // A 2025-era connection: everything stays with the SDK, modern-looking lines included.
    const legacy: (Message | string)[] = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "t", version: "0" },
        },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      call(3, "read_file", { path: "a.txt" }),
    ];
    const legacySdk = await run(workspace, false, legacy, [1, 2, 3]);
    const legacyFast = await run(workspace, true, legacy, [1, 2, 3]);
    assert.equal(legacyFast.taken, 0);
    for (const id of [1, 2, 3]) {
      assert.deepStrictEqual(legacyFast.byId.get(id), legacySdk.byId.get(id), `legacy id ${id}`);
    }

    // The same, with the modern envelope key inside the initialize and the initialized
    // notification (a client may attach it to every message): still the SDK's connection.
    const KEY = "io.modelcontextprotocol/protocolVersion";
    const keyed: (Message | string)[] = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: { experimental: { [KEY]: {} } },
          clientInfo: { name: "t", version: "0" },
        },
      },
      { jsonrpc: "2.0", method: "notifications/initialized", params: { _meta: { x: KEY } } },
      call(2, "workspace_info", {}),
      call(3, "read_file", { path: "a.txt" }),
      { jsonrpc: "2.0", id: 4, method: "tools/list" },
    ];
    const keyedSdk = await run(workspace, false, keyed, [1, 2, 3, 4]);
    const keyedFast = await run(workspace, true, keyed, [1, 2, 3, 4]);
    assert.equal(keyedFast.taken, 0, "an initialized connection stays with the SDK");
    for (const id of [1, 2, 3, 4]) {
      assert.deepStrictEqual(keyedFast.byId.get(id), keyedSdk.byId.get(id), `keyed id ${id}`);
    }
  } finally {
    workspace.engine.close();
    await removeDir(root);
  }
});
