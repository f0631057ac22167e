/**
 * The upstream misbehaviour behind src/workarounds/sse_first_frame.ts (no upstream issue
 * found): the SDK's createMcpHandler in `responseMode: "sse"` answers a tools/call whose
 * handler asks for a capability the client did not declare with a 200 event stream carrying
 * -32021, although 2026-07-28 (and the SDK's own httpStatusForErrorCode) say HTTP 400. In
 * process: the SDK's handler over wmcp's server factory, no socket. When the first test
 * fails, the SDK answers 400 itself: delete the workaround.
 */
import assert from "node:assert/strict";
import { createMcpHandler, inputRequired, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { NO_ARGUMENTS, type ServerDefinition } from "../../src/server/definition.ts";
import { createServerFactory } from "../../src/server/factory.ts";
import { commitAtFirstFrame } from "../../src/workarounds/sse_first_frame.ts";

const MODERN = "2026-07-28";

const DEFINITION: ServerDefinition = Object.freeze({
  name: "first-frame-fixture",
  version: "0.0.0",
  tools: Object.freeze([
    Object.freeze({
      name: "needs_sampling",
      description: "Asks for sampling whatever the client declared",
      inputSchema: NO_ARGUMENTS,
      handler: () =>
        inputRequired({
          inputRequests: {
            ask: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: "hi" } }],
              maxTokens: 5,
            }),
          },
        }),
    }),
    Object.freeze({
      name: "plain",
      description: "Returns text",
      inputSchema: NO_ARGUMENTS,
      handler: () => ({ content: [{ type: "text" as const, text: "ok" }] }),
    }),
  ]),
});

/** A modern tools/call request declaring no client capabilities. */
function call(name: string): Request {
  return new Request("http://127.0.0.1/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": name,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: {
        name,
        arguments: {},
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientInfo": { name: "first-frame-test", version: "0" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
}

function sdkHandler() {
  return createMcpHandler(createServerFactory({ definition: DEFINITION }), {
    legacy: "reject",
    responseMode: "sse",
  });
}

Deno.test("upstream: in SSE response mode the SDK sends -32021 on a 200 stream (SDK 2.4.0)", async () => {
  const handler = sdkHandler();
  try {
    const res = await handler.fetch(call("needs_sampling"));
    const body = await res.text();
    assert.match(body, new RegExp(`"code":${ProtocolErrorCode.MissingRequiredClientCapability}`));
    assert.equal(res.status, 200, "upstream fixed? delete sse_first_frame.ts");
    assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
  } finally {
    await handler.close();
  }
});

Deno.test("commitAtFirstFrame turns that stream into HTTP 400 JSON; other streams stay 200 SSE", async () => {
  const handler = sdkHandler();
  try {
    const refused = await commitAtFirstFrame(await handler.fetch(call("needs_sampling")));
    assert.equal(refused.status, 400);
    assert.match(refused.headers.get("content-type") ?? "", /application\/json/);
    const message = await refused.json();
    assert.equal(message.id, 7);
    assert.equal(message.error.code, ProtocolErrorCode.MissingRequiredClientCapability);

    const ok = await commitAtFirstFrame(await handler.fetch(call("plain")));
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get("content-type") ?? "", /text\/event-stream/);
    assert.match(await ok.text(), /"text":"ok"/);
  } finally {
    await handler.close();
  }
});
