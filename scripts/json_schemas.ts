/**
 * `deno run --allow-write=src/tools scripts/json_schemas.ts`: writes
 * src/tools/json_schemas.json, the operations' JSON Schemas as zod converts them, which the
 * registry serves instead of converting at start-up (decision 0036), then
 * generated/json_checks.js, the checks generated from them (scripts/json_checks.ts, decision
 * 0062). Run it after changing an operation's schema; tests/operations/json_schemas_test.ts and
 * generated_checks_test.ts fail until it is run.
 */
import { computeJsonSchemas, OPERATIONS } from "../src/operations/registry.ts";
import { jsonChecksText } from "./json_checks.ts";

/** The file's text: every operation's schemas by name, in registry order, formatted as deno fmt does. */
export function jsonSchemasText(): string {
  const all = Object.fromEntries(OPERATIONS.map((op) => [op.name, computeJsonSchemas(op)]));
  return JSON.stringify(all, null, 2) + "\n";
}

if (import.meta.main) {
  const file = new URL("../src/tools/json_schemas.json", import.meta.url);
  await Deno.writeTextFile(file, jsonSchemasText());
  console.error(`wrote ${decodeURIComponent(file.pathname)}`);
  const checks = new URL("../generated/json_checks.js", import.meta.url);
  await Deno.writeTextFile(checks, jsonChecksText());
  console.error(`wrote ${decodeURIComponent(checks.pathname)}`);
}
