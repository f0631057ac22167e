/**
 * `deno run --allow-write=src/tools scripts/json_schemas.ts`: writes
 * src/tools/json_schemas.json, the operations' JSON Schemas as zod converts them, which the
 * registry serves instead of converting at start-up (decision 0036). Run it after changing an
 * operation's schema; tests/operations/json_schemas_test.ts fails until it is run.
 */
import { computeJsonSchemas, OPERATIONS } from "../src/operations/registry.ts";

/** The file's text: every operation's schemas by name, in registry order, formatted as deno fmt does. */
export function jsonSchemasText(): string {
  const all = Object.fromEntries(OPERATIONS.map((op) => [op.name, computeJsonSchemas(op)]));
  return JSON.stringify(all, null, 2) + "\n";
}

if (import.meta.main) {
  const file = new URL("../src/tools/json_schemas.json", import.meta.url);
  await Deno.writeTextFile(file, jsonSchemasText());
  console.error(`wrote ${decodeURIComponent(file.pathname)}`);
}
