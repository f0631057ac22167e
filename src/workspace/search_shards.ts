/**
 * search_text across the engine's workers (decision 0035): what one shard returns, which shard
 * reads a file, and the merge that replays every shard in walk order under the caps and the byte
 * budget on the calling thread.
 */
import type { SearchMatch, SearchTextResult } from "./search_types.ts";
import { ResultBudget } from "./budget.ts";

/** What became of a file a shard read (SearchShard.files). */
export const FILE_TEXT = 0;
const FILE_BINARY = 1;
const FILE_TOO_LARGE = 2;
const FILE_UNREADABLE = 3;
export const FILE_KINDS = {
  binary: FILE_BINARY,
  tooLarge: FILE_TOO_LARGE,
  unreadable: FILE_UNREADABLE,
};

/**
 * What one shard of a search returns: its files and matches in walk order, each tied to its
 * walk position (the walk's entry count when it was met; every shard walks the same tree and
 * counts alike), so the calling thread can replay all shards in walk order (decision 0035).
 */
export interface SearchShard {
  /** Accepted matches (their directory chains re-verified), in walk order. */
  matches: SearchMatch[];
  /** Walk position of each match's file. */
  matchAt: number[];
  /** JSON size of each match (jsonBytes). */
  matchBytes: number[];
  /** Files read, as pairs: walk position, FILE_* kind. */
  files: number[];
  /** Where this shard stopped at a cap (the walk position of the file), or -1. */
  stoppedAt: number;
  /** Why it stopped there. */
  stopReason?: "maxMatches" | "maxResultBytes";
  /** Entries the walk visited. */
  visited: number;
  /** Walk position of each directory that could not be listed. */
  unreadableDirs: number[];
  /** The visited cap stopped the walk. */
  capped: boolean;
  /** A directory at maxDepth was not entered. */
  depthLimited: boolean;
}

/** A 32-bit FNV-1a hash of a path: which shard reads a file. */
export function pathHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** One file a shard read, at its walk position. */
interface FileEvent {
  at: number;
  kind: number;
  shard: number;
}

/** Every shard's files in walk order (ties by shard). */
function fileEvents(shards: SearchShard[]): FileEvent[] {
  const events: FileEvent[] = [];
  shards.forEach((sh, shard) => {
    for (let i = 0; i < sh.files.length; i += 2) {
      events.push({ at: sh.files[i], kind: sh.files[i + 1], shard });
    }
  });
  events.sort((x, y) => x.at - y.at || x.shard - y.shard);
  return events;
}

/**
 * Replays the shards' files and matches in walk order under the caps and the byte budget,
 * giving exactly what one walk reading every file would have returned: the same matches,
 * counters, truncation and reason. A shard stops only at a point where the whole search
 * would have stopped already (its own count and bytes are at most the total), so nothing
 * the replay needs is missing.
 */
export function mergeShards(
  shards: SearchShard[],
  o: { maxMatches: number; limits: { maxResultBytes: number } },
): SearchTextResult {
  const result: SearchTextResult = {
    matches: [],
    filesSearched: 0,
    filesMatched: 0,
    filesSkipped: { binary: 0, tooLarge: 0, unreadable: 0 },
    visited: 0,
    truncated: false,
  };
  const budget = new ResultBudget(o.limits.maxResultBytes);
  const next = shards.map(() => 0); // each shard's next match
  for (const ev of fileEvents(shards)) {
    if (ev.kind === FILE_BINARY) result.filesSkipped.binary++;
    else if (ev.kind === FILE_TOO_LARGE) result.filesSkipped.tooLarge++;
    else if (ev.kind === FILE_UNREADABLE) result.filesSkipped.unreadable++;
    if (ev.kind !== FILE_TEXT) continue;
    result.filesSearched++;
    const sh = shards[ev.shard];
    let found = 0;
    let k = next[ev.shard];
    for (; k < sh.matches.length && sh.matchAt[k] === ev.at; k++) {
      if (result.matches.length === o.maxMatches) {
        result.truncatedReason = "maxMatches";
        break;
      }
      if (!budget.take(sh.matchBytes[k])) {
        result.truncatedReason = "maxResultBytes";
        break;
      }
      result.matches.push(sh.matches[k]);
      found++;
    }
    next[ev.shard] = k;
    if (result.truncatedReason === undefined && sh.stoppedAt === ev.at) {
      // The match that stopped the shard was not sent: it stops the whole search here.
      result.truncatedReason = result.matches.length === o.maxMatches
        ? "maxMatches"
        : sh.stopReason;
    }
    if (found > 0) result.filesMatched++;
    if (result.truncatedReason !== undefined) {
      result.truncated = true;
      return stoppedAt(result, shards[0], ev.at);
    }
  }
  return walkedThrough(result, shards);
}

/** The counters of a search that a cap stopped at walk position `at`. */
function stoppedAt(result: SearchTextResult, first: SearchShard, at: number): SearchTextResult {
  result.visited = at;
  result.filesSkipped.unreadable += first.unreadableDirs.filter((u) => u < at).length;
  return result;
}

/** The counters of a search that read every file its walks met, and why a walk was cut. */
function walkedThrough(result: SearchTextResult, shards: SearchShard[]): SearchTextResult {
  result.visited = Math.max(...shards.map((sh) => sh.visited));
  result.filesSkipped.unreadable += shards[0].unreadableDirs.length;
  if (shards.some((sh) => sh.capped)) {
    result.truncated = true;
    result.truncatedReason = "maxVisited";
  } else if (shards.some((sh) => sh.depthLimited)) {
    result.truncated = true;
    result.truncatedReason = "maxDepth";
  }
  return result;
}
