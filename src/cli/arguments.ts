/**
 * The arguments object of `op NAME` and `tools call NAME`: at most one JSON source (--arguments,
 * --arguments-file, --arguments-stdin) merged with `key=value` / `key:=json` shorthand words.
 */
import { resolveFromInvocation, UsageError } from "../config.ts";
import { OptionFileError, parseJsonText, readOptionFileReached } from "../option_file.ts";

/**
 * The arguments given, and why the names of keys nobody asked for may not be shown, if they may
 * not: the file they came from was reached through a symbolic link, so its keys may be another
 * file's (a credentials file a repository's link points at). Checks then count unknown keys
 * instead of naming them (decision 0060).
 */
export interface GivenArguments {
  values: Record<string, unknown>;
  withheld?: string;
}

/** The three mutually exclusive sources of tool/operation arguments. */
export interface ArgumentSources {
  arguments?: string;
  "arguments-file"?: string;
  "arguments-stdin"?: boolean;
}

async function readStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

/** Sets an own property (an own `__proto__` key stays a key, refused later as unknown). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/**
 * Parses shorthand words: `key=value` gives the string value (everything after the first `=`,
 * which may hold more `=`); `key:=json` parses JSON (`n:=5`, `flag:=true`, `list:='["a"]'`).
 * The key is taken literally (no nesting: `a.b=1` is the key `a.b`). An empty key, a word
 * without `=` and a repeated key are usage errors.
 */
export function parseShorthand(words: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const word of words) {
    const eq = word.indexOf("=");
    if (eq < 0) {
      throw new UsageError(
        `unexpected argument ${JSON.stringify(word)}: arguments are key=value or key:=json`,
      );
    }
    const json = eq > 0 && word[eq - 1] === ":";
    const key = word.slice(0, json ? eq - 1 : eq);
    const text = word.slice(eq + 1);
    if (key === "") {
      throw new UsageError(`${JSON.stringify(word)} has an empty key (write key=value)`);
    }
    if (Object.hasOwn(out, key)) {
      throw new UsageError(`argument \`${key}\` is given twice`);
    }
    let value: unknown = text;
    if (json) {
      try {
        value = parseJsonText(text, `${key}:=`);
      } catch (err) {
        const why = err instanceof OptionFileError ? err.message : `${key}:= is not valid JSON`;
        throw new UsageError(`${why}; write ${key}=TEXT for a string`);
      }
    }
    setOwn(out, key, value);
  }
  return out;
}

/** Reads the JSON source (if any) and merges the shorthand words; none given means {}. */
export async function readArguments(
  src: ArgumentSources,
  shorthand: readonly string[] = [],
): Promise<GivenArguments> {
  const words = parseShorthand(shorthand);
  const { values: base, withheld } = await readJsonSource(src);
  for (const [key, value] of Object.entries(words)) {
    if (Object.hasOwn(base, key)) {
      throw new UsageError(
        `argument \`${key}\` is given twice (in ${sourceName(src)} and as ${key}=)`,
      );
    }
    setOwn(base, key, value);
  }
  return withheld === undefined ? { values: base } : { values: base, withheld };
}

function sourceName(src: ArgumentSources): string {
  return src.arguments !== undefined
    ? "--arguments"
    : src["arguments-file"] !== undefined
    ? "--arguments-file"
    : "--arguments-stdin";
}

async function readJsonSource(src: ArgumentSources): Promise<GivenArguments> {
  const given = [
    src.arguments !== undefined,
    src["arguments-file"] !== undefined,
    src["arguments-stdin"] === true,
  ]
    .filter(Boolean).length;
  if (given > 1) {
    throw new UsageError("give at most one of --arguments, --arguments-file, --arguments-stdin");
  }
  let text: string;
  let from: string;
  let withheld: string | undefined;
  if (src.arguments !== undefined) {
    text = src.arguments;
    from = "--arguments";
  } else if (src["arguments-file"] !== undefined) {
    from = `--arguments-file ${src["arguments-file"]}`;
    try {
      const read = await readOptionFileReached(
        resolveFromInvocation(src["arguments-file"]),
        "--arguments-file",
      );
      text = read.text;
      if (!read.direct) withheld = `${from} is reached through a symbolic link`;
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  } else if (src["arguments-stdin"]) {
    from = "--arguments-stdin";
    text = await readStdin();
  } else {
    return { values: {} };
  }
  let value: unknown;
  try {
    value = parseJsonText(text, from);
  } catch (err) {
    // Where the text is wrong, never what it says: the file may be anything.
    throw new UsageError(
      err instanceof OptionFileError ? err.message : `${from} is not valid JSON`,
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new UsageError(`${from} must be a JSON object`);
  }
  const values = value as Record<string, unknown>;
  return withheld === undefined ? { values } : { values, withheld };
}
