/**
 * Reads rg's candidate lines (programs.ts rgLinesArgs) as they stream, into the files that hold
 * them and, per file, runs of consecutive lines (decision 0067). Each record is `./PATH` NUL, the
 * line number, `:` (a candidate line) or `-` (context), and the line's text up to its "\n". A
 * record without that form (a file name holding a newline splits one) makes the whole output
 * untrusted: the grep then fails, and the server reads every file for that search, as for any
 * failed grep.
 *
 * What is kept is bounded: the names, at most MAX_ANSWER_BYTES of them (past it, `over`), and at
 * most `textBudget` bytes of line text; a file met once the text budget is spent, a file that
 * reached maxCount candidate lines (rg stopped reading it), and a file whose name did not decode
 * (two such names could decode alike) keep their name and lose their lines: the server reads them.
 *
 * @module
 */
import { MAX_ANSWER_BYTES } from "../../workspace/native/protocol.ts";

/** Most bytes of line text one answer keeps (the rest of the files are read by the server). */
export const LINES_TEXT_BUDGET = 16 * 1024 * 1024;

/** One file's lines while they are read. */
interface FileLines {
  groups: [number, string[]][];
  /** Its lines are not kept (budget, maxCount, name). */
  dropped: boolean;
  candidates: number;
  last: number;
}

/** What the output gave: the files in the order met, and the lines of those that keep them. */
export interface LinesRead {
  paths: string[];
  lines: Map<string, [number, string][]>;
}

/** A streaming reader of one grep's candidate lines. */
export class LinesReader {
  readonly #maxCount: number;
  readonly #textBudget: number;
  readonly #decoder = new TextDecoder();
  readonly #files = new Map<string, FileLines>();
  #pending = "";
  #text = 0;
  #names = 0;
  #broken = false;
  /** The names passed MAX_ANSWER_BYTES. */
  over = false;

  /** A reader for a grep of at most `maxCount` candidate lines per file. */
  constructor(o: { maxCount: number; textBudget?: number }) {
    this.#maxCount = o.maxCount;
    this.#textBudget = o.textBudget ?? LINES_TEXT_BUDGET;
  }

  /** Takes one chunk of rg's stdout. */
  push(chunk: Uint8Array): void {
    if (this.#broken || this.over) return;
    this.#pending += this.#decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let nl = this.#pending.indexOf("\n"); nl !== -1; nl = this.#pending.indexOf("\n", start)) {
      this.#record(this.#pending.slice(start, nl));
      start = nl + 1;
      if (this.#broken || this.over) return;
    }
    this.#pending = this.#pending.slice(start);
  }

  /** The output ended: what it gave, or null when it was not in the expected form. */
  end(): LinesRead | null {
    this.#pending += this.#decoder.decode();
    // rg ends every record with "\n"; a last one without it is a line of a file without one.
    if (this.#pending !== "") this.#record(this.#pending);
    if (this.#broken) return null;
    const lines = new Map<string, [number, string][]>();
    for (const [path, f] of this.#files) {
      if (f.dropped) continue;
      // Each line ends with "\n", the last too: a file ending in an empty line keeps it.
      lines.set(path, f.groups.map(([first, texts]) => [first, texts.join("\n") + "\n"]));
    }
    return { paths: [...this.#files.keys()], lines };
  }

  #record(rec: string): void {
    const nul = rec.indexOf("\0");
    if (nul === -1 || !rec.startsWith("./")) return void (this.#broken = true);
    let i = nul + 1;
    let n = 0;
    const digits = i;
    for (; i < rec.length; i++) {
      const c = rec.charCodeAt(i);
      if (c < 48 || c > 57) break;
      n = n * 10 + (c - 48);
    }
    const sep = rec[i];
    if (i === digits || n < 1 || (sep !== ":" && sep !== "-")) return void (this.#broken = true);
    const path = rec.slice(2, nul);
    let f = this.#files.get(path);
    if (f === undefined) {
      this.#names += path.length + 3;
      if (this.#names > MAX_ANSWER_BYTES) return void (this.over = true);
      f = {
        groups: [],
        dropped: this.#text >= this.#textBudget || path.includes("\uFFFD"),
        candidates: 0,
        last: 0,
      };
      this.#files.set(path, f);
    }
    if (sep === ":") f.candidates++;
    if (f.dropped) return;
    if (f.candidates >= this.#maxCount) {
      // rg stopped reading this file: its lines are not all there.
      f.dropped = true;
      f.groups = [];
      return;
    }
    const text = rec.slice(i + 1);
    this.#text += text.length + 1;
    if (this.#text > this.#textBudget) {
      f.dropped = true;
      f.groups = [];
      return;
    }
    const g = f.groups[f.groups.length - 1];
    if (g !== undefined && n === f.last + 1) g[1].push(text);
    else f.groups.push([n, [text]]);
    f.last = n;
  }
}
