/** The benchmark's pure helpers: quantiles, targets, value formatting, table and README splicing. */
import assert from "node:assert/strict";
import {
  formatSummary,
  formatValue,
  markdownTable,
  median,
  meets,
  quantile,
  replaceBetween,
  summarize,
} from "../../bench/lib/stats.ts";

Deno.test("median and quartiles interpolate; an empty sample is NaN", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(quantile([10, 20, 30, 40, 50], 0.25), 20);
  assert.ok(Number.isNaN(median([])));
  const s = summarize([5, 1, 9]);
  assert.deepEqual([s.n, s.median, s.min, s.max], [3, 5, 1, 9]);
});

Deno.test("targets compare in their direction; a missing figure meets nothing", () => {
  const atMost = { op: "<=" as const, value: 1.5, text: "<= 1.5x" };
  const atLeast = { op: ">=" as const, value: 0.25, text: ">= 25%" };
  assert.equal(meets(1.5, atMost), true);
  assert.equal(meets(1.51, atMost), false);
  assert.equal(meets(0.2, atLeast), false);
  assert.equal(meets(NaN, atLeast), undefined);
});

Deno.test("values format per unit and summaries show their spread", () => {
  assert.equal(formatValue(1234, "calls/s"), "1.23 k calls/s");
  assert.equal(formatValue(0.034, "%"), "3.4%");
  assert.equal(formatValue(1.87, "ms"), "1.87 ms");
  assert.equal(formatValue(1430.4, "ms"), "1430 ms");
  assert.equal(formatSummary(summarize([1, 2, 3]), "ms"), "2.00 ms (1.00–3.00)");
  assert.equal(formatSummary(summarize([]), "ms"), "n/a");
});

Deno.test("the table escapes pipes and the README splice keeps its markers and the rest", () => {
  const t = markdownTable([{
    measure: "a|b",
    wmcp: "1",
    anchors: "2",
    ratio: "0.5x",
    target: "<= 1x",
    met: "met",
  }]);
  assert.match(t, /\| a\\\|b \| 1 \| 2 \| 0\.5x \| <= 1x \| met \|/);
  const doc = "top\n<!-- b -->\nold\n<!-- e -->\nbottom\n";
  assert.equal(
    replaceBetween(doc, { begin: "<!-- b -->", end: "<!-- e -->", text: "new" }),
    "top\n<!-- b -->\nnew\n<!-- e -->\nbottom\n",
  );
  assert.throws(() =>
    replaceBetween("no markers", { begin: "<!-- b -->", end: "<!-- e -->", text: "" })
  );
});
