/**
 * The docs' command blocks, run as typed on a fresh machine with no `deno` on PATH.
 *
 * Every command line of the fenced code blocks tagged sh, bash, shell or console in README.md,
 * RUNTIME.md, INTERFACES.md, docs/**\/*.md and bench/README.md is read at test time (a line that is
 * not empty and not a comment, a trailing `# comment` stripped, lines ending in `\` joined; in a
 * console block only the `$ ` lines) and looked up, by its exact text, in TABLE below: run it (with
 * its expected exit code and a check of what it printed) or skip it with the reason. A command of
 * the docs that the table does not name fails the first test ("classify it"), so does an entry no
 * command of the docs has any more (stale), and so does a bare `deno ...` command: on a machine
 * with only Node and npm it fails as typed, which is the defect this file exists to catch.
 *
 * The second test runs the table's runnable commands that the docs have, each with `sh -c` in a
 * fresh `git clone` of this repository's HEAD (committed state only) in a temporary folder, with
 * HOME a temporary directory holding `~/project` (a README.md of six lines), PATH the current PATH
 * without any directory that holds a `deno` executable, NO_COLOR=1 and DENO_NO_UPDATE_CHECK=1.
 * npm's cache stays the real one (npm_config_cache names it, since HOME moved) so npx does not
 * download Deno again; Deno's own cache is the new HOME's, as on a fresh machine. A command that
 * runs `wmcp` (first, or after `&&`, `||`, `;`, `|`) runs after the README's install command (`npx -y deno@2.9.6 task -q install`,
 * run once in the clone, writing HOME/.local/bin/wmcp) with HOME/.local/bin first on PATH. A
 * server entry is started, waited for until its ready line, given the commands that need it
 * (`during`), and stopped with its signal. Each command runs in its own process group, is killed
 * after TIMEOUT_MS, and its group is swept with SIGKILL when it ends.
 *
 * WMCP_DOC_COMMANDS_ALL=1 also runs the table's runnable entries that the docs do not have (yet),
 * to try an entry before the docs name it.
 */
import assert from "node:assert/strict";

const REPO = decodeURIComponent(new URL("../../", import.meta.url).pathname).replace(/\/$/, "");
const TIMEOUT_MS = 120_000;
/** The README's install command: what a `wmcp ...` command needs to have run first. */
const INSTALL = "npx -y deno@2.9.6 task -q install";
/** The README's quick-start server, which the client commands' `--endpoint` URLs talk to. */
const START = "npx -y deno@2.9.6 task -q start";
/** Where the docs' commands come from (docs/ is walked for *.md). */
const DOC_FILES = ["README.md", "RUNTIME.md", "INTERFACES.md", "bench/README.md"];
const DOC_DIRS = ["docs"];
const COMMAND_TAGS = new Set(["sh", "bash", "shell", "console"]);
/** `~/project`'s README.md: six lines, the fourth with a TODO for the search commands. */
const PROJECT_README = "# project\nline 2\nline 3\nTODO: line 4\nline 5\nline 6\n";
const PREFIX_MESSAGE = "fails as typed without deno on PATH: prefix it with `npx -y deno@2.9.6`";

/** A command line of the docs, where it is. */
export interface DocCommand {
  file: string;
  line: number;
  text: string;
}

