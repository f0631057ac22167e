/**
 * Legacy-session floods (issue 8, section 4): a burst of `initialize` requests cannot lock later
 * legacy clients out. Unused sessions expire (driven by an injected clock, never by waiting), a
 * full table evicts the least recently used IDLE session, a session with a request in flight is
 * never evicted, a standing GET stream does not make a session busy (evicting or expiring it ends
 * the stream), and with tokens each client holds at most its share of the table. In process,
 * through the handler's fetch.
 */
import assert from "node:assert/strict";
import {
  DEFAULT_UNUSED_SESSION_MS,
  type HttpHandler,
  type HttpHandlerOptions,
} from "../../src/server/http.ts";
import { NO_ARGUMENTS, type ServerDefinition } from "../../src/server/definition.ts";
import { withHandler as withInProcessHandler } from "../_support/handler.ts";

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
  let calls = 0;
  const released = new Promise<void>((r) => (release = r));
  const started = new Promise<void>((r) => (entered = () => (calls++, r())));
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
  return { definition, release, started, calls: () => calls };
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

/** Runs body with an in-process handler on the given definition. */
const withHandler = (
  options: Partial<HttpHandlerOptions> & Pick<HttpHandlerOptions, "definition">,
  body: (handler: HttpHandler) => Promise<void>,
) => withInProcessHandler(options, ({ handler }) => body(handler));

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

/** Starts a `hold` call on a session; resolves to its response text once released. */
function holdCall(handler: HttpHandler, session: string, token?: string): Promise<string> {
  return handler.fetch(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: headers(token, { "mcp-session-id": session, "mcp-protocol-version": LEGACY }),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "hold", arguments: {} },
      }),
    }),
  ).then((r) => r.text());
}

/** Sends an initialize and returns the response status (the body is read in full). */
async function initializeStatus(handler: HttpHandler, token?: string): Promise<number> {
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
          clientInfo: { name: "x", version: "0" },
        },
      }),
    }),
  );
  const text = await res.text();
  if (res.status === 503) assert.equal(JSON.parse(text).error.code, -32000);
  return res.status;
}

/**
 * Whether a stream's body ends (the server closed it) within `ms`, reading whatever it sends
 * (priming events, keep-alives). Bounded in time; cancels the body when it did not end.
 */
async function streamEnds(res: Response, ms: number): Promise<boolean> {
  const reader = res.body!.getReader();
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const r = await Promise.race([
      reader.read().catch(() => ({ done: true as const, value: undefined })),
      new Promise<"wait">((ok) => (timer = setTimeout(() => ok("wait"), deadline - Date.now()))),
    ]);
    clearTimeout(timer);
    if (r === "wait") break;
    if (r.done) return true;
  }
  reader.cancel().catch(() => {});
  return false;
}

/** Cancels the bodies of open streams (test cleanup). */
async function cancelAll(streams: Response[]): Promise<void> {
  await Promise.all(streams.map((s) => s.body?.cancel().catch(() => {})));
}

