/**
 * The tables people read, laid out by cli-table3 without borders, the last column wrapped at word
 * boundaries to the terminal's width: the tool table (`tools list`, `op list` on a terminal: name,
 * access (read-only, writes, destructive) and argument signature), and the item table of the
 * resource, template and prompt lists.
 */
import Table from "cli-table3";
import type { Palette } from "./colors.ts";
import { accessOf, signatureOf, type ToolRow } from "./pretty.ts";
import { terminalLine } from "../client/terminal_text.ts";

/** Options of toolTable. */
export interface TableOptions {
  palette: Palette;
  /** Terminal width in columns; undefined: no wrapping. */
  columns?: number;
}

const NO_BORDER = {
  top: "",
  "top-mid": "",
  "top-left": "",
  "top-right": "",
  bottom: "",
  "bottom-mid": "",
  "bottom-left": "",
  "bottom-right": "",
  left: "",
  "left-mid": "",
  mid: "",
  "mid-mid": "",
  right: "",
  "right-mid": "",
  middle: "  ",
};

/** The table of tools, one a row under a header line; each line ends with a newline. */
export function toolTable(tools: ToolRow[], options: TableOptions): string {
  const c = options.palette;
  const rows = tools.map((t) => ({
    // One row a tool: a server's name or argument names never break or style the table (0042).
    name: terminalLine(String(t.name)),
    access: accessOf(t),
    signature: terminalLine(signatureOf(t.inputSchema)) || "-",
  }));
  const nameWidth = Math.max(4, ...rows.map((r) => r.name.length));
  const accessWidth = "destructive".length;
  // The signature takes what is left of the terminal (at least 20 columns), wrapped.
  const signatureWidth = options.columns === undefined
    ? undefined
    : Math.max(20, options.columns - nameWidth - accessWidth - 2 * 2 - 1);
  const table = new Table({
    head: ["TOOL", "ACCESS", "ARGUMENTS"].map((h) => c.bold(h)),
    chars: NO_BORDER,
    style: { head: [], border: [], "padding-left": 0, "padding-right": 0 },
    ...(signatureWidth === undefined ? {} : {
      colWidths: [nameWidth, accessWidth, signatureWidth],
      wordWrap: true,
      wrapOnWordBoundary: true,
    }),
  });
  const tint = { "read-only": c.green, writes: c.yellow, destructive: c.red } as const;
  for (const r of rows) table.push([c.bold(r.name), tint[r.access](r.access), r.signature]);
  return table.toString().split("\n").map((l) => l.trimEnd()).join("\n") + "\n";
}

/**
 * A table of rows under a bold header line (`resources list`, `prompts list`, ...): each cell one
 * line of server text made safe (terminalLine), the first column bold, every column as wide as
 * its widest cell but the last, which takes what is left of the terminal (at least 20 columns),
 * wrapped at word boundaries. Each line ends with a newline.
 */
export function itemTable(
  head: readonly string[],
  cells: readonly (readonly string[])[],
  options: TableOptions,
): string {
  const c = options.palette;
  const rows = cells.map((r) => r.map((cell) => terminalLine(cell) || "-"));
  const widths = head.slice(0, -1).map((h, i) =>
    Math.max(h.length, ...rows.map((r) => r[i].length))
  );
  const used = widths.reduce((a, b) => a + b, 0) + 2 * widths.length;
  const last = options.columns === undefined ? undefined : Math.max(20, options.columns - used - 1);
  const table = new Table({
    head: head.map((h) => c.bold(h)),
    chars: NO_BORDER,
    style: { head: [], border: [], "padding-left": 0, "padding-right": 0 },
    ...(last === undefined ? {} : {
      colWidths: [...widths, last],
      wordWrap: true,
      wrapOnWordBoundary: true,
    }),
  });
  for (const r of rows) table.push(r.map((cell, i) => (i === 0 ? c.bold(cell) : cell)));
  return table.toString().split("\n").map((l) => l.trimEnd()).join("\n") + "\n";
}
