/**
 * Output for people: on a real terminal (a pty from `script`, a tmux pane) `op` and the client
 * show file text as text, grep-style hits with the match highlighted, a tool table, coloured
 * diffs and a progress line on stderr; NO_COLOR, TERM=dumb and FORCE_COLOR decide colour; piped
 * output is the machine format byte for byte, with nothing on stderr but the error line.
 */
import assert from "node:assert/strict";
import { ENGINE_READ_PATH } from "../../src/workspace/engine/read_path.ts";
import { makeTree, openWorkspace, run, withTempDir } from "../workspace/_helpers.ts";
import { palette, useColor } from "../../src/cli/colors.ts";
import {
  accessOf,
  diffLine,
  matchLength,
  prettyResult,
  serverInfoText,
  signatureOf,
} from "../../src/cli/pretty.ts";
import { toolTable } from "../../src/cli/table.ts";
import { cliArgv, runCli, runCliOnPty, shellQuote } from "../_support/cli.ts";
import { LONG_SEARCH, makeLongSearchTree, removeDir } from "../_support/fs.ts";
/** Any SGR (colour/style) escape sequence. */
const SGR = new RegExp("\x1b\\[[0-9;]*m");
const SGR_ALL = new RegExp(SGR.source, "g");
const ERASE = "\r\x1b[2K";
const DIM = "\x1b[2m";
const strip = (s: string) => s.replace(SGR_ALL, "");

const TREE = {
  "src/a.ts": "export const a = 1;\n// TODO one\n",
  "src/b.ts": "let x = 2; // todo: two\n",
  "docs/readme.md": "# Title\n\nTODO three\n",
};

const COLOR_ENV = ["NO_COLOR", "FORCE_COLOR", "TERM"];

/** One CLI run: the Deno flags and the CLI's arguments (tests/_support/cli.ts builds the argv). */
interface Cli {
  flags: string[];
  args: string[];
}

/** cli.ts with read (and write) on dir, env only where asked. */
function denoArgv(dir: string, args: string[], o: { write?: boolean; env?: string[] } = {}): Cli {
  const flags = [
    "-q",
    "--no-prompt",
    `--allow-read=${dir},${ENGINE_READ_PATH}`,
    ...(o.write ? [`--allow-write=${dir}`] : []),
    ...(o.env ? [`--allow-env=${o.env.join(",")}`] : []),
  ];
  return { flags, args };
}

/** The client commands: read on dir, env and run (the bundled server). */
function clientArgv(dir: string, args: string[]): Cli {
  const flags = [
    "-q",
    "--no-prompt",
    `--allow-read=${dir},${ENGINE_READ_PATH}`,
    "--allow-env",
    "--allow-run",
  ];
  return { flags, args };
}

/** The environment of a child: ours without the colour variables, plus exactly `env`. */
function childEnv(env: Record<string, string>): Record<string, string> {
  const inherited = Deno.env.toObject();
  for (const k of ["NO_COLOR", "FORCE_COLOR"]) delete inherited[k];
  return { ...inherited, TERM: "xterm-256color", ...env };
}

/** Runs the CLI on a pseudo-terminal (`script`): stdout and stderr are both the terminal. */
async function onPty(cli: Cli, env: Record<string, string> = {}): Promise<string> {
  const run = await runCliOnPty(cli.flags, cli.args, { env: childEnv(env), clearEnv: true });
  return run.screen;
}

/** Runs the CLI with stdout and stderr piped. */
async function piped(cli: Cli, env: Record<string, string> = {}) {
  const { code, stdout, stderr } = await runCli(cli.flags, cli.args, {
    env: childEnv(env),
    clearEnv: true,
  });
  return { code, stdout, stderr };
}

