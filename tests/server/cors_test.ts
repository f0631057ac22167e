/**
 * CORS for browser clients at allowed origins: real preflights and real requests (a browser's
 * requests, headers and all, as MCP Inspector's web UI sends them), served by the handler in
 * process (no socket behaviour is under test here).
 */
import assert from "node:assert/strict";
import { type InProcessFetch, withHandler } from "../_support/handler.ts";
import { envelope, MODERN } from "./_harness.ts";

const INSPECTOR = "http://localhost:6274"; // a loopback origin: allowed on any port
const CONFIGURED = "https://app.example.test"; // allowed with --allowed-origin
const FOREIGN = "https://evil.example.test";

function preflight(
  fetch: InProcessFetch,
  url: string,
  origin: string,
  requestHeaders: string,
  method = "POST",
) {
  return fetch(url, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": method,
      "access-control-request-headers": requestHeaders,
    },
  });
}

const MCP_HEADERS =
  "content-type, authorization, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, mcp-name, mcp-param-path";

Deno.test("CORS: preflights from allowed origins are answered for the MCP headers; a foreign origin gets 403 and no CORS headers", async () => {
  await withHandler({
    allowedOrigins: [CONFIGURED],
    token: "secret-token-1234567890",
  }, async ({ fetch, url }) => {
    for (const origin of [INSPECTOR, CONFIGURED]) {
      const res = await preflight(fetch, url, origin, MCP_HEADERS + ", x-not-allowed");
      await res.body?.cancel();
      // Answered before authentication: a browser's preflight carries no token.
      assert.equal(res.status, 204, origin);
      assert.equal(res.headers.get("access-control-allow-origin"), origin);
      assert.notEqual(res.headers.get("access-control-allow-origin"), "*");
      assert.deepEqual(
        res.headers.get("access-control-allow-methods")?.split(/,\s*/).sort(),
        ["DELETE", "GET", "POST"],
      );
      const allowed = res.headers.get("access-control-allow-headers")!.split(/,\s*/);
      assert.deepEqual(allowed, MCP_HEADERS.split(/,\s*/), "every MCP header, nothing else");
      assert.ok(res.headers.get("vary")?.includes("Origin"));
    }
    const bad = await preflight(fetch, url, FOREIGN, MCP_HEADERS);
    await bad.body?.cancel();
    assert.equal(bad.status, 403);
    assert.equal(bad.headers.get("access-control-allow-origin"), null);
    // Not a preflight (no Access-Control-Request-Method): an ordinary request, so the token is
    // asked for first (and, with it, OPTIONS is 405).
    const plain = await fetch(url, { method: "OPTIONS", headers: { origin: INSPECTOR } });
    await plain.body?.cancel();
    assert.equal(plain.status, 401);
    const withToken = await fetch(url, {
      method: "OPTIONS",
      headers: { origin: INSPECTOR, authorization: "Bearer secret-token-1234567890" },
    });
    await withToken.body?.cancel();
    assert.equal(withToken.status, 405);
  });
});

Deno.test("CORS: responses to an allowed origin carry it and expose the MCP headers, in both eras and on errors", async () => {
  const token = "secret-token-1234567890";
  await withHandler({ token }, async ({ fetch, url }) => {
    // Legacy era: initialize; the browser must be able to read Mcp-Session-Id.
    const init = await fetch(url, {
      method: "POST",
      headers: {
        origin: INSPECTOR,
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "browser", version: "0" },
        },
      }),
    });
    await init.body?.cancel();
    assert.equal(init.status, 200);
    assert.equal(init.headers.get("access-control-allow-origin"), INSPECTOR);
    assert.ok(init.headers.get("mcp-session-id"));
    const exposed = init.headers.get("access-control-expose-headers")!.toLowerCase();
    for (const h of ["mcp-session-id", "mcp-protocol-version", "www-authenticate"]) {
      assert.ok(exposed.includes(h), h);
    }
    // Modern era: a stateless tools/list.
    const modern = await fetch(url, {
      method: "POST",
      headers: {
        origin: INSPECTOR,
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/list",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/list",
        params: { _meta: envelope() },
      }),
    });
    const text = await modern.text();
    assert.equal(modern.status, 200, text);
    assert.ok(text.includes("read_file"));
    assert.equal(modern.headers.get("access-control-allow-origin"), INSPECTOR);
    // An error a browser must be able to read (401 and its WWW-Authenticate).
    const noToken = await fetch(url, {
      method: "POST",
      headers: { origin: INSPECTOR, "content-type": "application/json" },
      body: "{}",
    });
    await noToken.body?.cancel();
    assert.equal(noToken.status, 401);
    assert.equal(noToken.headers.get("access-control-allow-origin"), INSPECTOR);
    assert.ok(noToken.headers.get("www-authenticate"));
    // Without an Origin (SDKs, the CLI) nothing changes: no CORS headers.
    const health = await fetch(url.replace(/\/mcp$/, "/healthz"));
    await health.body?.cancel();
    assert.equal(health.headers.get("access-control-allow-origin"), null);
  });
});
