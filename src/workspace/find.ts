/** find_files: glob matching on paths (names, not content). */
import type { Workspace } from "./workspace.ts";
import { WorkspaceError } from "./errors.ts";
import { resolveDirectory } from "./list.ts";
import { walkBelow, type WalkStats } from "./walk.ts";
import { compileGlobs } from "./globs.ts";
import type { EntryType } from "./text.ts";

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
  truncatedReason?: "maxResults" | "maxVisited" | "maxDepth";
}

/** Finds paths below a directory whose base-relative path matches a glob. */
export async function findFiles(
  ws: Workspace,
  args: FindFilesArgs,
  signal?: AbortSignal,
): Promise<FindFilesResult> {
  const maxResults = args.maxResults ?? ws.limits.maxResults;
  if (maxResults > ws.limits.maxResults) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `maxResults ${maxResults} exceeds this workspace's limit of ${ws.limits.maxResults}`,
      {
        argument: "maxResults",
        details: { limit: ws.limits.maxResults },
      },
    );
  }
  const includeHidden = args.includeHidden ?? false;
  const matches = compileGlobs([args.pattern], { dot: includeHidden, argument: "pattern" });
  const excluded = compileGlobs(args.exclude ?? [], { dot: true, argument: "exclude" });
  const dir = await resolveDirectory(ws, args.path ?? ".", "path");
  const stats: WalkStats = { visited: 0, unreadable: 0, capped: false };
  const out: FindFilesResult["matches"] = [];
  let truncatedReason: FindFilesResult["truncatedReason"];
  for await (
    const e of walkBelow(ws, dir, {
      includeHidden,
      respectGitignore: args.respectGitignore ?? true,
      excluded,
      signal,
    }, stats)
  ) {
    if (excluded(e.relToBase) || !matches(e.relToBase)) continue;
    if (out.length === maxResults) {
      truncatedReason = "maxResults";
      break;
    }
    out.push({ path: e.rel, type: e.type });
  }
  if (stats.capped && !truncatedReason) truncatedReason = "maxVisited";
  if (stats.depthLimited && !truncatedReason) truncatedReason = "maxDepth";
  const result: FindFilesResult = {
    path: dir.rel,
    matches: out,
    visited: stats.visited,
    truncated: !!truncatedReason,
  };
  if (truncatedReason) result.truncatedReason = truncatedReason;
  return result;
}