/** Runs a shell command in a detached tmux pane of `columns` columns; returns the pane with escapes. */
async function inTmux(dir: string, command: string, columns: number): Promise<string> {
  const socket = `wmcp-pretty-${Deno.pid}-${columns}`;
  const done = `${dir}/.tmux-done`;
  const tmux = (...args: string[]) =>
    new Deno.Command("tmux", { args: ["-L", socket, ...args], env: childEnv({}), clearEnv: true })
      .output();
  const started = await tmux(
    "new-session",
    "-d",
    "-x",
    String(columns),
    "-y",
    "50",
    `${command}; echo $? > ${shellQuote(done)}; sleep 120`,
  );
  assert.equal(started.code, 0, new TextDecoder().decode(started.stderr));
  try {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (await Deno.stat(done).then(() => true, () => false)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal((await Deno.readTextFile(done)).trim(), "0", "the command succeeded");
    const pane = await tmux("capture-pane", "-p", "-e");
    return new TextDecoder().decode(pane.stdout);
  } finally {
    await tmux("kill-server");
  }
}

Deno.test("colour: NO_COLOR wins, FORCE_COLOR forces (0/false never), TERM=dumb off, else the terminal", () => {
  assert.equal(useColor(true, {}), true);
  assert.equal(useColor(false, {}), false);
  assert.equal(useColor(true, { NO_COLOR: "1" }), false);
  assert.equal(useColor(true, { NO_COLOR: "" }), true, "an empty NO_COLOR is unset");
  assert.equal(useColor(false, { FORCE_COLOR: "1" }), true);
  assert.equal(useColor(true, { FORCE_COLOR: "0" }), false);
  assert.equal(useColor(true, { FORCE_COLOR: "false" }), false);
  assert.equal(useColor(false, { FORCE_COLOR: "1", NO_COLOR: "1" }), false);
  assert.equal(useColor(true, { TERM: "dumb" }), false);
  assert.equal(useColor(false, { TERM: "dumb", FORCE_COLOR: "1" }), true);
  assert.equal(palette(false).red("x"), "x");
  assert.equal(useColor(true, { NO_COLOR: "(not readable)" }), false);
  assert.equal(palette(true).red("x"), "\x1b[31mx\x1b[39m");
});

Deno.test("renderers: highlight length, signature, access, diff lines, table wrapping", () => {
  assert.equal(matchLength({ query: "TODO" }, "// TODO one", 3), 4);
  assert.equal(matchLength({ query: "todo", caseSensitive: false }, "// TODO one", 3), 4);
  assert.equal(matchLength({ query: "todo" }, "// TODO one", 3), 0, "case-sensitive miss");
  assert.equal(matchLength({ query: "T.D+", regex: true }, "// TODDD x", 3), 5);
  assert.equal(matchLength({ query: "(", regex: true }, "(", 0), 0, "a bad regex: no highlight");
  assert.equal(
    signatureOf({ properties: { a: {}, b: {}, c: {} }, required: ["c"] }),
    "c, [a], [b]",
  );
  assert.equal(accessOf({ name: "t", annotations: { readOnlyHint: true } }), "read-only");
  assert.equal(accessOf({ name: "t", annotations: { destructiveHint: false } }), "writes");
  assert.equal(accessOf({ name: "t" }), "destructive", "MCP's default");
  const c = palette(true);
  assert.equal(diffLine("+x", c), "\x1b[32m+x\x1b[39m");
  assert.equal(diffLine("-x", c), "\x1b[31m-x\x1b[39m");
  assert.equal(diffLine("@@ -1 +1 @@", c), "\x1b[36m@@ -1 +1 @@\x1b[39m");
  assert.equal(diffLine(" x", c), " x");
  assert.equal(
    serverInfoText({
      era: "modern",
      protocolVersion: "2026-07-28",
      serverInfo: { name: "wmcp", version: "0.1.0" },
      capabilities: { tools: {}, prompts: {} },
      instructions: "Use \x1b[31m tools",
    }, palette(false)),
    "server: wmcp 0.1.0\nprotocol: 2026-07-28 (modern)\ncapabilities: tools, prompts\n" +
      "instructions: Use \\u001b[31m tools\n",
  );
  const many = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`argument${i}`, {}]));
  const table = toolTable([
    { name: "short", annotations: { readOnlyHint: true }, inputSchema: { properties: many } },
  ], { palette: palette(false), columns: 60 });
  const lines = table.trimEnd().split("\n");
  assert.match(lines[0], /^TOOL +ACCESS +ARGUMENTS$/);
  assert.match(lines[1], /^short +read-only +\[argument0\], /);
  assert.ok(lines.length > 2, "the signature wraps");
  for (const l of lines) assert.ok(l.length <= 60, `fits 60 columns: ${JSON.stringify(l)}`);
  const col = lines[1].indexOf("[argument0]");
  for (const l of lines.slice(2)) assert.match(l, new RegExp(`^ {${col}}\\[argument`));
  assert.equal(
    lines.map((l) => l.slice(col).trim()).slice(1).join(" "),
    Object.keys(many).map((k) => `[${k}],`).join(" ").slice(0, -1),
  );
});

