/**
 * Legacy-session floods (issue 8, section 4): a burst of `initialize` requests cannot lock later
 * legacy clients out. Unused sessions expire (driven by an injected clock, never by waiting), a
 * full table evicts the least recently used IDLE session, a session with an open stream or a
 * request in flight is never evicted, and with tokens one client cannot evict the others'.
 * In process, through the handler's fetch.
 */
import assert from "node:assert/strict";
import {
  createHttpHandler,
  DEFAULT_UNUSED_SESSION_MS,
  type HttpHandler,
  type HttpHandlerOptions,
} from "../../src/server/http.ts";
import { NO_ARGUMENTS, type ServerDefinition } from "../../src/server/definition.ts";

const LEGACY = "2025-11-25";
const TOKEN_A = "token-of-client-a-0123456789";
const TOKEN_B = "token-of-client-b-0123456789";

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms), tick: () => void (t += 1) };
}

/** A server with one tool, `hold`, whose calls stay in flight until the test releases them. */
function holdingDefinition() {
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

function headers(token?: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    host: "127.0.0.1",
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    ...extra,
  };
}

/** Opens a legacy session; returns its id (the initialize response is read in full). */
async function initialize(handler: HttpHandler, token?: string): Promise<string> {
  const res = await handler.fetch(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: headers(token),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: LEGACY,
          capabilities: {},
          clientInfo: { name: "flood", version: "0" },
        },
      }),
    }),
  );
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const id = res.headers.get("mcp-session-id");
  assert.ok(id, "a session id");
  return id;
}

/** Sends a legacy request on a session; returns the status (the body is read in full). */
async function request(
  handler: HttpHandler,
  session: string,
  options: { token?: string; method?: string; id?: number; params?: unknown } = {},
): Promise<number> {
  const res = await handler.fetch(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: headers(options.token, {
        "mcp-session-id": session,
        "mcp-protocol-version": LEGACY,
      }),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: options.id ?? 1,
        method: options.method ?? "tools/list",
        params: options.params ?? {},
      }),
    }),
  );
  await res.body?.cancel();
  return res.status;
}

/** Opens a session's standalone GET stream; returns the response (its body left open). */
async function openStream(handler: HttpHandler, session: string, token?: string) {
  const res = await handler.fetch(
    new Request("http://127.0.0.1/mcp", {
      method: "GET",
      headers: {
        host: "127.0.0.1",
        accept: "text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": LEGACY,
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
    }),
  );
  assert.equal(res.status, 200);
  return res;
}

async function withHandler(
  options: Partial<HttpHandlerOptions> & Pick<HttpHandlerOptions, "definition">,
  body: (handler: HttpHandler) => Promise<void>,
): Promise<void> {
  const handler = createHttpHandler(options);
  try {
    await body(handler);
  } finally {
    await handler.close();
  }
}

const plain = (): ServerDefinition => holdingDefinition().definition;

Deno.test("100 initializes in a burst, then a newcomer still gets a session (the least recently used idle one goes)", async () => {
  const clock = manualClock();
  await withHandler({ definition: plain(), now: clock.now }, async (handler) => {
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      ids.push(await initialize(handler));
      clock.tick();
    }
    assert.equal(handler.sessionCount(), 100);
    const newcomer = await initialize(handler);
    assert.equal(handler.sessionCount(), 100, "the table stays bounded");
    assert.equal(await request(handler, newcomer), 200, "the newcomer's session works");
    assert.equal(
      await request(handler, ids[0]),
      404,
      "the least recently used idle session was evicted",
    );
    assert.equal(await request(handler, ids[99]), 200, "a recent session is untouched");
    // Use brings a session forward: ids[1] is now the most recent, ids[2] the least.
    clock.tick();
    assert.equal(await request(handler, ids[1]), 200);
    clock.tick();
    await initialize(handler);
    assert.equal(await request(handler, ids[1]), 200, "a recently used session stays");
    assert.equal(await request(handler, ids[2]), 404, "the least recently used one went");
  });
});

Deno.test("a session never used after initialize expires within a minute; a used one stays", async () => {
  assert.ok(DEFAULT_UNUSED_SESSION_MS <= 60_000, "the default is at most a minute");
  const clock = manualClock();
  await withHandler({ definition: plain(), now: clock.now }, async (handler) => {
    const unused = await initialize(handler);
    const used = await initialize(handler);
    assert.equal(await request(handler, used, { method: "tools/list" }), 200);
    clock.advance(DEFAULT_UNUSED_SESSION_MS - 1);
    assert.equal(await request(handler, used), 200, "before the bound nothing expires");
    assert.equal(handler.sessionCount(), 2);
    clock.advance(2);
    assert.equal(await request(handler, used), 200, "a used session outlives the unused bound");
    assert.equal(handler.sessionCount(), 1, "the unused session was closed");
    assert.equal(await request(handler, unused), 404);
  });
  // The bound is configurable, and the idle bound still closes a used session.
  const clock2 = manualClock();
  await withHandler(
    { definition: plain(), now: clock2.now, unusedSessionMs: 5_000, sessionIdleMs: 20_000 },
    async (handler) => {
      const a = await initialize(handler);
      const b = await initialize(handler);
      assert.equal(await request(handler, b), 200);
      clock2.advance(5_000);
      await initialize(handler); // any legacy request sweeps
      assert.equal(await request(handler, a), 404, "unused for 5 s: closed");
      assert.equal(await request(handler, b), 200);
      clock2.advance(20_000);
      await initialize(handler);
      assert.equal(await request(handler, b), 404, "idle for 20 s: closed");
    },
  );
});

