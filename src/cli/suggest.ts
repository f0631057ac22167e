/** "Did you mean" suggestions for misspelled commands, flags, operation/tool names and argument keys. */
import { distance } from "fastest-levenshtein";

/**
 * The candidate closest to `word`, or undefined when none is close enough: a case-only
 * difference, or an edit distance of at most a third of the longer word (at least 1, at most 3).
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestScore = Infinity;
  const lower = word.toLowerCase();
  for (const c of candidates) {
    if (c === word) return c;
    const score = c.toLowerCase() === lower ? 0 : distance(lower, c.toLowerCase());
    const allowed = Math.min(3, Math.max(1, Math.floor(Math.max(word.length, c.length) / 3)));
    if (score <= allowed && score < bestScore) {
      best = c;
      bestScore = score;
    }
  }
  return best;
}

/** " (did you mean x?)" for the closest candidate (quoted with options.quote), or "". */
export function didYouMean(
  word: string,
  candidates: Iterable<string>,
  options: { quote?: string } = {},
): string {
  const hit = closest(word, candidates);
  const q = options.quote ?? "";
  return hit === undefined ? "" : ` (did you mean ${q}${hit}${q}?)`;
}

/** The flags of a node:util parseArgs option table, as typed: `--name` and `-s`. */
export function flagNames(options: Record<string, { short?: string }>): string[] {
  const out: string[] = [];
  for (const [name, o] of Object.entries(options)) {
    out.push(`--${name}`);
    if (o.short !== undefined) out.push(`-${o.short}`);
  }
  return out;
}

/**
 * A node:util parseArgs error in one short sentence: an unknown flag is named with the closest
 * known flag; a missing value says which flag needs one.
 */
export function explainParseError(
  err: unknown,
  options: Record<string, { short?: string; type?: string }>,
): string {
  const e = err as { code?: string; message?: string };
  const message = String(e.message ?? err);
  if (e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const flag = /'([^']+)'/.exec(message)?.[1] ?? message;
    const bare = flag.replace(/=.*$/s, "");
    return `unknown flag ${bare}${didYouMean(bare, flagNames(options))}`;
  }
  if (e.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const flag = /'(--?[A-Za-z0-9-]+)/.exec(message)?.[1];
    if (flag !== undefined && /argument missing|ambiguous/.test(message)) {
      return `${flag} needs a value (write ${flag}=VALUE for a value starting with '-')`;
    }
    if (flag !== undefined && /does not take an argument/.test(message)) {
      return `${flag} takes no value`;
    }
  }
  if (e.code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
    const word = /'([^']+)'/.exec(message)?.[1];
    if (word !== undefined) return `unexpected argument ${JSON.stringify(word)}`;
  }
  return message.split("\n")[0];
}

/** The first unknown top-level key of `args` under a JSON Schema that forbids other keys. */
export function unknownKey(
  schema: unknown,
  args: Record<string, unknown>,
): { key: string; known: string[] } | undefined {
  if (schema === null || typeof schema !== "object") return undefined;
  const s = schema as { properties?: unknown; additionalProperties?: unknown };
  if (s.additionalProperties !== false) return undefined;
  const known = s.properties !== null && typeof s.properties === "object"
    ? Object.keys(s.properties)
    : [];
  const key = Object.keys(args).find((k) => !known.includes(k));
  return key === undefined ? undefined : { key, known };
}

/** "unknown argument: `pth` (did you mean `path`?)": the one wording of an unknown key, everywhere. */
export function unknownArgumentMessage(key: string, known: Iterable<string>): string {
  return `unknown argument: \`${key}\`${didYouMean(key, known, { quote: "`" })}`;
}
