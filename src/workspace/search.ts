/** search_text: content search (literal or regex), line-oriented, binary files skipped. */
import fsp from "node:fs/promises";
import { constants as FS } from "node:fs";
import type { Workspace } from "./workspace.ts";
import { WorkspaceError } from "./errors.ts";
import { resolveDirectory } from "./list.ts";
import { walk, type WalkEntry, type WalkStats } from "./walk.ts";
import { compileGlobs, excludesDir } from "./globs.ts";
import { looksBinary } from "./text.ts";

/** Longest line text returned for one match or context line (UTF-16 code units). */
export const MAX_LINE_CHARS = 1000;
/** Files read at once. */
const READ_AHEAD = 8;
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

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

function buildRegExp(args: SearchTextArgs): RegExp {
  const source = args.regex ? args.query : escapeRegExp(args.query);
  const flags = "g" + (args.caseSensitive === false ? "i" : "");
  const attempt = (unicode: boolean) => {
    const word = unicode ? "[\\p{L}\\p{N}_]" : "\\w";
    const body = args.wholeWord ? `(?<!${word})(?:${source})(?!${word})` : source;
    return new RegExp(body, flags + (unicode ? "u" : ""));
  };
  try {
    return attempt(true);
  } catch {
    try {
      return attempt(false);
    } catch (err) {
      throw new WorkspaceError(
        "INVALID_ARGUMENT",
        `query is not a valid regular expression: ${(err as Error).message}`,
        {
          argument: "query",
        },
      );
    }
  }
}

function clip(line: string, at: number): { text: string; start: number } {
  if (line.length <= MAX_LINE_CHARS) return { text: line, start: 0 };
  const start = Math.max(0, Math.min(at - 100, line.length - MAX_LINE_CHARS));
  return { text: line.slice(start, start + MAX_LINE_CHARS), start };
}

type Loaded =
  | { kind: "text"; entry: WalkEntry; text: string }
  | { kind: "binary" | "tooLarge" | "unreadable" | "notFile"; entry: WalkEntry };

async function load(entry: WalkEntry, maxFileBytes: number): Promise<Loaded> {
  let handle;
  try {
    handle = await fsp.open(entry.abs, FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK);
  } catch {
    return { kind: "unreadable", entry };
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) return { kind: "notFile", entry };
    if (st.size > maxFileBytes) return { kind: "tooLarge", entry };
    const bytes = await handle.readFile();
    if (bytes.length > maxFileBytes) return { kind: "tooLarge", entry };
    if (looksBinary(bytes)) return { kind: "binary", entry };
    try {
      const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      return { kind: "text", entry, text };
    } catch {
      return { kind: "binary", entry };
    }
  } catch {
    return { kind: "unreadable", entry };
  } finally {
    await handle.close();
  }
}

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
  const re = buildRegExp(args);
  const literal = !args.regex && args.caseSensitive !== false ? args.query : null;
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

  const scan = (l: Extract<Loaded, { kind: "text" }>): boolean => {
    const text = l.text;
    // Fast reject on the whole text; exact for literal queries, skipped for regexes (anchors, line ends).
    if (
      literal !== null ? !text.includes(literal) : !args.regex && !(re.lastIndex = 0, re.test(text))
    ) {
      return true;
    }
    const lines = text.split("\n");
    if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
    let matchedHere = false;
    for (let i = 0; i < lines.length; i++) {
      let line = lines[i];
      if (line.endsWith("\r")) line = line.slice(0, -1);
      re.lastIndex = 0;
      const m = re.exec(line);
      if (!m) continue;
      if (result.matches.length === maxMatches) {
        result.truncated = true;
        result.truncatedReason = "maxMatches";
        if (matchedHere) result.filesMatched++;
        return false;
      }
      matchedHere = true;
      const c = clip(line, m.index);
      const match: SearchMatch = {
        path: l.entry.rel,
        line: i + 1,
        column: m.index + 1,
        text: c.text,
      };
      if (c.start > 0) match.textStartColumn = c.start + 1;
      if (contextLines > 0) {
        const strip = (s: string) => clip(s.endsWith("\r") ? s.slice(0, -1) : s, 0).text;
        match.before = lines.slice(Math.max(0, i - contextLines), i).map(strip);
        match.after = lines.slice(i + 1, i + 1 + contextLines).map(strip);
      }
      result.matches.push(match);
    }
    if (matchedHere) result.filesMatched++;
    return true;
  };

  const pending: Promise<Loaded>[] = [];
  const iterator = walk({
    baseRel: dir.rel,
    baseAbs: dir.abs,
    rootAbs: ws.policy.rootReal,
    maxDepth: ws.limits.maxDepth,
    includeHidden,
    respectGitignore: args.respectGitignore ?? true,
    maxVisited: ws.limits.maxVisited,
    pruneDir: (d) => excludesDir(excluded, d.relToBase),
    signal,
  }, stats);
  let walking = true;
  let going = true;
  while (going && (walking || pending.length > 0)) {
    while (walking && pending.length < READ_AHEAD) {
      const next = await iterator.next();
      if (next.done) {
        walking = false;
        break;
      }
      const e = next.value;
      if (e.type !== "file" || excluded(e.relToBase) || !included(e.relToBase)) continue;
      pending.push(load(e, maxFileBytes));
    }
    if (pending.length === 0) break;
    const loaded = await pending.shift()!;
    if (signal?.aborted) throw abortError();
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
    if (ctx.onProgress && Date.now() - lastProgress >= PROGRESS_INTERVAL_MS) {
      lastProgress = Date.now();
      ctx.onProgress({ filesSearched: result.filesSearched, matches: result.matches.length });
    }
  }
  if (!going) await iterator.return(undefined);
  await Promise.allSettled(pending);
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
