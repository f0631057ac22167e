/** Real SDK clients (v2 modern, v2 forced legacy, v1 legacy) against the real HTTP server. */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1HttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { makeWorkspace, READ_TOOLS, startHttpServer } from "./_harness.ts";

Deno.test("HTTP: v2 client (modern and forced legacy) and v1 client list and call tools", async (t) => {
  const root = await makeWorkspace({
    "hello.txt": "hi there\n",
    "src/a.ts": "export const a = 1;\n",
  });
  const server = await startHttpServer(root);
  try {
    for (const mode of ["auto", "legacy"] as const) {
      await t.step(`v2 client, ${mode}`, async () => {
        const client = new Client({ name: "t", version: "0" }, { versionNegotiation: { mode } });
        await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
        try {
          assert.equal(client.getProtocolEra(), mode === "auto" ? "modern" : "legacy");
          const { tools } = await client.listTools();
          assert.deepEqual(tools.map((x) => x.name), READ_TOOLS);
          const r = await client.callTool({ name: "read_file", arguments: { path: "hello.txt" } });
          assert.equal((r.structuredContent as { content: string }).content, "hi there\n");
          const bad = await client.callTool({
            name: "get_file_info",
            arguments: { path: "/etc/passwd" },
          });
          assert.equal(bad.isError, true);
          assert.equal(
            (bad._meta?.["wmcp/error"] as { code: string }).code,
            "OUTSIDE_WORKSPACE",
          );
        } finally {
          await client.close();
        }
      });
    }
    await t.step("v1 client (legacy)", async () => {
      const client = new V1Client({ name: "t1", version: "0" });
      const transport = new V1HttpTransport(new URL(server.url));
      await client.connect(transport);
      try {
        assert.ok(transport.sessionId, "a legacy session id was issued");
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((x: { name: string }) => x.name), READ_TOOLS);
        const r = await client.callTool({ name: "find_files", arguments: { pattern: "**/*.ts" } });
        assert.deepEqual(
          (r.structuredContent as { matches: { path: string }[] }).matches.map((m) => m.path),
          ["src/a.ts"],
        );
        await transport.terminateSession();
      } finally {
        await client.close();
      }
    });
  } finally {
    const status = await server.stop();
    assert.equal(status.code, 0, server.stderr());
    await Deno.remove(root, { recursive: true });
  }
});
