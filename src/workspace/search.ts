/** search_text: content search (literal or regex), line-oriented, binary files skipped. */
import fs, { constants as FS } from "node:fs";
import { isUtf8 } from "node:buffer";
import type { Workspace } from "./workspace.ts";
import { WorkspaceError } from "./errors.ts";
import { resolveDirectory } from "./list.ts";
import { walkBelow, type WalkEntry, type WalkStats } from "./walk.ts";
import { compileGlobs } from "./globs.ts";
import { BINARY_SNIFF_BYTES } from "./text.ts";
import { compileQuery } from "./query.ts";

/** Longest line text returned for one match or context line (UTF-16 code units). */
export const MAX_LINE_CHARS = 1000;
/** Progress is reported at most this often (ms). */
const PROGRESS_INTERVAL_MS = 100;

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
}

/** Result of searchText. */
export interface SearchTextResult {
  matches: SearchMatch[];
  filesSearched: number;
  filesMatched: number;
  filesSkipped: { binary: number; tooLarge: number; unreadable: number };
  visited: number;
  truncated: boolean;
  truncatedReason?: "maxMatches" | "maxVisited" | "maxDepth";
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

function clip(line: string, at: number): { text: string; start: number } {
  if (line.length <= MAX_LINE_CHARS) return { text: line, start: 0 };
  const start = Math.max(0, Math.min(at - 100, line.length - MAX_LINE_CHARS));
  return { text: line.slice(start, start + MAX_LINE_CHARS), start };
}

type Loaded =
  | { kind: "text"; entry: WalkEntry; text: string }
  | { kind: "binary" | "tooLarge" | "unreadable" | "notFile"; entry: WalkEntry };

const utf8 = new TextDecoder("utf-8");

/**
 * Reads one walked file synchronously into a reusable buffer: open without following a
 * final link and without blocking on FIFOs, fstat, read at most maxFileBytes + 1, close.
 * Four system calls and no promise per file (the async node:fs path costs several times
 * more per file in Deno; see bench/README.md). The caller yields to the event loop often.
 */
function loadSync(entry: WalkEntry, maxFileBytes: number, buf: Uint8Array): Loaded {
  let fd: number;
  try {
    fd = fs.openSync(entry.abs, FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK);
  } catch {
    return { kind: "unreadable", entry };
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { kind: "notFile", entry };
    if (st.size > maxFileBytes) return { kind: "tooLarge", entry };
    let n = 0;
    while (n <= maxFileBytes) {
      const r = fs.readSync(fd, buf, n, maxFileBytes + 1 - n, null);
      if (r === 0) break;
      n += r;
    }
    if (n > maxFileBytes) return { kind: "tooLarge", entry };
    const bytes = buf.subarray(0, n);
    if (bytes.subarray(0, BINARY_SNIFF_BYTES).indexOf(0) !== -1) return { kind: "binary", entry };
    // Validate, then decode without the (several times slower) fatal mode.
    if (!isUtf8(bytes)) return { kind: "binary", entry };
    return { kind: "text", entry, text: utf8.decode(bytes) };
  } catch {
    return { kind: "unreadable", entry };
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

/** Up to k lines before the line starting at lineStart, oldest first. */
function linesBefore(text: string, lineStart: number, k: number): string[] {
  const out: string[] = [];
  let end = lineStart - 1; // the "\n" ending the previous line
  while (out.length < k && end >= 0) {
    const start = text.lastIndexOf("\n", end - 1) + 1;
    out.unshift(detach(clip(stripCr(text.slice(start, end)), 0).text));
    end = start - 1;
  }
  return out;
}

/** Up to k lines after the line ending at lineEnd (index of its "\n" or text.length). */
function linesAfter(text: string, lineEnd: number, k: number): string[] {
  const out: string[] = [];
  let start = lineEnd + 1;
  while (out.length < k && start < text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    out.push(detach(clip(stripCr(text.slice(start, end)), 0).text));
    start = end + 1;
  }
  return out;
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((r) => setTimeout(r, 0));
}

/** Longest run of synchronous work before the search yields (ms): keeps cancellation, progress and other requests responsive. */
const SLICE_MS = 10;

/** Searches file contents below a directory; deterministic order, bounded, cancellable. */
export async function searchText(
  ws: Workspace,
  args: SearchTextArgs,
  ctx: SearchContext = {},
): Promise<SearchTextResult> {
  const { signal } = ctx;
  if (args.query.length === 0) {
    throw new WorkspaceError("INVALID_ARGUMENT", "query is empty", { argument: "query" });
  }
  if (!args.regex && /[\r\n]/.test(args.query)) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      "query must be a single line (search is line by line)",
      {
        argument: "query",
      },
    );
  }
  const maxMatches = args.maxMatches ?? ws.limits.maxMatches;
  if (maxMatches > ws.limits.maxMatches) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `maxMatches ${maxMatches} exceeds this workspace's limit of ${ws.limits.maxMatches}`,
      {
        argument: "maxMatches",
        details: { limit: ws.limits.maxMatches },
      },
    );
  }
  const maxFileBytes = args.maxFileBytes ?? ws.limits.maxSearchFileBytes;
  if (maxFileBytes > ws.limits.maxSearchFileBytes) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `maxFileBytes ${maxFileBytes} exceeds this workspace's limit of ${ws.limits.maxSearchFileBytes}`,
      {
        argument: "maxFileBytes",
        details: { limit: ws.limits.maxSearchFileBytes },
      },
    );
  }
  const contextLines = args.contextLines ?? 0;
  const matcher = compileQuery(args);
  const includeHidden = args.includeHidden ?? false;
  const included = args.include?.length
    ? compileGlobs(args.include, { dot: true, argument: "include" })
    : () => true;
  const excluded = compileGlobs(args.exclude ?? [], { dot: true, argument: "exclude" });
  const dir = await resolveDirectory(ws, args.path ?? ".", "path");

  const stats: WalkStats = { visited: 0, unreadable: 0, capped: false };
  const result: SearchTextResult = {
    matches: [],
    filesSearched: 0,
    filesMatched: 0,
    filesSkipped: { binary: 0, tooLarge: 0, unreadable: 0 },
    visited: 0,
    truncated: false,
  };
  let lastProgress = Date.now();
  const abortError = () => new WorkspaceError("CANCELLED", "the search was cancelled");

  /** Records one matching line; false once maxMatches is reached. */
  const record = (
    rel: string,
    text: string,
    lineNo: number,
    lineStart: number,
    lineEnd: number,
    col: number,
  ) => {
    if (result.matches.length === maxMatches) {
      result.truncated = true;
      result.truncatedReason = "maxMatches";
      return false;
    }
    const line = stripCr(text.slice(lineStart, lineEnd));
    const c = clip(line, col);
    const match: SearchMatch = { path: rel, line: lineNo, column: col + 1, text: detach(c.text) };
    if (c.start > 0) match.textStartColumn = c.start + 1;
    if (contextLines > 0) {
      match.before = linesBefore(text, lineStart, contextLines);
      match.after = linesAfter(text, lineEnd, contextLines);
    }
    result.matches.push(match);
    return true;
  };

  /** Scans one file; returns false when maxMatches stopped the search. */
  const scan = (l: Extract<Loaded, { kind: "text" }>): boolean => {
    const text = l.text;
    let found = 0;
    let going = true;
    if (matcher.wholeText) {
      // A literal (escaped) query cannot span lines: scan the whole text and map hits to lines.
      let lineNo = 1;
      let counted = 0; // newlines counted up to this offset
      let from = 0;
      while (going) {
        const pos = matcher.find(text, from);
        if (pos === -1) break;
        const lineStart = text.lastIndexOf("\n", pos - 1) + 1;
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
        going = record(l.entry.rel, text, lineNo, lineStart, lineEnd, pos - lineStart);
        if (going) found++;
        from = lineEnd + 1; // one match per line
        if (from > text.length) break;
      }
    } else {
      // A regex may use anchors and classes that see line ends: match line by line.
      let lineNo = 0;
      let start = 0;
      while (going && start < text.length) {
        lineNo++;
        let end = text.indexOf("\n", start);
        if (end === -1) end = text.length;
        const at = matcher.find(stripCr(text.slice(start, end)), 0);
        if (at !== -1) {
          going = record(l.entry.rel, text, lineNo, start, end, at);
          if (going) found++;
        }
        start = end + 1;
      }
    }
    if (found > 0) result.filesMatched++;
    return going;
  };

  const buf = new Uint8Array(maxFileBytes + 1);
  const iterator = walkBelow(ws, dir, {
    includeHidden,
    respectGitignore: args.respectGitignore ?? true,
    excluded,
    signal,
  }, stats);
  let sliceStart = performance.now();
  for await (const e of iterator) {
    if (e.type !== "file" || excluded(e.relToBase) || !included(e.relToBase)) continue;
    const loaded = loadSync(e, maxFileBytes, buf);
    let going = true;
    switch (loaded.kind) {
      case "text":
        result.filesSearched++;
        going = scan(loaded);
        break;
      case "binary":
      case "tooLarge":
      case "unreadable":
        result.filesSkipped[loaded.kind]++;
        break;
    }
    if (!going) break;
    if (performance.now() - sliceStart >= SLICE_MS) {
      await yieldToEventLoop();
      sliceStart = performance.now();
      if (signal?.aborted) throw abortError();
    }
    if (ctx.onProgress && Date.now() - lastProgress >= PROGRESS_INTERVAL_MS) {
      lastProgress = Date.now();
      ctx.onProgress({ filesSearched: result.filesSearched, matches: result.matches.length });
    }
  }
  if (signal?.aborted) throw abortError();
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
