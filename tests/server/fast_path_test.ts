/**
 * Differential test of the fast path (src/server/fast_path.ts, decision 0034): a table of modern
 * requests (every read tool, tools/list pages, server/discover, with and without a read-only
 * token) and of requests it must leave to the SDK (malformed envelopes, wrong or missing protocol
 * headers, Mcp-Param mismatches, bad arguments, unknown and write tools, progress, requestState,
 * oversize, ...) is sent in process through one handler with the fast path and one without it, on
 * the same workspace; status, content type and the JSON-RPC messages must be equal (and the body
 * byte for byte where the fast path answered). The only
 * fields ignored are the file access time (atime, and the `accessed:` line of its text block),
 * which a read in between may move, and progress ticks after the first (their count is timing). A counter of fast-path takes proves the fast cases really took
 * the fast path (and the fall-through cases did not). The stdio face is compared the same way over
 * a real child process (tests/server/stdio_test.ts keeps the stdio server's own behaviour).
 */
import assert from "node:assert/strict";
import { Workspace } from "../../mod.ts";
import { createHttpHandler, type HttpHandler } from "../../src/server/http.ts";
import { makeTree, removeDir } from "../_support/fs.ts";
import { envelope, messagesOf, MODERN } from "./_harness.ts";

const WRITE_TOKEN = "w".repeat(32);
const READ_TOKEN = "r".repeat(32);
const URL_ = "http://127.0.0.1:8000/mcp";

interface Case {
  name: string;
  method?: string;
  params?: Record<string, unknown>;
  /** Header overrides (null removes). */
  headers?: Record<string, string | null>;
  /** A raw body instead of the JSON-RPC request built from method and params. */
  body?: string;
  /** Extra top-level members of the request. */
  extra?: Record<string, unknown>;
  token?: string;
  /** Whether the fast path must take it. */
  fast: boolean;
}

function call(
  name: string,
  args: Record<string, unknown>,
  fast: boolean,
  more: Partial<Case> = {},
) {
  return {
    name: `call ${name} ${JSON.stringify(args)}`,
    method: "tools/call",
    params: { name, arguments: args },
    fast,
    ...more,
  };
}

