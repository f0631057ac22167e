/** Every HTTP guard, per request, over real sockets; concurrency; paging. */
import assert from "node:assert/strict";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1HttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { DEFAULT_MAX_BODY_BYTES } from "../../src/server/http.ts";
import {
  envelope,
  makeWorkspace,
  messagesOf,
  MODERN,
  modernRequest,
  READ_TOOLS,
  startHttpServer,
} from "./_harness.ts";
import { inProcessFetch, withHandler, withLoopbackServer } from "../_support/handler.ts";
import { availableOperations } from "../../mod.ts";

/** Sends raw HTTP/1.1 requests one after another on ONE TCP connection. */
async function onOneConnection(port: number, requests: string[]): Promise<number[]> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const statuses: number[] = [];
  const reader = conn.readable.getReader();
  const writer = conn.writable.getWriter();
  let buf = "";
  try {
    for (const r of requests) {
      await writer.write(new TextEncoder().encode(r));
      // Read one response: headers, then content-length bytes.
      while (true) {
        const headEnd = buf.indexOf("\r\n\r\n");
        if (headEnd !== -1) {
          const head = buf.slice(0, headEnd);
          const len = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? "0");
          if (buf.length >= headEnd + 4 + len) {
            statuses.push(Number(head.split(" ")[1]));
            buf = buf.slice(headEnd + 4 + len);
            break;
          }
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("connection closed early");
        buf += new TextDecoder().decode(value);
      }
    }
  } finally {
    reader.releaseLock();
    writer.releaseLock();
    conn.close();
  }
  return statuses;
}

function healthz(port: number, origin?: string): string {
  return `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: keep-alive\r\n` +
    (origin ? `Origin: ${origin}\r\n` : "") + "\r\n";
}

