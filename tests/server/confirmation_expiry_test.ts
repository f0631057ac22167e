/** An expired confirmation state is refused (in-process handler: the lifetime is a constructor option). */
import assert from "node:assert/strict";
import { Workspace } from "../../mod.ts";
import { createHttpHandler } from "../../src/server/http.ts";
import { envelope, makeWorkspace, messagesOf, MODERN } from "./_harness.ts";

function call(
  handler: { fetch: (r: Request) => Promise<Response> },
  params: Record<string, unknown>,
) {
  return handler.fetch(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: {
        host: "127.0.0.1",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "delete_path",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { ...params, _meta: envelope({ elicitation: { form: {} } }) },
      }),
    }),
  );
}

Deno.test("an expired requestState is refused with -32602 and nothing is deleted", async () => {
  const root = await makeWorkspace({ "victim.txt": "x" });
  const workspace = await Workspace.open({ root, writable: true });
  const handler = createHttpHandler({ workspace, confirmationTtlSeconds: 1, keepAliveMs: 0 });
  try {
    const first = (await messagesOf(
      await call(handler, { name: "delete_path", arguments: { path: "victim.txt" } }),
    ))[0];
    const state = (first.result as { requestState: string }).requestState;
    assert.equal(typeof state, "string");
    await new Promise((r) => setTimeout(r, 2100));
    const late = (await messagesOf(
      await call(handler, {
        name: "delete_path",
        arguments: { path: "victim.txt" },
        inputResponses: { confirm: { action: "accept", content: { confirm: true } } },
        requestState: state,
      }),
    ))[0];
    assert.equal((late.error as { code: number }).code, -32602);
    assert.ok(await Deno.stat(`${root}/victim.txt`));
  } finally {
    await handler.close();
    await Deno.remove(root, { recursive: true });
  }
});
