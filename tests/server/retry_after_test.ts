/**
 * Every 503 the HTTP server sends carries `Retry-After` (whole seconds): the shared body budget
 * and the legacy session table whose sessions all have a request in flight. Over real sockets
 * on 127.0.0.1; a source scan keeps any new 503 site honest.
 */
import assert from "node:assert/strict";
import type { HttpHandlerOptions } from "../../src/server/http.ts";
import { withLoopbackServer } from "../_support/handler.ts";
import { NO_ARGUMENTS, type ServerDefinition } from "../../src/server/definition.ts";

const LEGACY = "2025-11-25";

/** Serves a handler on 127.0.0.1 (a free port) for the test's body. */
const withServer = (
  options: HttpHandlerOptions,
  body: (url: string, port: number) => Promise<void>,
) => withLoopbackServer(options, ({ url, port }) => body(url, port));

/** A server whose one tool, `hold`, stays in flight until released. */
function holding() {
  let release!: () => void;
  let entered!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const started = new Promise<void>((r) => (entered = r));
  const definition: ServerDefinition = {
    name: "hold",
    version: "0",
    tools: [{
      name: "hold",
      inputSchema: NO_ARGUMENTS,
      handler: async () => {
        entered();
        await released;
        return { content: [{ type: "text", text: "released" }] };
      },
    }],
  };
  return { definition, release, started };
}

const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

function post(url: string, message: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: "POST",
    headers: { ...HEADERS, ...headers },
    body: JSON.stringify(message),
  });
}

const initialize = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "t", version: "0" } },
};

/** A 503's Retry-After: a whole number of seconds, at least 1. */
function assertRetryAfter(res: Response, what: string): void {
  assert.equal(res.status, 503, what);
  const value = res.headers.get("retry-after");
  assert.match(value ?? "", /^[1-9][0-9]*$/, `${what}: Retry-After in seconds, got ${value}`);
}

Deno.test("503 for a full session table (every session in flight) carries Retry-After", async () => {
  const hold = holding();
  await withServer({ definition: hold.definition, maxSessions: 1 }, async (url) => {
    const opened = await post(url, initialize);
    assert.equal(opened.status, 200);
    const id = opened.headers.get("mcp-session-id")!;
    await opened.body?.cancel();
    const session = { "mcp-session-id": id, "mcp-protocol-version": LEGACY };
    await (await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, session))
      .body?.cancel();
    const call = post(url, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "hold", arguments: {} },
    }, session);
    await hold.started;
    const refused = await post(url, initialize);
    assertRetryAfter(refused, "sessions full");
    assert.equal((await refused.json()).error.code, -32000);
    hold.release();
    assert.match(await (await call).text(), /released/);
    // Once the call is done the session is idle: a newcomer replaces it.
    const later = await post(url, initialize);
    assert.equal(later.status, 200);
    await later.body?.cancel();
  });
});

Deno.test("503 for the shared body budget carries Retry-After", async () => {
  await withServer(
    { definition: holding().definition, maxBodyBytes: 1000, maxBufferedBodyBytes: 1000 },
    async (url, port) => {
      // A raw upload that declares the whole budget and sends nothing: the budget is taken.
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      try {
        await conn.write(
          new TextEncoder().encode(
            `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
              `Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n`,
          ),
        );
        let res: Response | undefined;
        for (let i = 0; i < 100; i++) {
          res = await post(url, initialize);
          if (res.status === 503) break;
          await res.body?.cancel();
          await new Promise((r) => setTimeout(r, 20));
        }
        assertRetryAfter(res!, "body budget");
        await res!.body?.cancel();
      } finally {
        conn.close();
      }
    },
  );
});

Deno.test("every 503 site in src/ sends Retry-After", async () => {
  const sites: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (e.name.endsWith(".ts")) {
        const text = await Deno.readTextFile(path);
        for (const m of text.matchAll(/jsonRpcError\(503,/g)) {
          // The call runs to the first `);` after it: its headers must name Retry-After.
          const call = text.slice(m.index, text.indexOf(");", m.index));
          sites.push(path);
          assert.match(call, /retry-after/i, `${path}: a 503 without Retry-After`);
        }
        assert.doesNotMatch(text, /status: 503/, `${path}: a 503 built by hand`);
      }
    }
  };
  await walk(new URL("../../src", import.meta.url).pathname);
  assert.equal(sites.length, 2, `the known 503 sites: ${sites.join(", ")}`);
});
