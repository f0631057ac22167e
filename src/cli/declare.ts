/**
 * Commands as data: a CLI command is declared once (its flags with typed kinds, the words it
 * takes, its help prose and examples), and its parsing, its generated help and its usage errors
 * derive from that declaration. The scanning is @stricli/core's (decision 0045); the messages
 * are wmcp's own (src/cli/suggest.ts), so every command words the same mistake the same way.
 *
 * A declaration is plain data with no imports of the command's work, so help, the router and
 * completions can read every declaration without loading what the commands run.
 */
import {
  AliasNotFoundError,
  ArgumentParseError,
  ArgumentScannerError,
  buildApplication,
  buildCommand,
  FlagNotFoundError,
  run,
  text_en,
  UnexpectedFlagError,
  UnexpectedPositionalError,
  UnsatisfiedFlagError,
} from "@stricli/core";
import { UsageError } from "../config.ts";
import type { RootSpec } from "../workspace/roots.ts";
import { didYouMean, needsValueMessage, unknownFlagMessage } from "./suggest.ts";
import { type FlagShape, type FlagToken, flagTokens as scanTokens } from "./flag_tokens.ts";

export type { FlagToken };

/**
 * What a flag's value is. The kind decides how the value is read and checked, how help names
 * it, and (for path kinds) what a command is granted to read.
 * - `bool`: no value (`--write`; `--write=false` also reads).
 * - `string`, `choice` (one of `choices`), `url`, `host`: text.
 * - `path` (a file), `dir` (a directory), `secret-file` (a file holding a secret): a path, taken
 *   from the directory the command was run in.
 * - `seconds`: a positive number (fractions allowed). `count`: a whole number >= 1.
 * - `limit`: `name=N`, repeatable.
 */
export type FlagKind =
  | "bool"
  | "string"
  | "choice"
  | "url"
  | "host"
  | "path"
  | "dir"
  | "secret-file"
  | "seconds"
  | "count"
  | "limit";

/** One flag of a command. */
export interface FlagDecl {
  kind: FlagKind;
  /** One line for help. */
  help: string;
  /** The value's name in help (`DIR`, `FILE`); derived from the kind when absent. */
  value?: string;
  /** A one-letter alias (`-h`). */
  short?: string;
  /** Given any number of times; the values are kept in order. Else a second one is refused. */
  multiple?: boolean;
  /** The values a `choice` flag takes. */
  choices?: readonly string[];
  /** The value when the flag is not given (checked like a given one). */
  default?: string;
  /**
   * Described by one of the command's sections (a group such as the connection flags) instead of
   * a line of its own under Options.
   */
  group?: string;
}

/** One command (a path of words such as `serve stop`). */
export interface CommandDecl {
  /** The words that name it: `["serve", "stop"]`. */
  path: readonly string[];
  /** Usage lines after `PROG PATH` (a second line is another form of the command). */
  usage: readonly string[];
  /** What it does, for help: a paragraph or a few. */
  about: string;
  flags: Readonly<Record<string, FlagDecl>>;
  /** Free words after the path (operation names, `key=value` arguments); none when absent. */
  words?: boolean;
  /** Further help sections after the flags (argument syntax, exit codes). */
  sections?: readonly string[];
  /**
   * Example command lines after `PROG ` (`serve stop --pid-file /tmp/wmcp.pid`), or whole lines
   * naming the program as `{prog}` (a pipeline into it).
   */
  examples: readonly string[];
}

/** The values of a parsed command line: a flag's value by its name, and the free words. */
export interface Parsed {
  values: Record<string, string | boolean | string[] | undefined>;
  words: string[];
}

/** A flag's parsed value: text, a boolean for `bool`, every value in order when `multiple`. */
type ValueOf<F extends FlagDecl> = F extends { multiple: true } ? string[]
  : F["kind"] extends "bool" ? boolean
  : string;

type Flags<D extends CommandDecl> = D["flags"];
type WithDefault<D extends CommandDecl> = {
  [K in keyof Flags<D>]: Flags<D>[K] extends { default: string } ? K : never;
}[keyof Flags<D>];

/** The parsed values of a declaration's flags (absent when not given and without a default). */
export type ValuesOf<D extends CommandDecl> =
  & { -readonly [K in Exclude<keyof Flags<D>, WithDefault<D>>]?: ValueOf<Flags<D>[K]> }
  & { -readonly [K in WithDefault<D>]: string }
  & { help?: boolean; version?: boolean };

/** The flags every command answers (in process, before its own parsing: src/cli/main.ts). */
export const INFO_FLAGS: Readonly<Record<string, FlagDecl>> = {
  help: { kind: "bool", short: "h", help: "this help" },
  version: { kind: "bool", short: "V", help: "the version" },
};

/** `--name` and `-s` for each flag of a declaration, the info flags included. */
export function flagsOf(decl: CommandDecl): string[] {
  const out: string[] = [];
  for (const [name, f] of Object.entries({ ...decl.flags, ...INFO_FLAGS })) {
    out.push(`--${name}`);
    if (f.short !== undefined) out.push(`-${f.short}`);
  }
  return out;
}

