/**
 * The completion scripts' state machine (completionTree), built from the command declarations
 * (src/cli/commands.ts, the server flags' serverDecl): each node is a place on the command line
 * (`tools`, `tools call`, `op NAME`) with the flags it takes, the words it offers next and where
 * a word leads. completion.ts writes each shell's script from it.
 */
import { COMPLETION, DECLARED, OP, OP_LIST, SHELLS } from "./commands.ts";
import { type CommandDecl, type FlagDecl, INFO_FLAGS } from "./declare.ts";
import { COMMANDS, SUBCOMMANDS } from "./help.ts";
import { LAUNCHER_FLAGS, serverDecl } from "./server_flags.ts";

/** What a flag's value completes to: nothing offered (text), one of a few, files, directories. */
export type ValueCompletion =
  | { kind: "text" }
  | { kind: "choice"; choices: readonly string[] }
  | { kind: "file" }
  | { kind: "dir" };

/** One flag as the scripts know it. */
export interface CompletionFlag {
  /** `--root`, or `-h`. */
  word: string;
  /** The help line. */
  help: string;
  /** Undefined for a flag that takes no value. */
  value?: ValueCompletion;
}

/** One place on the command line. */
export interface CompletionNode {
  /** The command path it stands for, for reading the tree (`tools call`, `op NAME`). */
  name: string;
  flags: CompletionFlag[];
  /** The words offered next. */
  words: readonly string[];
  /** Where a word leads: by the word, else `other` (-1: nowhere, nothing is offered there). */
  next: Readonly<Record<string, number>>;
  other: number;
}

/**
 * The values a flag's value completes to, from its declaration: a `choice` flag's choices, or
 * the alternatives its value names in help (`--output mcp-json|json|jsonl|pretty`), files for a
 * path, directories for a dir, nothing for free text.
 */
function valueOf(f: FlagDecl): ValueCompletion | undefined {
  if (f.kind === "bool") return undefined;
  if (f.kind === "choice") return { kind: "choice", choices: f.choices ?? [] };
  if (f.kind === "path" || f.kind === "secret-file") return { kind: "file" };
  if (f.kind === "dir") return { kind: "dir" };
  if (f.value !== undefined && /^[a-z0-9][a-z0-9.-]*(\|[a-z0-9][a-z0-9.-]*)+$/.test(f.value)) {
    return { kind: "choice", choices: f.value.split("|") };
  }
  return { kind: "text" };
}

/** Every flag of a declaration (the info flags included), long and short forms. */
function flagsOf(flags: Readonly<Record<string, FlagDecl>>): CompletionFlag[] {
  const out: CompletionFlag[] = [];
  for (const [name, f] of Object.entries({ ...flags, ...INFO_FLAGS })) {
    const help = f.help.replace(/\s+/g, " ");
    out.push({ word: `--${name}`, help, value: valueOf(f) });
    if (f.short !== undefined) out.push({ word: `-${f.short}`, help, value: valueOf(f) });
  }
  return out;
}

/** The declaration of a command path: DECLARED's, or a server entry's with the launcher's flag. */
function declOf(path: string): CommandDecl {
  if (path === "serve stdio" || path === "serve http") {
    const decl = serverDecl(path === "serve http" ? "http" : "stdio");
    return { ...decl, flags: { ...LAUNCHER_FLAGS, ...decl.flags } };
  }
  const decl = DECLARED.get(path);
  if (decl === undefined) throw new Error(`completion: no declaration of ${path}`);
  return decl;
}

/**
 * The state machine the scripts walk, node 0 the program itself. `opNames` are the operations
 * `op` takes (the built-in registry's: static names, never a server's).
 */
export function completionTree(opNames: readonly string[]): CompletionNode[] {
  const nodes: CompletionNode[] = [];
  const add = (n: Omit<CompletionNode, "other"> & { other?: number }): number => {
    nodes.push({ ...n, other: n.other ?? nodes.length });
    return nodes.length - 1;
  };
  /** A command that takes its flags and free words (its free words stay where they are). */
  const leaf = (path: string, name = path) =>
    add({ name, flags: flagsOf(declOf(path).flags), words: [], next: {} });
  const root = add({ name: "", flags: flagsOf({}), words: COMMANDS, next: {}, other: -1 });
  const top: Record<string, number> = {};
  for (const command of COMMANDS) {
    const subs = SUBCOMMANDS[command];
    if (subs !== undefined) {
      const next: Record<string, number> = {};
      for (const sub of subs) next[sub] = leaf(`${command} ${sub}`);
      top[command] = add({ name: command, flags: flagsOf({}), words: subs, next, other: -1 });
    } else if (command === "op") {
      const list = leaf(OP_LIST.path.join(" "));
      const named = leaf(OP.path.join(" "), "op NAME");
      top[command] = add({
        name: "op",
        flags: flagsOf(OP.flags),
        words: [...OP_LIST.path.slice(1), ...opNames],
        next: { list },
        other: named,
      });
    } else if (command === "completion") {
      // After the shell, only the info flags.
      const shell = leaf(COMPLETION.path.join(" "), "completion SHELL");
      top[command] = add({
        name: command,
        flags: flagsOf(COMPLETION.flags),
        words: SHELLS,
        next: {},
        other: shell,
      });
    } else if (command === "help") {
      // `help COMMAND [SUBCOMMAND]`: the words help answers.
      const next: Record<string, number> = {};
      for (const [c, subs] of Object.entries(SUBCOMMANDS)) {
        next[c] = add({ name: `help ${c}`, flags: [], words: subs, next: {}, other: -1 });
      }
      top[command] = add({
        name: "help",
        flags: [],
        words: COMMANDS.filter((c) => c !== "help"),
        next,
        other: -1,
      });
    } else {
      top[command] = leaf(command);
    }
  }
  nodes[root] = { ...nodes[root], next: top };
  return nodes;
}
