/** Glob matching for find_files and search_text (picomatch; no slash = match the base name). */
// @ts-types="@types/picomatch"
import picomatch from "picomatch";
import { WorkspaceError } from "./errors.ts";

/** Compiles glob patterns into one predicate over base-relative paths; [] matches nothing. */
export function compileGlobs(
  patterns: readonly string[],
  options: { dot: boolean; argument: string },
): (relPath: string) => boolean {
  if (patterns.length === 0) return () => false;
  for (const [i, p] of patterns.entries()) {
    if (p.length === 0 || p.includes("\0")) {
      throw new WorkspaceError(
        "INVALID_ARGUMENT",
        `${options.argument} pattern ${i} is empty or has a NUL byte`,
        {
          argument: options.argument,
        },
      );
    }
  }
  try {
    // picomatch's basename option matches every pattern against the base name only, so it
    // is set just for the patterns without a "/"; the others match the whole relative path.
    const matchers = patterns.map((p) =>
      picomatch(p, { dot: options.dot, basename: !p.includes("/") })
    );
    return (relPath) => matchers.some((m) => m(relPath));
  } catch (err) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `invalid glob in ${options.argument}: ${(err as Error).message}`,
      {
        argument: options.argument,
      },
    );
  }
}

/** True when a directory should be pruned by exclude globs (the directory or everything in it matches). */
export function excludesDir(isExcluded: (p: string) => boolean, relToBase: string): boolean {
  return isExcluded(relToBase) || isExcluded(relToBase + "/");
}
