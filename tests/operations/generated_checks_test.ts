/**
 * The generated checks (generated/json_checks.js, decision 0062) against zod, for every operation:
 * an input they accept is exactly one zod accepts, parsed to an equal value (defaults filled, the
 * caller's object untouched); parseInput answers as the zod-only path does, errors included; an
 * output they accept zod accepts, and the tool's validate gives zod's issues whenever it refuses.
 * Hand-made hostile values, then a few thousand seeded ones derived from each schema.
 */
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { jsonChecksText, newAjv } from "../../scripts/json_checks.ts";
import { operationChecks, OPERATIONS, parseInput } from "../../src/operations/registry.ts";
import { checkedInput, generatedChecks } from "../../src/operations/checks.ts";
import type { OperationDefinition } from "../../src/operations/types.ts";
import { mcpOutput, TOOL_TABLE } from "../../src/server/tools.ts";
import { Arbitrary } from "./_arbitrary.ts";
import { hostileInputs, mutations, realResults } from "./_generated_cases.ts";

type Json = Record<string, unknown>;

function outcome(fn: () => unknown): unknown {
  try {
    return { value: fn() };
  } catch (e) {
    const { name, message, code, argument, details } = e as Error & Json;
    return { error: { name, message, code, argument, details } };
  }
}

const PROTO_REFUSAL = "unknown argument: `__proto__`";

/** Tallies of one run of comparisons: how many values each side accepted. */
interface Tally {
  accepted: number;
  refused: number;
}

/** Compares the generated input path with zod's on one raw value. */
function compareInput(op: OperationDefinition, raw: unknown, tally?: Tally): void {
  const label = `${op.name} ${Deno.inspect(raw, { depth: 4 })}`;
  const before = Deno.inspect(raw, { depth: Infinity });
  const ours = outcome(() => parseInput(op, raw));
  // A copy of the definition is not the registry's: it takes the zod-only path of before.
  const theirs = outcome(() => parseInput({ ...op }, raw));
  assert.deepStrictEqual(ours, theirs, label);
  assert.equal(Deno.inspect(raw, { depth: Infinity }), before, `${label}: input changed`);
  const zod = op.inputSchema.safeParse(raw ?? {});
  const checked = checkedInput(operationChecks(op)!, op.inputSchema, raw ?? {});
  if (checked !== undefined) {
    assert.ok(zod.success, `${label}: generated accepts what zod refuses`);
    assert.deepStrictEqual(checked, zod.data, label);
    assert.notEqual(checked, raw, `${label}: the caller's object handed on`);
  } else if ((ours as { error?: Json }).error?.message !== PROTO_REFUSAL) {
    assert.ok(!zod.success, `${label}: generated refuses what zod accepts`);
  }
  if (tally) tally[checked === undefined ? "refused" : "accepted"]++;
}

/** The zod schema and the tool's validate of a structuredContent. */
function outputSchemas(op: OperationDefinition) {
  const entry = TOOL_TABLE.find((t) => t.op === op)!;
  return { zod: mcpOutput(op).schema, validate: entry.outputSchema["~standard"].validate };
}

/** Compares the generated output check with zod's on one structuredContent. */
function compareOutput(op: OperationDefinition, value: unknown, tally?: Tally): void {
  const label = `${op.name} output ${Deno.inspect(value, { depth: 3 })}`;
  const { zod, validate } = outputSchemas(op);
  const parsed = zod.safeParse(value);
  const accepted = operationChecks(op)!.output(value);
  if (accepted) assert.ok(parsed.success, `${label}: generated accepts what zod refuses`);
  else if (parsed.success) {
    // Only an unknown key, which zod's z.object drops and the JSON Schema refuses.
    assert.ok(!isDeepStrictEqual(parsed.data, value), `${label}: generated refuses a valid one`);
  }
  const ours = validate(value) as { issues?: unknown };
  const theirs = zod["~standard"].validate(value) as { issues?: unknown };
  assert.deepStrictEqual(ours.issues, theirs.issues, label);
  if (tally) tally[accepted ? "accepted" : "refused"]++;
}

