/** "Did you mean" suggestions for misspelled commands, flags, operation/tool names and argument keys. */

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and a swap of two
 * neighbours (`shwo` -> `show`) each count one.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/**
 * The candidate closest to `word`, or undefined when none is close enough (leading dashes and
 * case are ignored): the same word in another case; else a candidate `word` (3+ characters)
 * begins (`--shutdown` -> `--shutdown-timeout`, the shortest such); else the smallest edit
 * distance (swaps count one) of at most a third of the longer word (at least 1, at most 3).
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const bare = (w: string) => w.replace(/^-+/, "").toLowerCase();
  const given = bare(word);
  let best: string | undefined;
  let bestScore = Infinity;
  for (const c of candidates) {
    if (c === word) return c;
    const other = bare(c);
    // A different number of leading dashes is a different kind of word (-x is not --x).
    if (/^-*/.exec(word)![0].length !== /^-*/.exec(c)![0].length && other !== given) continue;
    const score = other === given
      ? 0
      : given.length >= 3 && other.startsWith(given)
      ? 0.5 + other.length / 1000
      : editDistance(given, other);
    const allowed = Math.min(3, Math.max(1, Math.floor(Math.max(given.length, other.length) / 3)));
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

/** "unknown flag --x (did you mean --y?)": the one wording of an unknown flag, everywhere. */
export function unknownFlagMessage(flag: string, known: Iterable<string>): string {
  return `unknown flag ${flag}${didYouMean(flag, known)}`;
}

/** "--root needs a value (...)": the one wording of a value flag given without its value. */
export function needsValueMessage(flag: string): string {
  return `${flag} needs a value (write ${flag}=VALUE for a value starting with '-')`;
}

/** The first unknown top-level key of `args` under a JSON Schema that forbids other keys. */
export function unknownKey(
  schema: unknown,
  args: Record<string, unknown>,
): { key: string; known: string[] } | undefined {
  const { keys, known } = unknownKeys(schema, args);
  return keys.length === 0 ? undefined : { key: keys[0], known };
}

/** Every unknown top-level key of `args` under a JSON Schema that forbids other keys. */
export function unknownKeys(
  schema: unknown,
  args: Record<string, unknown>,
): { keys: string[]; known: string[] } {
  if (schema === null || typeof schema !== "object") return { keys: [], known: [] };
  const s = schema as { properties?: unknown; additionalProperties?: unknown };
  const known = s.properties !== null && typeof s.properties === "object"
    ? Object.keys(s.properties)
    : [];
  if (s.additionalProperties !== false) return { keys: [], known };
  return { keys: Object.keys(args).filter((k) => !known.includes(k)), known };
}

/**
 * "2 unknown arguments (names withheld: WHY)": the one wording of unknown keys whose names may
 * not be shown (arguments read through a symbolic link, decision 0060).
 */
export function withheldUnknownMessage(count: number, why: string): string {
  return `${count} unknown argument${count === 1 ? "" : "s"} (names withheld: ${why})`;
}

/** "unknown argument: `pth` (did you mean `path`?)": the one wording of an unknown key, everywhere. */
export function unknownArgumentMessage(key: string, known: Iterable<string>): string {
  return `unknown argument: \`${key}\`${didYouMean(key, known, { quote: "`" })}`;
}

/**
 * " (write endLine:=3 for a JSON value)" when `message` is about a key given as a `key=value`
 * shorthand word (a string) whose text is a JSON number, boolean, null, array or object: the
 * schema wanted that type, and `:=` gives it. Else "".
 */
export function shorthandTypeHint(message: string, words: readonly string[]): string {
  for (const word of words) {
    const eq = word.indexOf("=");
    if (eq <= 0 || word[eq - 1] === ":" || word.startsWith("-")) continue;
    const key = word.slice(0, eq);
    const text = word.slice(eq + 1);
    if (!message.includes(`\`${key}\``) && !message.includes(`/${key} `)) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      continue;
    }
    if (typeof value !== "string") return ` (write ${key}:=${text} for a JSON value)`;
  }
  return "";
}

/** `message; see ...`: a pointer after a message, without a doubled full stop (`.;`). */
export function withPointer(message: string, pointer: string): string {
  return `${message.replace(/\.\s*$/, "")}; ${pointer}`;
}
