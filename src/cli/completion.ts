/**
 * `wmcp completion bash|zsh|fish`: a shell completion script generated from the command
 * declarations (src/cli/commands.ts, the server flags' serverDecl), the data help is rendered
 * from, so the script offers exactly the commands and flags that parse.
 *
 * The declarations become a small state machine (completionTree): each node is a place on the
 * command line (`tools`, `tools call`, `op NAME`) with the flags it takes, the words it offers
 * next and where a word leads. Each shell's script walks the words typed so far through that
 * machine (skipping flags and their values) and offers what the node it reaches takes. Nothing
 * but the static declarations and the built-in operation names goes in, every word quoted for the
 * shell: no server, no environment, no file is read.
 */
import { COMPLETION, DECLARED, OP, OP_LIST, SHELLS } from "./commands.ts";
import { type CommandDecl, type FlagDecl, INFO_FLAGS, parseCommand } from "./declare.ts";
import { COMMANDS, SUBCOMMANDS, VERSION } from "./help.ts";
import { LAUNCHER_FLAGS, serverDecl } from "./server_flags.ts";
import { didYouMean } from "./suggest.ts";
import { UsageError } from "../config.ts";

/** The command the scripts complete: the name `deno task -q install` gives the launcher. */
const PROG = "wmcp";

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

/** Every word that goes into a script is one of these (a declaration's name, flag or value). */
const PLAIN = /^-{0,2}[A-Za-z0-9][A-Za-z0-9_.:-]*$/;

function plain(word: string): string {
  if (!PLAIN.test(word)) throw new Error(`completion: ${JSON.stringify(word)} is not a plain word`);
  return word;
}

/** A single-quoted word for bash and zsh (a quote inside is closed, escaped, reopened). */
function sq(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** A single-quoted word for fish (backslash and quote escaped inside). */
function fq(text: string): string {
  return `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

/** Rows `[pattern, body]` grouped by body, in order: one case arm each. */
function grouped(rows: [pattern: string, body: string][]): [patterns: string[], body: string][] {
  const byBody = new Map<string, string[]>();
  for (const [pattern, body] of rows) byBody.set(body, [...(byBody.get(body) ?? []), pattern]);
  return [...byBody].map(([body, patterns]) => [patterns, body]);
}

/**
 * Items joined by `sep` and broken into lines of about 96 columns after `indent`: each line but
 * the last ends with `cont` (a backslash where the shell needs one), the next is indented by two.
 */
function wrap(items: readonly string[], sep: string, indent: string, cont: string): string {
  const lines = [""];
  for (const item of items) {
    const last = lines.length - 1;
    if (lines[last] !== "" && indent.length + lines[last].length + sep.length + item.length > 96) {
      lines[last] += sep.trimEnd() + cont;
      lines.push(item);
    } else {
      lines[last] += lines[last] === "" ? item : `${sep}${item}`;
    }
  }
  return lines.join(`\n${indent}  `);
}

/** bash and zsh case arms: `PATTERN|PATTERN) BODY ;;` (the body on its own lines when long). */
function shArms(rows: [string, string][]): string[] {
  return grouped(rows).map(([patterns, body]) => {
    const head = `    ${wrap(patterns, "|", "    ", "\\")})`;
    const one = `${head} ${body} ;;`;
    return !body.includes("\n") && one.split("\n").every((l) => l.length <= 100)
      ? one
      : `${head}\n      ${body}\n      ;;`;
  });
}

/** fish case arms: `case PATTERN PATTERN` and the body on its own line. */
function fishArms(rows: [string, string][]): string[] {
  return grouped(rows).map(([patterns, body]) =>
    `        case ${wrap(patterns, " ", "        ", " \\")}\n            ${body}`
  );
}

/** The word steps of the tree: `[node, word, target]`, then each node's `[node, target]`. */
function steps(nodes: CompletionNode[]) {
  const exact: [number, string, number][] = [];
  const other: [number, number][] = [];
  nodes.forEach((n, id) => {
    for (const [word, to] of Object.entries(n.next)) exact.push([id, plain(word), to]);
    if (n.other !== -1) other.push([id, n.other]);
  });
  return { exact, other };
}

/** The value-taking flags of the tree: `[node, flag, value]`. */
function valueFlags(nodes: CompletionNode[]): [number, string, ValueCompletion][] {
  return nodes.flatMap((n, id) =>
    n.flags.flatMap((f): [number, string, ValueCompletion][] =>
      f.value === undefined ? [] : [[id, plain(f.word), f.value]]
    )
  );
}

const HEADER = (shell: string, install: string) =>
  `# ${shell} completion for ${PROG} ${VERSION}, generated from its command declarations by