Deno.test("a session with an open stream or a request in flight is never evicted; all busy is 503", async () => {
  const clock = manualClock();
  const hold = holdingDefinition();
  await withHandler(
    { definition: hold.definition, now: clock.now, maxSessions: 3 },
    async (handler) => {
      const streaming = await initialize(handler);
      clock.tick();
      const working = await initialize(handler);
      clock.tick();
      const idle = await initialize(handler);
      clock.tick();
      const stream = await openStream(handler, streaming);
      // A tools/call that stays in flight until released.
      const inflight = handler.fetch(
        new Request("http://127.0.0.1/mcp", {
          method: "POST",
          headers: headers(undefined, {
            "mcp-session-id": working,
            "mcp-protocol-version": LEGACY,
          }),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 5,
            method: "tools/call",
            params: { name: "hold", arguments: {} },
          }),
        }),
      ).then((r) => r.text());
      await hold.started;
      // Both busy sessions are the least recently used; each newcomer evicts an idle one instead.
      const first = await initialize(handler);
      assert.equal(await request(handler, idle), 404, "the idle session was evicted");
      clock.tick();
      await initialize(handler);
      assert.equal(await request(handler, first), 404, "then the next idle one");
      for (let i = 0; i < 5; i++) {
        clock.tick();
        await initialize(handler);
      }
      assert.equal(
        await request(handler, streaming, { method: "ping" }),
        200,
        "streaming session kept",
      );
      assert.equal(handler.sessionCount(), 3);
      // Make the third session busy too (an open stream): now nothing is idle.
      const last = await initialize(handler);
      const lastStream = await openStream(handler, last);
      const refused = await handler.fetch(
        new Request("http://127.0.0.1/mcp", {
          method: "POST",
          headers: headers(),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 0,
            method: "initialize",
            params: {
              protocolVersion: LEGACY,
              capabilities: {},
              clientInfo: { name: "x", version: "0" },
            },
          }),
        }),
      );
      assert.equal(refused.status, 503, "every session busy: the newcomer is refused");
      assert.equal((await refused.json()).error.code, -32000);
      assert.equal(handler.sessionCount(), 3);
      for (const id of [streaming, last]) {
        assert.equal(
          await request(handler, id, { method: "ping" }),
          200,
        );
      }
      hold.release();
      assert.match(await inflight, /released/, "the in-flight call completed on its session");
      await stream.body?.cancel();
      await lastStream.body?.cancel();
      // Streams closed, call done: the sessions are idle again and a newcomer gets in.
      clock.tick();
      await initialize(handler);
      assert.equal(handler.sessionCount(), 3);
    },
  );
});

Deno.test("per-token fairness: one client's flood evicts only its own sessions", async () => {
  const clock = manualClock();
  await withHandler(
    { definition: plain(), now: clock.now, tokens: [TOKEN_A, TOKEN_B], maxSessions: 10 },
    async (handler) => {
      const a: string[] = [];
      for (let i = 0; i < 10; i++) {
        a.push(await initialize(handler, TOKEN_A));
        clock.tick();
      }
      // B arrives at a full table: it takes A's least recently used sessions.
      const b: string[] = [];
      for (let i = 0; i < 3; i++) {
        b.push(await initialize(handler, TOKEN_B));
        clock.tick();
      }
      assert.equal(await request(handler, a[0], { token: TOKEN_A }), 404);
      assert.equal(await request(handler, a[3], { token: TOKEN_A }), 200);
      // A floods again, far more than the table holds: B's sessions, older than all of A's
      // newest, are never touched.
      for (let i = 0; i < 30; i++) {
        await initialize(handler, TOKEN_A);
        clock.tick();
      }
      for (const id of b) assert.equal(await request(handler, id, { token: TOKEN_B }), 200);
      assert.equal(handler.sessionCount(), 10);
      // A session belongs to its client: another token does not find it.
      assert.equal(await request(handler, b[0], { token: TOKEN_A }), 404);
      assert.equal(await request(handler, b[0], { token: TOKEN_B }), 200);
    },
  );
});
