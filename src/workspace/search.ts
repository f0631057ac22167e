/**
 * search_text: content search (literal or regex), line-oriented, binary files skipped.
 * The arguments get cheap checks here, on the calling thread; compiling the patterns, the
 * walk and the matching run as an engine job (in a worker when the pool runs), in bounded chunks, under the result byte
 * budget, accepting matches only after the walk re-verified the directories they came from.
 */
import fs from "node:fs";
import { isUtf8 } from "node:buffer";
import type { Workspace } from "./workspace.ts";
import { WorkspaceError } from "./errors.ts";
import { resolveDirectory } from "./list.ts";
import { openClassified, VERIFIED, type WalkEntry, walkerBelow, type WalkStats } from "./walk.ts";
import { checkGlobs, compileGlobs } from "./globs.ts";
import { BINARY_SNIFF_BYTES } from "./text.ts";
import { checkQuery, compileQuery } from "./query.ts";
import { byteString, utf16Units } from "./byte_scan.ts";
import { jsonBytes, ResultBudget } from "./budget.ts";
import type { Checkpoint, JobSpec } from "./engine/protocol.ts";
import { jobSpec } from "./engine/spec.ts";

/** Longest line text returned for one match or context line (UTF-16 code units). */
export const MAX_LINE_CHARS = 1000;

/** Arguments of searchText. */
export interface SearchTextArgs {
  query: string;
  regex?: boolean;
  caseSensitive?: boolean;
  wholeWord?: boolean;
  path?: string;
  include?: string[];
  exclude?: string[];
  respectGitignore?: boolean;
  includeHidden?: boolean;
  contextLines?: number;
  maxMatches?: number;
  maxFileBytes?: number;
}

/** One matching line. */
export interface SearchMatch {
  path: string;
  line: number;
  column: number;
  text: string;
  textStartColumn?: number;
  before?: string[];
  after?: string[];
  /** Lines (this match's or its context's) whose text stops before the line's end. */
  clippedLines?: number[];
}

/** Result of searchText. */
export interface SearchTextResult {
  matches: SearchMatch[];
  filesSearched: number;
  filesMatched: number;
  filesSkipped: { binary: number; tooLarge: number; unreadable: number };
  visited: number;
  truncated: boolean;
  truncatedReason?: "maxMatches" | "maxVisited" | "maxDepth" | "maxResultBytes";
}

/** Progress of a running search. */
export interface SearchProgress {
  filesSearched: number;
  matches: number;
}

/** Where a search reports progress and learns it is cancelled. */
export interface SearchContext {
  signal?: AbortSignal;
  onProgress?: (p: SearchProgress) => void;
}

function clip(line: string, at: number): { text: string; start: number; cutEnd: boolean } {
  if (line.length <= MAX_LINE_CHARS) return { text: line, start: 0, cutEnd: false };
  const start = Math.max(0, Math.min(at - 100, line.length - MAX_LINE_CHARS));
  const cutEnd = start + MAX_LINE_CHARS < line.length;
  return { text: line.slice(start, start + MAX_LINE_CHARS), start, cutEnd };
}

type Loaded =
  | { kind: "text"; bytes: Uint8Array }
  | { kind: "binary" | "tooLarge" | "unreadable" | "notFile" };

const utf8 = new TextDecoder("utf-8");
/** For pieces of a file: a U+FEFF inside the text is kept (only the file's first BOM is not text). */
const utf8Piece = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Reads one walked file synchronously into a reusable buffer: open without following a
 * final link and without blocking on FIFOs, fstat (it must be the inode the walk
 * classified), read at most maxFileBytes + 1 (one read when it returns the size fstat gave),
 * close. Four system calls and no promise per file (decisions 0008, 0035). The bytes are
 * checked (NUL in the first 8 KiB, valid UTF-8), not decoded.
 */