const CASES: Case[] = [
  call("workspace_info", {}, true),
  call("workspace_info", {}, true, { token: READ_TOKEN, name: "workspace_info, read token" }),
  call("list_directory", { path: "." }, true),
  call("list_directory", {}, true),
  call("read_file", { path: "a.txt" }, true),
  call("read_file", { path: "a.txt", startLine: 2, endLine: 2 }, true),
  call("read_file", { path: "missing.txt" }, true),
  call("read_file", { path: "../outside" }, true),
  call("read_media", { path: "pixel.png" }, true),
  call("get_file_info", { path: "a.txt" }, true),
  call("get_file_info", { path: "sub" }, true, {
    token: READ_TOKEN,
    name: "get_file_info, read token",
  }),
  call("find_files", { pattern: "*.txt" }, true),
  call("search_text", { query: "hello" }, true),
  call("search_text", { query: "(", regex: true }, true),
  call("read_file", { path: "a.txt", bogus: 1 }, true, { name: "unknown argument (tool error)" }),
  call("read_file", { path: 5 }, false, { name: "non-string Mcp-Param argument" }),
  call("read_file", { path: 5 }, false, {
    name: "wrong argument type, no header",
    headers: { "mcp-param-path": null },
  }),
  call("read_file", {}, true, { name: "missing required argument" }),
  call("nope", {}, false, { name: "unknown tool" }),
  call("create_directory", { path: "sub", parents: true }, false, {
    name: "write tool (SDK path)",
  }),
  call("write_file", { path: "n.txt", content: "x" }, false, {
    token: READ_TOKEN,
    name: "read token calling a write tool",
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "Mcp-Param-Path missing",
    headers: { "mcp-param-path": null },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "Mcp-Param-Path mismatch",
    headers: { "mcp-param-path": "b.txt" },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "Mcp-Param-Path base64",
    headers: { "mcp-param-path": `=?base64?${btoa("a.txt")}?=` },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "Mcp-Param-Path bad base64",
    headers: { "mcp-param-path": "=?base64?***?=" },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "Mcp-Name missing",
    headers: { "mcp-name": null },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "Mcp-Name mismatch",
    headers: { "mcp-name": "get_file_info" },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "Mcp-Name base64",
    headers: { "mcp-name": `=?base64?${btoa("read_file")}?=` },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "Mcp-Method mismatch",
    headers: { "mcp-method": "tools/list" },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "Mcp-Method missing",
    headers: { "mcp-method": null },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "protocol header missing",
    headers: { "mcp-protocol-version": null },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "protocol header legacy",
    headers: { "mcp-protocol-version": "2025-11-25" },
  }),
  call("read_file", { path: "a.txt" }, true, { name: "Accept */*", headers: { accept: "*/*" } }),
  call("read_file", { path: "a.txt" }, true, { name: "no Accept", headers: { accept: null } }),
  call("read_file", { path: "a.txt" }, false, {
    name: "progressToken",
    params: {
      name: "read_file",
      arguments: { path: "a.txt" },
      _meta: { ...envelope(), progressToken: "p1" },
    },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "requestState",
    params: { name: "read_file", arguments: { path: "a.txt" }, requestState: "abc" },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "bad envelope clientInfo",
    params: {
      name: "read_file",
      arguments: { path: "a.txt" },
      _meta: { ...envelope(), "io.modelcontextprotocol/clientInfo": { name: 5 } },
    },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "bad envelope capabilities",
    params: {
      name: "read_file",
      arguments: { path: "a.txt" },
      _meta: { ...envelope({ roots: { listChanged: 5 } }) },
    },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "unsupported revision",
    params: {
      name: "read_file",
      arguments: { path: "a.txt" },
      _meta: { ...envelope(), "io.modelcontextprotocol/protocolVersion": "2026-99-99" },
    },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "__proto__ argument",
    body:
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt","__proto__":{"x":1}},"_meta":${
        JSON.stringify(envelope())
      }}}`,
  }),
  call("read_file", { path: "a.txt" }, false, { name: "extra member", extra: { foo: 1 } }),
  call("read_file", { path: "a.txt" }, false, { name: "id null", extra: { id: null } }),
  call("read_file", { path: "a.txt" }, false, { name: "id 1.5", extra: { id: 1.5 } }),
  call("read_file", { path: "a.txt" }, true, { name: "string id", extra: { id: "abc" } }),
  call("read_file", { path: "a.txt" }, false, {
    name: "notification (no id)",
    extra: { id: undefined },
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "arguments array",
    params: { name: "read_file", arguments: ["a.txt"] },
  }),
  call("read_file", { path: "a.txt" }, false, { name: "jsonrpc 1.0", extra: { jsonrpc: "1.0" } }),
  call("read_file", { path: "a.txt" }, false, {
    name: "unparseable body",
    body:
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"${MODERN}"`,
  }),
  call("read_file", { path: "a.txt" }, false, {
    name: "batch",
    body: `[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":${
      JSON.stringify(envelope())
    }}}]`,
  }),
  call("read_file", { path: "a.txt".padEnd(70_000, " ") }, false, {
    name: "oversize body",
    headers: { "mcp-param-path": null },
  }),
  { name: "tools/list", method: "tools/list", params: {}, fast: true },
  {
    name: "tools/list, read token",
    method: "tools/list",
    params: {},
    token: READ_TOKEN,
    fast: true,
  },
  { name: "tools/list page 2", method: "tools/list", params: { cursor: "PAGE2" }, fast: true },
  { name: "tools/list bad cursor", method: "tools/list", params: { cursor: "nope" }, fast: false },
  { name: "tools/list cursor number", method: "tools/list", params: { cursor: 5 }, fast: false },
  {
    name: "tools/list with Mcp-Name",
    method: "tools/list",
    params: {},
    headers: { "mcp-name": "x" },
    fast: false,
  },
  { name: "server/discover", method: "server/discover", params: {}, fast: true },
  {
    name: "server/discover, read token",
    method: "server/discover",
    params: {},
    token: READ_TOKEN,
    fast: true,
  },
  { name: "server/discover extra param", method: "server/discover", params: { x: 1 }, fast: false },
  { name: "prompts/list (not fast)", method: "prompts/list", params: {}, fast: false },
  { name: "ping (not fast)", method: "ping", params: {}, fast: false },
];

function requestOf(c: Case, cursor: string | undefined): Request {
  const method = c.method ?? "tools/call";
  const params = { ...(c.params ?? {}) };
  if (params.cursor === "PAGE2") params.cursor = cursor;
  if (!("_meta" in params)) params._meta = envelope();
  const headers: Record<string, string> = {
    host: "127.0.0.1:8000",
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    authorization: `Bearer ${c.token ?? WRITE_TOKEN}`,
  };
  if (method === "tools/call") {
    headers["mcp-name"] = String(params.name);
    const path = (params.arguments as { path?: unknown } | undefined)?.path;
    if (typeof path === "string") headers["mcp-param-path"] = path;
    else if (path !== undefined) headers["mcp-param-path"] = String(path);
  }
  for (const [k, v] of Object.entries(c.headers ?? {})) {
    if (v === null) delete headers[k];
    else headers[k] = v;
  }
  const message: Record<string, unknown> = { jsonrpc: "2.0", id: 1, method, params, ...c.extra };
  return new Request(URL_, {
    method: "POST",
    headers,
    body: c.body ?? JSON.stringify(message),
  });
}