Deno.test("renderers: read_file text after a dim header; search hits grep-style, match highlighted", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { ...TREE, "ctl.txt": "bell\x07 and \x1b[31mred\n" });
    const ws = await openWorkspace(dir);
    const read = await run(ws, "read_file", { path: "src/a.ts" });
    const shown = prettyResult("read_file", read, { palette: palette(true) });
    assert.equal(
      shown,
      `${DIM}[src/a.ts, lines 1-2 of 2, 32 bytes, sha256 ${read.sha256}]\x1b[22m\n${
        TREE["src/a.ts"]
      }`,
    );
    const ctl = await run(ws, "read_file", { path: "ctl.txt" });
    const safe = prettyResult("read_file", ctl, { palette: palette(false) });
    assert.ok(!safe.includes("\x1b") && !safe.includes("\x07"), "file controls escaped");
    assert.match(safe, /bell\\u0007 and \\u001b\[31mred\n$/);
    const args = { query: "todo", caseSensitive: false };
    const hits = await run(ws, "search_text", args);
    const text = prettyResult("search_text", hits, { palette: palette(true), args });
    const M = (s: string) => `\x1b[1m\x1b[31m${s}\x1b[39m\x1b[22m`;
    const P = (p: string, l: number, c: number) =>
      `\x1b[35m${p}\x1b[39m:\x1b[32m${l}\x1b[39m:\x1b[32m${c}\x1b[39m: `;
    assert.ok(text.includes(`${P("src/a.ts", 2, 4)}// ${M("TODO")} one\n`), text);
    assert.ok(text.includes(`${P("src/b.ts", 1, 15)}let x = 2; // ${M("todo")}: two\n`), text);
    assert.ok(text.includes(`${P("docs/readme.md", 3, 1)}${M("TODO")} three\n`), text);
    // Without colour: the same lines as a model reads them.
    assert.match(
      prettyResult("search_text", hits, { args }),
      /^src\/a\.ts:2:4: \/\/ TODO one$/m,
    );
    const list = prettyResult("list_directory", await run(ws, "list_directory", { path: "." }));
    assert.match(list, /^docs\/$/m);
    assert.match(list, /^src\/$/m);
  });
});

