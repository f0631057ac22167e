/**
 * The seam between search_text and a native engine (decision 0054): a SearchPrefilter names the
 * files below a directory in which a query can match (a superset of those where it does), and the
 * search reads only those (search_prefiltered.ts). The engine broker's client (client.ts)
 * implements it; a Workspace without one searches every file itself.
 *
 * @module
 */

/** A search_text query as the prefilter needs it (every default applied). */
export interface PrefilterQuery {
  /** The directory searched, workspace-relative ("." for the root). */
  base: string;
  /** The query text (literal, or an RE2 regex). */
  query: string;
  /** `query` is an RE2 regex. */
  regex: boolean;
  /** Case matters (else Unicode simple case folding). */
  caseSensitive: boolean;
  /** Names starting with "." are searched too. */
  includeHidden: boolean;
  /** `.gitignore` applies and `.git` directories are left out (by the walk; the prefilter skips .git). */
  respectGitignore: boolean;
  /** Files larger than this are not searched (tooLarge). */
  maxFileBytes: number;
  /** Context lines asked around each match (default 0): the candidate lines come with as many. */
  contextLines?: number;
  /** The search's maxMatches: a file with as many candidate lines comes without them. */
  maxMatches?: number;
}

/**
 * A prefilter's answer: the files (workspace-relative) in which the query can match, and the
 * regular files larger than maxFileBytes, which were not searched.
 */
export interface PrefilterAnswer {
  /** The files in which the query can match. */
  files: readonly string[];
  /** The regular files larger than maxFileBytes (not searched). */
  large: readonly string[];
  /**
   * Files (of `files`) whose candidate lines came with them (decision 0067), so the search scans
   * these instead of reading the file: runs of consecutive lines as `[first line number, the lines,
   * each ended by "\n"]`, with the context asked around every line that can match. Only plain
   * ASCII files without NUL; every other named file is read.
   */
  lines?: ReadonlyMap<string, readonly (readonly [number, string])[]>;
}

/** What serves search_text's content matching, for workspace_info. */
export interface EngineReport {
  /** "native" when a native prefilter is in use, "builtin" otherwise. */
  search: "native" | "builtin";
  /** The native engine (e.g. "ripgrep 13.0.0") when in use. */
  native?: string;
  /** Why the native engine is not in use (when it was asked for). */
  reason?: string;
}

/** A native engine's file-level prefilter for search_text. */
export interface SearchPrefilter {
  /**
   * How long a search reads files as it walks before it waits for the prefilter's answer (ms;
   * default HEDGE_MS in search_prefiltered.ts). 0 makes every read wait for the answer.
   */
  readonly hedgeMs?: number;
  /**
   * Whether this query can be prefiltered at all (its pattern has a native form, and the engine
   * has not said it cannot run): when false the search reads every file as it walks.
   */
  accepts(q: PrefilterQuery): boolean;
  /**
   * The files below `q.base` in which the query can match and those too large to search, or null
   * when this query cannot be prefiltered (every file is then read). Rejects with CANCELLED when
   * `signal` aborts, and with IO_ERROR when the engine itself is gone.
   */
  files(q: PrefilterQuery, signal?: AbortSignal): Promise<PrefilterAnswer | null>;
  /** What serves search_text (waits for the engine to say whether it can). */
  report(): Promise<EngineReport>;
}

/** No native engine, and why (the launcher said so): every file is read; workspace_info says why. */
export function unavailablePrefilter(reason: string): SearchPrefilter {
  return {
    accepts: () => false,
    files: () => Promise.resolve(null),
    report: () => Promise.resolve({ search: "builtin", reason }),
  };
}
