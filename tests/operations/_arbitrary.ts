/**
 * Seeded values derived from a JSON Schema (the subset zod writes): mostly valid ones, with a
 * hostile change at any level now and then (a wrong type, a bound crossed by one, a float for an
 * integer, astral characters at a length bound, a missing, unknown, undefined or prototype key,
 * an array one item too long). Deterministic for a seed.
 */

type Json = Record<string, unknown>;

/** mulberry32: a small seeded generator of floats in [0, 1). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Values of every kind, for a wrong type. */
const WRONG: readonly unknown[] = [
  null,
  undefined,
  0,
  -1,
  1.5,
  NaN,
  Infinity,
  "",
  "x",
  "1",
  true,
  false,
  [],
  [1],
  {},
  { a: 1 },
];
/** Characters a string is built of: ASCII, a multi-byte one, an astral pair, lone surrogates. */
const CHARS = ["a", "Z", "0", "/", ".", " ", "é", "😀", "\ud800", "\udc00", "\u0000", "\n"];
const HEX = "0123456789abcdefABCDEF";

/** A generator of values for schemas, hostile with probability `hostility` at each level. */
export class Arbitrary {
  readonly #rnd: () => number;
  readonly #hostility: number;

  constructor(seed: number, hostility = 0.04) {
    this.#rnd = seeded(seed);
    this.#hostility = hostility;
  }

  #int(n: number): number {
    return Math.floor(this.#rnd() * n);
  }

  #pick<T>(items: readonly T[]): T {
    return items[this.#int(items.length)];
  }

  #chance(p: number): boolean {
    return this.#rnd() < p;
  }

  /** Whether this value is to be taken at or past a bound (often, yet not on every leaf). */
  #edgy(): boolean {
    return this.#chance(Math.min(0.5, this.#hostility * 5));
  }

  /** A value for the schema. */
  value(schema: Json, depth = 0): unknown {
    if (this.#chance(this.#hostility)) return this.#pick(WRONG);
    if (Array.isArray(schema.anyOf)) return this.value(this.#pick(schema.anyOf as Json[]), depth);
    if ("const" in schema) return this.#edgy() ? `${schema.const}x` : schema.const;
    if (Array.isArray(schema.enum)) {
      return this.#edgy() ? this.#pick(["", "NAME", "other"]) : this.#pick(schema.enum);
    }
    const type = Array.isArray(schema.type) ? this.#pick(schema.type as string[]) : schema.type;
    switch (type) {
      case "string":
        return this.#string(schema);
      case "integer":
        return this.#integer(schema);
      case "boolean":
        return this.#chance(0.5);
      case "null":
        return null;
      case "array":
        return this.#array(schema, depth);
      case "object":
        return this.#object(schema, depth);
      default: // {} (z.unknown): anything
        return this.#pick([...WRONG, "text", { nested: [1, "a"] }]);
    }
  }

  #string(schema: Json): string {
    if (typeof schema.pattern === "string") return this.#hex(64);
    const min = (schema.minLength as number | undefined) ?? 0;
    const max = (schema.maxLength as number | undefined) ?? min + 12;
    const length = this.#edgy()
      ? this.#pick([min, max, max + 1, Math.max(0, min - 1), this.#int(max + 2)])
      : min + this.#int(max - min + 1);
    let s = "";
    while (s.length < length) s += this.#pick(CHARS);
    // An astral pair at a bound counts 2 UTF-16 code units (zod) but 1 code point.
    return this.#edgy() ? s.slice(0, length) : s;
  }

  #hex(n: number): string {
    const length = this.#edgy() ? this.#pick([n, n - 1, n + 1]) : n;
    let s = "";
    for (let i = 0; i < length; i++) s += HEX[this.#int(HEX.length)];
    if (this.#edgy()) s = s.slice(0, -2) + this.#pick(["😀", "g", "é", "\n"]);
    return this.#edgy() ? s + "\n" : s;
  }

  #integer(schema: Json): number {
    const min = (schema.minimum as number | undefined) ?? -9007199254740991;
    const max = (schema.maximum as number | undefined) ?? 9007199254740991;
    const near = [min, min + 1, max, max - 1, min - 1, max + 1];
    const pool = [...near, 0, -0, 1, 2, 5, 10, 11, 1.5, min + 0.5, 2 ** 53, -(2 ** 53), 1e21];
    return this.#edgy() ? this.#pick(pool) : min + this.#int(Math.min(max - min + 1, 100));
  }

  #array(schema: Json, depth: number): unknown[] {
    const min = (schema.minItems as number | undefined) ?? 0;
    const max = Math.min((schema.maxItems as number | undefined) ?? 4, 6);
    const length = this.#chance(this.#hostility)
      ? ((schema.maxItems as number | undefined) ?? 4) + 1
      : min + this.#int(max - min + 1);
    const items = (schema.items ?? {}) as Json;
    return Array.from({ length }, () => this.value(items, depth + 1));
  }

  #object(schema: Json, depth: number): Record<string, unknown> {
    const properties = (schema.properties ?? {}) as Record<string, Json>;
    const required = new Set((schema.required ?? []) as string[]);
    const out: Record<string, unknown> = {};
    for (const [key, s] of Object.entries(properties)) {
      const present = required.has(key) ? !this.#chance(this.#hostility / 2) : this.#chance(0.5);
      if (present) {
        out[key] = this.#chance(this.#hostility / 2) ? undefined : this.value(s, depth + 1);
      }
    }
    if (this.#chance(this.#hostility)) out[this.#pick(["extra", "constructor", "toString"])] = 1;
    if (schema.additionalProperties !== false && this.#chance(0.3)) out.anyKey = "value";
    if (depth < 2 && this.#chance(this.#hostility / 2)) {
      return JSON.parse(
        JSON.stringify(out).replace(/^\{/, '{"__proto__":{"a":1},').replace(
          /,\}$/,
          "}",
        ),
      );
    }
    return out;
  }
}
