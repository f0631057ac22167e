/**
 * Response caps of the bundled client over HTTP (decision 0047): a hostile server's endless SSE
 * event, endless JSON body, huge Content-Length or endless OAuth document is refused at the cap
 * (--max-message-bytes for MCP traffic, exit 4; AUTH_RESPONSE_BYTES for OAuth, exit 8), with the
 * cap named and nothing on stdout. Over Streamable HTTP in both eras (2025-11-25, initialize first;
 * 2026-07-28, server/discover first) and over the legacy HTTP+SSE transport (2024-11-05: the
 * responses come on the GET stream). The servers stop after STREAM_LIMIT bytes, so a client without
 * a cap ends too (and the test fails on its exit code instead of hanging). The client runs as
 * main(argv) in this process; the first case also runs it as a real child, which must answer the
 * same.
 */
import assert from "node:assert/strict";
import { describe, runClient } from "../client/_client.ts";
import { runInProcess } from "../_support/in_process.ts";
import { AUTH_RESPONSE_BYTES } from "../../src/client/response_cap.ts";

/** The cap the runs give (small: the tests stay fast). */
const CAP = 1024 * 1024;
/** Most bytes any endless body sends before it ends. */
const STREAM_LIMIT = 64 * 1024 * 1024;
const VERSION = "2025-11-25";
const CHUNK = new TextEncoder().encode("a".repeat(64 * 1024));

/** A body of `head` then `a`s, up to STREAM_LIMIT bytes, then `tail`. */
function endless(head: string, tail = ""): ReadableStream<Uint8Array> {
  let sent = 0;
  let cancelled = false;
  return new ReadableStream({
    start(c) {
      c.enqueue(new TextEncoder().encode(head));
    },
    pull(c) {
      if (cancelled) return;
      if (sent >= STREAM_LIMIT) {
        c.enqueue(new TextEncoder().encode(tail));
        return c.close();
      }
      sent += CHUNK.length;
      c.enqueue(CHUNK);
    },
    cancel() {
      cancelled = true;
    },
  });
}

const initializeMessage = (id: unknown, version = VERSION) => ({
  jsonrpc: "2.0",
  id,
  result: {
    protocolVersion: version,
    capabilities: { tools: {} },
    serverInfo: { name: "hostile", version: "1" },
  },
});

const initializeResult = (id: unknown) => Response.json(initializeMessage(id));

/** An MCP endpoint that initializes, then answers tools/list with `list(id)`. */
function mcpServer(list: (id: unknown) => Response): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (req.method !== "POST") return new Response(null, { status: 405 });
    const msg = await req.json();
    if (msg.method === "initialize") return initializeResult(msg.id);
    if (msg.id === undefined) return new Response(null, { status: 202 });
    return list(msg.id);
  });
}

/** The client's words for one run against url. */
function words(url: string, output: string, extra: string[], version: string): string[] {
  return [
    "tools",
    "list",
    "--endpoint",
    url,
    "--protocol-version",
    version,
    "--max-message-bytes",
    String(CAP),
    "--output",
    output,
    ...extra,
  ];
}

/**
 * `tools list` against url in both outputs, run as main(argv) in this process (the cap is the
 * client's, not the process boundary's: decision 0052); `anchor` also runs the json one as a real
 * client child and requires the same exit code and output.
 */
