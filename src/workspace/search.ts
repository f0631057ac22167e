/**
 * search_text: content search (literal or regex), line-oriented, binary files skipped.
 * The arguments get cheap checks here, on the calling thread; compiling the patterns, the
 * walk and the matching run as an engine job (in a worker when the pool runs), in bounded chunks, under the result byte
 * budget, accepting matches only after the walk re-verified the directories they came from.
 */
import fs from "node:fs";
import { isAscii, isUtf8 } from "node:buffer";
import type { WorkspaceContext } from "./context.ts";
import { WorkspaceError } from "./errors.ts";
import { resolveDirectory } from "./list.ts";
import { openClassified, VERIFIED, type WalkEntry, walkerBelow, type WalkStats } from "./walk.ts";
import { checkGlobs, compileGlobs } from "./globs.ts";
import { BINARY_SNIFF_BYTES, textCosts } from "./text.ts";
import { checkQuery, compileQuery } from "./query.ts";
import { type ByteFind, byteString, utf16Units } from "./byte_scan.ts";
import { ResultBudget } from "./budget.ts";
import type { Checkpoint, JobSpec } from "./engine/protocol.ts";
import { jobSpec } from "./engine/spec.ts";
import {
  MAX_LINE_CHARS,
  type SearchContext,
  type SearchMatch,
  type SearchTextArgs,
  type SearchTextResult,
} from "./search_types.ts";
import { FILE_KINDS, FILE_TEXT, mergeShards, pathHash, type SearchShard } from "./search_shards.ts";

export type {
  SearchContext,
  SearchMatch,
  SearchProgress,
  SearchTextArgs,
  SearchTextResult,
} from "./search_types.ts";
export { MAX_LINE_CHARS } from "./search_types.ts";

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
function loadSync(entry: WalkEntry, o: { maxFileBytes: number; buf: Uint8Array }): Loaded {
  const { maxFileBytes, buf } = o;
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
    // One short byte string answers the NUL sniff faster than a typed array's indexOf.
    if (byteString(bytes.subarray(0, BINARY_SNIFF_BYTES)).indexOf("\0") !== -1) {
      return { kind: "binary" };
    }
    if (!isUtf8(bytes)) return { kind: "binary" };
    return { kind: "text", bytes };
  } catch {
    return { kind: "unreadable" };
  } finally {
    fs.closeSync(fd);
  }
}

const enc = new TextEncoder();
// ignoreBOM: a line that starts with U+FEFF keeps it (the default decoder would drop it).
const dec = new TextDecoder("utf-8", { ignoreBOM: true });
/** A flat copy of a (short) string, so a result never keeps a whole file's text alive. */
function detach(s: string): string {
  return s.length < 16 ? s : dec.decode(enc.encode(s));
}

/** A clipped line's text that keeps nothing larger alive: copied unless it is a fresh line whole. */
function own(c: Content, cl: { text: string; start: number; cutEnd: boolean }): string {
  return c.fresh && cl.start === 0 && !cl.cutEnd ? cl.text : detach(cl.text);
}

function stripCr(s: string): string {
  return s.endsWith("\r") ? s.slice(0, -1) : s;
}

/**
 * A file's content as the scans see it, by offsets: into the decoded text, or into the bytes
 * (decision 0035). `find` gives the next hit at or after an offset, `nl`/`lastNl` the next
 * "\n" at or after / the last at or before an offset, `line` the text of a range and `units`
 * its length in UTF-16 units. `base` is where the first line starts (after a byte order mark,
 * which is not text).
 */
interface Content {
  length: number;
  base: number;
  /** `line` returns strings of their own (not slices of a whole file's text). */
  fresh: boolean;
  find(from: number): number;
  nl(from: number): number;
  lastNl(at: number): number;
  line(a: number, b: number): string;
  units(a: number, b: number): number;
}

function textContent(text: string, find: (from: number) => number): Content {
  return {
    length: text.length,
    base: 0,
    fresh: false,
    find,
    nl: (from) => text.indexOf("\n", from),
    lastNl: (at) => (at < 0 ? -1 : text.lastIndexOf("\n", at)),
    line: (a, b) => text.slice(a, b),
    units: (a, b) => b - a,
  };
}

/**
 * Bytes one byte string covers: a file is searched a chunk at a time, so no string is larger
 * than this (plus a hit's length) and each dies young, whatever the file's size.
 */
const BYTE_CHUNK = 64 * 1024;

