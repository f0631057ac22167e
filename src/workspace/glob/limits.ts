/**
 * The bounds on glob patterns (decision 0013) and the refusal the glob parser throws: over a
 * bound, or syntax it does not take, is a GlobSyntaxError that compileGlobs words as
 * INVALID_ARGUMENT.
 *
 * @module
 */

/** Bounds on one glob pattern. */
export interface GlobLimits {
  /** Longest pattern (UTF-16 units). */
  maxGlobLength: number;
  /** Most alternatives one pattern's braces expand to ({a,b}{c,d} is 4). */
  maxGlobExpansions: number;
  /** Most characters of all of one pattern's brace alternatives together. */
  maxGlobExpandedLength: number;
  /** Most characters of all the globs of one argument together, after brace expansion. */
  maxGlobTotalLength: number;
  /** Largest compiled RE2 program (re2js programSize) of one argument's globs. */
  maxGlobProgram: number;
}

/** The defaults of GlobLimits. */
export const DEFAULT_GLOB_LIMITS: Readonly<GlobLimits> = Object.freeze({
  maxGlobLength: 4096,
  maxGlobExpansions: 1024,
  maxGlobExpandedLength: 65536,
  maxGlobTotalLength: 16384,
  maxGlobProgram: 65536,
});

/** A glob the translator refuses; compileGlobs turns it into INVALID_ARGUMENT. */
export class GlobSyntaxError extends Error {
  constructor(message: string, readonly details: Record<string, unknown> = {}) {
    super(message);
  }
}