function loadSync(entry: WalkEntry, maxFileBytes: number, buf: Uint8Array): Loaded {
  if (entry.info === null) return { kind: "unreadable" };
  const opened = openClassified({ rel: entry.rel, abs: entry.abs, info: entry.info });
  if (opened === null) return { kind: "unreadable" };
  const { fd, stat } = opened;
  try {
    if (!stat.isFile()) return { kind: "notFile" };
    if (stat.size > maxFileBytes) return { kind: "tooLarge" };
    let n = 0;
    while (n <= maxFileBytes) {
      const r = fs.readSync(fd, buf, n, maxFileBytes + 1 - n, null);
      if (r === 0) break;
      n += r;
      // The size fstat gave was read: a file growing after that is read as it was then.
      if (n === stat.size) break;
    }
    if (n > maxFileBytes) return { kind: "tooLarge" };
    const bytes = buf.subarray(0, n);
    if (bytes.subarray(0, BINARY_SNIFF_BYTES).indexOf(0) !== -1) return { kind: "binary" };
    if (!isUtf8(bytes)) return { kind: "binary" };
    return { kind: "text", bytes };
  } catch {
    return { kind: "unreadable" };
  } finally {
    fs.closeSync(fd);
  }
}

const enc = new TextEncoder();
const dec = new TextDecoder();
/** A flat copy of a (short) string, so a result never keeps a whole file's text alive. */
function detach(s: string): string {
  return s.length < 16 ? s : dec.decode(enc.encode(s));
}

function stripCr(s: string): string {
  return s.endsWith("\r") ? s.slice(0, -1) : s;
}

/**
 * A file's content as the scans see it: `s` is the decoded text, or the bytes as a byte
 * string (one character per byte, decision 0035); `line` turns a range of `s` into text and
 * `units` gives a range's length in UTF-16 units. `base` is where the first line starts (after
 * a byte order mark, which is not text).
 */
interface Content {
  s: string;
  base: number;
  line(a: number, b: number): string;
  units(a: number, b: number): number;
}

function textContent(text: string): Content {
  return { s: text, base: 0, line: (a, b) => text.slice(a, b), units: (a, b) => b - a };
}

function byteContent(bytes: Uint8Array): Content {
  const s = byteString(bytes);
  const bom = s.startsWith("\xEF\xBB\xBF") ? 3 : 0;
  return {
    s,
    base: bom,
    line: (a, b) => utf8Piece.decode(bytes.subarray(a, b)),
    units: (a, b) => utf16Units(s, a, b),
  };
}

/**
 * Up to k lines before the line starting at lineStart (line lineNo), oldest first; the
 * numbers of those clipped go to `clipped`.
 */
function linesBefore(
  c: Content,
  at: { lineStart: number; lineNo: number },
  k: number,
  clipped: number[],
): string[] {
  const out: string[] = [];
  let end = at.lineStart - 1; // the "\n" ending the previous line
  while (out.length < k && end >= c.base) {
    const nl = end - 1 < c.base ? -1 : c.s.lastIndexOf("\n", end - 1);
    const start = nl === -1 ? c.base : nl + 1;
    const cl = clip(stripCr(c.line(start, end)), 0);
    if (cl.cutEnd) clipped.unshift(at.lineNo - out.length - 1);
    out.unshift(detach(cl.text));
    end = start - 1;
  }
  return out;
}

/**
 * Up to k lines after the line ending at lineEnd (index of its "\n" or the end; line
 * lineNo); the numbers of those clipped go to `clipped`.
 */
function linesAfter(
  c: Content,
  at: { lineEnd: number; lineNo: number },
  k: number,
  clipped: number[],
): string[] {
  const out: string[] = [];
  let start = at.lineEnd + 1;
  while (out.length < k && start < c.s.length) {
    let end = c.s.indexOf("\n", start);
    if (end === -1) end = c.s.length;
    const cl = clip(stripCr(c.line(start, end)), 0);
    if (cl.cutEnd) clipped.push(at.lineNo + out.length + 1);
    out.push(detach(cl.text));
    start = end + 1;
  }
  return out;
}

/** The arguments of a search job, every default applied and every bound checked. */
interface SearchJobArgs {
  query: string;
  regex: boolean;
  caseSensitive: boolean;
  wholeWord: boolean;
  include: string[];
  exclude: string[];
  respectGitignore: boolean;
  includeHidden: boolean;
  contextLines: number;
  maxMatches: number;
  maxFileBytes: number;
}

