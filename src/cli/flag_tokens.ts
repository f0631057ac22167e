/**
 * Argv split into tokens the way `node:util`'s `parseArgs` splits it in its lenient mode
 * (`strict: false`, `allowPositionals: true`, `tokens: true`), without loading `node:util`: on Deno
 * that import costs about 20 ms, more than half of the server launcher's own module graph, and the
 * launcher reads argv this way on every start (decision 0068). tests/cli/flag_tokens_test.ts
 * compares the two on a generated corpus.
 *
 * The rules, word by word:
 * - `--` ends the flags: every later word is a positional.
 * - `-x` (two characters) is a short flag; `--name` a long one. A string flag given so takes the
 *   next word as its value, whatever it looks like (`--root --write` gives root the value
 *   `--write`), and `--name=V` / `-xV` take V.
 * - `-abc`: a group of short flags when its first one is not a string flag (each shares the
 *   group's index); a string flag inside the group takes the rest of the word as its value.
 * - Anything else (`-`, `x`) is a positional.
 * Lengths and characters are UTF-16 code units, as in node.
 */

/** How a flag is read: a string flag takes a value, a boolean one does not. */
export interface FlagShape {
  type: "string" | "boolean";
  /** One character: `-x` for this flag. */
  short?: string;
}

/** One word of argv as the lenient scan reads it (node:util parseArgs tokens). */
export type FlagToken =
  | {
    kind: "option";
    /** The flag's name (`root`), or the long name of the flag `-h` stands for. */
    name: string;
    /** As typed: `--root`, `-h`. */
    rawName: string;
    value: string | undefined;
    /** Where in argv the flag is. */
    index: number;
    /** The value was given in the same word (`--flag=value`, `-fvalue`). */
    inlineValue: boolean | undefined;
  }
  | { kind: "positional"; value: string; index: number }
  | { kind: "option-terminator"; index: number };

/** Splits argv into tokens by the flags' shapes (see the module comment). */
export function flagTokens(
  shapes: ReadonlyMap<string, FlagShape>,
  argv: readonly string[],
): FlagToken[] {
  const longOf = new Map<string, string>();
  for (const [name, shape] of shapes) {
    // The first flag declaring a short wins, as node's lookup finds it.
    if (shape.short !== undefined && !longOf.has(shape.short)) longOf.set(shape.short, name);
  }
  const nameOf = (short: string) => longOf.get(short) ?? short;
  const takesValue = (name: string) => shapes.get(name)?.type === "string";
  const tokens: FlagToken[] = [];
  const words = [...argv];
  let index = -1;
  let grouped = 0;
  while (words.length > 0) {
    const word = words.shift()!;
    const next = words[0];
    if (grouped > 0) grouped--;
    else index++;
    if (word === "--") {
      tokens.push({ kind: "option-terminator", index });
      for (const rest of words) tokens.push({ kind: "positional", index: ++index, value: rest });
      break;
    }
    // A lone flag (`-x`, `--name`): a string flag takes the next word, whatever it is.
    const lone = (name: string) => {
      const value = takesValue(name) && next !== undefined ? words.shift() : undefined;
      const inlineValue = value === undefined ? undefined : false;
      tokens.push({ kind: "option", name, rawName: word, index, value, inlineValue });
      if (value !== undefined) index++;
    };
    const short = word.length >= 2 && word[0] === "-" && word[1] !== "-";
    if (short && word.length === 2) {
      lone(nameOf(word[1]));
      continue;
    }
    if (short && !takesValue(nameOf(word[1]))) {
      // -abc: -a -b -c, unless a string flag inside takes the rest of the word (-abfFILE).
      const expanded: string[] = [];
      for (let i = 1; i < word.length; i++) {
        if (!takesValue(nameOf(word[i])) || i === word.length - 1) expanded.push(`-${word[i]}`);
        else {
          expanded.push(`-${word.slice(i)}`);
          break;
        }
      }
      words.unshift(...expanded);
      grouped = expanded.length;
      continue;
    }
    if (short) {
      tokens.push({
        kind: "option",
        name: nameOf(word[1]),
        rawName: `-${word[1]}`,
        index,
        value: word.slice(2),
        inlineValue: true,
      });
      continue;
    }
    if (word.length > 2 && word.startsWith("--")) {
      const eq = word.indexOf("=", 3);
      if (eq === -1) lone(word.slice(2));
      else {
        const name = word.slice(2, eq);
        tokens.push({
          kind: "option",
          name,
          rawName: `--${name}`,
          index,
          value: word.slice(eq + 1),
          inlineValue: true,
        });
      }
      continue;
    }
    tokens.push({ kind: "positional", index, value: word });
  }
  return tokens;
}