Deno.test("json_checks.js: equal to what scripts/json_checks.ts generates now", async () => {
  const file = new URL("../../generated/json_checks.js", import.meta.url);
  assert.ok(
    (await Deno.readTextFile(file)) === jsonChecksText(),
    "generated/json_checks.js is stale: run scripts/json_schemas.ts",
  );
  for (const op of OPERATIONS) assert.ok(generatedChecks(op.name), op.name);
  assert.equal(generatedChecks("toString"), undefined);
});

Deno.test("generated checks: a definition outside the registry has none", () => {
  for (const op of OPERATIONS) assert.equal(operationChecks({ ...op }), undefined);
});

Deno.test("generated input checks: hand-made valid and hostile inputs, every operation", () => {
  for (const op of OPERATIONS) {
    const tally = { accepted: 0, refused: 0 };
    for (const raw of hostileInputs(op)) compareInput(op, raw, tally);
    assert.ok(tally.accepted > 0 && tally.refused > 10, `${op.name}: ${JSON.stringify(tally)}`);
  }
});

Deno.test("generated input checks: seeded values derived from each schema", () => {
  for (const [i, op] of OPERATIONS.entries()) {
    const arbitrary = new Arbitrary(1000 + i);
    const schema = z.toJSONSchema(op.inputSchema, { io: "input" }) as Json;
    const tally = { accepted: 0, refused: 0 };
    for (let n = 0; n < 400; n++) compareInput(op, arbitrary.value(schema), tally);
    assert.ok(tally.accepted >= 20 && tally.refused >= 20, `${op.name}: ${JSON.stringify(tally)}`);
  }
});

Deno.test("generated output checks: real results, and each of them changed", async () => {
  const results = await realResults();
  assert.deepEqual(new Set(results.map(([name]) => name)), new Set(OPERATIONS.map((o) => o.name)));
  for (const [name, value] of results) {
    const op = OPERATIONS.find((o) => o.name === name)!;
    assert.ok(operationChecks(op)!.output(value), `${name}: a real result refused`);
    const tally = { accepted: 0, refused: 0 };
    for (const changed of mutations(value)) compareOutput(op, changed, tally);
    assert.ok(tally.refused > 0, `${name}: ${JSON.stringify(tally)}`);
  }
});

Deno.test("generated output checks: seeded values derived from each schema", () => {
  for (const [i, op] of OPERATIONS.entries()) {
    const schema = outputSchemas(op).zod;
    const json = z.toJSONSchema(schema, { io: "output" }) as Json;
    const tally = { accepted: 0, refused: 0 };
    // Results are large: a mild generator yields valid ones, a harsh one broken ones.
    for (const [seed, hostility] of [[2000 + i, 0.003], [3000 + i, 0.05]]) {
      const arbitrary = new Arbitrary(seed, hostility);
      for (let n = 0; n < 150; n++) compareOutput(op, arbitrary.value(json), tally);
    }
    assert.ok(tally.accepted >= 10 && tally.refused >= 10, `${op.name}: ${JSON.stringify(tally)}`);
  }
});

Deno.test("generated checks: string lengths in code points and safe integers, as zod", () => {
  // zod 4.6 counts a string's code points (a lone surrogate is one), as ajv's ucs2length does. The
  // schemas hold only minLength 1 today: a schema with both bounds proves the options.
  const schema = z.strictObject({
    s: z.string().min(2).max(3),
    n: z.int().min(-2).max(2),
    h: z.string().regex(/^[0-9a-f]{2}$/),
  });
  const json = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }) as Json;
  delete json.$schema;
  const check = newAjv().compile(json);
  const values = [
    "😀", // 2 code units, 1 code point
    "😀😀", // 4 units, 2 points
    "a😀", // 3 units, 2 points
    "\ud800",
    "ab",
    "abcd",
    "é😀",
  ];
  const ints = [-3, -2, 0, 2, 3, 1.5, -0, NaN, Infinity, 2 ** 53];
  for (const s of values) {
    for (const n of ints) {
      for (const h of ["0a", "0A", "😀", "0a\n", "\u{1d7ce}a"]) {
        const value = { s, n, h };
        const label = Deno.inspect(value);
        assert.equal(check(value), schema.safeParse(value).success, label);
      }
    }
  }
});
