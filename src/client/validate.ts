/**
 * JSON Schema validation of tool arguments (early diagnostic) and of structuredContent,
 * with ajv: 2020-12 by default, draft-07 when the schema says so. References are resolved
 * only inside the schema; nothing is ever fetched.
 */
import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";

/** The outcome of one validation. */
export type Validation = { ok: true } | { ok: false; errors: string[] } | {
  ok: "skipped";
  why: string;
};

const ajv2020 = new Ajv2020({
  strict: false,
  allErrors: true,
  validateFormats: false,
  addUsedSchema: false,
});
const ajv07 = new Ajv({
  strict: false,
  allErrors: true,
  validateFormats: false,
  addUsedSchema: false,
});
const cache = new WeakMap<object, ValidateFunction | string>();

function compile(schema: Record<string, unknown>): ValidateFunction | string {
  const hit = cache.get(schema);
  if (hit) return hit;
  let out: ValidateFunction | string;
  try {
    const dialect = String(schema.$schema ?? "");
    const ajv = /draft-07|draft-06|draft-04/.test(dialect) ? ajv07 : ajv2020;
    const { $schema: _ignored, ...rest } = schema;
    out = ajv.compile(rest);
  } catch (err) {
    out = (err as Error).message;
  }
  cache.set(schema, out);
  return out;
}

/** Validates a value; a schema that cannot be compiled (e.g. an external $ref) is skipped, saying why. */
export function validate(schema: unknown, value: unknown): Validation {
  if (!schema || typeof schema !== "object") return { ok: "skipped", why: "no schema" };
  const v = compile(schema as Record<string, unknown>);
  if (typeof v === "string") return { ok: "skipped", why: v };
  if (v(value)) return { ok: true };
  return {
    ok: false,
    errors: (v.errors ?? []).map((e) => {
      const extra = e.keyword === "additionalProperties"
        ? `: \`${(e.params as { additionalProperty?: string }).additionalProperty}\``
        : "";
      return `${e.instancePath || "(root)"} ${e.message ?? "is invalid"}${extra}`;
    }),
  };
}