async function run(url: string, extra: string[] = [], version = VERSION, anchor = false) {
  const results = [];
  for (const output of ["json", "pretty"]) {
    results.push(
      await runInProcess(words(url, output, extra, version), { env: { NO_COLOR: "1" } }),
    );
  }
  if (anchor) {
    const dir = await Deno.makeTempDir({ prefix: "wmcp-cap-" });
    try {
      const real = await runClient(words(url, "json", extra, version), {
        read: [dir],
        env: { NO_COLOR: "1" },
        timeoutMs: 120_000,
      });
      assert.deepEqual(
        { code: real.code, stdout: real.stdout, stderr: real.stderr },
        { code: results[0].code, stdout: results[0].stdout, stderr: results[0].stderr },
        "a real client child answers as the in-process run",
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
  return results;
}

/** exit `code`, the cap named, nothing on stdout, in both outputs. */
function refused(
  results: Awaited<ReturnType<typeof run>>,
  code: number,
  cap: number,
  failure: string,
): void {
  const [json, pretty] = results;
  for (const r of results) {
    assert.equal(r.code, code, describe(r));
    assert.equal(r.stdout, "", describe(r));
    assert.match(r.stderr, new RegExp(`${cap}-byte message cap`), describe(r));
  }
  const e = JSON.parse(json.stderr).error;
  assert.equal(e.class, failure, describe(json));
  assert.equal(e.details.cap, cap, describe(json));
  assert.match(pretty.stderr, new RegExp(`^error \\(${failure}\\)`), describe(pretty));
}

Deno.test("an endless SSE data line after a valid initialize is refused at the cap", async () => {
  const server = mcpServer(() =>
    new Response(endless("event: message\ndata: ", "\n\n"), {
      headers: { "content-type": "text/event-stream" },
    })
  );
  try {
    const results = await run(`http://127.0.0.1:${server.addr.port}/mcp`, [], VERSION, true);
    refused(results, 4, CAP, "protocol");
    assert.match(JSON.parse(results[0].stderr).error.message, /an SSE event/);
  } finally {
    await server.shutdown();
  }
});

Deno.test("many small SSE events under the cap are not refused (the cap is per event)", async () => {
  // 2 × CAP of padding events, then the response: each event is small.
  const pad = `: ${"p".repeat(1000)}\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"x"}\n\n`;
  const server = mcpServer((id) => {
    let n = 0;
    return new Response(
      new ReadableStream({
        pull(c) {
          if (n++ < (2 * CAP) / pad.length) return c.enqueue(new TextEncoder().encode(pad));
          c.enqueue(
            new TextEncoder().encode(
              `event: message\ndata: ${
                JSON.stringify({ jsonrpc: "2.0", id, result: { tools: [] } })
              }\n\n`,
            ),
          );
          c.close();
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  });
  try {
    const [json] = await run(`http://127.0.0.1:${server.addr.port}/mcp`);
    assert.equal(json.code, 0, describe(json));
  } finally {
    await server.shutdown();
  }
});

Deno.test("an endless JSON body is refused at the cap", async () => {
  const server = mcpServer((id) =>
    new Response(
      endless(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[{"name":"`, '"}]}}'),
      { headers: { "content-type": "application/json" } },
    )
  );
  try {
    const results = await run(`http://127.0.0.1:${server.addr.port}/mcp`);
    refused(results, 4, CAP, "protocol");
    assert.match(JSON.parse(results[0].stderr).error.message, /a response body/);
  } finally {
    await server.shutdown();
  }
});

Deno.test("a Content-Length over the cap is refused before the body is read", async () => {
  // Raw HTTP/1.1: the header promises 100 GB; a few bytes follow, then the line stays open.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  const serving = (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      (async () => {
        const buf = new Uint8Array(65536);
        await conn.read(buf).catch(() => null);
        await conn.write(
          new TextEncoder().encode(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n" +
              "content-length: 100000000000\r\n\r\n{",
          ),
        ).catch(() => {});
        // Ends after a while by itself: a client without a cap fails on the truncated body.
        setTimeout(() => {
          try {
            conn.close();
          } catch { /* closed by the client */ }
        }, 20_000);
      })();
    }
  })();
  try {
    const results = await run(`http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/mcp`);
    refused(results, 4, CAP, "protocol");
  } finally {
    listener.close();
    for (const c of conns) {
      try {
        c.close();
      } catch { /* already closed */ }
    }
    await serving.catch(() => {});
  }
});

Deno.test("an endless OAuth metadata document is refused at the small OAuth cap", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const url = new URL(req.url);
    if (url.pathname.startsWith("/.well-known/")) {
      return new Response(endless('{"resource":"'), {
        headers: { "content-type": "application/json" },
      });
    }
    return new Response("unauthorized", {
      status: 401,
      headers: {
        "www-authenticate":
          `Bearer resource_metadata="${url.origin}/.well-known/oauth-protected-resource/mcp"`,
      },
    });
  });
  try {
    const results = await run(`http://127.0.0.1:${server.addr.port}/mcp`, ["--no-browser"]);
    refused(results, 8, AUTH_RESPONSE_BYTES, "auth");
  } finally {
    await server.shutdown();
  }
});