const PLACEHOLDER: Record<FlagKind, string> = {
  bool: "",
  string: "TEXT",
  choice: "CHOICE",
  url: "URL",
  host: "HOST",
  path: "FILE",
  dir: "DIR",
  "secret-file": "FILE",
  seconds: "SECONDS",
  count: "N",
  limit: "name=N",
};

/** The flag as help shows it: `--root DIR`, `--output json|pretty`, `--write`. */
function flagUsage(name: string, f: FlagDecl): string {
  const value = f.value ?? (f.kind === "choice" ? f.choices?.join("|") : PLACEHOLDER[f.kind]);
  return value ? `--${name} ${value}` : `--${name}`;
}

/** The help text of a declared command, under the program name the user typed. */
export function renderHelp(decl: CommandDecl, prog: string): string {
  const head = [prog, ...decl.path].join(" ");
  const usage = decl.usage.length === 1
    ? [`Usage: ${head} ${decl.usage[0]}`]
    : ["Usage:", ...decl.usage.map((u) => `  ${head} ${u}`)];
  const flags = Object.entries(decl.flags).filter(([, f]) => f.group === undefined)
    .map(([n, f]) => [flagUsage(n, f), f.help] as const);
  const width = Math.max(0, ...flags.map(([u]) => u.length)) + 2;
  const parts = [usage.join("\n"), decl.about];
  if (flags.length > 0) {
    parts.push(["Options:", ...flags.map(([u, h]) => `  ${u.padEnd(width)}${h}`)].join("\n"));
  }
  parts.push(...(decl.sections ?? []));
  parts.push(
    [
      decl.examples.length === 1 ? "Example:" : "Examples:",
      ...decl.examples.map((e) =>
        `  ${e.includes("{prog}") ? e.replaceAll("{prog}", prog) : `${prog} ${e}`}`
      ),
    ].join("\n"),
  );
  return parts.join("\n\n") + "\n";
}

/** A value flag given bare at the end, or followed by a flag (as typed): it needs its value. */
function missingValue(decl: CommandDecl, argv: readonly string[]): string | undefined {
  for (const t of flagTokens(decl, argv)) {
    if (t.kind !== "option" || decl.flags[t.name] === undefined) continue;
    if (decl.flags[t.name].kind === "bool") continue;
    // The lenient read takes the next word whatever it is; a flag-like one is not a value here.
    const flagLike = !t.inlineValue && t.value?.startsWith("-") === true && t.value !== "-";
    if (t.value === undefined || flagLike) return t.rawName;
  }
  return undefined;
}

/**
 * Where the free words of argv are, by a declaration, read leniently (an unknown flag is
 * skipped, not refused): what a command needs to find its subcommand or operation name before it
 * parses for real.
 */
export function wordIndices(decl: CommandDecl, argv: readonly string[]): number[] {
  const tokens = flagTokens(decl, argv);
  const end = tokens.find((t) => t.kind === "option-terminator")?.index;
  const words = tokens.flatMap((t) => (t.kind === "positional" ? [t.index] : []));
  // After `--` every word is a word, whatever it looks like.
  return end === undefined
    ? words
    : [...words.filter((i) => i < end), ...range(end + 1, argv.length)];
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
}

/** The free words of argv by a declaration, read leniently (see wordIndices). */
export function scanWords(decl: CommandDecl, argv: readonly string[]): string[] {
  return wordIndices(decl, argv).map((i) => argv[i]);
}

/**
 * Argv read leniently by a declaration, word by word: a flag it declares takes its value as the
 * command will parse it (`--flag V` and `--flag=V` alike), an unknown one is kept as a flag,
 * nothing after `--` is a flag. For the code that must look at argv before (or instead of) the
 * command's own parsing: the server launcher rewriting paths for the sandbox, the permissions a
 * server's flags need, and whether help or the version was asked for.
 */
export function flagTokens(decl: CommandDecl, argv: readonly string[]): FlagToken[] {
  const shapes = new Map<string, FlagShape>();
  for (const [name, f] of Object.entries({ ...decl.flags, ...INFO_FLAGS })) {
    shapes.set(name, { type: f.kind === "bool" ? "boolean" : "string", short: f.short });
  }
  return scanTokens(shapes, argv);
}

/**
 * The roots argv names by a declaration, in command-line order (decision 0064): each `--root DIR`
 * and `--read-only-root DIR` (`--flag=DIR` alike, nothing after `--`), the values as given. Empty
 * when neither flag is given. What the servers, `op` and `config print` serve, and in that order.
 */
export function rootsOf(decl: CommandDecl, argv: readonly string[]): RootSpec[] {
  const out: RootSpec[] = [];
  for (const t of flagTokens(decl, argv)) {
    if (t.kind !== "option" || typeof t.value !== "string") continue;
    if (t.name === "root") out.push({ path: t.value });
    else if (t.name === "read-only-root") out.push({ path: t.value, readOnly: true });
  }
  return out;
}

