/**
 * The embedding surface of mod.ts with real parts: the HTTP handler in process and on a
 * loopback socket, the stdio server over in-memory streams and over a child's real pipes, and
 * the client facade's errors.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import {
  ClientError,
  connect,
  createHttpHandler,
  createServerFactory,
  getOperation,
  jsonSchemas,
  parseInput,
  startStdioServer,
  Workspace,
  WorkspaceError,
} from "../../mod.ts";
import { ROOT } from "./_run.ts";

async function withWorkspace(fn: (workspace: Workspace, dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-embed-" });
  try {
    await Deno.writeTextFile(`${dir}/hello.txt`, "hello, embedder\n");
    await fn(await Workspace.open({ root: dir, engine: "inline" }), dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("createHttpHandler in process answers tools/list and tools/call through connect()", async () => {
  await withWorkspace(async (workspace) => {
    const handler = createHttpHandler({ workspace });
    const client = await connect({ url: "http://localhost/mcp", fetch: handler.fetch });
    try {
      assert.equal(client.era, "modern");
      const names = (await client.listTools()).map((t) => t.name);
      assert.ok(names.includes("read_file"), names.join(","));
      assert.ok(!names.includes("write_file"), "read-only workspace lists no write tools");
      const result = await client.callTool("read_file", { path: "hello.txt" });
      assert.notEqual(result.isError, true);
      assert.equal((result.structuredContent as { content: string }).content, "hello, embedder\n");
    } finally {
      await client.close();
      await handler.close();
    }
  });
});

Deno.test("createHttpHandler on Deno.serve (127.0.0.1, port 0) answers tools/call in the legacy era", async () => {
  await withWorkspace(async (workspace) => {
    const handler = createHttpHandler({ workspace });
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      handler.fetch,
    );
    try {
      const client = await connect(
        { url: `http://127.0.0.1:${server.addr.port}/mcp` },
        { protocolVersion: "2025-11-25" },
      );
      try {
        assert.equal(client.era, "legacy");
        assert.equal(client.protocolVersion, "2025-11-25");
        const result = await client.callTool("get_file_info", { path: "hello.txt" });
        assert.equal((result.structuredContent as { size: number }).size, 16);
      } finally {
        await client.close();
      }
    } finally {
      await handler.close();
      await server.shutdown();
    }
  });
});

Deno.test("connect(): a tool error is an isError result; an unknown tool or bad arguments throw ClientError", async () => {
  await withWorkspace(async (workspace) => {
    const handler = createHttpHandler({ workspace });
    const client = await connect({ url: "http://localhost/mcp", fetch: handler.fetch });
    try {
      const missing = await client.callTool("read_file", { path: "absent.txt" });
      assert.equal(missing.isError, true);
      assert.match(JSON.stringify(missing.content), /NOT_FOUND/);
      await assert.rejects(client.callTool("no_such_tool", {}), (err) => {
        assert.ok(err instanceof ClientError);
        assert.equal(err.failure, "protocol");
        return true;
      });
      await client.listTools(); // known tools are validated locally, before sending
      await assert.rejects(client.callTool("read_file", { path: 7 }), (err) => {
        assert.ok(err instanceof ClientError);
        assert.equal(err.failure, "usage");
        assert.match(err.message, /inputSchema/);
        return true;
      });
    } finally {
      await client.close();
      await handler.close();
    }
  });
});

Deno.test("connect() refuses a target that is neither a command nor an http(s) URL", async () => {
  for (
    const target of [
      { url: "not a url" },
      { url: "file:///etc/passwd" },
      { command: "" },
      {} as { url: string },
    ]
  ) {
    await assert.rejects(connect(target), (err) => {
      assert.ok(err instanceof ClientError, String(err));
      assert.equal(err.failure, "usage");
      assert.match(err.message, /^connect: /);
      return true;
    });
  }
});

Deno.test("connect() to an address nobody serves throws a transport ClientError", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await assert.rejects(
    connect({ url: `http://127.0.0.1:${port}/mcp` }, { connectTimeoutMs: 10_000 }),
    (err) => {
      assert.ok(err instanceof ClientError);
      assert.equal(err.failure, "transport");
      return true;
    },
  );
});

/** Reads JSON-RPC lines from a stream into a map by id, resolving waiters. */
function lineReader(output: PassThrough) {
  const waiting = new Map<unknown, (m: Record<string, unknown>) => void>();
  const lines: string[] = [];
  let buf = "";
  output.on("data", (chunk: Uint8Array) => {
    buf += new TextDecoder().decode(chunk);
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      lines.push(line);
      const m = JSON.parse(line);
      waiting.get(m.id)?.(m);
    }
  });
  return {
    lines,
    answer(id: unknown, timeoutMs = 30_000): Promise<Record<string, unknown>> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer for id ${id}`)), timeoutMs);
        waiting.set(id, (m) => {
          clearTimeout(timer);
          resolve(m);
        });
      });
    },
  };
}

Deno.test("startStdioServer over in-memory streams answers tools/list, and an oversize line fails alone", async () => {
  await withWorkspace(async (workspace) => {
    const small = await Workspace.open({
      root: workspace.policy.rootReal,
      engine: "inline",
      limits: { maxWriteBytes: 1024 },
    });
    const input = new PassThrough();
    const output = new PassThrough();
    const logged: string[] = [];
    const server = startStdioServer({
      workspace: small,
      input,
      output,
      pageSize: 3,
      log: (l) => logged.push(l),
    });
    const reader = lineReader(output);
    const send = (m: Record<string, unknown>) => input.write(JSON.stringify(m) + "\n");
    try {
      const initialized = reader.answer(1);
      send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "test", version: "1" },
        },
      });
      assert.equal(
        ((await initialized).result as { protocolVersion: string }).protocolVersion,
        "2025-11-25",
      );
      send({ jsonrpc: "2.0", method: "notifications/initialized" });
      const listed = reader.answer(2);
      send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
      const page = (await listed).result as { tools: { name: string }[]; nextCursor?: string };
      assert.deepEqual(page.tools.map((t) => t.name), [
        "workspace_info",
        "list_directory",
        "read_file",
      ]);
      assert.equal(typeof page.nextCursor, "string", "pageSize 3 pages the list");
      // Over the request cap (6 x 1024 + 64 KiB): refused for its id; the connection stays open.
      const refused = reader.answer(3);
      send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { pad: "x".repeat(80_000) } });
      const err = (await refused).error as { code: number; message: string };
      assert.equal(err.code, -32600);
      assert.match(logged.join("\n"), /refused request 3/);
      const again = reader.answer(4);
      send({ jsonrpc: "2.0", id: 4, method: "ping" });
      assert.deepEqual((await again).result, {});
      assert.ok(
        reader.lines.every((l) => JSON.parse(l).jsonrpc === "2.0"),
        "output is protocol only",
      );
    } finally {
      await server.close();
    }
  });
});

Deno.test("serve_stdio.ts (startStdioServer on real pipes) answers connect()'s tools/list", async () => {
  await withWorkspace(async (_workspace, dir) => {
    const client = await connect({
      command: Deno.execPath(),
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        `--allow-read=${dir}`,
        `${ROOT}serve_stdio.ts`,
        "--root",
        dir,
      ],
    });
    try {
      const names = (await client.listTools()).map((t) => t.name);
      assert.deepEqual(names, [
        "workspace_info",
        "list_directory",
        "read_file",
        "read_files",
        "read_media",
        "get_file_info",
        "find_files",
        "search_text",
      ]);
      const result = await client.callTool("search_text", { query: "embedder" });
      assert.match(JSON.stringify(result.structuredContent), /hello\.txt/);
    } finally {
      await client.close();
    }
  });
});

Deno.test("createServerFactory gives a fresh McpServer per call", async () => {
  await withWorkspace(async (workspace) => {
    const factory = createServerFactory({ workspace });
    const a = factory();
    const b = factory();
    assert.notEqual(a, b);
    await factory.settled(1000);
  });
});

Deno.test("the exported registry: schemas and validation by Operation, unknown ones refused", () => {
  const op = getOperation("read_file");
  assert.ok(op);
  assert.equal(op.annotations.readOnlyHint, true);
  assert.equal((jsonSchemas(op).input as { type: string }).type, "object");
  assert.deepEqual(parseInput(op, { path: "a.txt" }), parseInput(op, { path: "a.txt" }));
  assert.throws(() => parseInput(op, { path: "a.txt", nope: 1 }), (err) => {
    assert.ok(err instanceof WorkspaceError);
    assert.equal(err.code, "INVALID_ARGUMENT");
    assert.equal(err.argument, "nope");
    return true;
  });
  assert.throws(() => jsonSchemas({ ...op, name: "made_up" }), (err) => {
    assert.ok(err instanceof WorkspaceError);
    assert.equal(err.code, "UNKNOWN_OPERATION");
    return true;
  });
});

Deno.test("connect() warms the SDK's header mirroring: a tools/call with a path is one request, 200, no server error", async () => {
  await withWorkspace(async (workspace) => {
    const errors: string[] = [];
    const handler = createHttpHandler({ workspace, onError: (err) => errors.push(err.message) });
    const calls: { status: number; paramPath: string | null }[] = [];
    const counting = async (request: Request) => {
      const body = request.method === "POST" ? await request.clone().text() : "";
      const response = await handler.fetch(request);
      if (/"method"\s*:\s*"tools\/call"/.test(body)) {
        calls.push({ status: response.status, paramPath: request.headers.get("mcp-param-path") });
      }
      return response;
    };
    for (const listFirst of [true, false]) {
      calls.length = 0;
      const client = await connect({ url: "http://localhost/mcp", fetch: counting });
      try {
        assert.equal(client.era, "modern");
        if (listFirst) await client.listTools();
        const result = await client.callTool("read_file", { path: "hello.txt" });
        assert.notEqual(result.isError, true, JSON.stringify(result));
        assert.deepEqual(
          calls,
          [{ status: 200, paramPath: "hello.txt" }],
          `listFirst ${listFirst}`,
        );
      } finally {
        await client.close();
      }
    }
    await handler.close();
    assert.deepEqual(errors.filter((e) => /param-header/.test(e)), [], errors.join("\n"));
  });
});
