/** Responses files fill form defaults; invalid x-mcp-header annotations keep a tool out of calls. */
import assert from "node:assert/strict";
import { withDefaults } from "../../src/client/interaction.ts";
import { flatten } from "../../src/client/commands.ts";
import { runClient } from "./_client.ts";

const FIXTURE = new URL("./fixtures/form_server.ts", import.meta.url).pathname;
const CONFIG_DENO = new URL("../../deno.json", import.meta.url).pathname;

Deno.test("withDefaults: an accept gets the defaults of the fields it leaves out; decline is untouched", () => {
  const params = {
    requestedSchema: {
      type: "object",
      properties: {
        name: { type: "string", default: "John Doe" },
        age: { type: "integer", default: 30 },
        x: {},
      },
    },
  };
  assert.deepEqual(withDefaults({ action: "accept", content: { age: 5 } }, params), {
    action: "accept",
    content: { age: 5, name: "John Doe" },
  });
  assert.deepEqual(withDefaults({ action: "decline" }, params), { action: "decline" });
});

Deno.test("a responses-file accept sends the form's defaults for omitted fields, in both eras", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-resp-" });
  try {
    await Deno.writeTextFile(
      `${dir}/mcp.json`,
      JSON.stringify({
        mcpServers: {
          form: {
            command: Deno.execPath(),
            args: ["run", "--quiet", "-A", "--config", CONFIG_DENO, FIXTURE],
          },
        },
      }),
    );
    await Deno.writeTextFile(
      `${dir}/answers.json`,
      JSON.stringify({
        responses: [{ action: "accept", content: { age: 7, agree: false, color: "red" } }],
      }),
    );
    for (const version of ["2026-07-28", "2025-11-25"]) {
      const out = await runClient([
        "tools",
        "call",
        "ask",
        "--config",
        `${dir}/mcp.json`,
        "--server",
        "form",
        "--input-responses-file",
        `${dir}/answers.json`,
        "--protocol-version",
        version,
      ], { read: [dir] });
      assert.equal(out.code, 0, out.stderr);
      const env = JSON.parse(out.stdout);
      assert.deepEqual(env.mcpResult.structuredContent, {
        action: "accept",
        content: { age: 7, agree: false, color: "red", name: "anon" },
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("x-mcp-header problems: invalid names, duplicates, and non-integer numbers keep a tool out", () => {
  const tool = (name: string, prop: Record<string, unknown>) => ({
    name,
    inputSchema: { type: "object", properties: { p: prop } },
  });
  const listed = flatten([{
    requestCursor: null,
    mcpResult: {
      tools: [
        tool("ok_string", { type: "string", "x-mcp-header": "Region" }),
        tool("ok_integer", { type: "integer", "x-mcp-header": "Count" }),
        tool("bad_number", { type: "number", "x-mcp-header": "Ratio" }),
        tool("bad_space", { type: "string", "x-mcp-header": "Bad Name" }),
        tool("bad_empty", { type: "string", "x-mcp-header": "" }),
        tool("bad_object", { type: "object", "x-mcp-header": "Obj" }),
        tool("ok_token_chars", { type: "string", "x-mcp-header": "X_Region.Primary" }),
        tool("bad_in_items", { type: "array", items: { type: "string", "x-mcp-header": "Item" } }),
        tool("bad_in_oneof", { oneOf: [{ type: "string", "x-mcp-header": "Alt" }] }),
      ],
    },
  }]);
  assert.deepEqual(
    listed.map((t) => [t.tool.name, t.problems.length > 0]),
    [
      ["ok_string", false],
      ["ok_integer", false],
      ["bad_number", true],
      ["bad_space", true],
      ["bad_empty", true],
      ["bad_object", true],
      ["ok_token_chars", false],
      ["bad_in_items", true],
      ["bad_in_oneof", true],
    ],
  );
});
