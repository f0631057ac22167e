/** Pins the size of the contract table: a row lost or added while moving sections fails here. */
import assert from "node:assert/strict";
import { CASES } from "./cases.ts";

/**
 * The number of rows: 136 when the table was split into tests/contract/cases/. Changing it is a
 * deliberate act: adding or removing a row means updating this number in the same commit.
 */
const EXPECTED_CASES = 201;

Deno.test("contract table: exactly the expected number of rows, each name once", () => {
  assert.equal(CASES.length, EXPECTED_CASES, "rows in the contract table");
  const names = CASES.map((c) => c.name);
  const repeated = names.filter((n, i) => names.indexOf(n) !== i);
  assert.deepEqual(repeated, [], "every row's name is unique");
});
