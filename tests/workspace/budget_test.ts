/**
 * jsonBytesAtMost (src/workspace/budget.ts) is never below the exact JSON size, on values built to
 * make JSON.stringify expand the most (control characters, quotes, lone surrogates, astral
 * characters, long keys, numbers of every form, members JSON leaves out) and on random values from
 * a seeded generator; and it gives up (Infinity) where it cannot know.
 */
import assert from "node:assert/strict";
import { jsonBytes, jsonBytesAtMost } from "../../src/workspace/budget.ts";

const NASTY = [
  "",
  "\u0000\u0001\u001f",
  '"\\',
  "\ud800",
  "\udc00x",
  "😀😀",
  "\u2028\u2029",
  "é€",
  "\u007f\u0080\u07ff\u0800\uffff",
];

Deno.test("jsonBytesAtMost: at least the exact size on values that expand the most", () => {
  const values: unknown[] = [
    ...NASTY,
    ...NASTY.map((s) => ({ [s]: s })),
    [-1.7976931348623157e308, 5e-324, -0, NaN, Infinity, -Infinity, 123456789012345680000],
    { a: undefined, b: () => 1, c: Symbol("s"), d: null, e: true, f: false },
    [undefined, () => 1, Symbol("t")],
    { content: "\u0000".repeat(4096), nested: { deeper: [["\ud83d", { "\n": "\t" }]] } },
  ];
  for (const v of values) {
    assert.ok(jsonBytesAtMost(v) >= jsonBytes(v), JSON.stringify(v));
  }
});

Deno.test("jsonBytesAtMost: at least the exact size on 3000 seeded random values", () => {
  let seed = 20261204;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const str = () =>
    Array.from(
      { length: Math.floor(next() * 12) },
      () => String.fromCharCode(Math.floor(next() * 0x10000)),
    ).join("");
  const value = (depth: number): unknown => {
    const r = next();
    if (depth > 4 || r < 0.3) return str();
    if (r < 0.45) return (next() - 0.5) * 10 ** Math.floor(next() * 40 - 20);
    if (r < 0.5) return next() < 0.5;
    if (r < 0.55) return null;
    if (r < 0.75) return Array.from({ length: Math.floor(next() * 5) }, () => value(depth + 1));
    return Object.fromEntries(
      Array.from({ length: Math.floor(next() * 5) }, () => [str(), value(depth + 1)]),
    );
  };
  for (let i = 0; i < 3000; i++) {
    const v = value(0);
    assert.ok(jsonBytesAtMost(v) >= jsonBytes(v), JSON.stringify(v));
  }
});

Deno.test("jsonBytesAtMost: Infinity where it cannot know", () => {
  assert.equal(jsonBytesAtMost({ toJSON: () => "x".repeat(100) }), Infinity);
  assert.equal(jsonBytesAtMost(10n), Infinity);
  let deep: unknown = "x";
  for (let i = 0; i < 100; i++) deep = [deep];
  assert.equal(jsonBytesAtMost(deep), Infinity);
});
