/** Pure helpers of the benchmark harness: summaries of samples, ratios, targets and the tables. */

/** A summary of repeated measurements of one figure. */
export interface Summary {
  n: number;
  median: number;
  min: number;
  max: number;
  p25: number;
  p75: number;
  samples: number[];
}

/** The q-quantile (0..1) of xs by linear interpolation; NaN for no samples. */
export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return s[lo] + (s[hi] - s[lo]) * (at - lo);
}

/** The median of xs; NaN for no samples. */
export function median(xs: number[]): number {
  return quantile(xs, 0.5);
}

/** The arithmetic mean of xs; NaN for no samples. */
export function mean(xs: number[]): number {
  return xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Median, quartiles and extremes of samples. */
export function summarize(samples: number[]): Summary {
  return {
    n: samples.length,
    median: median(samples),
    min: samples.length ? Math.min(...samples) : NaN,
    max: samples.length ? Math.max(...samples) : NaN,
    p25: quantile(samples, 0.25),
    p75: quantile(samples, 0.75),
    samples,
  };
}

/** A target on a ratio (or, with no anchor, on an absolute figure). */
export interface Target {
  /** "<=" when smaller is better, ">=" when larger is better. */
  op: "<=" | ">=";
  value: number;
  /** How the target is written in the table, e.g. ">= 25%" or "<= 1.5x". */
  text: string;
}

/** Whether value meets target; undefined when value is not a finite number. */
export function meets(value: number, target: Target): boolean | undefined {
  if (!Number.isFinite(value)) return undefined;
  return target.op === "<=" ? value <= target.value : value >= target.value;
}

/** A figure with a unit, formatted for a table: ms, ops/s, MB, percent or a plain ratio. */
export function formatValue(value: number, unit: string): string {
  if (!Number.isFinite(value)) return "n/a";
  switch (unit) {
    case "ms":
      return value >= 100 ? `${value.toFixed(0)} ms` : `${value.toFixed(value >= 10 ? 1 : 2)} ms`;
    case "req/s":
    case "calls/s":
      return value >= 1000
        ? `${(value / 1000).toFixed(2)} k ${unit}`
        : `${value.toFixed(0)} ${unit}`;
    case "MB":
      return `${value.toFixed(0)} MB`;
    case "%":
      return `${(value * 100).toFixed(1)}%`;
    case "x":
      return `${value.toFixed(2)}x`;
    default:
      return `${value} ${unit}`.trim();
  }
}

/** A summary as "median (min–max)". */
export function formatSummary(s: Summary, unit: string): string {
  if (s.n === 0) return "n/a";
  if (s.n === 1) return formatValue(s.median, unit);
  const bare = (v: number) => formatValue(v, unit).replace(` ${unit}`, "");
  return `${formatValue(s.median, unit)} (${bare(s.min)}–${bare(s.max)})`;
}

/** One line of the results table. */
export interface TableLine {
  measure: string;
  wmcp: string;
  anchors: string;
  ratio: string;
  target: string;
  met: string;
}

/** Escapes a cell for a Markdown table. */
function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

/** The Markdown table of lines (measure, wmcp, anchors, ratio, target, met). */
export function markdownTable(lines: TableLine[]): string {
  const head = [
    "| measure | wmcp | anchor(s), same run | ratio | target | met |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  const body = lines.map((l) =>
    `| ${[l.measure, l.wmcp, l.anchors, l.ratio, l.target, l.met].map(cell).join(" | ")} |`
  );
  return [...head, ...body].join("\n");
}

/** Replaces the text between the begin and end markers of doc (markers kept); throws without them. */
export function replaceBetween(
  doc: string,
  markers: { begin: string; end: string; text: string },
): string {
  const b = doc.indexOf(markers.begin);
  const e = doc.indexOf(markers.end);
  if (b < 0 || e < b) throw new Error(`markers ${markers.begin} … ${markers.end} not found`);
  return doc.slice(0, b + markers.begin.length) + "\n" + markers.text.trim() + "\n" + doc.slice(e);
}
