/**
 * The precomputed JSON Schemas (src/tools/json_schemas.json, decision 0036) are exactly what
 * zod converts the operations' schemas to: a changed schema fails here until
 * scripts/json_schemas.ts is run.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { computeJsonSchemas, jsonSchemas, OPERATIONS } from "../../src/operations/registry.ts";
import { defineOperation } from "../../src/operations/types.ts";
import PRECOMPUTED from "../../src/tools/json_schemas.json" with { type: "json" };

Deno.test("json_schemas.json: one entry per operation, each equal to zod's conversion", () => {
  assert.deepEqual(Object.keys(PRECOMPUTED), OPERATIONS.map((op) => op.name));
  for (const op of OPERATIONS) {
    assert.deepEqual(
      (PRECOMPUTED as Record<string, unknown>)[op.name],
      computeJsonSchemas(op),
      `${op.name}: run scripts/json_schemas.ts`,
    );
    assert.deepEqual(jsonSchemas(op), computeJsonSchemas(op));
  }
});

Deno.test("jsonSchemas: a definition outside the registry is converted, not looked up", () => {
  const op = defineOperation({
    name: "json_schemas_test_op",
    title: "Test",
    description: "Test.",
    inputSchema: z.object({ n: z.number().int() }),
    outputSchema: z.object({ ok: z.boolean() }),
    annotations: {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    needsWrite: false,
    run: () => Promise.resolve({ ok: true }),
  });
  assert.deepEqual(jsonSchemas(op), computeJsonSchemas(op));
  assert.deepEqual(Object.keys(jsonSchemas(op).input.properties as object), ["n"]);
});
