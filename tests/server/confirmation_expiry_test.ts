/** An expired confirmation state is refused (in-process handler: the lifetime is a constructor option). */
import assert from "node:assert/strict";
import { IN_PROCESS_URL, type InProcessFetch, withHandler } from "../_support/handler.ts";
import { envelope, messagesOf, MODERN } from "./_harness.ts";

/** One modern delete_path call from a client that can answer a form elicitation. */
function call(fetch: InProcessFetch, params: Record<string, unknown>) {
  return fetch(IN_PROCESS_URL, {
    method: "POST",
    headers: {
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
  });
}

Deno.test("an expired requestState is refused with -32602 and nothing is deleted", async () => {
  await withHandler({
    files: { "victim.txt": "x" },
    write: true,
    confirmationTtlSeconds: 1,
    keepAliveMs: 0,
  }, async ({ fetch, root }) => {
    const first = (await messagesOf(
      await call(fetch, { name: "delete_path", arguments: { path: "victim.txt" } }),
    ))[0];
    const state = (first.result as { requestState: string }).requestState;
    assert.equal(typeof state, "string");
    await new Promise((r) => setTimeout(r, 2100));
    const late = (await messagesOf(
      await call(fetch, {
        name: "delete_path",
        arguments: { path: "victim.txt" },
        inputResponses: { confirm: { action: "accept", content: { confirm: true } } },
        requestState: state,
      }),
    ))[0];
    assert.equal((late.error as { code: number }).code, -32602);
    assert.ok(await Deno.stat(`${root}/victim.txt`));
  });
});