Deno.test("op on a terminal: text, highlighted hits; any progress line is erased before them", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, TREE);
    const ws = await openWorkspace(dir);
    const read = await run(ws, "read_file", { path: "src/a.ts" });
    const file = await onPty(
      denoArgv(dir, ["op", "read_file", "--root", dir, "--arguments", '{"path":"src/a.ts"}'], {
        env: COLOR_ENV,
      }),
    );
    assert.ok(
      file.includes(
        `${DIM}[src/a.ts, lines 1-2 of 2, 32 bytes, sha256 ${read.sha256}]\x1b[22m\n` +
          "export const a = 1;\n// TODO one\n",
      ),
      JSON.stringify(file),
    );
    assert.ok(!file.includes('"content"'), "not JSON");

    const screen = await onPty(
      denoArgv(dir, ["op", "search_text", "--root", dir, "--arguments", '{"query":"TODO"}'], {
        env: COLOR_ENV,
      }),
    );
    const at = screen.indexOf("\x1b[35m");
    assert.ok(at >= 0, JSON.stringify(screen));
    // Whether a progress line shows depends on how long the search took here (it is drawn after
    // PROGRESS_DELAY_MS; tests/cli/op_progress_test.ts checks that an operation ended before the
    // delay draws nothing). What must hold either way: each line drawn was erased, and the last
    // erasure comes before the result, so nothing of it is left beside the hits.
    assertProgressErased(screen.slice(0, at), "search_text");
    const after = screen.slice(at);
    assert.ok(after.includes("// \x1b[1m\x1b[31mTODO\x1b[39m\x1b[22m one\n"), after);
    assert.match(strip(after), /^src\/a\.ts:2:4: \/\/ TODO one$/m);
    assert.match(strip(after), /^2 matching lines in 2 files \(3 files searched\)\.$/m);
  });
});

/**
 * What a terminal shows before a result: nothing, or progress lines of `name` each erased, the
 * last erasure with nothing after it (whether a line is drawn at all depends on how long the
 * operation took here; tests/cli/op_progress_test.ts and tests/client/progress_test.ts check the
 * delay by events).
 */
function assertProgressErased(before: string, name: string): void {
  const [lead, ...draws] = before.split(ERASE);
  assert.equal(strip(lead), "", JSON.stringify(before));
  if (draws.length > 0) assert.equal(draws[draws.length - 1].trim(), "", JSON.stringify(before));
  for (const d of draws.slice(0, -1)) {
    assert.ok(strip(d).startsWith(`${name}: `), JSON.stringify(d));
  }
}

/**
 * Runs fn on a long-search tree of `names` names (makeLongSearchTree): 600 take a search about two
 * seconds here, past the progress delay on a machine several times faster; 2,000 take several,
 * so an interrupt typed when the progress line shows lands while it runs.
 */
async function withLongTree(names: number, fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await makeLongSearchTree("wmcp-pretty-", names);
  try {
    await fn(dir);
  } finally {
    await removeDir(dir);
  }
}

const SLOW_SEARCH = [
  "op",
  "search_text",
  `query=${LONG_SEARCH.query}`,
  "regex:=true",
  "--output",
  "json",
];

Deno.test("op on a terminal: a long operation's progress line shows its counters, no tick count", async () => {
  await withLongTree(600, async (dir) => {
    const screen = await onPty(denoArgv(dir, [...SLOW_SEARCH, "--root", dir], { env: COLOR_ENV }));
    const at = screen.indexOf('{"matches"');
    assert.ok(at > 0, JSON.stringify(screen));
    const draws = screen.slice(0, at).split(ERASE).slice(1);
    // It ran past the delay: the tree takes seconds to search (withLongTree).
    assert.ok(draws.length >= 2, `progress drawn, then erased: ${JSON.stringify(screen)}`);
    for (const d of draws.slice(0, -1)) {
      assert.match(strip(d), /^search_text: (running|\d+ files? searched)/, JSON.stringify(d));
      assert.doesNotMatch(strip(d), /^search_text: \d+ \d+/, "no redraw count before it");
    }
    assert.equal(draws[draws.length - 1], "", "erased before the result");
  });
});

Deno.test("op on a terminal: Ctrl-C erases the progress line (and the echoed ^C) and exits 130", async () => {
  await withLongTree(2000, async (dir) => {
    const cli = denoArgv(dir, [...SLOW_SEARCH, "--root", dir], { env: COLOR_ENV });
    const run = await runCliOnPty(cli.flags, cli.args, {
      env: childEnv({}),
      clearEnv: true,
      interruptWhen: (screen) => screen.includes("search_text: "),
    });
    assert.equal(run.code, 130, JSON.stringify(run.screen));
    assert.ok(!run.screen.includes('{"matches"'), "no result after an interrupt");
    // The screen ends with the erasure: nothing of the line, nor the ^C, is left on it.
    assert.ok(run.screen.endsWith(ERASE), JSON.stringify(run.screen));
  });
});