# \`${PROG} completion ${shell}\`. ${install}
`;

/** The shared helpers of bash and zsh (the same POSIX-ish case syntax). */
function shHelpers(nodes: CompletionNode[], shell: "bash" | "zsh"): string {
  const { exact, other } = steps(nodes);
  // The exact words first: a node's catch-all arm must not come before them.
  const stepArms = [
    ...shArms(exact.map(([id, w, to]) => [sq(`${id} ${w}`), `_wmcp_node=${to}`])),
    ...shArms(other.map(([id, to]) => [`${sq(`${id} `)}*`, `_wmcp_node=${to}`])),
  ];
  const valueArms = shArms(
    valueFlags(nodes).map(([id, w, v]) => [
      sq(`${id} ${w}`),
      v.kind === "choice"
        ? `_wmcp_kind=choice; _wmcp_choices=(${v.choices.map((c) => sq(plain(c))).join(" ")})`
        : `_wmcp_kind=${v.kind}`,
    ]),
  );
  const offerRows = nodes.flatMap((n, id): [string, string][] => {
    if (n.flags.length === 0 && n.words.length === 0) return [];
    const words = wrap(n.words.map((w) => sq(plain(w))), " ", "        ", "");
    // zsh shows each flag's help beside it (_describe: `--flag:help`).
    const flags = n.flags.map((f) =>
      sq(shell === "zsh" ? `${plain(f.word)}:${f.help}` : plain(f.word))
    );
    return [[
      sq(String(id)),
      `_wmcp_words=(${words})\n      _wmcp_flags=(${wrap(flags, " ", "        ", "")})`,
    ]];
  });
  return `# _wmcp_step NODE WORD: the node a word leads to (-1: nothing is offered there).
_wmcp_step() {
  case "$1 $2" in
${stepArms.join("\n")}
    *) _wmcp_node=-1 ;;
  esac
}

# _wmcp_value NODE FLAG: what FLAG's value completes to (_wmcp_kind empty: it takes none).
_wmcp_value() {
  _wmcp_choices=()
  case "$1 $2" in
${valueArms.join("\n")}
    *) _wmcp_kind= ;;
  esac
}

# _wmcp_offer NODE: the words and flags offered at NODE.
_wmcp_offer() {
  _wmcp_words=()
  _wmcp_flags=()
  case "$1" in
${shArms(offerRows).join("\n")}
  esac
}
`;
}

/** The bash script: `complete -F _wmcp wmcp`. */
function bashScript(nodes: CompletionNode[]): string {
  return `${
    HEADER(
      "bash",
      `Install:
#   ${PROG} completion bash > ~/.local/share/bash-completion/completions/${PROG}
# or, for this shell only: source <(${PROG} completion bash)`,
    )
  }
${shHelpers(nodes, "bash")}
# _wmcp_add PREFIX CUR WORD...: each WORD that begins with CUR, after PREFIX, into COMPREPLY.
_wmcp_add() {
  local prefix=$1 cur=$2 w
  shift 2
  for w in "$@"; do
    [[ $w == "$cur"* ]] && COMPREPLY+=("$prefix$w")
  done
  return 0
}