Deno.test("HTTP guards over real sockets: body size (streamed), Host, Origin per request on one connection", async (t) => {
  const root = await makeWorkspace({ "a.txt": "alpha\n", "b.txt": "beta\n" });
  const server = await startHttpServer(root, {
    args: ["--allowed-origin", "https://app.example.com"],
  });
  const port = Number(new URL(server.url).port);
  try {
    await t.step("Origin is decided per request on a keep-alive connection", async () => {
      const statuses = await onOneConnection(port, [
        healthz(port, "http://localhost:5173"),
        healthz(port, "http://evil.example"),
        healthz(port),
        healthz(port, "null"),
        healthz(port, "https://app.example.com"),
      ]);
      assert.deepEqual(statuses, [200, 403, 200, 403, 200]);
    });
    await t.step(
      "Host allow-list: loopback names with any port pass, others get 403 with a JSON-RPC body",
      async () => {
        for (const host of ["localhost:1", "127.0.0.1:65000", "[::1]:8080"]) {
          const [s] = await onOneConnection(port, [
            `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
          ]);
          assert.equal(s, 200, host);
        }
        const [s] = await onOneConnection(port, [
          `GET /healthz HTTP/1.1\r\nHost: evil.example\r\n\r\n`,
        ]);
        assert.equal(s, 403);
        const conn = await Deno.connect({ hostname: "127.0.0.1", port });
        await conn.write(new TextEncoder().encode(
          "POST /mcp HTTP/1.1\r\nHost: evil.example:3000\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
        ));
        const raw = await new Response(conn.readable).text();
        assert.match(raw, /^HTTP\/1.1 403/);
        const body = JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4));
        assert.equal(body.jsonrpc, "2.0");
        assert.equal(typeof body.error.code, "number");
      },
    );
    await t.step(
      "body-size limit: 413 by Content-Length and by streamed size, before anything else",
      async () => {
        // The cap is the request cap of the default limits (6 x maxWriteBytes + 64 KiB).
        const big = "x".repeat(DEFAULT_MAX_BODY_BYTES + 10);
        const r1 = await fetch(server.url, {
          method: "POST",
          headers: { "content-type": "application/json", host: "evil.example" },
          body: big,
        });
        assert.equal(r1.status, 413, "size is checked before Host");
        await r1.body?.cancel();
        const stream = new ReadableStream({
          start(c) {
            const chunk = new TextEncoder().encode("y".repeat(1024 * 1024));
            for (let i = 0; i <= DEFAULT_MAX_BODY_BYTES / chunk.length; i++) {
              c.enqueue(chunk);
            }
            c.close();
          },
        });
        const r2 = await fetch(server.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: stream,
        });
        assert.equal(r2.status, 413);
        await r2.body?.cancel();
        // A small streamed (chunked) body under the limit is buffered and served as usual.
        const body = JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
          params: { _meta: envelope() },
        });
        const small = new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode(body));
            c.close();
          },
        });
        const r3 = await fetch(server.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/list",
          },
          body: small,
        });
        assert.equal(r3.status, 200);
        const listed = (await messagesOf(r3))[0].result as { tools: unknown[] };
        assert.equal(listed.tools.length, availableOperations(false).length);
      },
    );
  } finally {
    const status = await server.stop();
    assert.equal(status.code, 0, server.stderr());
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("HTTP guards in process: routes, protocol headers, concurrent ids, tools/list pages", async (t) => {
  await withHandler({
    files: { "a.txt": "alpha\n", "b.txt": "beta\n" },
    allowedOrigins: ["https://app.example.com"],
  }, async ({ fetch, url, root }) => {
    const base = url.replace(/\/mcp$/, "");
    await t.step("routes: /healthz, unknown path 404, unknown legacy session 404", async () => {
      const h = await fetch(`${base}/healthz`);
      assert.deepEqual(await h.json(), { status: "ok", pid: Deno.pid });
      const nf = await fetch(`${base}/nope`);
      assert.equal(nf.status, 404);
      await nf.body?.cancel();
      const ns = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": "nope",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      });
      assert.equal(ns.status, 404);
      await ns.body?.cancel();
    });
    await t.step(
      "protocol headers: mismatch is 400/-32020, removed method is 404/-32601",
      async () => {
        const mismatch = await modernRequest(url, "tools/call", {
          name: "read_file",
          arguments: { path: "a.txt" },
        }, {
          headers: { "mcp-param-path": "b.txt" },
          fetch,
        });
        assert.equal(mismatch.status, 400);
        assert.equal((mismatch.messages[0].error as { code: number }).code, -32020);
        const wrongMethod = await modernRequest(url, "tools/list", {}, {
          headers: { "mcp-method": "tools/call" },
          fetch,
        });
        assert.equal(wrongMethod.status, 400);
        assert.equal((wrongMethod.messages[0].error as { code: number }).code, -32020);
        const ping = await modernRequest(url, "ping", {}, { fetch });
        assert.equal(ping.status, 404);
        assert.equal((ping.messages[0].error as { code: number }).code, -32601);
        const ok = await modernRequest(url, "tools/call", {
          name: "read_file",
          arguments: { path: "a.txt" },
        }, {
          headers: { "mcp-param-path": "a.txt" },
          fetch,
        });
        assert.equal(ok.status, 200);
      },
    );
    await t.step(
      "50 concurrent clients with the same JSON-RPC id each get their own result",
      async () => {
        const files = Array.from({ length: 50 }, (_, i) => `c${i}.txt`);
        await Promise.all(
          files.map((f, i) => Deno.writeTextFile(`${root!}/${f}`, `content ${i}\n`)),
        );
        const results = await Promise.all(
          files.map((f) =>
            modernRequest(url, "tools/call", { name: "read_file", arguments: { path: f } }, {
              id: 7,
              fetch,
            })
          ),
        );
        results.forEach((r, i) => {
          assert.equal(r.status, 200);
          const msg = r.messages.find((m) => "result" in m)!;
          assert.equal(msg.id, 7);
          const sc = (msg.result as { structuredContent: { path: string; content: string } })
            .structuredContent;
          assert.deepEqual([sc.path, sc.content], [files[i], `content ${i}\n`]);
        });
      },
    );
    await t.step("tools/list pages: modern cache hints, every page, invalid cursor", async () => {
      const first = await modernRequest(url, "tools/list", {}, { fetch });
      const r = first.messages[0].result as Record<string, unknown>;
      assert.equal(r.resultType, "complete");
      assert.equal(r.cacheScope, "public");
      assert.equal(typeof r.ttlMs, "number");
      assert.equal(
        (r.tools as unknown[]).length,
        availableOperations(false).length,
        "default page size 50 holds every tool",
      );
      const bad = await modernRequest(url, "tools/list", { cursor: "not-a-cursor" }, { fetch });
      assert.equal((bad.messages[0].error as { code: number }).code, -32602);
    });
  });
});

Deno.test("HTTP paging with page size 3 walks every page, in order, on both eras", async () => {
  // Modern pages in process; the v1 SDK client over a real socket to the same handler.
  await withLoopbackServer({ pageSize: 3 }, async ({ handler, url }) => {
    const fetch = inProcessFetch(handler);
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await modernRequest(url, "tools/list", cursor ? { cursor } : {}, { fetch });
      const result = r.messages[0].result as { tools: { name: string }[]; nextCursor?: string };
      names.push(...result.tools.map((x) => x.name));
      cursor = result.nextCursor;
      pages++;
    } while (cursor !== undefined);
    assert.equal(pages, 3);
    // The legacy era pages the same way (v1 SDK client, one page per request).
    const v1 = new V1Client({ name: "pager", version: "0" });
    await v1.connect(new V1HttpTransport(new URL(url)));
    const legacyNames: string[] = [];
    let legacyCursor: string | undefined;
    do {
      const page = await v1.listTools(legacyCursor ? { cursor: legacyCursor } : {});
      legacyNames.push(...page.tools.map((x: { name: string }) => x.name));
      legacyCursor = page.nextCursor;
    } while (legacyCursor !== undefined);
    await assert.rejects(v1.listTools({ cursor: "garbage" }), /Invalid cursor/);
    await v1.close();
    assert.deepEqual(legacyNames, names);
    assert.deepEqual(names, READ_TOOLS);
  });
});

Deno.test("HTTP authentication: bearer token, 401 with WWW-Authenticate, private cache scope", async () => {
  const token = "s3cret-token-0123456789abcdef";
  // In process; the token from WMCP_TOKEN and --token-file is tokens_test.ts's (real servers).
  const logged: string[] = [];
  await withHandler({ token, onError: (e) => logged.push(e.message) }, async ({ fetch, url }) => {
    const none = await modernRequest(url, "tools/list", {}, { fetch });
    assert.equal(none.status, 401);
    assert.match(none.headers.get("www-authenticate") ?? "", /^Bearer/);
    const wrong = await modernRequest(url, "tools/list", {}, {
      headers: { authorization: "Bearer nope" },
      fetch,
    });
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers.get("www-authenticate") ?? "", /invalid_token/);
    const ok = await modernRequest(url, "tools/list", {}, {
      headers: { authorization: `Bearer ${token}` },
      fetch,
    });
    assert.equal(ok.status, 200);
    assert.equal((ok.messages[0].result as { cacheScope: string }).cacheScope, "private");
    assert.ok(!logged.join("\n").includes(token), "the token never appears in logs");
  });
});