Deno.test("tools call on a terminal: Ctrl-C erases the progress line before the one error line", async () => {
  await withTempDir(async (dir) => {
    // A server whose call lasts until DIR/release exists (never, here), with wmcp's progress.
    const hold = new URL("../client/fixtures/hold_server.ts", import.meta.url).pathname;
    const denoJson = new URL("../../deno.json", import.meta.url).pathname;
    await Deno.writeTextFile(
      `${dir}/mcp.json`,
      JSON.stringify({
        mcpServers: {
          hold: {
            command: Deno.execPath(),
            args: ["run", "--quiet", "-A", "--config", denoJson, hold],
          },
        },
      }),
    );
    const { flags, args } = clientArgv(dir, [
      "tools",
      "call",
      "hold",
      "--config",
      `${dir}/mcp.json`,
      "--server",
      "hold",
      "--output",
      "json",
      "--arguments",
      JSON.stringify({ dir }),
    ]);
    const run = await runCliOnPty(flags, args, {
      env: childEnv({}),
      clearEnv: true,
      interruptWhen: (screen) => screen.includes("hold: "),
    });
    assert.equal(run.code, 7, JSON.stringify(run.screen));
    // The line (no count: `hold: started`) and the echoed ^C are erased; then the error line.
    assert.match(strip(run.screen), /hold: started/);
    const last = run.screen.slice(run.screen.lastIndexOf(ERASE) + ERASE.length);
    assert.match(last, /^\{"error":\{"class":"timeout"/, JSON.stringify(run.screen));
    assert.ok(!last.includes("^C"), JSON.stringify(run.screen));
  });
});

Deno.test("op on a terminal: NO_COLOR and TERM=dumb give no escape codes; a coloured diff otherwise", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, TREE);
    const edit = [
      "op",
      "edit_file",
      "--root",
      dir,
      "--write",
      "--arguments",
      JSON.stringify({
        path: "docs/readme.md",
        edits: [{ oldText: "TODO three", newText: "DONE three" }],
        dryRun: true,
      }),
    ];
    const argv = denoArgv(dir, edit, { write: true, env: COLOR_ENV });
    const [coloured, noColor, dumb, noGrant] = [
      await onPty(argv),
      await onPty(argv, { NO_COLOR: "1" }),
      await onPty(argv, { TERM: "dumb" }),
      // A process that may not read NO_COLOR cannot know it is unset: no colour.
      await onPty(denoArgv(dir, edit, { write: true })),
    ];
    assert.ok(coloured.includes("\x1b[31m-TODO three\x1b[39m\n"), JSON.stringify(coloured));
    assert.ok(coloured.includes("\x1b[32m+DONE three\x1b[39m\n"));
    assert.ok(coloured.includes("\x1b[36m@@ -1,3 +1,3 @@\x1b[39m\n"));
    // After the progress line's last erasure: the same text, with and without colour.
    const result = (s: string) =>
      s.includes(ERASE) ? s.slice(s.lastIndexOf(ERASE) + ERASE.length) : s;
    for (const plain of [noColor, dumb, noGrant]) {
      assert.ok(!SGR.test(plain), JSON.stringify(plain));
      assert.equal(strip(result(coloured)), result(plain));
    }
    assert.match(noColor, /^-TODO three$/m);
    assert.match(noColor, /^\+DONE three$/m);
  });
});