function checkedArgs(ws: Workspace, args: SearchTextArgs): SearchJobArgs {
  if (args.query.length === 0) {
    throw new WorkspaceError("INVALID_ARGUMENT", "query is empty", { argument: "query" });
  }
  if (!args.regex && /[\r\n]/.test(args.query)) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      "query must be a single line (search is line by line)",
      { argument: "query" },
    );
  }
  const maxMatches = args.maxMatches ?? ws.limits.maxMatches;
  if (maxMatches > ws.limits.maxMatches) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `maxMatches ${maxMatches} exceeds this workspace's limit of ${ws.limits.maxMatches}`,
      { argument: "maxMatches", details: { limit: ws.limits.maxMatches } },
    );
  }
  const maxFileBytes = args.maxFileBytes ?? ws.limits.maxSearchFileBytes;
  if (maxFileBytes > ws.limits.maxSearchFileBytes) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `maxFileBytes ${maxFileBytes} exceeds this workspace's limit of ${ws.limits.maxSearchFileBytes}`,
      { argument: "maxFileBytes", details: { limit: ws.limits.maxSearchFileBytes } },
    );
  }
  const out: SearchJobArgs = {
    query: args.query,
    regex: args.regex ?? false,
    caseSensitive: args.caseSensitive ?? true,
    wholeWord: args.wholeWord ?? false,
    include: args.include ?? [],
    exclude: args.exclude ?? [],
    respectGitignore: args.respectGitignore ?? true,
    includeHidden: args.includeHidden ?? false,
    contextLines: args.contextLines ?? 0,
    maxMatches,
    maxFileBytes,
  };
  // Only cheap, bounded checks here (lengths, counts): compiling can take long on hostile
  // patterns, so it happens in the engine job, which reports a bad one as INVALID_ARGUMENT.
  checkQuery(out);
  checkGlobs(out.include, { argument: "include" });
  checkGlobs(out.exclude, { argument: "exclude" });
  return out;
}

function compilePatterns(a: SearchJobArgs) {
  return {
    matcher: compileQuery(a),
    included: a.include.length ? compileGlobs(a.include, { dot: true, argument: "include" }) : (
      () => true
    ),
    excluded: compileGlobs(a.exclude, { dot: true, argument: "exclude" }),
  };
}

/** Searches file contents below a directory; deterministic order, bounded, cancellable. */
export async function searchText(
  ws: Workspace,
  args: SearchTextArgs,
  ctx: SearchContext = {},
): Promise<SearchTextResult> {
  const jobArgs = checkedArgs(ws, args);
  const dir = await resolveDirectory(ws, args.path ?? ".", "path");
  return await ws.engine.run<SearchTextResult>(
    jobSpec(ws, { op: "search", dir, args: { ...jobArgs } }),
    { signal: ctx.signal, onProgress: ctx.onProgress },
  );
}

