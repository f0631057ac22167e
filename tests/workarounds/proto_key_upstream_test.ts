/**
 * The upstream misbehaviour behind src/workarounds/proto_key.ts: the SDK's own CallToolRequest
 * schema (zod, which drops input-derived `__proto__` keys on purpose) validates a tools/call
 * whose arguments carry an own `__proto__` key as a success without that key. When this test
 * fails, the SDK keeps (or refuses) the key: delete the workaround (tests/security/
 * proto_key_test.ts still pins what a caller sees).
 */
import assert from "node:assert/strict";
import { specTypeSchemas } from "@modelcontextprotocol/server";

Deno.test("upstream: the SDK's CallToolRequest schema silently drops an own __proto__ argument (SDK 2.4.0)", async () => {
  const message = JSON.parse(
    '{"method":"tools/call","params":{"name":"x","arguments":{"__proto__":{"a":1},"b":2}}}',
  );
  assert.ok(Object.hasOwn(message.params.arguments, "__proto__"), "JSON.parse keeps the own key");
  const out = await specTypeSchemas.CallToolRequest["~standard"].validate(message);
  assert.ok(!("issues" in out && out.issues), "the SDK accepts the request");
  const args = (out as { value: { params: { arguments: Record<string, unknown> } } }).value
    .params.arguments;
  assert.deepEqual(Object.keys(args), ["b"]);
  assert.ok(!Object.hasOwn(args, "__proto__"), "upstream fixed? delete proto_key.ts");
});
