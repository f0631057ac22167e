/**
 * Glob matching for find_files and search_text: globs are translated to RE2 (re2js), so
 * matching is linear in the path's length whatever the pattern (no slash = match the base name).
 * This is the entry: the cheap checks, the compiled predicate and its errors; the parts are in
 * glob/ (limits.ts the bounds, braces.ts the expansion, classes.ts bracket expressions,
 * translate.ts one glob as RE2 source), compiled through regex/compile.ts.
 */
import { WorkspaceError } from "./errors.ts";
import { compileRe2, type Re2Program } from "./regex/compile.ts";
import { DEFAULT_GLOB_LIMITS, type GlobLimits, GlobSyntaxError } from "./glob/limits.ts";
import { expandBraces } from "./glob/braces.ts";
import { globSource } from "./glob/translate.ts";

export { DEFAULT_GLOB_LIMITS, type GlobLimits } from "./glob/limits.ts";

interface Unit {
  re: Re2Program;
  base: boolean;
}

/** Compiles one pattern: its RE2 source and mode (base name or path) and negation. */
function compileOne(
  pattern: string,
  dot: boolean,
  limits: GlobLimits,
): { source: string; base: boolean; negated: boolean; length: number; tails: string[] } {
  if (pattern.length > limits.maxGlobLength) {
    throw new GlobSyntaxError(`it is longer than ${limits.maxGlobLength} characters`, {
      limit: limits.maxGlobLength,
      name: "maxGlobLength",
    });
  }
  let body = pattern;
  let negated = false;
  if (body.length > 1 && body[0] === "!" && body[1] !== "(") {
    negated = true;
    body = body.slice(1);
  }
  if (body.startsWith("./") && body.length > 2) body = body.slice(2);
  const base = !body.includes("/");
  const expanded = expandBraces(body, limits);
  const length = expanded.reduce((n, g) => n + g.length, 0);
  const sources = expanded.map((g) => globSource(g, dot));
  return {
    source: sources.length === 1 ? sources[0] : `(?:${sources.join("|")})`,
    base,
    negated,
    length,
    tails: expanded.map(literalTail),
  };
}

/** The characters that are not plain literals in a brace-free glob (or may not be: `{ }`). */
const NOT_PLAIN = new Set(["*", "?", "[", "]", "{", "}", "\\"]);

/**
 * The literal every name a brace-free base-name glob matches ends with: its characters after the
 * last wildcard, class or escape ("" when it ends in one). `*.rs` gives `.rs`.
 */
export function literalTail(glob: string): string {
  let i = glob.length;
  while (i > 0 && !NOT_PLAIN.has(glob[i - 1])) i--;
  return glob.slice(i);
}

/**
 * A necessary condition of a union of base-name globs, or undefined when there is none: the name
 * ends with one of their literal tails. Checked before the RE2 program, it answers most names of a
 * walk (`*.rs` over a tree of many kinds of file) with an endsWith, and the program still decides
 * every name that passes it.
 */
function tailFilter(tails: readonly string[]): ((name: string) => boolean) | undefined {
  if (tails.length === 0 || tails.includes("")) return undefined;
  const distinct = [...new Set(tails)];
  if (distinct.length === 1) {
    const [tail] = distinct;
    return (name) => name.endsWith(tail);
  }
  return (name) => distinct.some((t) => name.endsWith(t));
}

/** One argument's glob failure as INVALID_ARGUMENT. */
function globError(
  where: string,
  message: string,
  details: Record<string, unknown>,
): WorkspaceError {
  return new WorkspaceError("INVALID_ARGUMENT", `invalid glob in ${where}: ${message}`, {
    argument: where.split(" ")[0],
    details,
  });
}

/**
 * The cheap checks of one argument's globs, for the calling thread: no NUL or empty
 * pattern, each within maxGlobLength, all together within maxGlobTotalLength before
 * expansion. No parsing and no compilation (the engine job compiles).
 */
