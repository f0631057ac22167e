/** Named, configurable bounds of every workspace operation. */

/** Every bound the workspace enforces. Hitting one is reported, never silent. */
export interface Limits {
  /** Default and maximum bytes of text one read_file call returns. */
  maxReadBytes: number;
  /** Largest file read_media returns (bytes). */
  maxMediaBytes: number;
  /** Largest content write_file accepts and largest file edit_file rewrites (bytes). */
  maxWriteBytes: number;
  /** Default and maximum entries of one list_directory page. */
  maxListEntries: number;
  /** Default and maximum results of find_files. */
  maxResults: number;
  /** Default and maximum matches of search_text. */
  maxMatches: number;
  /** Default and maximum size of a file search_text reads (bytes); larger files are skipped and counted. */
  maxSearchFileBytes: number;
  /** Most directory entries one walk (list, find, search) visits before it stops and says so. */
  maxVisited: number;
  /** Deepest recursion of a walk, and deepest path create_directory makes. */
  maxDepth: number;
  /** Largest serialized result of any operation (UTF-8 bytes of its JSON); enforced while the result is built. */
  maxResultBytes: number;
  /** Longest one operation may run (ms) before it stops with TIME_BUDGET_EXCEEDED. */
  maxOperationMs: number;
  /** Most bytes hashed for a sha256 (read_file, write_file's overwrite); beyond it the hash is not computed and the result says so. */
  maxHashBytes: number;
}

/** The defaults used when nothing is configured. */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxReadBytes: 256 * 1024,
  maxMediaBytes: 10 * 1024 * 1024,
  maxWriteBytes: 10 * 1024 * 1024,
  maxListEntries: 1000,
  maxResults: 1000,
  maxMatches: 500,
  maxSearchFileBytes: 4 * 1024 * 1024,
  maxVisited: 200_000,
  maxDepth: 64,
  maxResultBytes: 4 * 1024 * 1024,
  maxOperationMs: 60_000,
  maxHashBytes: 64 * 1024 * 1024,
});

/** Merges overrides into the defaults, refusing non-positive or non-integer values. */
export function resolveLimits(overrides: Partial<Limits> = {}): Limits {
  const out: Limits = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    if (!(key in DEFAULT_LIMITS)) throw new TypeError(`unknown limit "${key}"`);
    if (!Number.isSafeInteger(value) || (value as number) <= 0) {
      throw new TypeError(`limit "${key}" must be a positive integer, got ${value}`);
    }
    out[key as keyof Limits] = value as number;
  }
  return out;
}
