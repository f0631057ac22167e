/**
 * Sets of code points as RE2 character classes: ranges merged, complemented (surrogates never
 * included), subtracted, and written as RE2 source. The glob translator builds its classes here.
 *
 * @module
 */

/** An inclusive range of code points. */
export type Range = [number, number];

const MAX_CP = 0x10ffff;

/** The ranges sorted, with overlapping and adjacent ones merged. */
export function mergeRanges(ranges: Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: Range[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

/** The code points (surrogates aside) not in the sorted, merged ranges. */
export function complement(ranges: Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of [...ranges, [MAX_CP + 1, MAX_CP + 1] as Range]) {
    if (lo > next) out.push([next, lo - 1]);
    next = Math.max(next, hi + 1);
  }
  return subtract(out, [0xd800, 0xdfff]);
}

/** The ranges without the code points of [a, b]. */
export function subtract(ranges: Range[], [a, b]: Range): Range[] {
  const out: Range[] = [];
  for (const [lo, hi] of ranges) {
    if (hi < a || lo > b) out.push([lo, hi]);
    else {
      if (lo < a) out.push([lo, a - 1]);
      if (hi > b) out.push([b + 1, hi]);
    }
  }
  return out;
}

const hex = (cp: number) => `\\x{${cp.toString(16)}}`;

/** The RE2 class matching exactly the ranges' code points (none: a class that matches nothing). */
export function classSource(ranges: Range[]): string {
  if (ranges.length === 0) return "[^\\x{0}-\\x{10ffff}]"; // matches nothing
  return "[" + ranges.map(([lo, hi]) => (lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`)).join("") +
    "]";
}
