/**
 * The workspace server's prompt and resource lists: declared, empty, cacheable; unknown URIs are
 * -32602. Raw requests go to the handler in process; the SDK client connects over a socket.
 */
import assert from "node:assert/strict";
import { Client, ProtocolError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { inProcessFetch, withLoopbackServer } from "../_support/handler.ts";
import { modernRequest } from "./_harness.ts";

Deno.test("workspace server: empty prompt and resource lists on both eras, unknown resource is -32602 with data.uri", async (t) => {
  await withLoopbackServer({}, async ({ handler, url }) => {
    const fetch = inProcessFetch(handler);
    await t.step("modern: declared in server/discover, empty lists with cache hints", async () => {
      const d = await modernRequest(url, "server/discover", {}, { fetch });
      const caps = (d.messages[0].result as { capabilities: Record<string, unknown> }).capabilities;
      assert.deepEqual(caps.prompts, { listChanged: false });
      assert.deepEqual(caps.resources, { listChanged: false });
      for (
        const [method, key] of [
          ["prompts/list", "prompts"],
          ["resources/list", "resources"],
          ["resources/templates/list", "resourceTemplates"],
        ]
      ) {
        const r = await modernRequest(url, method, {}, { fetch });
        assert.equal(r.status, 200);
        const result = r.messages.at(-1)!.result as Record<string, unknown>;
        assert.deepEqual(result[key], [], method);
        assert.equal(result.resultType, "complete");
        assert.equal(result.ttlMs, 60000);
        assert.equal(result.cacheScope, "public");
        assert.equal(result.nextCursor, undefined);
      }
    });

    await t.step(
      "modern: resources/read of an unknown URI, prompts/get of an unknown prompt",
      async () => {
        const uri = "test://no-such-resource";
        const r = await modernRequest(url, "resources/read", { uri }, {
          headers: { "mcp-name": uri },
          fetch,
        });
        const error = r.messages.at(-1)!.error as { code: number; data?: { uri?: string } };
        assert.equal(error.code, -32602);
        assert.equal(error.data?.uri, uri);
        const p = await modernRequest(url, "prompts/get", { name: "nope" }, {
          headers: { "mcp-name": "nope" },
          fetch,
        });
        assert.equal((p.messages.at(-1)!.error as { code: number }).code, -32602);
        const c = await modernRequest(url, "prompts/list", { cursor: "bogus" }, { fetch });
        assert.equal((c.messages.at(-1)!.error as { code: number }).code, -32602, "invalid cursor");
      },
    );

    await t.step("legacy: the same lists and errors through the SDK client", async () => {
      const client = new Client({ name: "lists", version: "0" }, {
        versionNegotiation: { mode: "legacy" },
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        assert.deepEqual((await client.listPrompts()).prompts, []);
        assert.deepEqual((await client.listResources()).resources, []);
        assert.deepEqual((await client.listResourceTemplates()).resourceTemplates, []);
        await assert.rejects(
          client.readResource({ uri: "file:///etc/passwd" }),
          (e: unknown) => e instanceof ProtocolError && e.code === -32602,
        );
      } finally {
        await client.close();
      }
    });
  });
});
