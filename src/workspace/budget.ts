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
