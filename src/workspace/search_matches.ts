/**
 * search_text's matches as one shard gathers them: each matching line built (clipped text,
 * context lines) and sized as JSON without serializing, taken under maxMatches and the result
 * byte budget, held until the walk re-verifies the directories they came from, then accepted
 * with their walk positions (decision 0035).
 *
 * @module
 */
import type { Checkpoint } from "./engine/protocol.ts";
import { ResultBudget } from "./budget.ts";
import { textCosts } from "./text.ts";
import type { WalkStats } from "./walk.ts";
import type { SearchMatch } from "./search_types.ts";
import type { SearchShard } from "./search_shards.ts";
import { clip, type Content, linesAfter, linesBefore, own, stripCr } from "./search_content.ts";

/** Printable ASCII other than `"` and `\`: one byte each in JSON. */
const JSON_PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Bytes of a JSON string value, quotes included (as jsonBytes counts it). */
function jsonStringBytes(s: string): number {
  return (JSON_PLAIN.test(s) ? s.length : textCosts(s).json) + 2;
}

function jsonStringsBytes(a: string[]): number {
  let n = 1 + a.length; // "[", "]" and the commas between items
  if (a.length === 0) n = 2;
  for (const s of a) n += jsonStringBytes(s);
  return n;
}

function jsonNumbersBytes(a: number[]): number {
  let n = a.length === 0 ? 2 : 1 + a.length;
  for (const x of a) n += String(x).length;
  return n;
}

/**
 * jsonBytes(match) without serializing: the keys and numbers are ASCII, strings are counted
 * as JSON.stringify writes them (tests/workspace/search_bytes_test.ts checks it equal).
 * `pathBytes` is jsonStringBytes(match.path), computed once per file.
 */
export function matchJsonBytes(m: SearchMatch, pathBytes: number): number {
  // {"path":P,"line":N,"column":N,"text":T}
  let n = 2 + 7 + pathBytes + 8 + String(m.line).length + 10 + String(m.column).length + 8 +
    jsonStringBytes(m.text);
  if (m.textStartColumn !== undefined) n += 19 + String(m.textStartColumn).length;
  if (m.before !== undefined) n += 10 + jsonStringsBytes(m.before);
  if (m.after !== undefined) n += 9 + jsonStringsBytes(m.after);
  if (m.clippedLines !== undefined) n += 16 + jsonNumbersBytes(m.clippedLines);
  return n;
}

/** Where a matching line is in its file: its number, its range and the match's column. */
export interface LineAt {
  lineNo: number;
  lineStart: number;
  lineEnd: number;
  col: number;
}

/** One shard's matches and files, built under the caps; `at` is the file being scanned. */
export class ShardCollector {
  readonly result: SearchShard = {
    matches: [],
    matchAt: [],
    matchBytes: [],
    files: [],
    stoppedAt: -1,
    visited: 0,
    unreadableDirs: [],
    capped: false,
    depthLimited: false,
  };
  /** Walk position of the file being scanned. */
  at = 0;
  readonly #o: { maxMatches: number; contextLines: number; cp: Checkpoint };
  readonly #budget: ResultBudget;
  // Matches from files whose directory chain has not been re-verified yet.
  #pending: SearchMatch[] = [];
  #pendingAt: number[] = [];
  #pendingBytes: number[] = [];
  #pathOf = "";
  #pathBytes = 0;

  /** A collector for one shard's search job. */
  constructor(o: {
    maxMatches: number;
    contextLines: number;
    maxResultBytes: number;
    cp: Checkpoint;
  }) {
    this.#o = o;
    this.#budget = new ResultBudget(o.maxResultBytes);
  }

  /** Accepts the pending matches (their chains were just re-verified). */
  commit(): void {
    const r = this.result;
    for (let i = 0; i < this.#pending.length; i++) {
      r.matches.push(this.#pending[i]);
      r.matchAt.push(this.#pendingAt[i]);
      r.matchBytes.push(this.#pendingBytes[i]);
    }
    this.#pending = [];
    this.#pendingAt = [];
    this.#pendingBytes = [];
  }

  /** Records one matching line of `rel`; false once a cap or the byte budget is reached. */
  record(rel: string, text: Content, at: LineAt): boolean {
    const { maxMatches, contextLines, cp } = this.#o;
    if (this.result.matches.length + this.#pending.length === maxMatches) {
      return this.#stop("maxMatches");
    }
    const { lineNo, lineStart, lineEnd, col } = at;
    const line = stripCr(text.line(lineStart, lineEnd));
    const c = clip(line, col);
    const match: SearchMatch = { path: rel, line: lineNo, column: col + 1, text: own(text, c) };
    if (c.start > 0) match.textStartColumn = c.start + 1;
    const clipped: number[] = c.cutEnd ? [lineNo] : [];
    if (contextLines > 0) {
      const before: number[] = [];
      match.before = linesBefore(text, { lineStart, lineNo }, contextLines, before);
      match.after = linesAfter(text, { lineEnd, lineNo }, contextLines, clipped);
      clipped.unshift(...before);
    }
    if (clipped.length > 0) match.clippedLines = clipped;
    if (rel !== this.#pathOf) {
      this.#pathOf = rel;
      this.#pathBytes = jsonStringBytes(rel);
    }
    const bytes = matchJsonBytes(match, this.#pathBytes);
    if (!this.#budget.take(bytes)) return this.#stop("maxResultBytes");
    this.#pending.push(match);
    this.#pendingAt.push(this.at);
    this.#pendingBytes.push(bytes);
    cp.counters.matches = this.result.matches.length + this.#pending.length;
    return true;
  }

  /** Notes where and why this shard stopped; false, for `record` to return. */
  #stop(reason: "maxMatches" | "maxResultBytes"): false {
    this.result.stoppedAt = this.at;
    this.result.stopReason = reason;
    return false;
  }

  /** The shard's result once its walk ended (the pending matches accepted by the caller first). */
  finish(stats: WalkStats): SearchShard {
    const r = this.result;
    r.visited = stats.visited;
    r.capped = stats.capped;
    r.depthLimited = stats.depthLimited === true;
    return r;
  }
}