/** A stricli scanning error in wmcp's words. */
function explain(err: unknown, decl: CommandDecl): string {
  if (err instanceof FlagNotFoundError) {
    return unknownFlagMessage(`--${err.input.replace(/=.*$/s, "")}`, flagsOf(decl));
  }
  if (err instanceof AliasNotFoundError) return unknownFlagMessage(`-${err.input}`, flagsOf(decl));
  if (err instanceof UnsatisfiedFlagError) {
    return needsValueMessage(`--${err.externalFlagName}`);
  }
  if (err instanceof UnexpectedFlagError) {
    return `--${err.externalFlagName} is given twice (${JSON.stringify(err.previousInput)}, then ${
      JSON.stringify(err.input)
    }); give it once`;
  }
  if (err instanceof UnexpectedPositionalError) {
    return `unexpected argument ${JSON.stringify(err.input)}`;
  }
  if (err instanceof ArgumentParseError) {
    const cause = err.exception instanceof Error ? err.exception.message : String(err.exception);
    return `--${err.externalFlagNameOrPlaceholder} ${cause}`;
  }
  return err instanceof Error ? err.message.split("\n")[0] : String(err);
}

/** A number of seconds above zero, or the usage error naming the flag. */
function secondsValue(flag: string, text: string): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new UsageError(`${flag} must be a positive number of seconds`);
  }
  return n;
}

/** A `choice` flag's value checked against its choices, or the usage error suggesting one. */
function checkChoice(name: string, f: FlagDecl, text: string): void {
  const choices = f.choices ?? [];
  if (choices.includes(text)) return;
  throw new UsageError(
    `unknown --${name} ${JSON.stringify(text)}${didYouMean(text, choices)}; --${name} takes ${
      choices.join(", ")
    }`,
  );
}

/** The stricli application of one declaration, parsing into `sink` (cheap: plain objects). */
function application(decl: CommandDecl, sink: { parsed?: Parsed; error?: unknown }) {
  const flags: Record<string, unknown> = {};
  const aliases: Record<string, string> = {};
  for (const [name, f] of Object.entries({ ...decl.flags, ...INFO_FLAGS })) {
    flags[name] = f.kind === "bool"
      ? { kind: "boolean", brief: f.help, optional: true }
      : { kind: "parsed", parse: String, brief: f.help, optional: true, variadic: f.multiple };
    if (f.short !== undefined) aliases[f.short] = name;
  }
  const command = buildCommand({
    func(values: Parsed["values"], ...words: string[]) {
      sink.parsed = { values, words };
    },
    parameters: {
      flags,
      aliases,
      positional: decl.words
        ? { kind: "array", parameter: { brief: "words", parse: String } }
        : { kind: "tuple", parameters: [] },
    },
    docs: { brief: decl.about.split("\n")[0] },
  } as never);
  return buildApplication(command, {
    name: decl.path.join(" "),
    scanner: { caseStyle: "original", allowArgumentEscapeSequence: true },
    localization: {
      text: {
        ...text_en,
        exceptionWhileParsingArguments(err: unknown) {
          sink.error = err;
          return "";
        },
        exceptionWhileRunningCommand(err: unknown) {
          sink.error = err;
          return "";
        },
      },
    },
  } as never, {} as never);
}

/**
 * Parses a command's argv (the words after its path) by its declaration. Every mistake is a
 * UsageError in wmcp's words: an unknown flag with the closest known one, a value flag without
 * its value, a flag given twice, a word where none is taken, a bad `choice` or `seconds` value.
 */
export async function parseCommand<D extends CommandDecl>(
  decl: D,
  argv: readonly string[],
): Promise<{ values: ValuesOf<D>; words: string[] }> {
  // `--flag=` is the empty value, as `--flag ""` (stricli reads the word as a positional).
  argv = argv.flatMap((a) => (/^--[^=\s]+=$/.test(a) ? [a.slice(0, -1), ""] : [a]));
  const bare = missingValue(decl, argv);
  if (bare !== undefined) {
    throw new UsageError(needsValueMessage(bare));
  }
  const sink: { parsed?: Parsed; error?: unknown } = {};
  // stricli writes only to the context's streams, and only what the hooks above return (""):
  // nothing reaches the terminal, and nothing exits.
  const quiet = { write: (_: string) => {} };
  await run(application(decl, sink), [...argv], {
    process: { stdout: quiet, stderr: quiet, env: {} },
  } as never);
  const { error, parsed } = sink;
  if (error !== undefined) {
    if (error instanceof ArgumentScannerError) throw new UsageError(explain(error, decl));
    throw error;
  }
  if (parsed === undefined) throw new UsageError(`${decl.path.join(" ")}: nothing was parsed`);
  for (const [name, f] of Object.entries(decl.flags)) {
    if (parsed.values[name] === undefined && f.default !== undefined) {
      parsed.values[name] = f.default;
    }
    const v = parsed.values[name];
    if (typeof v !== "string") continue;
    if (f.kind === "choice") checkChoice(name, f, v);
    if (f.kind === "seconds") secondsValue(`--${name}`, v);
    if (f.kind === "count" && !/^[1-9][0-9]{0,15}$/.test(v.trim())) {
      throw new UsageError(`--${name} must be a positive integer`);
    }
  }
  return parsed as { values: ValuesOf<D>; words: string[] };
}