/** The search itself, as an engine job: walk, read, match, under the caps and the byte budget. */
export async function searchJob(spec: JobSpec, cp: Checkpoint): Promise<SearchTextResult> {
  const a = spec.args as unknown as SearchJobArgs;
  const { matcher, included, excluded } = compilePatterns(a);
  const { maxMatches, contextLines } = a;
  const budget = new ResultBudget(spec.limits.maxResultBytes);
  const stats: WalkStats = { visited: 0, unreadable: 0, capped: false };
  const result: SearchTextResult = {
    matches: [],
    filesSearched: 0,
    filesMatched: 0,
    filesSkipped: { binary: 0, tooLarge: 0, unreadable: 0 },
    visited: 0,
    truncated: false,
  };
  // Matches from files whose directory chain has not been re-verified yet.
  let pending: SearchMatch[] = [];
  let pendingFilesMatched = 0;
  const commit = () => {
    for (const m of pending) result.matches.push(m);
    result.filesMatched += pendingFilesMatched;
    pending = [];
    pendingFilesMatched = 0;
  };
  const stop = (reason: "maxMatches" | "maxResultBytes") => {
    result.truncated = true;
    result.truncatedReason = reason;
    return false;
  };

  /** Records one matching line; false once a cap or the byte budget is reached. */
  const record = (
    rel: string,
    text: Content,
    lineNo: number,
    lineStart: number,
    lineEnd: number,
    col: number,
  ) => {
    if (result.matches.length + pending.length === maxMatches) return stop("maxMatches");
    const line = stripCr(text.line(lineStart, lineEnd));
    const c = clip(line, col);
    const match: SearchMatch = { path: rel, line: lineNo, column: col + 1, text: detach(c.text) };
    if (c.start > 0) match.textStartColumn = c.start + 1;
    const clipped: number[] = c.cutEnd ? [lineNo] : [];
    if (contextLines > 0) {
      const before: number[] = [];
      match.before = linesBefore(text, { lineStart, lineNo }, contextLines, before);
      match.after = linesAfter(text, { lineEnd, lineNo }, contextLines, clipped);
      clipped.unshift(...before);
    }
    if (clipped.length > 0) match.clippedLines = clipped;
    if (!budget.take(jsonBytes(match))) return stop("maxResultBytes");
    pending.push(match);
    cp.counters.matches = result.matches.length + pending.length;
    return true;
  };

  const check = () => cp.check();

  /**
   * Scans one file for hits of `find` (whole-text positions of `c.s`), one per line: each
   * hit's line is the match (`exact`, at the hit's column) or a candidate `findInLine` decides.
   * Returns false when a cap stopped the search.
   */
  const scanHits = (
    rel: string,
    c: Content,
    find: (s: string, from: number, check: () => void) => number,
    exact: boolean,
  ): boolean => {
    const text = c.s;
    let found = 0;
    let going = true;
    let lineNo = 1;
    let counted = c.base; // newlines counted up to this offset
    let from = c.base;
    while (going) {
      cp.check();
      const pos = find(text, from, check);
      if (pos === -1) break;
      const lineStart = Math.max(c.base, text.lastIndexOf("\n", pos - 1) + 1);
      for (
        let i = text.indexOf("\n", counted);
        i !== -1 && i < lineStart;
        i = text.indexOf("\n", i + 1)
      ) {
        lineNo++;
        counted = i + 1;
      }
      counted = Math.max(counted, lineStart);
      let lineEnd = text.indexOf("\n", pos);
      if (lineEnd === -1) lineEnd = text.length;
      const col = exact
        ? c.units(lineStart, pos)
        : matcher.findInLine(c.line(lineStart, lineEnd), check);
      if (col !== -1) {
        going = record(rel, c, lineNo, lineStart, lineEnd, col);
        if (going) found++;
      }
      from = lineEnd + 1; // one match per line
      if (from > text.length) break;
    }
    if (found > 0) pendingFilesMatched++;
    return going;
  };

  /** Scans one file's bytes; returns false when a cap stopped the search. */
  const scan = (rel: string, bytes: Uint8Array): boolean => {
    if (matcher.bytes) {
      // Bytes decide: search them, decode only the lines around hits (decision 0035).
      return scanHits(rel, byteContent(bytes), matcher.bytes.find, matcher.bytes.exact);
    }
    const c = textContent(utf8.decode(bytes));
    // A literal (escaped) query cannot span lines: scan the whole text and map hits to lines.
    if (matcher.wholeText) return scanHits(rel, c, matcher.find, true);
    // A regex may use anchors and classes that see line ends: match line by line.
    const text = c.s;
    let found = 0;
    let going = true;
    let lineNo = 0;
    let start = 0;
    while (going && start < text.length) {
      if ((lineNo & 15) === 0) cp.check();
      lineNo++;
      let end = text.indexOf("\n", start);
      if (end === -1) end = text.length;
      const at = matcher.find(stripCr(text.slice(start, end)), 0);
      if (at !== -1) {
        going = record(rel, c, lineNo, start, end, at);
        if (going) found++;
      }
      start = end + 1;
    }
    if (found > 0) pendingFilesMatched++;
    return going;
  };

  const buf = new Uint8Array(a.maxFileBytes + 1);
  const walker = walkerBelow(spec, {
    includeHidden: a.includeHidden,
    respectGitignore: a.respectGitignore,
    excluded,
    checkpoint: cp,
  }, stats);
  for (const e of walker.entries()) {
    if (e === VERIFIED) {
      commit();
      continue;
    }
    const t = cp.tick();
    if (t) await t;
    if (e.type !== "file" || excluded(e.relToBase) || !included(e.relToBase)) continue;
    const loaded = loadSync(e, a.maxFileBytes, buf);
    let going = true;
    switch (loaded.kind) {
      case "text":
        result.filesSearched++;
        cp.counters.filesSearched = result.filesSearched;
        going = scan(e.rel, loaded.bytes);
        break;
      case "binary":
      case "tooLarge":
      case "unreadable":
        result.filesSkipped[loaded.kind]++;
        break;
    }
    if (!going) break;
  }
  // What was gathered since the last verification is accepted only if the chain still holds.
  walker.verifyCurrent();
  commit();
  result.visited = stats.visited;
  result.filesSkipped.unreadable += stats.unreadable;
  if (stats.capped && !result.truncated) {
    result.truncated = true;
    result.truncatedReason = "maxVisited";
  }
  if (stats.depthLimited && !result.truncated) {
    result.truncated = true;
    result.truncatedReason = "maxDepth";
  }
  return result;
}
