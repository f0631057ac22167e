/**
 * The upstream behaviour behind src/workarounds/legacy_cancel_stream.ts (no upstream issue
 * found): the SDK's sessionful WebStandardStreamableHTTPServerTransport leaves the SSE response
 * stream of a request cancelled by `notifications/cancelled` open (keep-alive comments and all)
 * after its handler has stopped, since it closes a POST's stream only once every request in it
 * is answered. In process: the SDK's transport over wmcp's server factory, no socket. When the
 * first test fails, the SDK closes that stream itself: delete the workaround.
 */
import assert from "node:assert/strict";
import {
  type RequestId,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { NO_ARGUMENTS, type ServerDefinition } from "../../src/server/definition.ts";
import { createServerFactory } from "../../src/server/factory.ts";
import { cancelClosesStreams, postMessages } from "../../src/workarounds/legacy_cancel_stream.ts";

const LEGACY = "2025-11-25";

/** A tool that waits until it is cancelled, and reports that it was. */
function waitingDefinition(aborted: () => void): ServerDefinition {
  return Object.freeze({
    name: "legacy-cancel-fixture",
    version: "0.0.0",
    tools: Object.freeze([
      Object.freeze({
        name: "wait",
        description: "Waits until cancelled",
        inputSchema: NO_ARGUMENTS,
        handler: (
          _args: Record<string, unknown>,
          call: { ctx: { mcpReq: { signal: AbortSignal } } },
        ) =>
          new Promise<never>((_, reject) => {
            const signal = call.ctx.mcpReq.signal;
            signal.addEventListener("abort", () => {
              aborted();
              reject(signal.reason);
            }, { once: true });
          }),
      }),
    ]),
  }) as ServerDefinition;
}

function post(sessionId: string | undefined, body: unknown): Request {
  return new Request("http://127.0.0.1/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(sessionId === undefined ? {} : {
        "mcp-session-id": sessionId,
        "mcp-protocol-version": LEGACY,
      }),
    },
    body: JSON.stringify(body),
  });
}

/** A legacy session on a bare SDK transport whose `wait` tool is in flight as request 2. */
async function waitingCall() {
  let markAborted!: () => void;
  const aborted = new Promise<void>((r) => (markAborted = r));
  const factory = createServerFactory({ definition: waitingDefinition(markAborted) });
  const server = factory({ era: "legacy" } as never);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    keepAliveMs: 10,
  });
  await server.connect(transport);
  const init = await transport.handleRequest(post(undefined, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: LEGACY,
      capabilities: {},
      clientInfo: { name: "legacy-cancel-test", version: "0" },
    },
  }));
  const sessionId = init.headers.get("mcp-session-id")!;
  await init.text();
  await transport.handleRequest(
    post(sessionId, { jsonrpc: "2.0", method: "notifications/initialized" }),
  );
  const call = await transport.handleRequest(post(sessionId, {
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "wait", arguments: {} },
  }));
  assert.equal(call.status, 200);
  const cancel = (requestId: RequestId) =>
    transport.handleRequest(post(sessionId, {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId, reason: "test" },
    }));
  return {
    transport,
    call,
    aborted,
    cancel,
    close: async () => {
      await transport.close();
      await server.close();
    },
  };
}

Deno.test("upstream: a cancelled legacy request's SSE stream stays open after its handler stopped (SDK 2.4.0)", async () => {
  const { call, aborted, cancel, close } = await waitingCall();
  try {
    assert.equal((await cancel(2)).status, 202);
    await aborted;
    // Keep-alive comments keep coming after the handler stopped: the stream is still open.
    // (The SDK unrefs its keep-alive timer; this one keeps the event loop running meanwhile.)
    const alive = setInterval(() => {}, 1000);
    const reader = call.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    try {
      while ((text.match(/: keepalive/g) ?? []).length < 3) {
        const { done, value } = await reader.read();
        assert.equal(done, false, "upstream fixed? delete legacy_cancel_stream.ts");
        text += value;
      }
    } finally {
      clearInterval(alive);
    }
    assert.doesNotMatch(text, /"id":2/, "no response for the cancelled request");
    await reader.cancel();
  } finally {
    await close();
  }
});

Deno.test("cancelClosesStreams: the cancellation of a stream's every request closes it; other ids do nothing", async () => {
  const { transport, call, aborted, cancel, close } = await waitingCall();
  try {
    const streams = cancelClosesStreams(transport);
    const forget = streams.opened([2]);
    // Unknown ids close nothing.
    streams.cancelled([3, "2"]);
    await cancel(2);
    await aborted;
    streams.cancelled([2]);
    const text = await call.text(); // ends: the stream was closed
    assert.doesNotMatch(text, /"id":2/, "no response for the cancelled request");
    forget();
    streams.cancelled([2]); // finished: nothing to do
  } finally {
    await close();
  }
});

Deno.test("cancelClosesStreams: a batch's stream stays open until all its requests are cancelled", () => {
  const closed: RequestId[] = [];
  const streams = cancelClosesStreams({ closeSSEStream: (id) => closed.push(id) });
  const forgetBatch = streams.opened([1, 2]);
  streams.opened(["a"]);
  streams.cancelled([1]);
  assert.deepEqual(closed, []);
  streams.cancelled([2]);
  assert.deepEqual(closed, [2]);
  forgetBatch();
  streams.cancelled([1, 2]);
  assert.deepEqual(closed, [2]);
  streams.cancelled(["a"]);
  assert.deepEqual(closed, [2, "a"]);
});

Deno.test("postMessages reads a POST's request ids and the ids its cancellations name", () => {
  assert.deepEqual(
    postMessages({ jsonrpc: "2.0", id: 4, method: "tools/call", params: {} }),
    { requests: [4], cancels: [] },
  );
  assert.deepEqual(
    postMessages([
      { jsonrpc: "2.0", id: "x", method: "tools/call" },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: null } },
      { jsonrpc: "2.0", method: "notifications/cancelled" },
      { jsonrpc: "2.0", id: 9, result: {} },
      null,
      "junk",
    ]),
    { requests: ["x"], cancels: [7] },
  );
});
