/** Named, configurable bounds of every workspace operation, and the relations between them. */

/** Every bound the workspace enforces. Hitting one is reported, never silent. */
export interface Limits {
  /** Default and maximum bytes of text one read_file call returns; at most maxResultBytes minus the result reserve. */
  maxReadBytes: number;
  /** Largest file read_media returns (bytes); its base64 plus the result reserve must fit in maxResultBytes. */
  maxMediaBytes: number;
  /**
   * Largest content write_file accepts and largest file edit_file rewrites (bytes); at most
   * maxHashBytes. copy_path streams and is not bounded by it (decision 0058).
   */
  maxWriteBytes: number;
  /** Default and maximum entries of one list_directory page. */
  maxListEntries: number;
  /** Default and maximum results of find_files. */
  maxResults: number;
  /** Default and maximum matches of search_text. */
  maxMatches: number;
  /** Default and maximum size of a file search_text reads (bytes); larger files are skipped and counted. */
  maxSearchFileBytes: number;
  /**
   * Most directory entries one walk (list, find, search) visits before it stops and says so; most
   * entries of a directory copy_path copies (refused over it before anything is copied).
   */
  maxVisited: number;
  /** Deepest recursion of a walk, and deepest path create_directory and copy_path make. */
  maxDepth: number;
  /** Largest serialized result of any operation (UTF-8 bytes of its JSON); enforced while the result is built. */
  maxResultBytes: number;
  /** Longest one operation may run (ms) before it stops with TIME_BUDGET_EXCEEDED. */
  maxOperationMs: number;
  /** Most bytes hashed for a sha256 (read_file, write_file's overwrite); beyond it the hash is not computed and the result says so. */
  maxHashBytes: number;
}

/** Default result byte budget: 4 MiB. */
const DEFAULT_RESULT_BYTES = 4 * 1024 * 1024;

/**
 * Bytes of a result's budget kept for its fixed fields (path, sizes, hashes, key names):
 * 4 KiB, or a quarter of the budget when the budget is below 16 KiB.
 */
export function resultReserve(maxResultBytes: number): number {
  return Math.min(4096, Math.floor(maxResultBytes / 4));
}

/** Largest file whose base64 (4 bytes per 3, padded) plus the result reserve fits in maxResultBytes. */
export function mediaBytesFor(maxResultBytes: number): number {
  return Math.floor((maxResultBytes - resultReserve(maxResultBytes)) / 4) * 3;
}

/** The defaults used when nothing is configured. */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxReadBytes: 256 * 1024,
  // 3 MiB - 3 KiB = mediaBytesFor(4 MiB): the largest media file whose result fits the budget.
  maxMediaBytes: 3 * 1024 * 1024 - 3 * 1024,
  maxWriteBytes: 10 * 1024 * 1024,
  maxListEntries: 1000,
  maxResults: 1000,
  maxMatches: 500,
  maxSearchFileBytes: 4 * 1024 * 1024,
  maxVisited: 200_000,
  maxDepth: 64,
  maxResultBytes: DEFAULT_RESULT_BYTES,
  maxOperationMs: 60_000,
  maxHashBytes: 64 * 1024 * 1024,
});

/** One relation between limits: `limit` must not exceed `bound(limits)`. */
interface Relation {
  limit: keyof Limits;
  /** The limit the bound comes from. */
  from: keyof Limits;
  bound(l: Limits): number;
  /** How the bound is derived, for the error message. */
  rule: string;
}

const RELATIONS: readonly Relation[] = [
  {
    limit: "maxReadBytes",
    from: "maxResultBytes",
    bound: (l) => l.maxResultBytes - resultReserve(l.maxResultBytes),
    rule: "maxResultBytes minus its reserve for fixed fields (min(4096, maxResultBytes/4))",
  },
  {
    limit: "maxMediaBytes",
    from: "maxResultBytes",
    bound: (l) => mediaBytesFor(l.maxResultBytes),
    rule: "the largest file whose base64 plus the result reserve fits in maxResultBytes",
  },
  {
    limit: "maxWriteBytes",
    from: "maxHashBytes",
    bound: (l) => l.maxHashBytes,
    rule: "maxHashBytes, so every file edit_file rewrites is hashed",
  },
];

/**
 * Merges overrides into the defaults, refusing non-positive or non-integer values, then
 * applies the relations between limits: a limit left at its default is lowered to fit
 * (so `maxResultBytes` alone can be lowered), an explicit one that breaks a relation is
 * refused with a message naming both limits.
 */
export function resolveLimits(overrides: Partial<Limits> = {}): Limits {
  const out: Limits = { ...DEFAULT_LIMITS };
  const explicit = new Set<string>();
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    if (!(key in DEFAULT_LIMITS)) throw new TypeError(`unknown limit "${key}"`);
    if (!Number.isSafeInteger(value) || (value as number) <= 0) {
      throw new TypeError(`limit "${key}" must be a positive integer, got ${value}`);
    }
    out[key as keyof Limits] = value as number;
    explicit.add(key);
  }
  for (const rel of RELATIONS) {
    const bound = rel.bound(out);
    if (out[rel.limit] <= bound) continue;
    if (bound < 1) {
      throw new TypeError(
        `limit "${rel.from}" is ${
          out[rel.from]
        }, too small: "${rel.limit}" must be at most ${rel.rule}`,
      );
    }
    if (explicit.has(rel.limit)) {
      throw new TypeError(
        `limit "${rel.limit}" is ${out[rel.limit]} but must be at most ${bound}: ${rel.rule}`,
      );
    }
    out[rel.limit] = bound;
  }
  return out;
}
