/**
 * The upstream misbehaviour behind src/workarounds/sdk_console_warn.ts
 * (modelcontextprotocol/typescript-sdk#2370): the SDK's Client calls console.warn for a tool it
 * excludes from tools/list for an invalid x-mcp-header declaration, with no logger option.
 * A real SDK client lists a real wmcp HTTP handler on 127.0.0.1. When the first test fails, the
 * SDK no longer writes to the console: delete the workaround.
 */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { cachedSchema, type ServerDefinition } from "../../src/server/definition.ts";
import { createHttpHandler } from "../../src/server/http.ts";
import {
  SDK_TOOL_EXCLUSION_WARNING,
  withoutSdkToolExclusionWarnings,
} from "../../src/workarounds/sdk_console_warn.ts";

/** One tool whose x-mcp-header ("Bad Name") is not an HTTP token, one whose is. */
const DEFINITION: ServerDefinition = Object.freeze({
  name: "warn-fixture",
  version: "0.0.0",
  tools: Object.freeze(["Bad Name", "Region"].map((header, i) =>
    Object.freeze({
      name: i === 0 ? "bad_header" : "good_header",
      description: `region declares x-mcp-header ${JSON.stringify(header)}`,
      inputSchema: cachedSchema({
        type: "object",
        properties: { region: { type: "string", "x-mcp-header": header } },
      }),
      handler: () => ({ content: [{ type: "text" as const, text: "ok" }] }),
    })
  )),
});

/** Runs fn with a modern SDK client connected to the fixture over Streamable HTTP. */
async function withClient(fn: (client: Client) => Promise<void>): Promise<void> {
  const handler = createHttpHandler({ definition: DEFINITION });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler.fetch);
  const client = new Client({ name: "warn-test", version: "0" }, {
    versionNegotiation: { mode: "auto" },
  });
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.addr.port}/mcp`)),
    );
    assert.equal(client.getProtocolEra(), "modern");
    await fn(client);
  } finally {
    await client.close().catch(() => {});
    handler.closeIdleStreams();
    await server.shutdown();
    await handler.close();
  }
}

/** Runs fn with console.warn recorded (and silenced); returns the first arguments seen. */
async function recordingWarnings(fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const original = console.warn;
  console.warn = (...a: unknown[]) => void seen.push(String(a[0]));
  try {
    await fn();
  } finally {
    console.warn = original;
  }
  return seen;
}

Deno.test("upstream: the SDK client console.warns about a tool it excludes (SDK 2.4.0)", async () => {
  await withClient(async (client) => {
    let names: string[] = [];
    const seen = await recordingWarnings(async () => {
      names = (await client.listTools()).tools.map((t) => t.name);
    });
    assert.deepEqual(names, ["good_header"], "the SDK excludes bad_header");
    assert.ok(
      seen.some((w) => w.startsWith(`${SDK_TOOL_EXCLUSION_WARNING} 'bad_header'`)),
      `upstream fixed? delete sdk_console_warn.ts (warnings seen: ${JSON.stringify(seen)})`,
    );
  });
});

Deno.test("withoutSdkToolExclusionWarnings holds back only those lines, and restores console.warn", async () => {
  await withClient(async (client) => {
    const original = console.warn;
    const seen = await recordingWarnings(() =>
      withoutSdkToolExclusionWarnings(async () => {
        await client.listTools();
        console.warn("another warning");
      })
    );
    assert.deepEqual(seen, ["another warning"]);
    assert.equal(console.warn, original);
  });
  const original = console.warn;
  await assert.rejects(withoutSdkToolExclusionWarnings(() => Promise.reject(new Error("x"))));
  assert.equal(console.warn, original, "restored after a rejection too");
});