function byteContent(
  bytes: Uint8Array,
  o: { find: ByteFind; pad: number; check: () => void },
): Content {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  // An ASCII file's bytes are its text (asked once, at the first hit).
  let ascii: boolean | undefined;
  const isAsciiFile = () => (ascii ??= isAscii(bytes));
  let chunkStart = -1;
  let chunk = "";
  const n = bytes.length;
  /** The byte string of the chunk holding `pos` (cached; a new chunk starts at `pos`). */
  const chunkAt = (pos: number) => {
    if (chunkStart === -1 || pos < chunkStart || pos >= chunkStart + BYTE_CHUNK) {
      chunkStart = pos;
      chunk = byteString(bytes.subarray(pos, Math.min(n, pos + BYTE_CHUNK + o.pad)));
    }
    return chunk;
  };
  return {
    length: n,
    base: bom,
    fresh: true,
    find: (from) => {
      for (let s = from; s < n;) {
        const str = chunkAt(s);
        // A hit starting in this chunk is whole in it (the pad covers the longest hit).
        const i = o.find(str, s - chunkStart, o.check);
        if (i !== -1 && i < BYTE_CHUNK) return chunkStart + i;
        s = chunkStart + BYTE_CHUNK;
        o.check();
      }
      return -1;
    },
    // Newlines are found in the chunk strings too (a string's indexOf is far cheaper per call
    // than a typed array's).
    nl: (from) => {
      for (let s = from; s < n;) {
        const str = chunkAt(s);
        const i = str.indexOf("\n", s - chunkStart);
        if (i !== -1) return chunkStart + i;
        s = chunkStart + str.length;
      }
      return -1;
    },
    lastNl: (at) => {
      if (at < 0) return -1;
      if (chunkStart !== -1 && at >= chunkStart && at < chunkStart + chunk.length) {
        const i = chunk.lastIndexOf("\n", at - chunkStart);
        if (i !== -1) return chunkStart + i;
        return chunkStart === 0 ? -1 : bytes.lastIndexOf(10, chunkStart - 1);
      }
      return bytes.lastIndexOf(10, at);
    },
    line: (a, b) =>
      isAsciiFile() ? byteString(bytes.subarray(a, b)) : utf8Piece.decode(bytes.subarray(a, b)),
    units: (a, b) => isAsciiFile() ? b - a : utf16Units(bytes, a, b),
  };
}

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
    const nl = end - 1 < c.base ? -1 : c.lastNl(end - 1);
    const start = nl === -1 ? c.base : nl + 1;
    const cl = clip(stripCr(c.line(start, end)), 0);
    if (cl.cutEnd) clipped.unshift(at.lineNo - out.length - 1);
    out.unshift(own(c, cl));
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
  while (out.length < k && start < c.length) {
    let end = c.nl(start);
    if (end === -1) end = c.length;
    const cl = clip(stripCr(c.line(start, end)), 0);
    if (cl.cutEnd) clipped.push(at.lineNo + out.length + 1);
    out.push(own(c, cl));
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

function checkedArgs(ws: WorkspaceContext, args: SearchTextArgs): SearchJobArgs {
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
  ws: WorkspaceContext,
  args: SearchTextArgs,
  ctx: SearchContext = {},
): Promise<SearchTextResult> {
  const jobArgs = checkedArgs(ws, args);
  const dir = await resolveDirectory(ws, args.path ?? ".", "path");
  const spec = jobSpec(ws, { op: "search", dir, args: { ...jobArgs } });
  const shards = await ws.engine.runShards<SearchShard>(spec, {
    signal: ctx.signal,
    onProgress: ctx.onProgress,
  });
  return mergeShards(shards, { maxMatches: jobArgs.maxMatches, limits: spec.limits });
}

/** The search itself, as an engine job: walk, read, match, under the caps and the byte budget. */
export async function searchJob(spec: JobSpec, cp: Checkpoint): Promise<SearchShard> {
  const a = spec.args as unknown as SearchJobArgs;
  const { matcher, included, excluded } = compilePatterns(a);
  const { maxMatches, contextLines } = a;
  const shard = spec.shard ?? { index: 0, count: 1 };
  const mine = shard.count === 1
    ? () => true
    : (rel: string) => pathHash(rel) % shard.count === shard.index;
  const budget = new ResultBudget(spec.limits.maxResultBytes);
  const stats: WalkStats = { visited: 0, unreadable: 0, capped: false };
  const result: SearchShard = {
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
  let filesSearched = 0;
  let pathOf = "";
  let pathBytes = 0;
  let at = 0; // walk position of the file being scanned
  // Matches from files whose directory chain has not been re-verified yet.
  let pending: SearchMatch[] = [];
  let pendingAt: number[] = [];
  let pendingBytes: number[] = [];
  const commit = () => {
    for (let i = 0; i < pending.length; i++) {
      result.matches.push(pending[i]);
      result.matchAt.push(pendingAt[i]);
      result.matchBytes.push(pendingBytes[i]);
    }
    pending = [];
    pendingAt = [];
    pendingBytes = [];
  };
  const stop = (reason: "maxMatches" | "maxResultBytes") => {
    result.stoppedAt = at;
    result.stopReason = reason;
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
    if (rel !== pathOf) {
      pathOf = rel;
      pathBytes = jsonStringBytes(rel);
    }
    const bytes = matchJsonBytes(match, pathBytes);
    if (!budget.take(bytes)) return stop("maxResultBytes");
    pending.push(match);
    pendingAt.push(at);
    pendingBytes.push(bytes);
    cp.counters.matches = result.matches.length + pending.length;
    return true;
  };

  const check = () => cp.check();

  /**
   * Scans one file for hits of `find` (whole-text positions of `c.s`), one per line: each
   * hit's line is the match (`exact`, at the hit's column) or a candidate `findInLine` decides.
   * Returns false when a cap stopped the search.
   */
  const scanHits = (rel: string, c: Content, exact: boolean): boolean => {
    let going = true;
    let lineNo = 1;
    let counted = c.base; // newlines counted up to this offset
    let from = c.base;
    while (going) {
      cp.check();
      const pos = c.find(from);
      if (pos === -1) break;
      const lineStart = Math.max(c.base, c.lastNl(pos - 1) + 1);
      for (let i = c.nl(counted); i !== -1 && i < lineStart; i = c.nl(i + 1)) {
        lineNo++;
        counted = i + 1;
      }
      counted = Math.max(counted, lineStart);
      let lineEnd = c.nl(pos);
      if (lineEnd === -1) lineEnd = c.length;
      const col = exact
        ? c.units(lineStart, pos)
        : matcher.findInLine(c.line(lineStart, lineEnd), check);
      if (col !== -1) {
        going = record(rel, c, lineNo, lineStart, lineEnd, col);
      }
      from = lineEnd + 1; // one match per line
      if (from > c.length) break;
    }
    return going;
  };

  /** Scans one file's bytes; returns false when a cap stopped the search. */
  const scan = (rel: string, bytes: Uint8Array): boolean => {
    const bf = matcher.bytes;
    if (bf) {
      // Bytes decide: search them, decode only the lines around hits (decision 0035).
      return scanHits(rel, byteContent(bytes, { find: bf.find, pad: bf.pad, check }), bf.exact);
    }
    const text = utf8.decode(bytes);
    const c = textContent(text, (from) => matcher.find(text, from, check));
    // A literal (escaped) query cannot span lines: scan the whole text and map hits to lines.
    if (matcher.wholeText) return scanHits(rel, c, true);
    // A regex may use anchors and classes that see line ends: match line by line.
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
      }
      start = end + 1;
    }
    return going;
  };

  const buf = new Uint8Array(a.maxFileBytes + 1);
  const walker = walkerBelow(spec, {
    includeHidden: a.includeHidden,
    respectGitignore: a.respectGitignore,
    excluded,
    // A shard classifies (lstats) only the files it reads; directories always.
    statEntries: shard.count === 1 ? true : mine,
    onUnreadable: (visited) => result.unreadableDirs.push(visited),
    checkpoint: cp,
  }, stats);
  for (const e of walker.entries()) {
    if (e === VERIFIED) {
      commit();
      continue;
    }
    const t = cp.tick();
    if (t) await t;
    if (e.type !== "file" || !mine(e.rel)) continue;
    if (excluded(e.relToBase) || !included(e.relToBase)) continue;
    at = stats.visited;
    const loaded = loadSync(e, { maxFileBytes: a.maxFileBytes, buf });
    let going = true;
    switch (loaded.kind) {
      case "text":
        result.files.push(at, FILE_TEXT);
        cp.counters.filesSearched = ++filesSearched;
        going = scan(e.rel, loaded.bytes);
        break;
      case "binary":
      case "tooLarge":
      case "unreadable":
        result.files.push(at, FILE_KINDS[loaded.kind]);
        break;
    }
    if (!going) break;
  }
  // What was gathered since the last verification is accepted only if the chain still holds.
  walker.verifyCurrent();
  commit();
  result.visited = stats.visited;
  result.capped = stats.capped;
  result.depthLimited = stats.depthLimited === true;
  return result;
}
