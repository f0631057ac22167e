/**
 * What several tools' text for people shares: entry lines with directories marked, `key:`
 * rows with the key dim, and coloured diff lines. Each styles text already made terminal-safe.
 */
import type { Styles } from "./unit.ts";

/** A directory line's total note (list_directory with sizes), from the `/` that ends the name. */
const DIRECTORY_TOTAL =
  /\/ \(((at least )?\d+ bytes total(, partial: \w+)?|total unknown: [\w ]+)\)$/;

/** A list_directory or find_files line: directories bold blue, notes in brackets dim. */
export function styledEntryLine(line: string, c: Styles): string {
  if (
    line.startsWith("[") || line.startsWith("No matches") || /^\(.* has no entries\)$/.test(line)
  ) {
    return c.dim(line);
  }
  if (line.endsWith("/")) return c.bold(c.blue(line));
  const total = DIRECTORY_TOTAL.exec(line);
  if (total) {
    return c.bold(c.blue(line.slice(0, total.index + 1))) + c.dim(line.slice(total.index + 1));
  }
  const note = / \((\d+ bytes|symlink|special file)\)$/.exec(line);
  if (!note) return line;
  const name = line.slice(0, note.index);
  return (note[1] === "symlink" ? c.cyan(name) : name) + c.dim(note[0]);
}

/** Every line of a listing styled as an entry line. */
export function styledEntries(text: string, c: Styles): string {
  return text.split("\n").map((l) => styledEntryLine(l, c)).join("\n");
}

/** `key: value` lines with each key dim. */
export function dimKeys(text: string, c: Styles): string {
  return text.split("\n").map((l) => l.replace(/^([a-z]+):/, (k) => c.dim(k))).join("\n");
}

/** A line of a unified diff, coloured: + green, - red, @@ cyan, file headers bold. */
export function diffLine(line: string, c: Styles): string {
  if (line.startsWith("+++ ") || line.startsWith("--- ")) return c.bold(line);
  if (line.startsWith("@@")) return c.cyan(line);
  if (line.startsWith("+")) return c.green(line);
  if (line.startsWith("-")) return c.red(line);
  if (line.startsWith("\\") || line.startsWith("=")) return c.dim(line);
  return line;
}
