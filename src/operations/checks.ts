/**
 * The generated checks (generated/json_checks.js, written by scripts/json_schemas.ts from the same
 * JSON Schemas the tools advertise; decision 0062) as the fast answer of a validation: a value
 * they accept is what zod's parse would return; anything they reject goes to zod unchanged, so
 * every error is zod's. tests/operations/generated_checks_test.ts proves the two agree.
 */
import type { z } from "zod";
import type { StandardSchemaV1 } from "@modelcontextprotocol/server";
import {
  CHECKS,
  type GeneratedDefaults,
  type OperationChecks,
} from "../../generated/json_checks.js";

export type { GeneratedCheck, OperationChecks } from "../../generated/json_checks.js";

/** The defaults an input schema declares, over properties and array items. */
export type DefaultsNode = GeneratedDefaults;

/** The generated checks of a registry operation by name, or undefined. */
export function generatedChecks(name: string): OperationChecks | undefined {
  return Object.hasOwn(CHECKS, name) ? CHECKS[name] : undefined;
}

/**
 * A copy of an accepted input with the missing defaults filled in, as zod's parse builds it: new
 * objects and arrays throughout (the caller's value is never changed nor handed on), a default
 * for an absent or undefined property (a fresh copy of it), and every other key kept as given.
 */
export function withDefaults(value: unknown, node?: DefaultsNode): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    const items = node?.items;
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = withDefaults(value[i], items);
    return out;
  }
  // String keys only, as zod copies them (a spread would carry symbol keys along).
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const props = node?.props;
  for (const key in source) {
    const v = source[key];
    out[key] = v !== null && typeof v === "object" ? withDefaults(v, props?.[key]) : v;
  }
  const set = node?.set;
  if (set !== undefined) {
    for (const key in set) if (out[key] === undefined) out[key] = withDefaults(set[key]);
  }
  return out;
}

interface ZodCheck {
  _zod: { def: { when?: (payload: unknown) => boolean }; check(payload: unknown): unknown };
}

/**
 * Runs the top-level refinements of a zod schema (`.check(...)`, `.refine(...)`: the checks a JSON
 * Schema cannot hold, such as read_file's rangeChecks) on a value, as zod runs them after its
 * shape passed. The value they leave, or undefined when one of them reports an issue (or is
 * asynchronous): zod's parse then says why.
 */
export function refined(schema: z.ZodType, value: unknown): unknown {
  const checks = (schema._zod.def as { checks?: ZodCheck[] }).checks;
  if (checks === undefined || checks.length === 0) return value;
  const payload = { value, issues: [] as unknown[] };
  for (const check of checks) {
    const when = check._zod.def.when;
    if (when !== undefined && !when(payload)) continue;
    if (check._zod.check(payload) instanceof Promise || payload.issues.length > 0) return undefined;
  }
  return payload.value;
}

/**
 * The parsed input when the generated check accepts it and the schema's refinements pass, else
 * undefined (zod's parse decides, and words the error).
 */
export function checkedInput(checks: OperationChecks, schema: z.ZodType, raw: unknown): unknown {
  if (!checks.input(raw)) return undefined;
  return refined(schema, withDefaults(raw, checks.defaults ?? undefined));
}

/** A Standard Schema validate that answers from the generated check, and asks zod otherwise. */
export function checkedFirst(
  check: (value: unknown) => boolean,
  validate: StandardSchemaV1["~standard"]["validate"],
): StandardSchemaV1["~standard"]["validate"] {
  return (value) => check(value) ? { value } : validate(value);
}
