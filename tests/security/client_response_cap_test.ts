/**
 * Response caps of the bundled client over HTTP (decision 0047): a hostile server's endless SSE
 * event, endless JSON body, huge Content-Length or endless OAuth document is refused at the cap
 * (--max-message-bytes for MCP traffic, exit 4; AUTH_RESPONSE_BYTES for OAuth, exit 8), with the
 * cap named and nothing on stdout. The servers stop after STREAM_LIMIT bytes, so a client without
 * a cap ends too (and the test fails on its exit code instead of hanging).
 */
import assert from "node:assert/strict";
import { describe, runClient } from "../client/_client.ts";
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

const initializeResult = (id: unknown) =>
  Response.json({
    jsonrpc: "2.0",
    id,
    result: {
      protocolVersion: VERSION,
      capabilities: { tools: {} },
      serverInfo: { name: "hostile", version: "1" },
    },
  });

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

async function run(url: string, extra: string[] = []) {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-cap-" });
  try {
    const results = [];
    for (const output of ["json", "pretty"]) {
      results.push(
        await runClient(
          [
            "tools",
            "list",
            "--endpoint",
            url,
            "--protocol-version",
            VERSION,
            "--max-message-bytes",
            String(CAP),
            "--output",
            output,
            ...extra,
          ],
          { read: [dir], env: { NO_COLOR: "1" }, timeoutMs: 120_000 },
        ),
      );
    }
    return results;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
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
    const results = await run(`http://127.0.0.1:${server.addr.port}/mcp`);
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