/** What one run of a command gave. */
interface Result {
  code: number;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** The run's places, for setups and checks. */
interface Ctx {
  home: string;
  clone: string;
  version: string;
}

interface Run {
  run: true;
  /** The exit code (default 0), or the codes accepted. A server's is its code after `stop`. */
  expect?: number | readonly number[];
  stdoutMatch?: RegExp;
  stderrMatch?: RegExp;
  /** Further assertions on the result and what the command left behind. */
  check?: (r: Result, ctx: Ctx) => void | Promise<void>;
  /** Creates the fixtures the command names (in the clone); may return their cleanup. */
  setup?: (ctx: Ctx) => Promise<void | (() => Promise<void>)>;
  /** A line that is a synopsis, not a command: the concrete command run in its place, and why. */
  instead?: { command: string; why: string };
  /** A long-running server: its ready line on stdout, the port it must find free, how to stop it. */
  server?: { ready: RegExp; port?: number; stop: Deno.Signal };
  /** The server entry (a table key) that must be up while this command runs. */
  during?: string;
  /** Runs after every other command (an uninstall). */
  last?: boolean;
}
interface Skip {
  skip: string;
}
type Entry = Run | Skip;

const json = (s: string) => JSON.parse(s);
// deno-lint-ignore no-explicit-any
type Json = any;
const exists = (p: string) => Deno.stat(p).then(() => true, () => false);

/** The docs' commands as they are now: every entry here must match a command line of the docs. */
const FOUND: Record<string, Entry> = {
  // README.md, Quick start
  [START]: {
    run: true,
    server: {
      ready: /^\{"event":"ready","url":"http:\/\/127\.0\.0\.1:3000\/mcp"/m,
      port: 3000,
      stop: "SIGINT",
    },
    expect: 130, // stopped with Ctrl-C (SIGINT to its process group), as the README says
    check: (r, ctx) => {
      assert.ok(
        r.stderr.includes(`serving ${ctx.clone} (read-only) on http://127.0.0.1:3000/mcp`),
        `start should serve the directory it ran in, read-only: ${r.stderr}`,
      );
    },
  },
  "npx -y deno@2.9.6 task -q test": { skip: "runs this suite (the test would run itself)" },
  "npx -y deno@2.9.6 task -q test:peers": {
    skip: "runs the real-peer suite (minutes; CI runs it as its own step)",
  },

  // README.md, The `wmcp` command
  [INSTALL]: {
    run: true,
    stdoutMatch: /^installed \/.*\/\.local\/bin\/wmcp \(wmcp \d+\.\d+\.\d+, Deno 2\.9\.6 at /m,
    check: async (_r, ctx) => {
      const launcher = await Deno.readTextFile(`${ctx.home}/.local/bin/wmcp`);
      assert.match(launcher, /^#!\/bin\/sh\n# wmcp launcher written by src\/cli\/install\.ts\n/);
      assert.ok(launcher.includes(`${ctx.clone}/cli.ts`), "the launcher runs the clone's cli.ts");
      assert.ok(await exists(`${ctx.home}/.local/share/wmcp/runtime/deno-2.9.6`), "runtime copied");
    },
  },
  "wmcp --version": {
    run: true,
    check: (r, ctx) => assert.equal(r.stdout, `${ctx.version}\n`),
  },
  "wmcp op read_file --help": {
    run: true,
    stdoutMatch: /^Usage: wmcp op read_file [\s\S]*\bendLine\b/,
  },
  "wmcp op read_file --root ~/project path=README.md endLine:=5": {
    run: true,
    check: (r) => {
      const out: Json = json(r.stdout);
      assert.equal(out.path, "README.md");
      assert.equal(out.content, PROJECT_README.split("\n").slice(0, 5).join("\n") + "\n");
      assert.equal(out.totalLines, 6);
    },
  },
  "wmcp tools list --root ~/project": {
    run: true,
    check: (r) => {
      const out: Json = json(r.stdout);
      assert.equal(out.operation, "tools/list");
      const names = out.pages.flatMap((p: Json) => p.mcpResult.tools.map((t: Json) => t.name));
      assert.ok(names.includes("read_file") && names.includes("search_text"), names.join());
      assert.ok(!names.includes("write_file"), "read-only: no write tools");
    },
  },
  "wmcp config print --host claude-code --root ~/project": {
    run: true,
    stderrMatch: /serves \/.*\/project read-only/,
    check: (r, ctx) => {
      const entry: Json = json(r.stdout).mcpServers.wmcp;
      assert.equal(entry.type, "stdio");
      assert.equal(entry.command, `${ctx.home}/.local/share/wmcp/runtime/deno-2.9.6`);
      assert.ok(entry.args.includes(`${ctx.clone}/serve.ts`), entry.args.join(" "));
      assert.ok(entry.args.includes(`${ctx.home}/project`), entry.args.join(" "));
      assert.ok(!entry.args.includes("--write"), entry.args.join(" "));
    },
  },

  // README.md, shell completion (written under the temporary HOME)
  "mkdir -p ~/.local/share/bash-completion/completions && wmcp completion bash > ~/.local/share/bash-completion/completions/wmcp":
    {
      run: true,
      check: async (_r, ctx) => {
        const script = await Deno.readTextFile(
          `${ctx.home}/.local/share/bash-completion/completions/wmcp`,
        );
        assert.match(script, /complete -F _wmcp wmcp/);
      },
    },
  "mkdir -p ~/.zfunc && wmcp completion zsh > ~/.zfunc/_wmcp": {
    run: true,
    check: async (_r, ctx) => {
      assert.match(await Deno.readTextFile(`${ctx.home}/.zfunc/_wmcp`), /^#compdef wmcp/);
    },
  },
  "mkdir -p ~/.config/fish/completions && wmcp completion fish > ~/.config/fish/completions/wmcp.fish":
    {
      run: true,
      check: async (_r, ctx) => {
        const script = await Deno.readTextFile(`${ctx.home}/.config/fish/completions/wmcp.fish`);
        assert.match(script, /complete -c wmcp/);
      },
    },

  // README.md, the npm package
  "npx -y deno@2.9.6 task -q pack:npm": {
    run: true,
    stdoutMatch: /\/dist\/wmcp-wmcp-\d+\.\d+\.\d+\.tgz\n$/,
  },
  "npm install -g ./dist/wmcp-wmcp-0.1.0.tgz": {
    skip:
      "installs into npm's global prefix, outside the temporary HOME; tests/npm/ installs the " +
      "same tarball into an empty prefix and drives it",
  },
  "npx -y --package=./dist/wmcp-wmcp-0.1.0.tgz wmcp --version": {
    run: true,
    check: (r, ctx) => assert.equal(r.stdout, `${ctx.version}\n`),
  },

  // README.md, CLI fallback
  "wmcp op list": {
    run: true,
    check: (r) => {
      const names = json(r.stdout).operations.map((o: Json) => o.name);
      assert.ok(names.includes("read_file") && names.includes("workspace_info"), names.join());
    },
  },
  [`wmcp op read_file --arguments '{"path":"README.md","endLine":5}'`]: {
    run: true,
    check: (r) => {
      const out: Json = json(r.stdout); // the clone's README.md: the command runs in the clone
      assert.equal(out.endLine, 5);
      assert.match(out.content, /^# wmcp\n/);
    },
  },
  [`wmcp op search_text --root ~/project --arguments '{"query":"TODO","contextLines":1}'`]: {
    run: true,
    check: (r) => {
      const out: Json = json(r.stdout);
      assert.deepEqual(out.matches, [{
        path: "README.md",
        line: 4,
        column: 1,
        text: "TODO: line 4",
        before: ["line 3"],
        after: ["line 5"],
      }]);
    },
  },

  // README.md, MCP tool client
  "wmcp tools list --output json": {
    run: true,
    check: (r) => {
      const names = json(r.stdout).tools.map((t: Json) => t.name);
      assert.ok(names.includes("list_directory") && names.includes("read_file"), names.join());
    },
  },
  "wmcp server-info --endpoint http://127.0.0.1:3000/mcp": {
    run: true,
    during: START,
    check: (r, ctx) => {
      const out: Json = json(r.stdout);
      assert.equal(out.serverInfo.name, "wmcp");
      const dir = ctx.clone.split("/").pop();
      assert.ok(out.instructions.includes(`"${dir}" (read-only)`), out.instructions);
    },
  },
  [`wmcp tools call search_text --arguments '{"query":"TODO"}' --endpoint http://127.0.0.1:3000/mcp`]:
    {
      run: true,
      during: START,
      check: (r) => {
        const res: Json = json(r.stdout).mcpResult;
        assert.notEqual(res.isError, true, r.stdout);
        assert.ok(res.structuredContent.matches.length > 0, "the clone has TODOs to find");
        assert.ok(
          res.structuredContent.matches.every((m: Json) => /TODO/.test(m.text)),
          r.stdout.slice(0, 500),
        );
      },
    },
  "wmcp tools run calls.jsonl --config mcp.json --server everything --keep-going": {
    run: true,
    // A config entry named "everything" for wmcp's own stdio server (the real server-everything
    // needs an npm install), and three calls whose second fails: --keep-going runs the third.
    setup: async (ctx) => {
      const config = {
        mcpServers: { everything: { command: "wmcp", args: ["serve", "stdio", "--root", "."] } },
      };
      const calls = [
        { name: "read_file", arguments: { path: "README.md", endLine: 2 } },
        { name: "read_file", arguments: { path: "no-such-file.md" } },
        { name: "list_directory", arguments: { path: "docs" } },
      ];
      await Deno.writeTextFile(`${ctx.clone}/mcp.json`, JSON.stringify(config));
      await Deno.writeTextFile(
        `${ctx.clone}/calls.jsonl`,
        calls.map((c) => JSON.stringify(c) + "\n").join(""),
      );
      return async () => {
        await Deno.remove(`${ctx.clone}/mcp.json`);
        await Deno.remove(`${ctx.clone}/calls.jsonl`);
      };
    },
    expect: 1, // the worst exit code of the calls: the tool error of the second
    check: (r) => {
      const lines = r.stdout.trim().split("\n").map(json);
      assert.deepEqual(lines.map((l: Json) => l.index), [0, 1, 2], r.stdout.slice(0, 500));
      assert.match(lines[0].mcpResult.structuredContent.content, /^# wmcp\n/);
      assert.equal(lines[1].mcpResult.isError, true);
      assert.equal(lines[1].mcpResult._meta["wmcp/error"].code, "NOT_FOUND");
      assert.ok(JSON.stringify(lines[2].mcpResult.structuredContent).includes("deployment.md"));
    },
  },
  // README.md, Development: "npx -y deno@2.9.6 task -q test" and "test:peers", above.
};

/**
 * The commands of the development and deployment docs (bench/README.md, README's Library and
 * Development, RUNTIME.md's adapters, docs/deployment.md): strict like FOUND.
 */
const PREFIXED: Record<string, Entry> = {
  // bench/README.md's block (bare `deno task -q bench ...` today)
  "npx -y deno@2.9.6 task -q bench": { skip: "the benchmark: 3.5 to 6 minutes on 2 cores" },
  "npx -y deno@2.9.6 task -q bench --rows http,rss": { skip: "benchmark rows: minutes" },
  "npx -y deno@2.9.6 task -q bench --quick": {
    skip: "a benchmark smoke run: builds a 24,000-file tree, npm ci of the anchors, wrk runs",
  },
  "npx -y deno@2.9.6 task -q bench --reps 3": { skip: "the benchmark: minutes" },
  "npx -y deno@2.9.6 task -q bench --profile --rows http,stdio,cold,search": {
    skip: "benchmark rows with profiles: minutes",
  },

  // README.md's Library, Development and Performance prose (inline today)
  "npx -y deno@2.9.6 task -q examples": {
    run: true,
    stdoutMatch: /\{ path: "README\.md", type: "file" \}[\s\S]*tools over stdio: workspace_info/,
  },
  "npx -y deno@2.9.6 task -q check": {
    skip:
      "fmt, lint and type-check of the whole repository (~40 s here); CI runs it as its own step",
  },
  "npx -y deno@2.9.6 task -q compile": {
    run: true,
    expect: [0, 3], // 3: dl.deno.land cannot be reached, in one line
    check: async (r, ctx) => {
      if (r.code === 3) assert.match(r.stderr, /^wmcp compile: cannot download Deno's runtime /);
      else assert.ok(await exists(`${ctx.clone}/dist/wmcp`), "dist/wmcp built");
    },
  },
  "npx -y deno@2.9.6 run --allow-read=. main.ts": {
    run: true,
    // main.ts is the README's library program (its ts block), saved in the clone.
    setup: async (ctx) => {
      const readme = await Deno.readTextFile(`${ctx.clone}/README.md`);
      const program = /^```ts\n([\s\S]*?)^```$/m.exec(readme)?.[1];
      assert.ok(program, "README.md has a ts block (the library program)");
      await Deno.writeTextFile(`${ctx.clone}/main.ts`, program);
      return () => Deno.remove(`${ctx.clone}/main.ts`);
    },
    stdoutMatch: /\{ path: "README\.md", type: "file" \}/,
  },
  "npx -y deno@2.9.6 task -q install --uninstall": {
    run: true,
    last: true,
    stdoutMatch: /^removed \/.*\/\.local\/bin\/wmcp\nremoved \/.*\/runtime\/deno-2\.9\.6$/m,
    check: async (_r, ctx) => {
      assert.ok(!await exists(`${ctx.home}/.local/bin/wmcp`), "the launcher is removed");
    },
  },

  // RUNTIME.md's indented block (Node and Bun)
  "npx -y deno@2.9.6 task -q build:adapters": {
    run: true,
    check: async (_r, ctx) => {
      for (const f of ["node.js", "bun.js", "engine_worker.js"]) {
        assert.ok(await exists(`${ctx.clone}/dist/${f}`), `dist/${f} built`);
      }
    },
  },

  // docs/deployment.md's indented block and prose
  "npx -y deno@2.9.6 run deploy/nginx/config.ts a=127.0.0.1:3001 b=127.0.0.1:3002 c=127.0.0.1:3003 --server-name mcp.example.com --listen '443 ssl' > /etc/nginx/conf.d/wmcp.conf":
    {
      run: true,
      instead: {
        command:
          "npx -y deno@2.9.6 run deploy/nginx/config.ts a=127.0.0.1:3001 b=127.0.0.1:3002 c=127.0.0.1:3003 --server-name mcp.example.com --listen '443 ssl' > wmcp.conf",
        why: "it writes /etc/nginx/conf.d/wmcp.conf, outside the temporary HOME: written to the " +
          "clone instead",
      },
      check: async (_r, ctx) => {
        const conf = await Deno.readTextFile(`${ctx.clone}/wmcp.conf`);
        assert.match(conf, /server_name mcp\.example\.com;/);
        assert.match(conf, /listen 443 ssl;/);
        assert.match(conf, /127\.0\.0\.1:3003/);
      },
    },
  "npx -y deno@2.9.6 run deploy/nginx/config.ts --help": {
    run: true,
    stdoutMatch: /^Usage: deno run deploy\/nginx\/config\.ts /,
  },
};

/** Every classified command. */
export const TABLE: Record<string, Entry> = { ...FOUND, ...PREFIXED };

// ---------------------------------------------------------------------------------------------
// Extraction

/** The line with a trailing shell comment removed (a `#` that starts a word, outside quotes). */
export function stripComment(line: string): string {
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = null;
    } else if (quote === '"') {
      if (c === "\\") i++;
      else if (c === '"') quote = null;
    } else if (c === "\\") i++;
    else if (c === "'" || c === '"') quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i).trimEnd();
  }
  return line.trimEnd();
}

/** The command lines of one Markdown text's sh/bash/shell/console fenced blocks. */
export function extractCommands(file: string, text: string): DocCommand[] {
  const out: DocCommand[] = [];
  const lines = text.split("\n");
  let fence: { marker: string; indent: number; commands: boolean; console: boolean } | null = null;
  let pending: { line: number; text: string } | null = null;
  for (const [i, raw] of lines.entries()) {
    if (fence === null) {
      const open = /^( *)(`{3,}|~{3,})\s*([\w-]*)/.exec(raw);
      if (open) {
        const tag = open[3].toLowerCase();
        fence = {
          marker: open[2],
          indent: open[1].length,
          commands: COMMAND_TAGS.has(tag),
          console: tag === "console",
        };
      }
      continue;
    }
    const close = /^ *(`{3,}|~{3,})\s*$/.exec(raw);
    if (close && close[1][0] === fence.marker[0] && close[1].length >= fence.marker.length) {
      if (pending) out.push({ file, line: pending.line, text: pending.text });
      pending = null;
      fence = null;
      continue;
    }
    if (!fence.commands) continue;
    let line = raw.slice(Math.min(fence.indent, raw.length - raw.trimStart().length));
    if (pending) {
      if (fence.console) line = line.replace(/^> /, "");
    } else if (fence.console) {
      const prompt = /^\s*\$ (.*)$/.exec(line);
      if (!prompt) continue; // output
      line = prompt[1];
    }
    const trimmed = line.trim();
    if (!pending && (trimmed === "" || trimmed.startsWith("#"))) continue;
    const code = stripComment(trimmed);
    const continued = /(^|[^\\])\\$/.test(code);
    const part = continued ? code.slice(0, -1).trimEnd() : code;
    pending = pending
      ? { line: pending.line, text: `${pending.text} ${part}`.trim() }
      : { line: i + 1, text: part };
    if (!continued) {
      if (pending.text !== "") out.push({ file, line: pending.line, text: pending.text });
      pending = null;
    }
  }
  return out;
}

/** The docs' files, repository-relative, in a fixed order. */
async function docFiles(): Promise<string[]> {
  const files = [...DOC_FILES];
  const walk = async (dir: string): Promise<string[]> => {
    const found: string[] = [];
    for await (const e of Deno.readDir(`${REPO}/${dir}`)) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory) found.push(...await walk(p));
      else if (e.isFile && p.endsWith(".md")) found.push(p);
    }
    return found;
  };
  for (const d of DOC_DIRS) files.push(...(await walk(d)).sort());
  return files;
}

/** Every command line of the docs, in file and line order. */
async function docCommands(): Promise<DocCommand[]> {
  const out: DocCommand[] = [];
  for (const f of await docFiles()) {
    out.push(...extractCommands(f, await Deno.readTextFile(`${REPO}/${f}`)));
  }
  return out;
}

/** Whether a command runs a bare `deno` (after any VAR=value assignments). */
export function isBareDeno(text: string): boolean {
  return /^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*deno(?:\s|$)/.test(text);
}

const where = (c: DocCommand) => `${c.file}:${c.line}`;

// ---------------------------------------------------------------------------------------------
// Tests

Deno.test("extraction: comments, quotes, continuations, console prompts", () => {
  assert.equal(stripComment(`a '#x' "b # c" d\\#e # note`), `a '#x' "b # c" d\\#e`);
  assert.equal(stripComment("curl http://x/#frag"), "curl http://x/#frag");
  assert.equal(stripComment("echo ${#v} # n"), "echo ${#v}");
  const md = [
    "```sh",
    "# a comment",
    "",
    "one 'two # three'   # four",
    "five \\",
    "  six \\",
    "  seven",
    "```",
    "```json",
    '{"not": "a command"}',
    "```",
    "```console",
    "$ eight",
    "output",
    "```",
    "- item:",
    "  ```bash",
    "  nine",
    "  ```",
  ].join("\n");
  assert.deepEqual(extractCommands("F.md", md), [
    { file: "F.md", line: 4, text: "one 'two # three'" },
    { file: "F.md", line: 5, text: "five six seven" },
    { file: "F.md", line: 13, text: "eight" },
    { file: "F.md", line: 18, text: "nine" },
  ]);
  assert.ok(isBareDeno("deno task -q bench") && isBareDeno("A=1 deno run x.ts"));
  assert.ok(!isBareDeno("npx -y deno@2.9.6 task -q test") && !isBareDeno("denoify"));
});

Deno.test("every command line of the docs is classified, and every table entry is in the docs", async () => {
  const commands = await docCommands();
  assert.ok(commands.length > 0, "the docs have command blocks");
  const problems: string[] = [];
  for (const c of commands) {
    if (isBareDeno(c.text)) problems.push(`${where(c)}: \`${c.text}\` ${PREFIX_MESSAGE}`);
    else if (!(c.text in TABLE)) {
      problems.push(
        `${where(c)}: \`${c.text}\` is not classified: add it to TABLE in ` +
          "tests/docs/doc_commands_test.ts (run: true with its checks, or skip: reason)",
      );
    }
  }
  const texts = new Set(commands.map((c) => c.text));
  for (const [key, entry] of Object.entries(TABLE)) {
    if (!texts.has(key)) {
      problems.push(
        key in FOUND
          ? `stale: \`${key}\` (FOUND) is in no command block of the docs any more: ` +
            "remove or update its entry"
          : `stale: \`${key}\` (PREFIXED) is in no command block of the docs yet: move it to ` +
            "FOUND once the docs have it, or drop it",
      );
    }
    if (isBareDeno(key)) problems.push(`table: \`${key}\` ${PREFIX_MESSAGE}`);
    if ("run" in entry) {
      if (!entry.stdoutMatch && !entry.stderrMatch && !entry.check) {
        problems.push(`table: \`${key}\` runs without a check of what it prints`);
      }
      if (entry.during !== undefined && !(TABLE[entry.during] as Run | undefined)?.server) {
        problems.push(
          `table: \`${key}\` runs during \`${entry.during}\`, which is no server entry`,
        );
      }
    } else if (entry.skip.trim() === "") problems.push(`table: \`${key}\` skips without a reason`);
  }
  assert.deepEqual(problems, [], `the docs' commands:\n${problems.join("\n")}\n`);
});

// ---------------------------------------------------------------------------------------------
// Running

const decoder = new TextDecoder();

/** The first directory of PATH holding an executable `name`, or null. */
function which(name: string, path: string): string | null {
  for (const dir of path.split(":")) {
    if (dir === "") continue;
    try {
      const st = Deno.statSync(`${dir}/${name}`);
      if (st.isFile && ((st.mode ?? 0o111) & 0o111) !== 0) return `${dir}/${name}`;
    } catch { /* not here */ }
  }
  return null;
}

/** Kills a process group, quietly when it is gone. */
function killGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch { /* the group has no process left */ }
}

/** Collects a stream into a string, calling `onText` with everything read so far. */
async function collect(stream: ReadableStream<Uint8Array>, onText?: (text: string) => void) {
  let text = "";
  const dec = new TextDecoder();
  for await (const chunk of stream) {
    text += dec.decode(chunk, { stream: true });
    onText?.(text);
  }
  return text + dec.decode();
}

interface Env {
  setsid: string;
  cwd: string;
  vars: Record<string, string>;
  pathWithoutDeno: string;
  bin: string;
}

/** Spawns `sh -c CMD` as the leader of its own process group. */
function spawn(cmd: string, env: Env, withBin: boolean): Deno.ChildProcess {
  return new Deno.Command(env.setsid, {
    args: ["sh", "-c", cmd],
    cwd: env.cwd,
    clearEnv: true,
    env: { ...env.vars, PATH: withBin ? `${env.bin}:${env.pathWithoutDeno}` : env.pathWithoutDeno },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Runs a command to its end (or TIMEOUT_MS), then sweeps its group. */
async function runToEnd(cmd: string, env: Env, withBin: boolean): Promise<Result> {
  const child = spawn(cmd, env, withBin);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid, "SIGKILL");
  }, TIMEOUT_MS);
  try {
    const out = await child.output();
    return {
      code: out.code,
      signal: out.signal,
      stdout: decoder.decode(out.stdout),
      stderr: decoder.decode(out.stderr),
      timedOut,
    };
  } finally {
    clearTimeout(timer);
    killGroup(child.pid, "SIGKILL");
  }
}

/** A started server: waits for its ready line; `stop` signals its group and gives its result. */
async function startServer(cmd: string, env: Env, ready: RegExp) {
  const child = spawn(cmd, env, false);
  let signalReady: () => void = () => {};
  const isReady = new Promise<void>((resolve) => (signalReady = resolve));
  const stdout = collect(child.stdout, (t) => ready.test(t) && signalReady());
  const stderr = collect(child.stderr);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    isReady.then(() => "ready" as const),
    child.status.then(() => "exited" as const),
    new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
  const stop = async (signal: Deno.Signal): Promise<Result> => {
    killGroup(child.pid, signal);
    const kill = setTimeout(() => killGroup(child.pid, "SIGKILL"), 30_000);
    const status = await child.status;
    const result = {
      code: status.code,
      signal: status.signal,
      stdout: await stdout,
      stderr: await stderr,
      timedOut: outcome === "timeout",
    };
    clearTimeout(kill);
    killGroup(child.pid, "SIGKILL");
    return result;
  };
  return { outcome, stop };
}

/** Whether nothing listens on 127.0.0.1:port. */
function portFree(port: number): boolean {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return true;
  } catch {
    return false;
  }
}

/** What is wrong with a result, by the entry's expectations; [] when nothing. */
async function verdict(entry: Run, r: Result, ctx: Ctx): Promise<string[]> {
  const problems: string[] = [];
  const codes = entry.expect === undefined ? [0] : [entry.expect].flat();
  if (r.timedOut) problems.push(`killed after ${TIMEOUT_MS / 1000} s`);
  if (!codes.includes(r.code)) {
    problems.push(
      `exit ${r.code}${r.signal ? ` (${r.signal})` : ""}, expected ${codes.join(" or ")}`,
    );
  }
  if (entry.stdoutMatch && !entry.stdoutMatch.test(r.stdout)) {
    problems.push(`stdout does not match ${entry.stdoutMatch}`);
  }
  if (entry.stderrMatch && !entry.stderrMatch.test(r.stderr)) {
    problems.push(`stderr does not match ${entry.stderrMatch}`);
  }
  if (problems.length === 0 && entry.check) {
    try {
      await entry.check(r, ctx);
    } catch (err) {
      problems.push(`check: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (problems.length > 0) {
    const tail = (s: string) => s.length > 2000 ? `...${s.slice(-2000)}` : s;
    problems.push(`stdout:\n${tail(r.stdout)}\nstderr:\n${tail(r.stderr)}`);
  }
  return problems;
}

/** npm's cache for the real HOME (kept when HOME moves, so npx does not download Deno again). */
async function npmCache(): Promise<string> {
  const set = Deno.env.get("npm_config_cache");
  if (set) return set;
  const out = await new Deno.Command("npm", {
    args: ["config", "get", "cache"],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dir = decoder.decode(out.stdout).trim();
  assert.ok(out.success && dir !== "", `npm config get cache: ${decoder.decode(out.stderr)}`);
  return dir;
}

/** The environment of a shell on a fresh machine: the current one without Deno and this HOME. */
async function freshEnv(home: string, clone: string): Promise<Env> {
  const path = Deno.env.get("PATH") ?? "";
  const pathWithoutDeno = path.split(":").filter((d) => d !== "" && which("deno", d) === null)
    .join(":");
  for (const tool of ["sh", "git", "node", "npx"]) {
    assert.ok(which(tool, pathWithoutDeno), `${tool} is on PATH without Deno's directories`);
  }
  const setsid = which("setsid", path);
  assert.ok(setsid, "setsid (util-linux) is on PATH");
  const vars = Deno.env.toObject();
  for (const k of Object.keys(vars)) {
    // What points into the real HOME or a running task, and wmcp's own settings.
    if (
      /^(XDG_\w+|DENO_DIR|DENO_INSTALL_ROOT|INIT_CWD|WMCP_\w+|npm_lifecycle_\w+|npm_package_\w+)$/
        .test(k) || ["npm_command", "npm_execpath", "npm_node_execpath", "PATH"].includes(k)
    ) delete vars[k];
  }
  Object.assign(vars, {
    HOME: home,
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
    npm_config_cache: await npmCache(),
  });
  return { setsid, cwd: clone, vars, pathWithoutDeno, bin: `${home}/.local/bin` };
}

/** One step of the run: a command (or a server with the commands run while it is up). */
interface Step {
  key: string;
  at: DocCommand | null;
  during: { key: string; at: DocCommand | null }[];
}

/** The steps for these commands (each key once, first place), servers with their dependents. */
function plan(commands: { key: string; at: DocCommand | null }[]): Step[] {
  const steps: Step[] = [];
  const last: Step[] = [];
  const seen = new Set<string>();
  const serverStep = new Map<string, Step>();
  for (const c of commands) {
    if (seen.has(c.key)) continue;
    seen.add(c.key);
    const entry = TABLE[c.key] as Run;
    if (entry.during !== undefined) {
      let s = serverStep.get(entry.during);
      if (!s) {
        s = { key: entry.during, at: null, during: [] };
        serverStep.set(entry.during, s);
        steps.push(s);
        seen.add(entry.during);
      }
      s.during.push(c);
      continue;
    }
    const existing = serverStep.get(c.key);
    if (existing) {
      existing.at = c.at;
      continue;
    }
    const s: Step = { key: c.key, at: c.at, during: [] };
    if (entry.server) serverStep.set(c.key, s);
    (entry.last ? last : steps).push(s);
  }
  return [...steps, ...last];
}

Deno.test({
  name: "the docs' runnable commands run as typed in a fresh clone, with no deno on PATH",
  fn: async () => {
    const all = Deno.env.get("WMCP_DOC_COMMANDS_ALL") === "1";
    const commands = (await docCommands()).filter((c) => "run" in (TABLE[c.text] ?? {}));
    const todo = commands.map((c) => ({ key: c.text, at: c as DocCommand | null }));
    if (all) {
      for (const [key, e] of Object.entries(TABLE)) {
        if ("run" in e && !todo.some((t) => t.key === key)) todo.push({ key, at: null });
      }
    }
    const tmp = await Deno.makeTempDir({ prefix: "wmcp-doc-commands-" });
    const home = `${tmp}/home`;
    const clone = `${tmp}/wmcp`;
    try {
      await Deno.mkdir(`${home}/project`, { recursive: true });
      await Deno.writeTextFile(`${home}/project/README.md`, PROJECT_README);
      const git = await new Deno.Command("git", {
        args: ["clone", "-q", REPO, clone],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.ok(git.success, `git clone: ${decoder.decode(git.stderr)}`);
      const version = JSON.parse(await Deno.readTextFile(`${clone}/deno.json`)).version;
      const ctx: Ctx = { home, clone, version };
      const env = await freshEnv(home, clone);

      const failures: string[] = [];
      const label = (key: string, at: DocCommand | null) =>
        `${at ? where(at) : "(not in the docs)"} \`${key}\``;
      let installed = false;
      const noDeno = await runToEnd("command -v deno", env, false);
      assert.notEqual(noDeno.code, 0, `command -v deno finds ${noDeno.stdout}`);
      const ensureInstalled = async () => {
        if (installed) return;
        installed = true;
        const t0 = performance.now();
        const r = await runToEnd(INSTALL, env, false);
        const problems = await verdict(TABLE[INSTALL] as Run, r, ctx);
        const s = ((performance.now() - t0) / 1000).toFixed(1);
        console.log(`${problems.length ? "FAIL" : "ok"}  \`${INSTALL}\` before wmcp (${s} s)`);
        if (problems.length > 0) failures.push(`install (before wmcp): ${problems.join("\n")}`);
        // The installed command is there, and still no deno on that PATH.
        const check = await runToEnd("command -v wmcp; command -v deno", env, true);
        assert.equal(check.stdout, `${env.bin}/wmcp\n`, "wmcp resolves, deno does not");
        assert.notEqual(check.code, 0, "command -v deno fails in the test's environment");
      };
      // A `wmcp` command word: first, or after `&&`, `||`, `;` or `|`.
      const needsBin = (key: string) => /(^|&&|\|\||;|\|)\s*wmcp(\s|$)/.test(runText(key));
      const runText = (key: string) => (TABLE[key] as Run).instead?.command ?? key;

      const runOne = async (key: string, at: DocCommand | null) => {
        const entry = TABLE[key] as Run;
        if (needsBin(key)) await ensureInstalled();
        const cleanup = await entry.setup?.(ctx);
        const t0 = performance.now();
        const r = await runToEnd(runText(key), env, needsBin(key));
        if (key === INSTALL) installed = true;
        const problems = await verdict(entry, r, ctx);
        await cleanup?.();
        report(key, at, r, problems, t0);
      };
      const report = (
        key: string,
        at: DocCommand | null,
        r: Result,
        problems: string[],
        t0: number,
      ) => {
        const instead = (TABLE[key] as Run).instead;
        const s = ((performance.now() - t0) / 1000).toFixed(1);
        console.log(
          `${problems.length ? "FAIL" : "ok"}  ${label(key, at)} exit ${r.code} (${s} s)` +
            (instead ? ` [ran \`${instead.command}\`: ${instead.why}]` : ""),
        );
        if (problems.length > 0) failures.push(`${label(key, at)}:\n  ${problems.join("\n  ")}`);
      };

      for (const step of plan(todo)) {
        const entry = TABLE[step.key] as Run;
        if (!entry.server) {
          await runOne(step.key, step.at);
          continue;
        }
        if (step.during.some((d) => needsBin(d.key))) await ensureInstalled();
        if (entry.server.port !== undefined && !portFree(entry.server.port)) {
          failures.push(
            `${label(step.key, step.at)}: 127.0.0.1:${entry.server.port} is in use, and the ` +
              "docs' commands name that port: stop what listens there",
          );
          continue;
        }
        const cleanup = await entry.setup?.(ctx);
        const t0 = performance.now();
        const server = await startServer(runText(step.key), env, entry.server.ready);
        if (server.outcome === "ready") {
          console.log(`up  ${label(step.key, step.at)}: ready`);
          for (const d of step.during) await runOne(d.key, d.at);
        }
        const r = await server.stop(entry.server.stop);
        const problems = server.outcome === "ready"
          ? await verdict(entry, r, ctx)
          : [`no ready line (${server.outcome}): ${r.stderr.slice(-2000)}`];
        await cleanup?.();
        report(step.key, step.at, r, problems, t0);
      }
      for (const c of (await docCommands()).filter((c) => "skip" in (TABLE[c.text] ?? {}))) {
        console.log(`skip ${label(c.text, c)}: ${(TABLE[c.text] as Skip).skip}`);
      }
      assert.deepEqual(failures, [], `commands that do not run as typed:\n${failures.join("\n")}`);
    } finally {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
  },
});