/** Where a message's endless string goes: JSON.stringify of the message is split there. */
const PAD = "@@PAD@@";

/** A JSON-RPC message as the text before and after its endless string (a PAD value in it). */
function around(message: unknown): [string, string] {
  const [head, tail] = JSON.stringify(message).split(PAD);
  return [head, tail];
}

/** A response to `id` whose `result` carries one endless string: one SSE event, or a JSON body. */
function endlessResponse(id: unknown, result: Record<string, unknown>, sse: boolean): Response {
  const [head, tail] = around({ jsonrpc: "2.0", id, result: { ...result, pad: PAD } });
  return sse
    ? new Response(endless(`event: message\ndata: ${head}`, `${tail}\n\n`), {
      headers: { "content-type": "text/event-stream" },
    })
    : new Response(endless(head, tail), { headers: { "content-type": "application/json" } });
}

/**
 * Connect and request timers beyond the run's watchdog: the cap, never a timer, must end the run
 * (a connect still waiting on a response the cap ended fails as a run that did not exit).
 */
const NO_TIMERS = ["--connect-timeout", "600", "--timeout", "600"];

const MODERN = "2026-07-28";
/** Valid 2026-07-28 results: server/discover's, and an empty tools/list. */
const MODERN_RESULTS: Record<string, Record<string, unknown>> = {
  "server/discover": {
    supportedVersions: [MODERN],
    capabilities: { tools: {} },
    resultType: "complete",
    _meta: { "io.modelcontextprotocol/serverInfo": { name: "hostile", version: "1" } },
  },
  "tools/list": { tools: [], resultType: "complete", ttlMs: 0, cacheScope: "private" },
};

/**
 * A 2026-07-28 Streamable HTTP endpoint (no initialize: server/discover comes first) that answers
 * `endlessOn` with an endless SSE event or JSON body (the rest valid, so a client without a cap
 * gets a result); the methods it was sent, in order.
 */
function modernServer(endlessOn: string, sse: boolean) {
  const methods: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (req.method !== "POST") return new Response(null, { status: 405 });
    const msg = await req.json();
    methods.push(msg.method);
    if (msg.id === undefined) return new Response(null, { status: 202 });
    const result = MODERN_RESULTS[msg.method];
    if (result === undefined) {
      return Response.json({
        jsonrpc: "2.0",
        id: msg.id,
        error: { code: -32601, message: "no such method" },
      });
    }
    return msg.method === endlessOn
      ? endlessResponse(msg.id, result, sse)
      : Response.json({ jsonrpc: "2.0", id: msg.id, result });
  });
  return { server, methods };
}

for (const endlessOn of ["server/discover", "tools/list"]) {
  for (const sse of [true, false]) {
    const body = sse ? "an SSE data line" : "a JSON body";
    Deno.test(`2026-07-28: ${body} answering ${endlessOn} without end is refused at the cap`, async () => {
      const { server, methods } = modernServer(endlessOn, sse);
      try {
        const results = await run(`http://127.0.0.1:${server.addr.port}/mcp`, NO_TIMERS, MODERN);
        refused(results, 4, CAP, "protocol");
        const unit = sse ? /an SSE event/ : /a response body/;
        assert.match(JSON.parse(results[0].stderr).error.message, unit);
        // The modern era's connect: server/discover first, never initialize.
        assert.equal(methods[0], "server/discover", methods.join(", "));
        assert.ok(!methods.includes("initialize"), methods.join(", "));
        assert.equal(methods.includes("tools/list"), endlessOn === "tools/list");
      } finally {
        await server.shutdown();
      }
    });
  }
}