Deno.test("tools list on a tmux terminal: a table wrapped to the pane's width", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, TREE);
    const { flags, args } = clientArgv(dir, ["tools", "list", "--root", dir]);
    const client = [Deno.execPath(), ...cliArgv(flags, args)].map(shellQuote).join(" ");
    const pane = await inTmux(dir, `env -u NO_COLOR -u FORCE_COLOR ${client}`, 80);
    assert.ok(SGR.test(pane), "coloured on a terminal");
    const lines = strip(pane).split("\n").map((l) => l.trimEnd()).filter((l) => l !== "");
    const head = lines.findIndex((l) => /^TOOL +ACCESS +ARGUMENTS$/.test(l));
    assert.ok(head >= 0, pane);
    assert.match(lines[head + 1], /^workspace_info +read-only +-$/);
    const search = lines.findIndex((l) => l.startsWith("search_text "));
    const col = lines[search].indexOf("query,");
    assert.ok(col > 0, lines[search]);
    assert.match(lines[search + 1], new RegExp(`^ {${col}}\\[`), "wrapped under ARGUMENTS");
    for (const l of lines) assert.ok(l.length <= 80, l);
    assert.match(lines[lines.length - 1], /^7 tools, 1 page\(s\), modern \d{4}-\d\d-\d\d$/);
  });
});

Deno.test("op list on a terminal that reports no size (script's pty): the table is 80 columns wide", async () => {
  await withTempDir(async (dir) => {
    const screen = strip(await onPty(denoArgv(dir, ["op", "list"])));
    const lines = screen.split("\n").map((l) => l.trimEnd()).filter((l) => l !== "");
    const list = lines.findIndex((l) => l.startsWith("list_directory "));
    assert.ok(list >= 0, screen);
    // At 80 columns list_directory's first three arguments fit on its line (a width of 0
    // wrapped them at the signature's 20-column minimum, two a line).
    assert.match(lines[list], /\[path\], \[depth\], \[includeHidden\],/);
    for (const l of lines) assert.ok(l.length <= 80, l);
  });
});

Deno.test("a misspelled flag on a terminal is the one error line, in op and tools call; piped it is JSON", async () => {
  await withTempDir(async (dir) => {
    for (
      const [cli, help] of [
        [denoArgv(dir, ["op", "read_file", "--roott", dir, "path=a"]), "wmcp op --help"],
        [clientArgv(dir, ["tools", "call", "read_file", "--roott", dir]), "wmcp tools call --help"],
      ] as const
    ) {
      const screen = strip(await onPty(cli)).trim();
      assert.equal(
        screen,
        `error (usage): unknown flag --roott (did you mean --root?); see \`${help}\``,
      );
      const out = await piped(cli);
      assert.equal(out.code, 2);
      assert.match(JSON.parse(out.stderr).error.message, /^unknown flag --roott/);
    }
  });
});

Deno.test("tools call on a terminal: hits highlighted as op shows them, after any progress line is erased; a failure is one red line", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, TREE);
    const client = (extra: string[]) => clientArgv(dir, ["tools", "call", ...extra, "--root", dir]);
    const hits = await onPty(client(["search_text", "--arguments", '{"query":"TODO"}']));
    assert.ok(hits.includes("// \x1b[1m\x1b[31mTODO\x1b[39m\x1b[22m one\n"), JSON.stringify(hits));
    assert.match(strip(hits), /^src\/a\.ts:2:4: \/\/ TODO one$/m);
    // Any progress line drawn while the call ran was erased before the first hit.
    assertProgressErased(hits.slice(0, hits.indexOf("\x1b[35m")), "search_text");
    const failed = await onPty(client(["read_fil", "--arguments", "{}"]));
    assert.ok(
      failed.includes('\x1b[31m\x1b[1merror\x1b[22m\x1b[39m (usage): no tool named "read_fil"'),
      JSON.stringify(failed),
    );
    assert.equal(strip(failed).trim().split("\n").length, 1, JSON.stringify(failed));
  });
});

