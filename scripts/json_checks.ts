/**
 * The text of generated/json_checks.js: every operation's input check and structuredContent check,
 * compiled ahead of time by ajv's standalone code generation from the JSON Schemas zod writes
 * (json_schemas.json, and the tool's structuredContent schema where it differs), with the defaults
 * the input schemas declare (decision 0062). scripts/json_schemas.ts writes it;
 * tests/operations/generated_checks_test.ts fails when it is stale.
 *
 * Refused here rather than checked differently: a keyword outside the subset whose meaning is the
 * same in zod, draft 2020-12 and ajv's code, a default ajv would not see in place (under anyOf),
 * and a zod check the JSON Schema cannot hold anywhere but on the top-level input object (those
 * top-level refinements, such as read_file's rangeChecks, run from the zod schema itself).
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import standalone from "ajv/dist/standalone/index.js";
import * as ucs2length from "ajv/dist/runtime/ucs2length.js";
import type { z } from "zod";
import { computeJsonSchemas, OPERATIONS } from "../src/operations/registry.ts";
import type { OperationDefinition } from "../src/operations/types.ts";
import { TOOL_TABLE } from "../src/server/tools.ts";
import { CONTENT_ONLY_FIELDS } from "../src/server/content.ts";
import type { DefaultsNode } from "../src/operations/checks.ts";

type Json = Record<string, unknown>;

/** ajv's standalone code generator (a CommonJS module: its function is also its `default`). */
const standaloneCode = (standalone as unknown as { default: unknown }).default as (
  ajv: Ajv2020,
  refs: Record<string, string>,
) => string;

/**
 * ajv's runtime helpers the code may name, by the `require` it writes (a module of ES exports has no
 * `require`): each is inlined as its own source, so the module imports nothing at run time.
 */
const RUNTIME: Record<string, unknown> = {
  'require("ajv/dist/runtime/ucs2length").default':
    (ucs2length as unknown as { default: { default?: unknown } }).default.default ??
      ucs2length.default,
};

/** The code with every runtime helper inlined; throws on a `require` of any other. */
function inlineRuntime(code: string): string {
  const out = code.replace(/require\("[^"]*"\)(\.default)?/g, (call) => {
    const helper = RUNTIME[call];
    if (typeof helper !== "function") throw new Error(`${call}: no inlined runtime helper`);
    return `(${helper.toString()})`;
  });
  return out;
}

/** Keywords whose validation means the same to zod's conversion, draft 2020-12 and ajv's code. */
const KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "pattern",
  "enum",
  "const",
  "anyOf",
  "propertyNames",
]);
/** Annotations: left out of the compiled schema (they validate nothing). */
const ANNOTATIONS = new Set(["$schema", "description", "default", "x-mcp-header"]);
/** zod checks below the top level that the JSON Schema holds exactly. */
const NESTED_CHECKS = new Set(["min_length", "max_length", "greater_than", "less_than"]);

/** The schema without annotations; throws on a keyword outside KEYWORDS. */
function validating(schema: unknown, where: string): unknown {
  if (Array.isArray(schema)) return schema.map((s, i) => validating(s, `${where}/${i}`));
  if (schema === null || typeof schema !== "object") return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    if (ANNOTATIONS.has(k)) continue;
    if (!KEYWORDS.has(k)) throw new Error(`${where}: keyword ${k} has no generated check`);
    out[k] = k === "properties"
      ? Object.fromEntries(
        Object.entries(v as Json).map(([p, s]) => [p, validating(s, `${where}/${p}`)]),
      )
      : k === "enum" || k === "const"
      ? v
      : validating(v, `${where}/${k}`);
  }
  return out;
}

/** The defaults an input schema declares, as a tree over properties and array items. */
function defaultsOf(schema: Json, where: string): DefaultsNode | undefined {
  if ("anyOf" in schema && JSON.stringify(schema.anyOf).includes('"default"')) {
    throw new Error(`${where}: a default under anyOf has no generated check`);
  }
  const node: DefaultsNode = {};
  const items = schema.items as Json | undefined;
  const inner = items === undefined ? undefined : defaultsOf(items, `${where}/items`);
  if (inner) node.items = inner;
  for (const [p, s] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
    if ("default" in s) (node.set ??= {})[p] = s.default;
    const nested = defaultsOf(s, `${where}/${p}`);
    if (nested) (node.props ??= {})[p] = nested;
  }
  return Object.keys(node).length === 0 ? undefined : node;
}

