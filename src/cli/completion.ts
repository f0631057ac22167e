/**
 * `wmcp completion bash|zsh|fish`: a shell completion script generated from the command
 * declarations (src/cli/commands.ts, the server flags' serverDecl), the data help is rendered
 * from, so the script offers exactly the commands and flags that parse.
 *
 * The declarations become a small state machine (completionTree, completion_tree.ts): each node is a place on the
 * command line (`tools`, `tools call`, `op NAME`) with the flags it takes, the words it offers
 * next and where a word leads. Each shell's script walks the words typed so far through that
 * machine (skipping flags and their values) and offers what the node it reaches takes. Nothing
 * but the static declarations and the built-in operation names goes in, every word quoted for the
 * shell: no server, no environment, no file is read.
 */
import { COMPLETION, SHELLS } from "./commands.ts";
import { parseCommand } from "./declare.ts";
import { VERSION } from "./help.ts";
import { didYouMean } from "./suggest.ts";
import { UsageError } from "../config.ts";
import { type CompletionNode, completionTree, type ValueCompletion } from "./completion_tree.ts";

export { completionTree };

/** The command the scripts complete: the name `deno task -q install` gives the launcher. */
const PROG = "wmcp";

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

/**
 * The bash script after its helpers: `_wmcp_add` and `_wmcp`, which walks the words before the
 * cursor through the tree and offers what the node it reaches takes.
 */
const BASH_COMPLETE =
  `# _wmcp_add PREFIX CUR WORD...: each WORD that begins with CUR, after PREFIX, into COMPREPLY.
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
${BASH_COMPLETE}`;
}

/**
 * The zsh script after its helpers: `_wmcp`, which walks the words before the cursor through
 * the tree, and its registration (called by compinit when autoloaded, else compdef).
 */
const ZSH_COMPLETE = `_wmcp() {
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
${ZSH_COMPLETE}`;
}

/** fish's `__wmcp_step NODE WORD`: the node a word leads to. */
function fishStep(nodes: CompletionNode[]): string {
  const { exact, other } = steps(nodes);
  const stepArms = [
    ...fishArms(exact.map(([id, w, to]) => [fq(`${id} ${w}`), `echo ${to}`])),
    ...fishArms(other.map(([id, to]) => [fq(`${id} *`), `echo ${to}`])),
  ];
  return `# __wmcp_step NODE WORD: the node a word leads to (-1: nothing is offered there).
function __wmcp_step --argument-names node word
    switch "$node $word"
${stepArms.join("\n")}
        case '*'
            echo -1
    end
end
`;
}

/** fish's `__wmcp_value NODE FLAG`: what a flag's value completes to. */
function fishValue(nodes: CompletionNode[]): string {
  const valueArms = fishArms(
    valueFlags(nodes).map(([id, w, v]) => [
      fq(`${id} ${w}`),
      v.kind === "choice"
        ? `printf '%s\\n' choice ${v.choices.map((c) => fq(plain(c))).join(" ")}`
        : `echo ${v.kind}`,
    ]),
  );
  return `# __wmcp_value NODE FLAG: what FLAG's value completes to (choice and its values, file, dir,
# text), nothing when it takes none.
function __wmcp_value --argument-names node flag
    switch "$node $flag"
${valueArms.join("\n")}
    end
end
`;
}

/** The walk of `__wmcp_complete`, up to the switch on the node it reaches. */
const FISH_WALK =
  `# __wmcp_complete: the candidates for the word at the cursor, each with its help after a tab.
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
`;

/** The end of `__wmcp_complete` (after the node's words and flags), and the `complete` lines. */
const FISH_OFFER = `    end
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

/** fish's `__wmcp_complete`: the node's words and flags between the walk and the offer. */
function fishComplete(nodes: CompletionNode[]): string {
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
  return `${FISH_WALK}${offerArms.join("\n")}\n${FISH_OFFER}`;
}

/** The fish script: one dynamic completion, `__wmcp_complete`, for every position. */
function fishScript(nodes: CompletionNode[]): string {
  return `${
    HEADER(
      "fish",
      `Install:
#   ${PROG} completion fish > ~/.config/fish/completions/${PROG}.fish
# or, for this shell only: ${PROG} completion fish | source`,
    )
  }
${fishStep(nodes)}
${fishValue(nodes)}
${fishComplete(nodes)}`;
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
