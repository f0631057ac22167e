/**
 * The result byte budget: every operation's result is built under `maxResultBytes`
 * (UTF-8 bytes of its JSON form), counted while it is built, so an answer can never
 * grow past the limit before it is cut. Hitting it is reported as
 * `truncated: true, truncatedReason: "maxResultBytes"` by the operation.
 */

const utf8 = new TextEncoder();

/** UTF-8 length of a string without encoding it when it is plain ASCII-sized. */
export function utf8Length(s: string): number {
  // Fast path: every UTF-16 unit below 0x80 is one byte.
  const n = s.length;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) >= 0x80) return utf8.encode(s).length;
  }
  return n;
}

/** Bytes the JSON serialization of a value takes (strings escaped as JSON does). */
export function jsonBytes(value: unknown): number {
  return utf8Length(JSON.stringify(value) ?? "");
}

/** Longest JSON form of a number: `-1.7976931348623157e+308`. */
const MAX_NUMBER_BYTES = 24;
/** Nesting past which jsonBytesAtMost gives up (Infinity: measure exactly instead). */
const MAX_BOUND_DEPTH = 64;

/**
 * An upper bound of jsonBytes(value), found without serializing it: a string or key takes at most
 * 6 bytes per UTF-16 unit (a `\uXXXX` escape; a character of 4 UTF-8 bytes is 2 units) plus its
 * quotes, a number at most MAX_NUMBER_BYTES, and every value or member is counted, even one JSON
 * leaves out. Cheap where a value holds long strings: its cost is in the number of values, not
 * bytes. Infinity for what it does not know (toJSON, bigint, deep nesting): measure exactly then.
 */
export function jsonBytesAtMost(value: unknown, depth = 0): number {
  switch (typeof value) {
    case "string":
      return 2 + 6 * value.length;
    case "number":
      return MAX_NUMBER_BYTES;
    case "boolean":
      return 5;
    case "undefined":
    case "function":
    case "symbol":
      return 4;
    case "object":
      break;
    default:
      return Infinity;
  }
  if (value === null) return 4;
  if (depth >= MAX_BOUND_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return Infinity;
  }
  let total = 2;
  if (Array.isArray(value)) {
    for (const item of value) total += jsonBytesAtMost(item, depth + 1) + 1;
    return total;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    total += 6 * key.length + 4 +
      jsonBytesAtMost((value as Record<string, unknown>)[key], depth + 1);
  }
  return total;
}

/** Counts the bytes of a result as it is built, against one limit. */
export class ResultBudget {
  /** The limit in bytes. */
  readonly limit: number;
  #used: number;

  /** A budget of `limit` bytes, `reserved` of them already taken by the result's fixed fields. */
  constructor(limit: number, reserved = 512) {
    this.limit = limit;
    this.#used = reserved;
  }

  /** Bytes counted so far. */
  get used(): number {
    return this.#used;
  }

  /** Bytes still free. */
  get remaining(): number {
    return Math.max(0, this.limit - this.#used);
  }

  /** Takes `bytes` if they fit (plus one for the separating comma); false, and nothing taken, when not. */
  take(bytes: number): boolean {
    if (this.#used + bytes + 1 > this.limit) return false;
    this.#used += bytes + 1;
    return true;
  }

  /** Takes the JSON size of one result item if it fits. */
  takeItem(item: unknown): boolean {
    return this.take(jsonBytes(item));
  }
}