/** The schemas a zod schema holds (object shapes, items, wrapped and union members). */
function children(def: Json): z.ZodType[] {
  if (def.type === "object") return Object.values(def.shape as Record<string, z.ZodType>);
  if (def.type === "array") return [def.element as z.ZodType];
  if (def.type === "union") return def.options as z.ZodType[];
  if (def.type === "record") return [def.keyType, def.valueType] as z.ZodType[];
  if (def.type === "pipe") return [def.in, def.out] as z.ZodType[];
  return def.innerType === undefined ? [] : [def.innerType as z.ZodType];
}

/** Throws when a zod check below the top level is one the JSON Schema may not hold exactly. */
function assertRepresentable(schema: z.ZodType, where: string, top: boolean): void {
  const def = schema._zod.def as unknown as Json;
  for (const check of (def.checks ?? []) as { _zod: { def: Json } }[]) {
    const c = check._zod.def;
    const exact = NESTED_CHECKS.has(String(c.check)) ||
      (c.check === "string_format" && c.format === "regex" && (c.pattern as RegExp).flags === "");
    if (!exact && !(top && c.check === "custom")) {
      throw new Error(`${where}: zod check ${String(c.check)} has no generated check`);
    }
  }
  for (const child of children(def)) assertRepresentable(child, `${where}/`, false);
}

/**
 * The JSON Schema of an operation's structuredContent: its output, less content-only fields (the
 * tool table converts that one at start-up).
 */
function structuredSchema(op: OperationDefinition): Json {
  if (CONTENT_ONLY_FIELDS[op.name] === undefined) return computeJsonSchemas(op).output;
  const entry = TOOL_TABLE.find((t) => t.op === op);
  if (entry === undefined) throw new Error(`${op.name}: not in the tool table`);
  return entry.outputSchema["~standard"].jsonSchema.output();
}

/** The ajv instance the checks are compiled with (exported for the tests of its options). */
export function newAjv(): Ajv2020 {
  return new Ajv2020({
    strict: true,
    allErrors: false,
    messages: false,
    validateFormats: false,
    addUsedSchema: false,
    // Lengths are counted in code points, as zod 4.6 does (ajv's default; its ucs2length is
    // inlined). zod's regexes carry no flags, so neither do these.
    unicodeRegExp: false,
    logger: false,
    code: { source: true, esm: true, lines: true },
  });
}

/** The module's text: ajv's standalone code, then the CHECKS table. */
export function jsonChecksText(): string {
  const ajv = newAjv();
  const rows: string[] = [];
  for (const op of OPERATIONS) {
    assertRepresentable(op.inputSchema, `${op.name} input`, true);
    assertRepresentable(op.outputSchema, `${op.name} output`, false);
    const { input } = computeJsonSchemas(op);
    ajv.addSchema(validating(input, `${op.name} input`) as Json, `${op.name}_input`);
    const output = validating(structuredSchema(op), `${op.name} output`) as Json;
    ajv.addSchema(output, `${op.name}_output`);
    const defaults = defaultsOf(input, `${op.name} input`);
    rows.push(
      `  ${op.name}: { input: ${op.name}_input, output: ${op.name}_output, defaults: ${
        JSON.stringify(defaults ?? null)
      } },`,
    );
  }
  const ids = Object.fromEntries(OPERATIONS.flatMap((op) =>
    ["input", "output"].map((io) => {
      const id = `${op.name}_${io}`;
      return [id, id];
    })
  ));
  return [
    "// deno-lint-ignore-file",
    '// @ts-self-types="./json_checks.d.ts"',
    "// Generated by scripts/json_schemas.ts (scripts/json_checks.ts): do not edit.",
    inlineRuntime(standaloneCode(ajv, ids)),
    "",
    "export const CHECKS = Object.freeze({",
    ...rows,
    "});",
    "",
  ].join("\n");
}
