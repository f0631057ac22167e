/**
 * edit_file's unified diff, bounded in time: jsdiff's minimal diff gets a small time
 * budget (its cost grows with file size times the number of changed lines, and it runs
 * synchronously); past it, one coarse hunk from the first to the last changed line is
 * written in linear time instead. Both are valid unified diffs of the same change.
 */
import { createTwoFilesPatch } from "diff";

/** Longest the minimal diff may run before the coarse hunk is used (ms). */
export const DIFF_TIME_BUDGET_MS = 25;

/** A unified diff of before -> after, named rel on both sides; minimal when it is cheap. */
export function unifiedDiff(rel: string, before: string, after: string): {
  diff: string;
  minimal: boolean;
} {
  const diff = createTwoFilesPatch(rel, rel, before, after, undefined, undefined, {
    context: 3,
    timeout: DIFF_TIME_BUDGET_MS,
  });
  if (diff !== undefined) return { diff, minimal: true };
  return { diff: coarseDiff(rel, before, after), minimal: false };
}

interface Lines {
  lines: string[];
  /** The text does not end with a newline (its last line is unterminated). */
  openEnd: boolean;
}

function splitLines(text: string): Lines {
  if (text === "") return { lines: [], openEnd: false };
  const lines = text.split("\n");
  const openEnd = lines[lines.length - 1] !== "";
  if (!openEnd) lines.pop();
  return { lines, openEnd };
}

const NO_EOL = "\\ No newline at end of file";

/** One hunk covering every line between the common prefix and the common suffix, with 3 lines of context. */
export function coarseDiff(rel: string, before: string, after: string): string {
  const a = splitLines(before);
  const b = splitLines(after);
  const na = a.lines.length;
  const nb = b.lines.length;
  // Lines compare equal only when their termination matches too (the last line of an open end).
  const same = (i: number, j: number) =>
    a.lines[i] === b.lines[j] && (i === na - 1 && a.openEnd) === (j === nb - 1 && b.openEnd);
  let p = 0;
  while (p < na && p < nb && same(p, p)) p++;
  let s = 0;
  while (s < na - p && s < nb - p && same(na - 1 - s, nb - 1 - s)) s++;
  const head = `Index: ${rel}\n${"=".repeat(67)}\n--- ${rel}\n+++ ${rel}\n`;
  if (p === na && p === nb) return head;
  const from = Math.max(0, p - 3);
  const toA = Math.min(na, na - s + 3);
  const toB = Math.min(nb, nb - s + 3);
  const out: string[] = [];
  const push = (mark: string, l: Lines, i: number) => {
    out.push(mark + l.lines[i]);
    if (i === l.lines.length - 1 && l.openEnd) out.push(NO_EOL);
  };
  for (let i = from; i < p; i++) push(" ", a, i);
  for (let i = p; i < na - s; i++) push("-", a, i);
  for (let j = p; j < nb - s; j++) push("+", b, j);
  for (let i = na - s; i < toA; i++) push(" ", a, i);
  const lenA = toA - from;
  const lenB = toB - from;
  const range = (start: number, len: number) =>
    len === 0 ? `${start},0` : len === 1 ? `${start + 1}` : `${start + 1},${len}`;
  return `${head}@@ -${range(from, lenA)} +${range(from, lenB)} @@\n${out.join("\n")}\n`;
}
