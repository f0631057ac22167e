/**
 * find_files: glob matching on paths (names, not content). Arguments get cheap checks on
 * the calling thread; compiling the globs, the walk and the matching run as an engine job under the byte budget.
 */
import type { WorkspaceContext } from "./context.ts";
import { WorkspaceError } from "./errors.ts";
import { resolveDirectory } from "./list.ts";
import { VERIFIED, walkerBelow, type WalkStats } from "./walk.ts";
import { checkGlobs, compileGlobs } from "./globs.ts";
import type { EntryType } from "./text.ts";
import { jsonBytes, ResultBudget } from "./budget.ts";
import type { Checkpoint, JobSpec } from "./engine/protocol.ts";
import { jobSpec } from "./engine/spec.ts";

/** Arguments of findFiles. */
export interface FindFilesArgs {
  pattern: string;
  path?: string;
  exclude?: string[];
  respectGitignore?: boolean;
  includeHidden?: boolean;
  maxResults?: number;
}

/** Result of findFiles. */
export interface FindFilesResult {
  path: string;
  matches: { path: string; type: EntryType }[];
  visited: number;
  truncated: boolean;
  truncatedReason?: "maxResults" | "maxVisited" | "maxDepth" | "maxResultBytes";
}

interface FindJobArgs {
  pattern: string;
  exclude: string[];
  respectGitignore: boolean;
  includeHidden: boolean;
  maxResults: number;
}

function compilePatterns(a: FindJobArgs) {
  return {
    matches: compileGlobs([a.pattern], { dot: a.includeHidden, argument: "pattern" }),
    excluded: compileGlobs(a.exclude, { dot: true, argument: "exclude" }),
  };
}

/** Finds paths below a directory whose base-relative path matches a glob. */
export async function findFiles(
  ws: WorkspaceContext,
  args: FindFilesArgs,
  signal?: AbortSignal,
): Promise<FindFilesResult> {
  const maxResults = args.maxResults ?? ws.limits.maxResults;
  if (maxResults > ws.limits.maxResults) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `maxResults ${maxResults} exceeds this workspace's limit of ${ws.limits.maxResults}`,
      { argument: "maxResults", details: { limit: ws.limits.maxResults } },
    );
  }
  const jobArgs: FindJobArgs = {
    pattern: args.pattern,
    exclude: args.exclude ?? [],
    respectGitignore: args.respectGitignore ?? true,
    includeHidden: args.includeHidden ?? false,
    maxResults,
  };
  // Cheap, bounded checks only; the job compiles (and reports a bad glob as INVALID_ARGUMENT).
  checkGlobs([jobArgs.pattern], { argument: "pattern" });
  checkGlobs(jobArgs.exclude, { argument: "exclude" });
  const dir = await resolveDirectory(ws, args.path ?? ".", "path");
  return await ws.engine.run<FindFilesResult>(
    jobSpec(ws, { op: "find", dir, args: { ...jobArgs } }),
    { signal },
  );
}

/** The find itself, as an engine job. */
export async function findJob(spec: JobSpec, cp: Checkpoint): Promise<FindFilesResult> {
  const a = spec.args as unknown as FindJobArgs;
  const { matches, excluded } = compilePatterns(a);
  const budget = new ResultBudget(spec.limits.maxResultBytes, 512 + jsonBytes(spec.base.rel));
  const stats: WalkStats = { visited: 0, unreadable: 0, capped: false };
  const out: FindFilesResult["matches"] = [];
  let pending: FindFilesResult["matches"] = [];
  let truncatedReason: FindFilesResult["truncatedReason"];
  const walker = walkerBelow(spec, {
    includeHidden: a.includeHidden,
    respectGitignore: a.respectGitignore,
    excluded,
    statEntries: false,
    checkpoint: cp,
  }, stats);
  for (const e of walker.entries()) {
    if (e === VERIFIED) {
      for (const m of pending) out.push(m);
      pending = [];
      continue;
    }
    const t = cp.tick();
    if (t) await t;
    cp.counters.filesSearched = stats.visited;
    if (excluded(e.relToBase) || !matches(e.relToBase)) continue;
    if (out.length + pending.length === a.maxResults) {
      truncatedReason = "maxResults";
      break;
    }
    const item = { path: e.rel, type: e.type };
    if (!budget.takeItem(item)) {
      truncatedReason = "maxResultBytes";
      break;
    }
    pending.push(item);
    cp.counters.matches = out.length + pending.length;
  }
  // What was gathered since the last verification is accepted only if the chain still holds.
  walker.verifyCurrent();
  for (const m of pending) out.push(m);
  if (stats.capped && !truncatedReason) truncatedReason = "maxVisited";
  if (stats.depthLimited && !truncatedReason) truncatedReason = "maxDepth";
  const result: FindFilesResult = {
    path: spec.base.rel,
    matches: out,
    visited: stats.visited,
    truncated: !!truncatedReason,
  };
  if (truncatedReason) result.truncatedReason = truncatedReason;
  return result;
}