export function checkGlobs(
  patterns: readonly string[],
  options: { argument: string; limits?: Partial<GlobLimits> },
): void {
  const limits: GlobLimits = { ...DEFAULT_GLOB_LIMITS, ...options.limits };
  let total = 0;
  for (const [i, p] of patterns.entries()) {
    if (p.length === 0 || p.includes("\0")) {
      throw new WorkspaceError(
        "INVALID_ARGUMENT",
        `${options.argument} pattern ${i} is empty or has a NUL byte`,
        { argument: options.argument },
      );
    }
    if (p.length > limits.maxGlobLength) {
      throw globError(
        `${options.argument} (pattern ${i})`,
        `it is longer than ${limits.maxGlobLength} characters`,
        { pattern: i, limit: limits.maxGlobLength, name: "maxGlobLength" },
      );
    }
    total += p.length;
  }
  if (total > limits.maxGlobTotalLength) throw tooLong(options.argument, total, limits);
}

function tooLong(argument: string, total: number, limits: GlobLimits): WorkspaceError {
  return globError(
    argument,
    `its patterns come to ${total} characters, more than ${limits.maxGlobTotalLength}`,
    { limit: limits.maxGlobTotalLength, name: "maxGlobTotalLength" },
  );
}

/** Compiles RE2 source for one argument: any failure or an oversized program is INVALID_ARGUMENT. */
function compileUnion(source: string, argument: string, limits: GlobLimits): Re2Program {
  const c = compileRe2(source);
  if (!c.ok) throw globError(argument, `it could not be compiled: ${c.message}`, {});
  if (c.size > limits.maxGlobProgram) {
    throw globError(
      argument,
      `its patterns compile to ${c.size} instructions, more than ${limits.maxGlobProgram}`,
      { limit: limits.maxGlobProgram, name: "maxGlobProgram", programSize: c.size },
    );
  }
  return c.re;
}

/** Compiles glob patterns into one predicate over base-relative paths; [] matches nothing. */
export function compileGlobs(
  patterns: readonly string[],
  options: {
    dot: boolean;
    argument: string;
    limits?: Partial<GlobLimits>;
    /** Check the literal tails of base-name globs first (default true; false for the tests). */
    tailFilter?: boolean;
  },
): (relPath: string) => boolean {
  if (patterns.length === 0) return () => false;
  const limits: GlobLimits = { ...DEFAULT_GLOB_LIMITS, ...options.limits };
  checkGlobs(patterns, options);
  const baseSources: string[] = [];
  const baseTails: string[] = [];
  const pathSources: string[] = [];
  const negatedSources: { source: string; base: boolean }[] = [];
  let total = 0;
  for (const [i, p] of patterns.entries()) {
    try {
      const one = compileOne(p, options.dot, limits);
      total += one.length;
      if (total > limits.maxGlobTotalLength) throw tooLong(options.argument, total, limits);
      if (one.negated) negatedSources.push({ source: one.source, base: one.base });
      else if (one.base) {
        baseSources.push(one.source);
        baseTails.push(...one.tails);
      } else pathSources.push(one.source);
    } catch (err) {
      if (err instanceof WorkspaceError) throw err;
      const details = err instanceof GlobSyntaxError ? err.details : {};
      throw new WorkspaceError(
        "INVALID_ARGUMENT",
        `invalid glob in ${options.argument} (pattern ${i}): ${(err as Error)?.message ?? err}`,
        { argument: options.argument, details: { pattern: i, ...details } },
      );
    }
  }
  const negatedUnits: Unit[] = negatedSources.map((n) => ({
    re: compileUnion(n.source, options.argument, limits),
    base: n.base,
  }));
  const union = (sources: string[]) =>
    sources.length === 0
      ? undefined
      : compileUnion(sources.map((s) => `(?:${s})`).join("|"), options.argument, limits);
  const baseRe = union(baseSources);
  const pathRe = union(pathSources);
  const baseMay = options.tailFilter === false ? undefined : tailFilter(baseTails);
  return (relPath) => {
    const trimmed = relPath.endsWith("/") ? relPath.slice(0, -1) : relPath;
    const baseName = trimmed.slice(trimmed.lastIndexOf("/") + 1);
    const baseMatch = baseRe !== undefined && (baseMay === undefined || baseMay(baseName)) &&
      baseRe.testExact(baseName);
    if (baseMatch || pathRe?.testExact(relPath)) return true;
    return negatedUnits.some((u) => !u.re.testExact(u.base ? baseName : relPath));
  };
}

/** True when a directory should be pruned by exclude globs (the directory or everything in it matches). */
export function excludesDir(isExcluded: (p: string) => boolean, relToBase: string): boolean {
  return isExcluded(relToBase) || isExcluded(relToBase + "/");
}
