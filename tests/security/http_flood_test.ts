/**
 * HTTP floods before authentication (issue 8, section 4): a request that fails a check needing
 * no body (Host, Origin, token, method, content type) is answered WITHOUT a byte of its body
 * being read, the guards answer in their documented order, and a body that passed them is read
 * under a size cap, a time limit and a byte budget shared by all the bodies being read at once
 * (503 past it, every reservation released however its request ends). In process through the
 * handler's fetch, with bodies that record whether they were pulled; over a real 127.0.0.1 socket
 * where the socket is the subject (a slow body, many refused uploads at once).
 */
import assert from "node:assert/strict";
import {
  BUFFERED_BODIES_PER_CAP,
  createHttpHandler,
  DEFAULT_MAX_BODY_BYTES,
  type HttpHandler,
} from "../../src/server/http.ts";
import { MODERN } from "../server/_harness.ts";
import { withHandler as withInProcessHandler } from "../_support/handler.ts";

const TOKEN = "flood-test-token-0123456789";
const URL_ = "http://127.0.0.1/mcp";

/** A never-ending body that records whether anyone pulled it (nothing is read ahead). */
function probeBody(): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulls = 0;
  const chunk = new Uint8Array(256 * 1024).fill(0x20);
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      pulls++;
      c.enqueue(chunk);
    },
  }, { highWaterMark: 0 });
  return { body, pulled: () => pulls };
}

/** A complete modern tools/list body as a stream that records whether it was pulled. */
function toolsListBody(): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulls = 0;
  const bytes = new TextEncoder().encode(JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/list",
    params: {
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": { name: "flood", version: "0" },
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  }));
  let sent = false;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      pulls++;
      if (sent) c.close();
      else {
        sent = true;
        c.enqueue(bytes);
      }
    },
  }, { highWaterMark: 0 });
  return { body, pulled: () => pulls };
}

function goodHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return {
    host: "127.0.0.1:3000",
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${TOKEN}`,
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/list",
    ...extra,
  };
}

function send(
  handler: HttpHandler,
  init: { method?: string; headers: Record<string, string>; body: ReadableStream<Uint8Array> },
): Promise<Response> {
  return handler.fetch(
    new Request(URL_, { method: init.method ?? "POST", headers: init.headers, body: init.body }),
  );
}

/** Runs body with an in-process handler on a fresh read-only workspace, with TOKEN required. */
const withHandler = (
  options: { bodyTimeoutMs?: number; maxBodyBytes?: number; maxBufferedBodyBytes?: number },
  body: (handler: HttpHandler) => Promise<void>,
) => withInProcessHandler({ token: TOKEN, ...options }, ({ handler }) => body(handler));

/** What each check answers, with headers that fail it and every check before it passing. */
const REFUSALS: {
  name: string;
  method?: string;
  headers: Record<string, string>;
  status: number;
  message: RegExp;
}[] = [
  {
    name: "foreign Host",
    headers: goodHeaders({ host: "evil.example" }),
    status: 403,
    message: /Invalid Host/,
  },
  {
    name: "foreign Origin",
    headers: goodHeaders({ origin: "http://evil.example" }),
    status: 403,
    message: /Invalid Origin/,
  },
  {
    name: "no token",
    headers: (() => {
      const h = goodHeaders();
      delete h.authorization;
      return h;
    })(),
    status: 401,
    message: /Unauthorized/,
  },
  {
    name: "wrong token",
    headers: goodHeaders({ authorization: "Bearer not-the-token-0123456789" }),
    status: 401,
    message: /Unauthorized/,
  },
  {
    name: "method PUT",
    method: "PUT",
    headers: goodHeaders(),
    status: 405,
    message: /Method not allowed/,
  },
  {
    name: "text/plain body",
    headers: goodHeaders({ "content-type": "text/plain" }),
    status: 415,
    message: /Unsupported Media Type/,
  },
  {
    name: "declared Content-Length over the cap",
    headers: goodHeaders({ "content-length": String(DEFAULT_MAX_BODY_BYTES + 1) }),
    status: 413,
    message: /Request body over/,
  },
];

Deno.test("a request refused by a check that needs no body is answered without reading its body", async () => {
  await withHandler({}, async (handler) => {
    for (const r of REFUSALS) {
      const probe = probeBody();
      const res = await send(handler, { method: r.method, headers: r.headers, body: probe.body });
      const answer = await res.json();
      assert.equal(res.status, r.status, r.name);
      assert.match(answer.error.message, r.message, r.name);
      assert.equal(answer.jsonrpc, "2.0", r.name);
      assert.equal(probe.pulled(), 0, `${r.name}: no byte of the body was read`);
    }
    // The probe does record reads: a never-ending body that passed every check is read, up to
    // the cap, and refused as too large.
    const endless = probeBody();
    const big = await send(handler, { headers: goodHeaders(), body: endless.body });
    assert.equal(big.status, 413);
    await big.body?.cancel();
    assert.ok(endless.pulled() > 0, "a request that passed the checks has its body read");
    assert.ok(
      endless.pulled() * 256 * 1024 <= DEFAULT_MAX_BODY_BYTES + 256 * 1024,
      "reading stopped at the cap",
    );
    // And a good request is served from the body it read.
    const ok = toolsListBody();
    const served = await send(handler, { headers: goodHeaders(), body: ok.body });
    assert.equal(served.status, 200);
    assert.match(await served.text(), /read_file/);
    assert.ok(ok.pulled() > 0);
  });
});

Deno.test("the guards answer in order: Host, Origin, token, method, content type, body", async () => {
  await withHandler({}, async (handler) => {
    // Each row fails its own check and every check after it; the first one answers.
    const everythingWrong = {
      host: "evil.example",
      origin: "http://evil.example",
      "content-type": "text/plain",
      "content-length": String(DEFAULT_MAX_BODY_BYTES * 2),
    };
    const steps: [string, Record<string, string | undefined>, number, RegExp][] = [
      ["Host", everythingWrong, 403, /Invalid Host/],
      ["Origin", { ...everythingWrong, host: "localhost:1" }, 403, /Invalid Origin/],
      ["token", { ...everythingWrong, host: "localhost:1", origin: undefined }, 401, /Unauth/],
    ];
    for (const [name, extra, status, message] of steps) {
      const headers = goodHeaders();
      delete headers.authorization;
      for (const [k, v] of Object.entries(extra)) {
        if (v === undefined) delete headers[k];
        else headers[k] = v;
      }
      const probe = probeBody();
      const res = await send(handler, { method: "PUT", headers, body: probe.body });
      assert.equal(res.status, status, name);
      assert.match((await res.json()).error.message, message, name);
      assert.equal(probe.pulled(), 0, name);
    }
    const authed = { ...goodHeaders(), ...everythingWrong, host: "localhost", origin: "" };
    delete (authed as Record<string, string>).origin;
    const method = probeBody();
    const m = await send(handler, { method: "PUT", headers: authed, body: method.body });
    assert.equal(m.status, 405, "method before content type and size");
    assert.equal(m.headers.get("allow"), "GET, POST, DELETE");
    await m.body?.cancel();
    const type = probeBody();
    const t = await send(handler, { headers: authed, body: type.body });
    assert.equal(t.status, 415, "content type before size");
    await t.body?.cancel();
    assert.equal(method.pulled() + type.pulled(), 0);
    // /healthz needs no token but passes Host and Origin first.
    const h = await handler.fetch(
      new Request("http://127.0.0.1/healthz", { headers: { host: "evil.example" } }),
    );
    assert.equal(h.status, 403);
    await h.body?.cancel();
  });
});

/** Reads from a raw connection until `pattern` shows up or the peer closes; bounded by ms. */
async function readUntil(conn: Deno.Conn, pattern: RegExp, ms: number): Promise<string> {
  const buf = new Uint8Array(16 * 1024);
  let text = "";
  const deadline = Date.now() + ms;
  while (!pattern.test(text) && Date.now() < deadline) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const n = await Promise.race([
      conn.read(buf).catch(() => null),
      new Promise<"wait">((r) => (timer = setTimeout(() => r("wait"), deadline - Date.now()))),
    ]);
    clearTimeout(timer);
    if (n === null || n === "wait") break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return text;
}

async function withSocketServer(
  options: { bodyTimeoutMs?: number },
  body: (port: number) => Promise<void>,
): Promise<void> {
  await withHandler(options, async (handler) => {
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      handler.fetch,
    );
    try {
      await body(server.addr.port);
    } finally {
      await server.shutdown();
    }
  });
}

function postHead(port: number, extra: string): string {
  return `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json, text/event-stream\r\nAuthorization: Bearer ${TOKEN}\r\n` +
    `MCP-Protocol-Version: ${MODERN}\r\nMcp-Method: tools/list\r\n${extra}\r\n`;
}

Deno.test("a slow body over a real socket is cut by the time limit with 408", async () => {
  await withSocketServer({ bodyTimeoutMs: 300 }, async (port) => {
    // A body that stops after 10 of 1000 declared bytes.
    const stalled = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      await stalled.write(
        new TextEncoder().encode(postHead(port, "Content-Length: 1000\r\n") + '{"jsonrpc"'),
      );
      const answer = await readUntil(stalled, /\r\n\r\n[\s\S]*\}/, 5000);
      assert.match(answer, /^HTTP\/1\.1 408/, "answered 408 within the bound, not left hanging");
      assert.match(answer, /not received within 300 ms/);
    } finally {
      stalled.close();
    }
    // A body that keeps dripping one byte at a time never ends: the limit is on the whole
    // body, not on the gap between bytes.
    const drip = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      await drip.write(new TextEncoder().encode(postHead(port, "Transfer-Encoding: chunked\r\n")));
      const answer = readUntil(drip, /\r\n\r\n[\s\S]*\}/, 5000);
      let answered = false;
      answer.then(() => (answered = true));
      for (let i = 0; i < 100 && !answered; i++) {
        await drip.write(new TextEncoder().encode("1\r\n \r\n")).catch(() => {});
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.match(await answer, /^HTTP\/1\.1 408/);
    } finally {
      drip.close();
    }
    // A prompt body on the same server is served as usual.
    const fast = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": { name: "flood", version: "0" },
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      });
      await fast.write(new TextEncoder().encode(
        postHead(port, `Content-Length: ${body.length}\r\nConnection: close\r\n`) + body,
      ));
      const answer = await readUntil(fast, /read_file/, 5000);
      assert.match(answer, /^HTTP\/1\.1 200/);
    } finally {
      fast.close();
    }
  });
});

Deno.test("40 uploads with a foreign Host are all refused at once, before their bodies arrive", async () => {
  await withSocketServer({}, async (port) => {
    const conns = await Promise.all(
      Array.from({ length: 40 }, () => Deno.connect({ hostname: "127.0.0.1", port })),
    );
    try {
      // Each sends a chunked upload of 1 MiB that never ends. Refusal needs none of it, so every
      // answer comes while the uploads are still open (nothing waits for, or buffers, a body).
      const chunk = new Uint8Array(64 * 1024).fill(0x20);
      const head = new TextEncoder().encode(
        "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n" +
          "Transfer-Encoding: chunked\r\n\r\n",
      );
      const frame = new Uint8Array([
        ...new TextEncoder().encode(`${chunk.length.toString(16)}\r\n`),
        ...chunk,
        ...new TextEncoder().encode("\r\n"),
      ]);
      await Promise.all(conns.map(async (c) => {
        await c.write(head);
        for (let i = 0; i < 16; i++) await c.write(frame);
      }));
      const answers = await Promise.all(conns.map((c) => readUntil(c, /\r\n\r\n[\s\S]*\}/, 5000)));
      for (const a of answers) assert.match(a, /^HTTP\/1\.1 403/);
    } finally {
      for (const c of conns) c.close();
    }
  });
});

/** A body the test feeds by hand; records how often the reader asked for more. */
function controlledBody() {
  let ctrl!: ReadableStreamDefaultController<Uint8Array>;
  let pulls = 0;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => void (ctrl = c),
    pull: () => void pulls++,
  }, { highWaterMark: 0 });
  return {
    body,
    pulled: () => pulls,
    push: (bytes: Uint8Array) => ctrl.enqueue(bytes),
    end: () => ctrl.close(),
    fail: () => ctrl.error(new Error("the peer went away")),
  };
}

/** A modern tools/list body padded with spaces to exactly `size` bytes. */
function toolsListBytes(size: number): Uint8Array {
  const json = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/list",
    params: {
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": { name: "flood", version: "0" },
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  });
  assert.ok(json.length <= size);
  return new TextEncoder().encode(json + " ".repeat(size - json.length));
}

/** Waits, bounded, until `cond` holds. */
async function until(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), what);
}

/** Starts a POST that declares `declared` bytes (none: chunked) and sends what the test pushes. */
function stalled(handler: HttpHandler, declared?: number) {
  const body = controlledBody();
  const extra: Record<string, string> = declared === undefined
    ? {}
    : { "content-length": String(declared) };
  const res = send(handler, { headers: goodHeaders(extra), body: body.body });
  return { ...body, res };
}

async function assertBusy(res: Response, what: string): Promise<void> {
  assert.equal(res.status, 503, what);
  assert.ok(Number(res.headers.get("retry-after")) > 0, `${what}: Retry-After`);
  const answer = await res.json();
  assert.equal(answer.jsonrpc, "2.0", what);
  assert.equal(answer.error.code, -32000, what);
  assert.match(answer.error.message, /retry later/, what);
}

Deno.test("request bodies share one byte budget: past it 503 with Retry-After, unread; every exit releases its share", async () => {
  const CAP = 1000;
  await withHandler(
    { maxBodyBytes: CAP, maxBufferedBodyBytes: 3 * CAP, bodyTimeoutMs: 4000 },
    async (handler) => {
      // Three stalled uploads each declare the cap: the budget is taken up front, before a byte.
      const held = [stalled(handler, CAP), stalled(handler, CAP), stalled(handler, CAP)];
      await until(() => held.every((h) => h.pulled() > 0), "the three uploads are being read");
      // Now nothing fits: a small declared body is refused without a byte read...
      const small = toolsListBody();
      const refused = await send(handler, {
        headers: goodHeaders({ "content-length": String(toolsListBytes(300).length) }),
        body: small.body,
      });
      await assertBusy(refused, "declared body over the budget");
      assert.equal(small.pulled(), 0, "the refused declared body was not read");
      // ...and a body without a length is refused at its first chunk, and read no further.
      const chunked = stalled(handler);
      await until(() => chunked.pulled() > 0, "the chunked upload is being read");
      chunked.push(new Uint8Array(10).fill(0x20));
      const chunkedRes = await chunked.res;
      await assertBusy(chunkedRes, "chunked body over the budget");
      assert.equal(chunkedRes.headers.get("connection"), "close");
      assert.equal(chunked.pulled(), 1, "reading stopped at once");

      // Release paths. The peer breaks off: 400, and its 1000 bytes come back.
      held[0].fail();
      assert.equal((await held[0].res).status, 400);
      await (await held[0].res).body?.cancel();
      // A chunked body is counted as its chunks arrive: with 500 bytes left, 300 fit and 300
      // more do not (though the 600 are under the cap).
      const half = stalled(handler, CAP / 2);
      await until(() => half.pulled() > 0, "a half-size upload is being read");
      const growing = stalled(handler);
      await until(() => growing.pulled() > 0, "the chunked upload is being read");
      growing.push(new Uint8Array(300).fill(0x20));
      await until(() => growing.pulled() > 1, "its first chunk was taken");
      growing.push(new Uint8Array(300).fill(0x20));
      await assertBusy(await growing.res, "a chunk past the budget");
      half.fail();
      await (await half.res).body?.cancel();
      // Done: a complete body is served (and its share released once the request is answered).
      held[1].push(toolsListBytes(CAP));
      held[1].end();
      const done = await held[1].res;
      assert.equal(done.status, 200);
      assert.match(await done.text(), /read_file/);
      // Over the cap: 413.
      held[2].push(new Uint8Array(CAP + 1).fill(0x20));
      const big = await held[2].res;
      assert.equal(big.status, 413);
      await big.body?.cancel();

      // Everything came back: the whole budget is free again (three full reservations fit, a
      // fourth does not).
      const again = [stalled(handler, CAP), stalled(handler, CAP), stalled(handler, CAP)];
      await until(() => again.every((h) => h.pulled() > 0), "the whole budget is free again");
      const fourth = stalled(handler, CAP);
      await assertBusy(await fourth.res, "the budget is enforced again");
      assert.equal(fourth.pulled(), 0);
      // Timed out: 408 each, and their shares come back too.
      for (const h of again) {
        const res = await h.res;
        assert.equal(res.status, 408);
        await res.body?.cancel();
      }
      const served = await send(handler, {
        headers: goodHeaders({ "content-length": String(CAP) }),
        body: new Blob([toolsListBytes(CAP) as BlobPart]).stream(),
      });
      assert.equal(served.status, 200, "a normal request passes afterwards");
      assert.match(await served.text(), /read_file/);
      const last = [stalled(handler, CAP), stalled(handler, CAP), stalled(handler, CAP)];
      await until(() => last.every((h) => h.pulled() > 0), "free again after the 408s");
      for (const h of last) {
        h.fail();
        await (await h.res).body?.cancel();
      }
    },
  );
});

Deno.test("the body budget defaults to BUFFERED_BODIES_PER_CAP (2) bodies of the cap and cannot be set below the cap", async () => {
  await withHandler({}, async (handler) => {
    const held = Array.from(
      { length: BUFFERED_BODIES_PER_CAP },
      () => stalled(handler, DEFAULT_MAX_BODY_BYTES),
    );
    await until(
      () => held.every((h) => h.pulled() > 0),
      "every full-size upload the budget holds is read",
    );
    const oneMore = stalled(handler, DEFAULT_MAX_BODY_BYTES);
    await assertBusy(await oneMore.res, "one full-size upload more");
    for (const h of held) {
      h.fail();
      await (await h.res).body?.cancel();
    }
  });
  assert.throws(
    () => createHttpHandler({ token: TOKEN, maxBodyBytes: 1000, maxBufferedBodyBytes: 999 }),
    RangeError,
  );
});