Deno.test("piped: the machine formats byte for byte, nothing on stderr but the error line", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, TREE);
    const ws = await openWorkspace(dir);
    const args = { query: "TODO" };
    const lib = await run(ws, "search_text", args);
    const env = ["NO_COLOR", "FORCE_COLOR", "TERM"];
    const search = ["op", "search_text", "--root", dir, "--arguments", JSON.stringify(args)];
    const [plain, forced, forcedJson, forcedPretty, noColorPretty, err] = [
      await piped(denoArgv(dir, search, { env })),
      await piped(denoArgv(dir, search, { env }), { FORCE_COLOR: "1" }),
      await piped(denoArgv(dir, [...search, "--output", "json"], { env }), { FORCE_COLOR: "1" }),
      await piped(denoArgv(dir, [...search, "--output", "pretty"], { env }), { FORCE_COLOR: "1" }),
      await piped(denoArgv(dir, [...search, "--output", "pretty"], { env }), {
        FORCE_COLOR: "1",
        NO_COLOR: "1",
      }),
      await piped(
        denoArgv(dir, ["op", "read_file", "--root", dir, "--arguments", '{"path":"x"}'], { env }),
        { FORCE_COLOR: "1" },
      ),
    ];
    for (const r of [plain, forced, forcedJson]) {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, JSON.stringify(lib) + "\n", "json, never coloured");
      assert.equal(r.stderr, "", "no progress, no banner, nothing");
    }
    assert.equal(forcedPretty.code, 0);
    assert.ok(forcedPretty.stdout.includes("\x1b[1m\x1b[31mTODO"), "FORCE_COLOR colours pretty");
    assert.equal(forcedPretty.stderr, "");
    assert.equal(noColorPretty.stdout, strip(forcedPretty.stdout), "NO_COLOR wins");
    assert.equal(err.code, 1);
    assert.equal(err.stdout, "");
    assert.equal(
      err.stderr,
      JSON.stringify({
        error: { code: "NOT_FOUND", message: "path x does not exist", argument: "path" },
      }) + "\n",
    );

    const ops = await piped(denoArgv(dir, ["op", "list", "--write", "--output", "pretty"]));
    assert.equal(ops.stderr, "");
    assert.match(ops.stdout, /^TOOL +ACCESS +ARGUMENTS\n/);
    assert.match(ops.stdout, /^write_file +destructive +path, content, \[ifExists\]/m);
    assert.match(ops.stdout, /^create_directory +writes +path, \[parents\]$/m);
    assert.match(ops.stdout, /\n13 operations\n$/);
    assert.ok(!SGR.test(ops.stdout), "no colour without NO_COLOR's grant, and piped");

    // The client (bundled server): stdout is mcp-json, stderr empty or the one error line.
    const client = (extra: string[]) =>
      piped(clientArgv(dir, ["tools", "call", "read_file", "--root", dir, ...extra]));
    const [ok, bad, usage] = [
      await client(["--arguments", '{"path":"src/a.ts"}']),
      await client(["--arguments", '{"path":"x"}']),
      await client(["--arguments", "[1]"]),
    ];
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stderr, "");
    const envelope = JSON.parse(ok.stdout);
    assert.equal(ok.stdout, JSON.stringify(envelope) + "\n", "one compact JSON line");
    assert.equal(envelope.operation, "tools/call");
    assert.equal(envelope.mcpResult.structuredContent.content, TREE["src/a.ts"]);
    assert.ok(!SGR.test(ok.stdout));
    // A tool error is a result (stdout, exit 1); a usage error is the one line on stderr.
    assert.equal(bad.code, 1, bad.stderr);
    assert.equal(bad.stderr, "");
    assert.equal(JSON.parse(bad.stdout).mcpResult.isError, true);
    assert.equal(usage.code, 2, usage.stderr);
    assert.equal(usage.stdout, "");
    assert.equal(usage.stderr.split("\n").length, 2, `one line: ${JSON.stringify(usage.stderr)}`);
    assert.deepEqual(Object.keys(JSON.parse(usage.stderr)), ["error"]);
  });
});