Deno.test("a session with a request in flight is never evicted; when every session has one, a newcomer gets 503", async () => {
  const clock = manualClock();
  const hold = holdingDefinition();
  await withHandler(
    { definition: hold.definition, now: clock.now, maxSessions: 3 },
    async (handler) => {
      const working = await initialize(handler);
      clock.tick();
      const idle = await initialize(handler);
      clock.tick();
      const third = await initialize(handler);
      clock.tick();
      const calls = [holdCall(handler, working)];
      await hold.started;
      // The working session is the least recently used, but has a call in flight: the idle one
      // after it goes instead.
      const newcomer = await initialize(handler);
      assert.equal(await request(handler, idle), 404, "the idle session was evicted");
      assert.equal(await request(handler, working, { method: "ping" }), 200, "in flight: kept");
      // Now every session has a call in flight: nothing can be evicted.
      calls.push(holdCall(handler, third), holdCall(handler, newcomer));
      for (let i = 0; i < 200 && hold.calls() < 3; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(hold.calls(), 3);
      clock.advance(24 * 60 * 60 * 1000); // nor does a call in flight ever expire
      assert.equal(await initializeStatus(handler), 503, "every session in flight: refused");
      assert.equal(handler.sessionCount(), 3);
      for (const id of [working, third, newcomer]) {
        assert.equal(await request(handler, id, { method: "ping" }), 200);
      }
      hold.release();
      for (const c of calls) assert.match(await c, /released/, "each call completed");
      clock.tick();
      assert.equal(await initializeStatus(handler), 200, "calls done: a newcomer gets in");
    },
  );
});

Deno.test("without tokens, 100 sessions each holding an open GET stream do not lock a newcomer out", async () => {
  const clock = manualClock();
  await withHandler({ definition: plain(), now: clock.now }, async (handler) => {
    const ids: string[] = [];
    const streams: Response[] = [];
    try {
      for (let i = 0; i < 100; i++) {
        ids.push(await initialize(handler));
        streams.push(await openStream(handler, ids[i]));
        clock.tick();
      }
      assert.equal(handler.sessionCount(), 100);
      // The streams are never read. The newcomer evicts the session whose last REQUEST is the
      // oldest; its stream ends and its id is gone.
      const newcomer = await initialize(handler);
      assert.equal(handler.sessionCount(), 100, "the table stays bounded");
      assert.equal(await request(handler, newcomer), 200, "the newcomer's session works");
      assert.ok(await streamEnds(streams[0], 5000), "the evicted session's stream ended");
      assert.equal(await request(handler, ids[0]), 404, "the evicted session's id is gone");
      assert.equal(await request(handler, ids[1], { method: "ping" }), 200, "the next is kept");
      assert.equal(await request(handler, ids[99], { method: "ping" }), 200);
      // A standing stream does not keep a session alive: idle for the idle bound (by its last
      // request), it expires like any other, and its stream ends.
      clock.advance(30 * 60 * 1000);
      assert.equal(await initializeStatus(handler), 200);
      assert.equal(handler.sessionCount(), 1, "every idle session expired, streams or not");
      assert.ok(await streamEnds(streams[50], 5000), "an expired session's stream ended");
      assert.equal(await request(handler, ids[50]), 404);
    } finally {
      await cancelAll(streams);
    }
  });
});

Deno.test("with tokens, one client's 100 standing streams take at most its share; the other gets in, then and later", async () => {
  const clock = manualClock();
  await withHandler(
    { definition: plain(), now: clock.now, tokens: [TOKEN_A, TOKEN_B], maxSessions: 100 },
    async (handler) => {
      const a: string[] = [];
      const streams: Response[] = [];
      try {
        for (let i = 0; i < 100; i++) {
          a.push(await initialize(handler, TOKEN_A));
          streams.push(await openStream(handler, a[i], TOKEN_A));
          clock.tick();
        }
        assert.equal(handler.sessionCount(), 50, "A holds at most its share, ceil(100 / 2)");
        assert.ok(await streamEnds(streams[0], 5000), "A's own oldest session made way");
        assert.equal(await request(handler, a[0], { token: TOKEN_A }), 404);
        assert.equal(await request(handler, a[99], { token: TOKEN_A, method: "ping" }), 200);
        const b = await initialize(handler, TOKEN_B);
        assert.equal(await request(handler, b, { token: TOKEN_B }), 200, "B got in at once");
        clock.advance(65_000); // keep-alives would keep the streams open; B still gets in
        assert.equal(await initializeStatus(handler, TOKEN_B), 200);
        // B floods in turn: it fills its own share and then replaces its own sessions, never A's.
        for (let i = 0; i < 60; i++) {
          assert.equal(await initializeStatus(handler, TOKEN_B), 200);
          clock.tick();
        }
        assert.equal(handler.sessionCount(), 100);
        for (const id of a.slice(50)) {
          assert.equal(await request(handler, id, { token: TOKEN_A, method: "ping" }), 200);
        }
      } finally {
        await cancelAll(streams);
      }
    },
  );
});

Deno.test("a client at its share whose sessions all have a request in flight gets 503; others still get in", async () => {
  const clock = manualClock();
  const hold = holdingDefinition();
  await withHandler(
    { definition: hold.definition, now: clock.now, tokens: [TOKEN_A, TOKEN_B], maxSessions: 4 },
    async (handler) => {
      const a1 = await initialize(handler, TOKEN_A);
      const a2 = await initialize(handler, TOKEN_A);
      const calls = [holdCall(handler, a1, TOKEN_A), holdCall(handler, a2, TOKEN_A)];
      for (let i = 0; i < 200 && hold.calls() < 2; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(await initializeStatus(handler, TOKEN_A), 503, "A at its share, all in flight");
      assert.equal(await initializeStatus(handler, TOKEN_B), 200, "B is under its share");
      assert.equal(handler.sessionCount(), 3);
      hold.release();
      for (const c of calls) assert.match(await c, /released/);
    },
  );
});

Deno.test("three tokens: a newcomer under its share at a full table evicts from the most loaded client", async () => {
  const clock = manualClock();
  const TOKEN_C = "token-of-client-c-0123456789";
  await withHandler(
    { definition: plain(), now: clock.now, tokens: [TOKEN_A, TOKEN_B, TOKEN_C], maxSessions: 10 },
    async (handler) => {
      const open = async (token: string, n: number) => {
        const ids: string[] = [];
        for (let i = 0; i < n; i++) {
          ids.push(await initialize(handler, token));
          clock.tick();
        }
        return ids;
      };
      // Shares are ceil(10 / 3) = 4: A 4, B 4, C 2 fill the table.
      const a = await open(TOKEN_A, 4);
      const b = await open(TOKEN_B, 4);
      const c = await open(TOKEN_C, 2);
      assert.equal(handler.sessionCount(), 10);
      // C (2, under its share) evicts the least recently used of the most loaded (A and B tie).
      await open(TOKEN_C, 1);
      assert.equal(await request(handler, a[0], { token: TOKEN_A }), 404);
      // Now B is the most loaded.
      await open(TOKEN_C, 1);
      assert.equal(await request(handler, b[0], { token: TOKEN_B }), 404);
      // C is at its share: it replaces its own oldest.
      await open(TOKEN_C, 1);
      assert.equal(await request(handler, c[0], { token: TOKEN_C }), 404);
      assert.equal(handler.sessionCount(), 10);
      for (const id of a.slice(1)) {
        assert.equal(await request(handler, id, { token: TOKEN_A }), 200);
      }
      for (const id of b.slice(1)) {
        assert.equal(await request(handler, id, { token: TOKEN_B }), 200);
      }
      assert.equal(await request(handler, c[1], { token: TOKEN_C }), 200);
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
      // A holds at most its share (5): its later sessions replaced its own oldest.
      assert.equal(handler.sessionCount(), 5);
      assert.equal(await request(handler, a[0], { token: TOKEN_A }), 404);
      assert.equal(await request(handler, a[9], { token: TOKEN_A }), 200);
      const b: string[] = [];
      for (let i = 0; i < 3; i++) {
        b.push(await initialize(handler, TOKEN_B));
        clock.tick();
      }
      // A floods again, far more than the table holds: B's sessions, older than all of A's
      // newest, are never touched.
      for (let i = 0; i < 30; i++) {
        await initialize(handler, TOKEN_A);
        clock.tick();
      }
      for (const id of b) assert.equal(await request(handler, id, { token: TOKEN_B }), 200);
      assert.equal(handler.sessionCount(), 8);
      // A session belongs to its client: another token does not find it.
      assert.equal(await request(handler, b[0], { token: TOKEN_A }), 404);
      assert.equal(await request(handler, b[0], { token: TOKEN_B }), 200);
    },
  );
});