/** The messages with the access time (the only field a read in between may move) blanked. */
function normalized(messages: Record<string, unknown>[]): unknown {
  // Progress ticks after the first one come at a 100 ms cadence: how many fit is timing.
  const steady = messages.filter((m) =>
    m.method !== "notifications/progress" || (m.params as { progress?: number }).progress === 1
  );
  return JSON.parse(
    JSON.stringify(steady)
      .replace(/"atime":"[^"]*"/g, '"atime":"-"')
      .replace(/accessed: [^\\"]*/g, "accessed: -"),
  );
}

async function exchange(handler: HttpHandler, c: Case, cursor?: string) {
  const response = await handler.fetch(requestOf(c, cursor));
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    allow: response.headers.get("allow"),
    cache: response.headers.get("cache-control"),
    messages: normalized(await messagesOf(response.clone())),
    text: (await response.text()).replace(/"atime":"[^"]*"/g, '"atime":"-"')
      .replace(/accessed: [^\\"]*/g, "accessed: -"),
  };
}

Deno.test("fast path and SDK path answer every request of the table the same", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-fast-" }));
  await makeTree(root, { "a.txt": "hello\nworld\n", "sub/b.txt": "hello again\n" });
  // A 1x1 PNG for read_media.
  await Deno.writeFile(
    `${root}/pixel.png`,
    Uint8Array.from(
      atob(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      ),
      (ch) => ch.charCodeAt(0),
    ),
  );
  const workspace = await Workspace.open({ root, writable: true });
  const options = {
    workspace,
    tokens: [WRITE_TOKEN],
    readTokens: [READ_TOKEN],
    pageSize: 4,
    maxBodyBytes: 64 * 1024,
  };
  const sdk = createHttpHandler({ ...options, fastPath: false });
  const fast = createHttpHandler(options);
  try {
    // The second page's cursor, as the SDK path mints it.
    const first = await sdk.fetch(
      requestOf({ name: "", method: "tools/list", fast: true }, undefined),
    );
    const cursor = ((await messagesOf(first))[0].result as { nextCursor?: string }).nextCursor;
    assert.ok(cursor !== undefined, "pageSize 4 pages the tool list");
    for (const c of CASES) {
      const expected = await exchange(sdk, c, cursor);
      const before = fast.fastPathTaken();
      const actual = await exchange(fast, c, cursor);
      // A fast answer is the SDK's byte for byte; others may differ in progress ticks only.
      if (!c.fast) actual.text = expected.text = "";
      assert.deepStrictEqual(actual, expected, c.name);
      assert.deepStrictEqual(
        fast.fastPathTaken() - before,
        c.fast ? 1 : 0,
        `${c.name}: fast path taken`,
      );
    }
  } finally {
    await fast.close();
    await sdk.close();
    workspace.engine.close();
    await removeDir(root);
  }
});

Deno.test("a fast call still running after keepAliveMs streams keep-alive comments, then its answer", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-fast-ka-" }));
  const files: Record<string, string> = {};
  for (let i = 0; i < 200; i++) files[`d${i % 10}/f${i}.txt`] = "hello\n".repeat(50);
  await makeTree(root, files);
  const workspace = await Workspace.open({ root });
  const options = { workspace, keepAliveMs: 1 };
  const sdk = createHttpHandler({ ...options, fastPath: false });
  const fast = createHttpHandler(options);
  try {
    const c: Case = {
      name: "slow search",
      method: "tools/call",
      params: { name: "search_text", arguments: { query: "hello", maxMatches: 5 } },
      fast: true,
    };
    const expected = await sdk.fetch(requestOf(c, undefined));
    const actual = await fast.fetch(requestOf(c, undefined));
    assert.equal(fast.fastPathTaken(), 1);
    assert.equal(actual.status, expected.status);
    assert.equal(actual.headers.get("content-type"), expected.headers.get("content-type"));
    const text = await actual.text();
    assert.match(text, /^: keepalive\n\n/, "the stream is committed with a keep-alive comment");
    const frames = (t: string) =>
      t.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
    assert.deepStrictEqual(frames(text), frames(await expected.text()));
  } finally {
    await fast.close();
    await sdk.close();
    workspace.engine.close();
    await removeDir(root);
  }
});