/** One SSE event of a JSON-RPC message. */
const event = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

/** One SSE event of a JSON-RPC message whose PAD string is endless. */
function endlessEvent(message: unknown): ReadableStream<Uint8Array> {
  const [head, tail] = around(message);
  return endless(`event: message\ndata: ${head}`, `${tail}\n\n`);
}

/**
 * A legacy HTTP+SSE server (2024-11-05): GET /sse opens the stream and names the POST endpoint in
 * an `endpoint` event; each POST is accepted (202) and `answer(msg)` is written on the stream, in
 * order (text, or a body stream copied as the client reads it). The methods it was sent, in order.
 */
function legacySseServer(answer: (msg: Record<string, unknown>) => (string | ReadableStream)[]) {
  const methods: string[] = [];
  const writers: WritableStreamDefaultWriter<Uint8Array>[] = [];
  let writing = Promise.resolve();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    if (req.method === "GET" && path === "/sse") {
      const stream = new TransformStream<Uint8Array, Uint8Array>();
      const w = stream.writable.getWriter();
      writers.push(w);
      w.write(new TextEncoder().encode("event: endpoint\ndata: /messages\n\n")).catch(() => {});
      return new Response(stream.readable, { headers: { "content-type": "text/event-stream" } });
    }
    if (req.method !== "POST" || path !== "/messages") return new Response(null, { status: 404 });
    const msg = await req.json();
    methods.push(msg.method);
    const w = writers.at(-1);
    const parts = answer(msg);
    writing = writing.then(async () => {
      for (const part of parts) {
        if (typeof part === "string") await w?.write(new TextEncoder().encode(part));
        else for await (const chunk of part) await w?.write(chunk);
      }
    }).catch(() => {});
    return new Response(null, { status: 202 });
  });
  return {
    server,
    methods,
    async close() {
      for (const w of writers) await w.close().catch(() => {});
      await server.shutdown();
    },
  };
}

const LEGACY = "2024-11-05";

Deno.test("HTTP+SSE: an endless SSE event on the stream right after a valid initialize response is refused at the cap", async () => {
  // Without a cap the event is a (huge) log notification and tools/list is answered: exit 0.
  const hostile = legacySseServer((msg) => {
    if (msg.method === "initialize") {
      return [
        event(initializeMessage(msg.id, LEGACY)),
        endlessEvent({
          jsonrpc: "2.0",
          method: "notifications/message",
          params: { level: "info", data: PAD },
        }),
      ];
    }
    if (msg.id === undefined) return [];
    return [event({ jsonrpc: "2.0", id: msg.id, result: { tools: [] } })];
  });
  try {
    const url = `http://127.0.0.1:${hostile.server.addr.port}/sse`;
    const results = await run(url, ["--transport", "sse", ...NO_TIMERS], LEGACY);
    refused(results, 4, CAP, "protocol");
    assert.match(JSON.parse(results[0].stderr).error.message, /an SSE event/);
    assert.equal(hostile.methods[0], "initialize", hostile.methods.join(", "));
  } finally {
    await hostile.close();
  }
});

Deno.test("HTTP+SSE: an endless SSE event answering tools/list is refused at the cap", async () => {
  const hostile = legacySseServer((msg) => {
    if (msg.method === "initialize") return [event(initializeMessage(msg.id, LEGACY))];
    if (msg.id === undefined) return [];
    return [endlessEvent({ jsonrpc: "2.0", id: msg.id, result: { tools: [], pad: PAD } })];
  });
  try {
    const url = `http://127.0.0.1:${hostile.server.addr.port}/sse`;
    const results = await run(url, ["--transport", "sse", ...NO_TIMERS], LEGACY);
    refused(results, 4, CAP, "protocol");
    assert.match(JSON.parse(results[0].stderr).error.message, /an SSE event/);
    assert.ok(hostile.methods.includes("tools/list"), hostile.methods.join(", "));
  } finally {
    await hostile.close();
  }
});
