/** search_text's arguments and results, as the operation, the renderers and the engine share them. */

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
