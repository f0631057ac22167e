/**
 * `wmcp completion bash|zsh|fish` through the real CLI (started as the `cli` task starts it: the
 * router's permissions, no read), its scripts run by the real shells: bash's completion function
 * called with COMP_WORDS/COMP_CWORD set, zsh completing on a pseudo-terminal (zpty) with the
 * script loaded from $fpath as `_wmcp`, and fish's `complete -C`. The scripts are generated from
 * the declarations: every declared flag of every command is offered where it parses.
 */
import assert from "node:assert/strict";
import { DECLARED } from "../../src/cli/commands.ts";
import { completionScript, completionTree } from "../../src/cli/completion.ts";
import { flagsOf } from "../../src/cli/declare.ts";
import { COMMANDS, SUBCOMMANDS } from "../../src/cli/help.ts";
import { serverDecl } from "../../src/cli/server_flags.ts";
import { commandPermissions } from "../../src/cli/command_permissions.ts";
import { availableOperations } from "../../src/operations/registry.ts";
import { type CliResult, runCli, shellQuote } from "../_support/cli.ts";
import { ROUTER_FLAGS } from "./_router.ts";

const OPS = availableOperations(true).map((o) => o.name);

/** Whether a program is on PATH. */
function has(program: string): boolean {
  try {
    const r = new Deno.Command("sh", {
      args: ["-c", `command -v ${program}`],
      stdout: "null",
      stderr: "null",
    }).outputSync();
    return r.success;
  } catch {
    return false;
  }
}

const ZSH = has("zsh");
const FISH = has("fish");
const ZPTY = ZSH &&
  new Deno.Command("zsh", { args: ["-fc", "zmodload zsh/zpty"], stderr: "null" }).outputSync()
    .success;

/** `wmcp ARGS` as the `cli` task runs it. */
function wmcp(args: string[], env?: Record<string, string>): Promise<CliResult> {
  return runCli(ROUTER_FLAGS, args, { env: { NO_COLOR: "1", ...env } });
}

/** Each shell's script as the CLI prints it, generated once. */
const scripts = new Map<string, Promise<string>>();
function script(shell: "bash" | "zsh" | "fish"): Promise<string> {
  if (!scripts.has(shell)) {
    scripts.set(
      shell,
      wmcp(["completion", shell]).then((r) => {
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stderr, "");
        return r.stdout;
      }),
    );
  }
  return scripts.get(shell)!;
}

/** A scratch directory with a file and two directories, the script saved in it. */
async function scratch(): Promise<string> {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "wmcp_completion_" }));
  await Deno.mkdir(`${dir}/subdir`);
  await Deno.mkdir(`${dir}/other`);
  await Deno.writeTextFile(`${dir}/file.txt`, "x\n");
  return dir;
}

