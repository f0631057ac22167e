/**
 * search_text: content search (literal or regex), line-oriented, binary files skipped.
 * The arguments get cheap checks here, on the calling thread; compiling the patterns, the
 * walk and the matching run as an engine job (in a worker when the pool runs), in bounded
 * chunks, under the result byte budget, accepting matches only after the walk re-verified the
 * directories they came from. The job's parts: search_scan.ts reads and scans one file,
 * search_content.ts is a file's content and lines, search_matches.ts collects the matches
 * under the caps, search_shards.ts merges the shards.
 */
import type { WorkspaceContext } from "./context.ts";
import { WorkspaceError } from "./errors.ts";
import { resolveDirectory } from "./list.ts";
import { VERIFIED, walkerBelow, type WalkStats } from "./walk.ts";
import { checkGlobs, compileGlobs } from "./globs.ts";
import { checkQuery, compileQuery } from "./query.ts";
import type { Checkpoint, JobSpec } from "./engine/protocol.ts";
import { jobSpec } from "./engine/spec.ts";
import type { SearchContext, SearchTextArgs, SearchTextResult } from "./search_types.ts";
import { mergeShards, pathHash, type SearchShard } from "./search_shards.ts";
import { ShardCollector } from "./search_matches.ts";
import { FileScanner } from "./search_scan.ts";
import { PrefilterGate } from "./search_prefiltered.ts";
import { fsOfKind } from "./fs/runtime.ts";

export type {
  SearchContext,
  SearchMatch,
  SearchProgress,
  SearchTextArgs,
  SearchTextResult,
} from "./search_types.ts";
export { MAX_LINE_CHARS } from "./search_types.ts";

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
  /**
   * Skip the files a native prefilter's answer leaves out, once it comes while the job runs,
   * reading as it walks for `hedgeMs` first (search_prefiltered.ts; decision 0054). Set by the
   * calling thread, never by a caller.
   */
  prefilter?: { hedgeMs?: number };
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
  const query = { ...jobArgs, base: dir.rel };
  const prefilter = ws.prefilter?.accepts(query) ? ws.prefilter : undefined;
  const spec = jobSpec(ws, {
    op: "search",
    dir,
    args: { ...jobArgs, ...(prefilter ? { prefilter: { hedgeMs: prefilter.hedgeMs } } : {}) },
  });
  // The prefilter's search ends with the walk's, whichever way it ends (a cap, an error).
  const done = new AbortController();
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, done.signal]) : done.signal;
  let shards: SearchShard[];
  try {
    const options = {
      signal: ctx.signal,
      onProgress: ctx.onProgress,
      input: prefilter?.files(query, signal),
    };
    // Behind a prefilter one walk reads the few files named; ripgrep is the parallel part.
    shards = prefilter
      ? [await ws.engine.run<SearchShard>(spec, options)]
      : await ws.engine.runShards<SearchShard>(spec, options);
  } finally {
    done.abort();
  }
  return mergeShards(shards, { maxMatches: jobArgs.maxMatches, limits: spec.limits });
}

/** The search itself, as an engine job: walk, read, match, under the caps and the byte budget. */
export async function searchJob(spec: JobSpec, cp: Checkpoint): Promise<SearchShard> {
  const a = spec.args as unknown as SearchJobArgs;
  const { matcher, included, excluded } = compilePatterns(a);
  const shard = spec.shard ?? { index: 0, count: 1 };
  const mine = shard.count === 1
    ? () => true
    : (rel: string) => pathHash(rel) % shard.count === shard.index;
  const stats: WalkStats = { visited: 0, unreadable: 0, capped: false };
  const out = new ShardCollector({
    maxMatches: a.maxMatches,
    contextLines: a.contextLines,
    maxResultBytes: spec.limits.maxResultBytes,
    cp,
  });
  const scanner = new FileScanner({ matcher, out, cp, maxFileBytes: a.maxFileBytes });
  const walker = walkerBelow(spec, {
    includeHidden: a.includeHidden,
    respectGitignore: a.respectGitignore,
    excluded,
    // A shard classifies (lstats) only the files it reads; directories always. Behind a
    // prefilter no file is lstat'ed by the walk: the gate does when it reads one.
    statEntries: a.prefilter ? false : shard.count === 1 ? true : mine,
    onUnreadable: (visited) => out.result.unreadableDirs.push(visited),
    checkpoint: cp,
  }, stats);
  const gate = a.prefilter
    ? new PrefilterGate({ cp, scanner, out, fs: fsOfKind(spec.fs), hedgeMs: a.prefilter.hedgeMs })
    : undefined;
  let going = true;
  for (const e of walker.entries()) {
    if (e === VERIFIED) {
      out.commit();
      continue;
    }
    const t = cp.tick();
    if (t) await t;
    if (e.type !== "file" || !mine(e.rel)) continue;
    if (excluded(e.relToBase) || !included(e.relToBase)) continue;
    going = gate ? await gate.file(e, stats.visited, walker.chain) : scanner.file(e, stats.visited);
    if (!going) break;
  }
  // What was gathered since the last verification is accepted only if the chain still holds.
  walker.verifyCurrent();
  out.commit();
  if (going && gate !== undefined) await gate.finish();
  return out.finish(stats);
}