_wmcp() {
  local cur=\${COMP_WORDS[COMP_CWORD]} w i=1 after= flag= prefix=
  local _wmcp_node=0 _wmcp_kind=
  local -a _wmcp_choices=() _wmcp_words=() _wmcp_flags=()
  COMPREPLY=()
  # The words before the cursor: flags (and their values) skipped, the others walked. Bash
  # splits --flag=value into --flag, =, value (COMP_WORDBREAKS).
  while (( i < COMP_CWORD )); do
    w=\${COMP_WORDS[i]}
    if [[ -z $after && $w == -- ]]; then
      after=1
    elif [[ -z $after && $w == -?* ]]; then
      _wmcp_value "$_wmcp_node" "$w"
      if [[ -n $_wmcp_kind ]]; then
        if (( i + 1 == COMP_CWORD )); then
          flag=$w
          [[ $cur == = ]] && cur=
          break
        fi
        if [[ \${COMP_WORDS[i+1]} == = ]]; then
          if (( i + 2 == COMP_CWORD )); then
            flag=$w
            break
          fi
          i=$((i + 1))
        fi
        i=$((i + 1))
      fi
    else
      _wmcp_step "$_wmcp_node" "$w"
    fi
    i=$((i + 1))
  done
  # --flag=value as one word (an = not in COMP_WORDBREAKS).
  if [[ -z $flag && -z $after && $cur == --*=* ]]; then
    flag=\${cur%%=*}
    prefix=$flag=
    cur=\${cur#*=}
  fi
  if [[ -n $flag ]]; then
    _wmcp_value "$_wmcp_node" "$flag"
    case $_wmcp_kind in
      choice) _wmcp_add "$prefix" "$cur" "\${_wmcp_choices[@]}" ;;
      file | dir)
        compopt -o filenames 2>/dev/null
        while IFS= read -r w; do
          COMPREPLY+=("$prefix$w")
        done < <(if [[ $_wmcp_kind == dir ]]; then compgen -d -- "$cur"; else compgen -f -- "$cur"; fi)
        ;;
    esac
    return 0
  fi
  _wmcp_offer "$_wmcp_node"
  if [[ -z $after && ( $cur == -* || \${#_wmcp_words[@]} -eq 0 ) ]]; then
    _wmcp_add "" "$cur" "\${_wmcp_flags[@]}"
  fi
  if [[ $cur != -* ]]; then
    _wmcp_add "" "$cur" "\${_wmcp_words[@]}"
  fi
  return 0
}

complete -F _wmcp ${PROG}
`;
}

/** The zsh script: an autoloadable `_wmcp` (`#compdef wmcp`), or sourced after compinit. */
function zshScript(nodes: CompletionNode[]): string {
  return `#compdef ${PROG}
${
    HEADER(
      "zsh",
      `Install: save it as _${PROG} in a directory on $fpath
# (before compinit), or, for this shell only: source <(${PROG} completion zsh)`,
    )
  }
${shHelpers(nodes, "zsh")}
_wmcp() {
  local cur=\${words[CURRENT]} w i=2 after= flag=
  local _wmcp_node=0 _wmcp_kind=
  local -a _wmcp_choices _wmcp_words _wmcp_flags
  # The words before the cursor: flags (and their values) skipped, the others walked.
  while (( i < CURRENT )); do
    w=\${words[i]}
    if [[ -z $after && $w == -- ]]; then
      after=1
    elif [[ -z $after && $w == -?* ]]; then
      _wmcp_value "$_wmcp_node" "$w"
      if [[ -n $_wmcp_kind ]]; then
        if (( i + 1 == CURRENT )); then
          flag=$w
          break
        fi
        i=$((i + 1))
      fi
    else
      _wmcp_step "$_wmcp_node" "$w"
    fi
    i=$((i + 1))
  done
  if [[ -z $flag && -z $after && $cur == --*=* ]]; then
    flag=\${cur%%=*}
    compset -P '*='
  fi
  if [[ -n $flag ]]; then
    _wmcp_value "$_wmcp_node" "$flag"
    case $_wmcp_kind in
      choice) compadd -- "\${_wmcp_choices[@]}" ;;
      file) _files ;;
      dir) _directories ;;
    esac
    return 0
  fi
  _wmcp_offer "$_wmcp_node"
  if [[ $cur != -* && \${#_wmcp_words} -gt 0 ]]; then
    compadd -- "\${_wmcp_words[@]}"
  elif [[ -z $after && \${#_wmcp_flags} -gt 0 ]]; then
    _describe -t options option _wmcp_flags
  fi
  return 0
}

if [[ \${funcstack[1]} == _wmcp ]]; then
  _wmcp "$@"
else
  compdef _wmcp ${PROG}
fi
`;
}

/** The fish script: one dynamic completion, `__wmcp_complete`, for every position. */
function fishScript(nodes: CompletionNode[]): string {
  const { exact, other } = steps(nodes);
  const stepArms = [
    ...fishArms(exact.map(([id, w, to]) => [fq(`${id} ${w}`), `echo ${to}`])),
    ...fishArms(other.map(([id, to]) => [fq(`${id} *`), `echo ${to}`])),
  ];
  const valueArms = fishArms(
    valueFlags(nodes).map(([id, w, v]) => [
      fq(`${id} ${w}`),
      v.kind === "choice"
        ? `printf '%s\\n' choice ${v.choices.map((c) => fq(plain(c))).join(" ")}`
        : `echo ${v.kind}`,
    ]),
  );
  const offerArms = nodes.flatMap((n, id) => {
    if (n.flags.length === 0 && n.words.length === 0) return [];
    const words = wrap(n.words.map((w) => fq(plain(w))), " ", "            ", " \\");
    const flags = n.flags.map((f) => `${fq(plain(f.word))} ${fq(f.help)}`);
    return [
      `        case ${id}\n            set words ${words}\n            set flags ${
        wrap(flags, " ", "            ", " \\")
      }`,
    ];
  });
  return `${
    HEADER(
      "fish",
      `Install:
#   ${PROG} completion fish > ~/.config/fish/completions/${PROG}.fish
# or, for this shell only: ${PROG} completion fish | source`,
    )
  }
# __wmcp_step NODE WORD: the node a word leads to (-1: nothing is offered there).
function __wmcp_step --argument-names node word
    switch "$node $word"
${stepArms.join("\n")}
        case '*'
            echo -1
    end
end

# __wmcp_value NODE FLAG: what FLAG's value completes to (choice and its values, file, dir,
# text), nothing when it takes none.
function __wmcp_value --argument-names node flag
    switch "$node $flag"
${valueArms.join("\n")}
    end
end

# __wmcp_complete: the candidates for the word at the cursor, each with its help after a tab.
function __wmcp_complete
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    set -e tokens[1]
    set -l node 0
    set -l after 0
    set -l flag
    set -l skip 0
    # The words before the cursor: flags (and their values) skipped, the others walked.
    for w in $tokens
        if test $skip = 1
            set skip 0
        else if test $after = 0 -a "$w" = --
            set after 1
        else if test $after = 0; and string match -q -- '-?*' $w
            set -l value (__wmcp_value $node $w)
            if set -q value[1]
                set skip 1
            end
        else
            set node (__wmcp_step $node $w)
        end
    end
    # One empty string, not an empty list: $prefix$value would be empty.
    set -l prefix ''
    if test $skip = 1
        set flag $tokens[-1]
    else if test $after = 0; and string match -q -- '--*=*' $cur
        set flag (string split -m 1 = -- $cur)[1]
        set prefix $flag=
        set cur (string split -m 1 = -- $cur)[2]
    end
    if test -n "$flag"
        set -l value (__wmcp_value $node $flag)
        set -l out
        switch "$value[1]"
            case choice
                set out $value[2..-1]
            case file
                set out (__fish_complete_path $cur)
            case dir
                set out (__fish_complete_directories $cur)
        end
        if set -q out[1]
            printf '%s\\n' $prefix$out
        end
        return 0
    end
    set -l words
    set -l flags
    switch $node
${offerArms.join("\n")}
    end
    if set -q words[1]; and not string match -q -- '-*' $cur
        printf '%s\\n' $words
    end
    if set -q flags[1]; and test $after = 0
        and begin
            string match -q -- '-*' $cur; or not set -q words[1]
        end
        printf '%s\\t%s\\n' $flags
    end
end

complete -c ${PROG} -e
complete -c ${PROG} -f -a '(__wmcp_complete)'
`;
}

/** The completion script of one shell. */
export function completionScript(
  shell: (typeof SHELLS)[number],
  opNames: readonly string[],
): string {
  const nodes = completionTree(opNames);
  return shell === "bash"
    ? bashScript(nodes)
    : shell === "zsh"
    ? zshScript(nodes)
    : fishScript(nodes);
}

/**
 * `completion SHELL` (argv after `completion`): the script, or a usage error for no shell, a
 * shell it does not know (with the closest one), or a second word.
 */
export async function completionCommand(
  argv: readonly string[],
  opNames: readonly string[],
): Promise<string> {
  const { words } = await parseCommand(COMPLETION, argv);
  const takes = `completion takes ${SHELLS.join(", ")}`;
  if (words.length === 0) throw new UsageError(takes);
  const [shell, extra] = words;
  if (!(SHELLS as readonly string[]).includes(shell)) {
    throw new UsageError(
      `unknown shell ${JSON.stringify(shell)}${didYouMean(shell, SHELLS)}; ${takes}`,
    );
  }
  if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}`);
  return completionScript(shell as (typeof SHELLS)[number], opNames);
}