/** Runs `program args` in `cwd` with HOME and the XDG directories inside it. */
async function shell(program: string, args: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(program, {
    args,
    cwd,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: cwd,
      XDG_CONFIG_HOME: `${cwd}/.config`,
      XDG_DATA_HOME: `${cwd}/.local/share`,
      XDG_CACHE_HOME: `${cwd}/.cache`,
      TERM: "dumb",
    },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const dec = new TextDecoder();
  assert.ok(out.success, `${program} ${args.join(" ")}: ${dec.decode(out.stderr)}`);
  return dec.decode(out.stdout);
}

/** What each case completes to: the line typed (the cursor at its end) and the expected words. */
type Case = [line: string, expected: string[]];

const CASES: Case[] = [
  ["wmcp ", [...COMMANDS]],
  ["wmcp tools c", ["call"]],
  ["wmcp config print --host cl", ["claude-desktop", "claude-code"]],
  ["wmcp op read_file --ro", ["--root"]],
  ["wmcp op re", ["read_file", "read_files", "read_media"]],
  ["wmcp serve http --sandbox ", ["auto", "required", "off"]],
  ["wmcp serve stdio --engine ", ["auto", "native", "builtin"]],
  ["wmcp serve stdio --root ", ["other", "subdir"]],
  ["wmcp tools list --config fi", ["file.txt"]],
  ["wmcp tools call --output js", ["json", "jsonl"]],
  ["wmcp completion ", ["bash", "zsh", "fish"]],
  ["wmcp auth log", ["login", "logout"]],
  ["wmcp p", ["prompts", "ping"]],
  ["wmcp resources ", ["list", "templates", "read"]],
  ["wmcp prompts g", ["get"]],
  ["wmcp prompts get --skip", ["--skip-local-validation"]],
  ["wmcp resources templates --single", ["--single-page"]],
  ["wmcp ping --output js", ["json", "jsonl"]],
  // An unknown command: nothing.
  ["wmcp bogus ", []],
];

/** The words of a typed line as the shells split them (a trailing space: an empty last word). */
function wordsOf(line: string): string[] {
  return line.split(" ");
}

const sorted = (xs: readonly string[]) => [...xs].sort();

Deno.test("completion: every declared flag of every command is offered at its node", () => {
  const nodes = completionTree(OPS);
  const at = (name: string) => {
    const n = nodes.find((x) => x.name === name);
    assert.ok(n, `no node ${name}`);
    return n;
  };
  const paths = [...DECLARED.keys(), "serve stdio", "serve http"];
  for (const path of paths) {
    const decl = DECLARED.get(path) ?? serverDecl(path === "serve http" ? "http" : "stdio");
    const expected = flagsOf(decl);
    // The launcher's own flags (--sandbox, --engine) come first at the server nodes.
    if (path.startsWith("serve ") && path !== "serve stop") {
      expected.unshift("--sandbox", "--engine");
    }
    const node = at(path === "op" ? "op NAME" : path);
    assert.deepEqual(node.flags.map((f) => f.word), expected, path);
    for (const [name, f] of Object.entries(decl.flags)) {
      const flag = node.flags.find((x) => x.word === `--${name}`)!;
      assert.equal(flag.value === undefined, f.kind === "bool", `${path} --${name}`);
      if (f.kind === "choice") {
        assert.deepEqual(flag.value, { kind: "choice", choices: f.choices }, `${path} --${name}`);
      }
      if (f.kind === "dir") assert.deepEqual(flag.value, { kind: "dir" }, `${path} --${name}`);
      if (f.kind === "path") assert.deepEqual(flag.value, { kind: "file" }, `${path} --${name}`);
    }
  }
  // The words: the commands, each command's subcommands, the operations, the shells.
  assert.deepEqual(nodes[0].words, COMMANDS);
  for (const [command, subs] of Object.entries(SUBCOMMANDS)) {
    assert.deepEqual(at(command).words, subs, command);
  }
  assert.deepEqual(at("op").words, ["list", ...OPS]);
  assert.deepEqual(at("completion").words, ["bash", "zsh", "fish"]);
  // A value named as alternatives in help is offered as those (the client's --output).
  const output = at("tools call").flags.find((f) => f.word === "--output");
  assert.deepEqual(output?.value, {
    kind: "choice",
    choices: ["mcp-json", "json", "jsonl", "pretty"],
  });
});

Deno.test("completion: only plain words go into a script; a name that is not one is refused", () => {
  for (const shell of ["bash", "zsh", "fish"] as const) {
    assert.throws(() => completionScript(shell, ["x'; touch /tmp/pwned; '"]), /not a plain word/);
    assert.throws(() => completionScript(shell, ["$(id)"]), /not a plain word/);
  }
});

Deno.test("completion: no child, the same script whatever the environment, usage errors exit 2", async () => {
  assert.deepEqual(commandPermissions(["completion", "bash"], { invocationDir: "/", deno: [] }), {
    kind: "in-process",
  });
  const [bash, withEnv, none, unknown, extra, help] = await Promise.all([
    script("bash"),
    // WMCP_PROG (the name help shows) is the user's text: it never enters a script.
    runCli(["--quiet", "--allow-env", "--allow-run"], ["completion", "bash"], {
      env: { WMCP_PROG: "evil$(id)" },
    }),
    wmcp(["completion"]),
    wmcp(["completion", "bsh"]),
    wmcp(["completion", "bash", "zsh"]),
    wmcp(["completion", "--help"]),
  ]);
  assert.equal(withEnv.code, 0, withEnv.stderr);
  assert.equal(withEnv.stdout, bash);
  assert.ok(!bash.includes("evil"));
  for (
    const [r, message] of [
      [none, /^completion takes bash, zsh, fish; see `wmcp completion --help`$/],
      [unknown, /^unknown shell "bsh" \(did you mean bash\?\); completion takes bash, zsh, fish/],
      [extra, /^unexpected argument "zsh"/],
    ] as const
  ) {
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "");
    const e = JSON.parse(r.stderr).error;
    assert.equal(e.code, "USAGE");
    assert.match(e.message, message);
  }
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^Usage: wmcp completion bash\|zsh\|fish\n/);
  assert.match(help.stdout, /\n {2}wmcp completion bash > ~\/\.local\/share\/bash-completion\//);
  assert.match(help.stdout, /\n {2}wmcp completion zsh > ~\/\.zfunc\/_wmcp\n/);
  assert.match(help.stdout, /\n {2}wmcp completion fish > ~\/\.config\/fish\/completions\//);
});

Deno.test("completion bash: valid, and _wmcp fills COMPREPLY from the declarations", async () => {
  const dir = await scratch();
  try {
    await Deno.writeTextFile(`${dir}/wmcp.bash`, await script("bash"));
    assert.equal(await shell("bash", ["-n", "wmcp.bash"], dir), "");
    // Bash splits --flag=value at the = (COMP_WORDBREAKS): both forms, as bash hands them over.
    const cases: [string[], string[]][] = [
      ...CASES.map(([line, expected]): [string[], string[]] => [wordsOf(line), expected]),
      [["wmcp", "config", "print", "--host", "=", "cl"], ["claude-desktop", "claude-code"]],
      [["wmcp", "config", "print", "--host", "="], [
        "claude-desktop",
        "claude-code",
        "vscode",
        "cursor",
        "generic",
      ]],
      [["wmcp", "config", "print", "--host=cl"], ["--host=claude-desktop", "--host=claude-code"]],
      // A flag's value is not a word: --root's DIR does not name the operation.
      [["wmcp", "op", "--root", "read_file", "l"], ["list", "list_directory"]],
      // After `--` nothing is a flag.
      [["wmcp", "op", "read_file", "--", "--r"], []],
    ];
    const driver = [
      `source ./wmcp.bash`,
      `complete -p wmcp`,
      `t() { COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _wmcp;` +
      ` printf '%s\\n' "\${COMPREPLY[*]}"; }`,
      ...cases.map(([words]) => `t ${words.map(shellQuote).join(" ")}`),
    ].join("\n");
    const out = (await shell("bash", ["-c", driver], dir)).split("\n");
    assert.equal(out[0], "complete -F _wmcp wmcp");
    cases.forEach(([words, expected], i) => {
      const got = out[i + 1] === "" ? [] : out[i + 1].split(" ");
      assert.deepEqual(sorted(got), sorted(expected), words.join(" "));
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * zsh on a pseudo-terminal: an interactive `zsh -f` with compinit and `_wmcp` on $fpath (or the
 * script sourced after compinit), the line typed and Tab pressed. Each match the completion
 * system takes (builtin compadd, its own matching) is printed, then the shell exits.
 */
const ZSH_INIT = `PROMPT=
fpath=("$WMCP_FPATH" $fpath)
autoload -U compinit
compinit -u -D
[[ -n $WMCP_SOURCE ]] && source "$WMCP_SOURCE"
bindkey '^I' complete-word
compadd() {
  if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then
    builtin compadd "$@"
    return
  fi
  local -a __hits
  builtin compadd -A __hits "$@"
  (( $#__hits )) && print -rl -- "<m>"\${^__hits}
  builtin compadd "$@"
}
_capture_end() { exit }
comppostfuncs=(_capture_end)
print ready
`;

const ZSH_RUN = `zmodload zsh/zpty
local line
for typed in "$@"; do
  zpty z zsh -f -i
  zpty -w z 'source ./.zsh/init.zsh'
  repeat 50; do zpty -r z line; [[ $line == *ready* ]] && break; done
  zpty -w z "$typed"$'\\t'
  while zpty -r z line; do
    [[ $line == *'<m>'* ]] && print -r -- \${\${line##*<m>}%$'\\r'*}
  done
  zpty -d z
  print -r -- '<end>'
done
`;

Deno.test({
  name: "completion zsh: valid, and the completion system offers the declarations' words",
  ignore: !ZPTY,
  async fn() {
    const dir = await scratch();
    try {
      // The shell's own files out of sight of the directory completions (a dot directory).
      const z = `${dir}/.zsh`;
      await Deno.mkdir(`${z}/fpath`, { recursive: true });
      await Deno.writeTextFile(`${z}/fpath/_wmcp`, await script("zsh"));
      await Deno.writeTextFile(`${z}/init.zsh`, ZSH_INIT);
      await Deno.writeTextFile(`${z}/run.zsh`, ZSH_RUN);
      assert.equal(await shell("zsh", ["-n", `${z}/fpath/_wmcp`], dir), "");
      const run = async (env: string, lines: string[]) => {
        const out = await shell(
          "zsh",
          ["-fc", `${env} zsh -f ./.zsh/run.zsh "$@"`, "zsh", ...lines],
          dir,
        );
        // _directories may add a directory twice; a match counts once.
        return out.split("<end>\n").slice(0, -1).map((o) =>
          [...new Set(o.split("\n"))].filter(Boolean)
        );
      };
      const fromFpath = await run(`WMCP_FPATH=${z}/fpath`, CASES.map(([l]) => l));
      CASES.forEach(([line, expected], i) => {
        assert.deepEqual(sorted(fromFpath[i]), sorted(expected), line);
      });
      // Sourced after compinit (`source <(wmcp completion zsh)`): compdef registers it.
      const sourced = await run(`WMCP_FPATH=${z}/none WMCP_SOURCE=${z}/fpath/_wmcp`, [
        "wmcp tools c",
        "wmcp config print --host=cl",
      ]);
      assert.deepEqual(sourced, [["call"], ["claude-desktop", "claude-code"]]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "completion fish: valid, and complete -C offers the declarations' words",
  ignore: !FISH,
  async fn() {
    const dir = await scratch();
    try {
      await Deno.writeTextFile(`${dir}/wmcp.fish`, await script("fish"));
      assert.equal(await shell("fish", ["--no-config", "-n", "wmcp.fish"], dir), "");
      const cases: Case[] = [
        ...CASES,
        ["wmcp config print --host=cl", ["--host=claude-desktop", "--host=claude-code"]],
        ["wmcp op --root read_file l", ["list", "list_directory"]],
      ];
      const driver = [
        "source ./wmcp.fish",
        ...cases.map(([line]) => `complete -C ${shellQuote(line)}; echo '<end>'`),
      ].join("\n");
      const out = (await shell("fish", ["--no-config", "-c", driver], dir)).split("<end>\n");
      cases.forEach(([line, expected], i) => {
        // Each candidate is `word<TAB>description`; directories end in a slash.
        const got = out[i].split("\n").filter(Boolean).map((l) =>
          l.split("\t")[0].replace(/\/$/, "")
        );
        assert.deepEqual(sorted(got), sorted(expected), line);
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
