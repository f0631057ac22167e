/**
 * The bundled client against a hostile server, on a real terminal (a pty from `script`): every
 * string the server supplies (progress and elicitation text, results, errors, JSON-RPC error
 * messages, server name, version, title and instructions, tool names and descriptions, the
 * stderr of a server that dies or logs, resource and prompt names, URIs, MIME types, contents and
 * messages) reaches the terminal escaped (decision 0042). The screen
 * holds no ESC, BEL, C1 control, bidi control, line or paragraph separator or bare carriage return
 * of the server's; wmcp's own redraw of the progress line (`\r` then erase-line) is the one
 * sequence that may appear where NO_COLOR is set (wmcp styles nothing). One test runs a
 * representative set with colour on (TERM=xterm-256color, neither NO_COLOR nor FORCE_COLOR): there
 * wmcp's own SGR codes (its palette, src/cli/colors.ts, and the progress line's dim) may appear as
 * well, and nothing else; since wmcp's red is the server's red code too, the server's SGR is also
 * looked for with the text it colours.
 */
import assert from "node:assert/strict";
import { cliArgv, shellQuote } from "../_support/cli.ts";
import { terminalJson, terminalLine, terminalSafe } from "../../src/client/terminal_text.ts";
import { palette } from "../../src/cli/colors.ts";
import { progressLine } from "../../src/client/progress.ts";
import { EVIL } from "./_hostile_text.ts";

const FIXTURE = new URL("./_hostile_server.ts", import.meta.url).pathname;

/**
 * What runs the command on the pty: the router's child entry (scoped_main.ts: main, what cli.ts
 * runs each command in) with the permissions the test names, or cli.ts itself (the router, which
 * starts that child). The terminal is the subject here, not the router's grants: one test runs
 * both and asserts the same screen.
 */
const SCOPED_MAIN = new URL("../../src/cli/scoped_main.ts", import.meta.url).pathname;

/** The environment of a run with colour on: ours without NO_COLOR and FORCE_COLOR, an xterm. */
function colourEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  return { ...env, TERM: "xterm-256color" };
}

/**
 * Runs the client on a pty against the hostile server config entry `server` (answers typed in);
 * NO_COLOR set unless `colour`.
 */
async function onPty(
  args: string[],
  server = "hostile",
  answers = "",
  viaRouter = false,
  colour = false,
) {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-esc-" });
  try {
    const config = `${dir}/mcp.json`;
    const entry = (mode: string) => ({
      command: Deno.execPath(),
      args: ["run", "--quiet", "-A", FIXTURE, mode],
    });
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        mcpServers: { hostile: entry("serve"), chatty: entry("chatty"), dying: entry("die") },
      }),
    );
    const flags = ["--quiet", "--no-prompt", `--allow-read=${dir}`, "--allow-env", "--allow-run"];
    const words = [
      ...args,
      "--config",
      config,
      "--server",
      server,
      "--protocol-version",
      "2025-11-25",
    ];
    const client = "exec " + [
      Deno.execPath(),
      ...(viaRouter ? cliArgv(flags, words) : ["run", ...flags, SCOPED_MAIN, ...words]),
    ].map(shellQuote).join(" ");
    const child = new Deno.Command("script", {
      args: ["-qec", client, "/dev/null"],
      ...(colour ? { clearEnv: true, env: colourEnv() } : { env: { NO_COLOR: "1" } }),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(answers));
    await w.close();
    const out = await child.output();
    // The terminal turns each "\n" into "\r\n".
    const screen = new TextDecoder().decode(out.stdout).replaceAll("\r\n", "\n");
    return { code: out.code, screen };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const ESC = "\x1b";
/** An SGR sequence (colours, bold, dim, reset). */
const SGR = new RegExp(`${ESC}\\[[0-9;]*m`, "g");

/** Every SGR sequence wmcp itself writes: its palette's (src/cli/colors.ts) and the progress line's. */
const OWN_SGR: ReadonlySet<string> = (() => {
  const own = new Set<string>();
  for (const style of Object.values(palette(true))) {
    if (typeof style === "function") { for (const [s] of style("x").matchAll(SGR)) own.add(s); }
  }
  let drawn = "";
  const terminal = {
    isTerminal: () => true,
    writeSync: (b: Uint8Array) => (drawn += new TextDecoder().decode(b), b.length),
  };
  progressLine(terminal, { noColor: false }).update("x", { progress: 1 });
  for (const [s] of drawn.matchAll(SGR)) own.add(s);
  return own;
})();

/**
 * The server's sequences as they would show raw: OSC 0, OSC 52, and each SGR of EVIL with the
 * character it colours there (escaped as wmcp would show it): wmcp's own red is the same code.
 */
const SERVER_RAW = [
  "\x1b]0;",
  "\x1b]52;",
  ...[...EVIL.matchAll(SGR)].map((m) => m[0] + terminalLine(EVIL[m.index + m[0].length])),
];

/**
 * Nothing of the server's reached the terminal raw; its text did arrive, escaped. With `colour`,
 * wmcp's own SGR sequences may style the screen too (only those, and none with the server's text).
 */
function assertEscaped(screen: string, whole = true, colour = false) {
  const show = JSON.stringify(screen);
  // wmcp's own progress redraw; nothing else may move the cursor.
  let rest = screen.replaceAll("\r\x1b[2K", "");
  if (colour) {
    for (const [s] of rest.matchAll(SGR)) {
      assert.ok(OWN_SGR.has(s), `an SGR wmcp never writes, ${JSON.stringify(s)}: ${show}`);
    }
    for (const raw of SERVER_RAW) {
      assert.ok(!screen.includes(raw), `the server's ${JSON.stringify(raw)} is on screen: ${show}`);
    }
    rest = rest.replace(SGR, "");
  }
  for (
    const [c, what] of [
      ["\x1b", "ESC"],
      ["\x07", "BEL"],
      ["\u2028", "line separator"],
      ["\u2029", "paragraph separator"],
      ["\r", "carriage return"],
    ]
  ) {
    assert.ok(!rest.includes(c), `a raw ${what} reached the terminal: ${show}`);
  }
  assert.ok(!/[\x80-\x9f]/.test(rest), `a raw C1 control reached the terminal: ${show}`);
  assert.ok(
    !/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/.test(rest),
    `a raw bidi control reached the terminal: ${show}`,
  );
  assert.ok(screen.includes("\\u001b]0;pwned\\u0007"), `the server's text is not shown: ${show}`);
  // A progress line is cut to the terminal's width before the bidi override.
  if (whole) assert.ok(screen.includes("\\u202eDESREVER"), show);
}

Deno.test("escaping: the three flavours escape what a terminal would act on", () => {
  const block = terminalSafe(EVIL + "\ttab");
  assert.ok(!/(?![\n\t])[\p{Cc}\u202e\u2028]/u.test(block), block);
  assert.ok(block.includes("\n") && block.includes("\t") && block.includes("\\u000d"));
  const line = terminalLine(EVIL + "\ttab");
  assert.ok(!/[\p{Cc}\u202e\u2028]/u.test(line), line);
  assert.ok(line.includes("ACCEPT SECOND LINE tab"), line);
  for (const c of ["\u061c", "\u200e", "\u200f", "\u202a", "\u2066", "\u2069", "\u2029", "\x7f"]) {
    assert.equal(terminalSafe(c), `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  }
  const json = terminalJson(JSON.stringify({ t: EVIL }, null, 2));
  assert.deepEqual(JSON.parse(json), { t: EVIL });
  assert.ok(!/[\x7f-\x9f\u202e\u2028]/.test(json), json);
});

Deno.test("escaping: server-info (name, version, title, instructions)", async () => {
  const r = await onPty(["server-info"]);
  assert.equal(r.code, 0, r.screen);
  assertEscaped(r.screen);
  assert.match(r.screen, /instructions:/);
  // Through the router (cli.ts) the terminal shows the same.
  assert.deepEqual(await onPty(["server-info"], "hostile", "", true), r);
});

Deno.test("escaping: tools list (a tool's name is one row)", async () => {
  const r = await onPty(["tools", "list"]);
  assert.equal(r.code, 0, r.screen);
  assertEscaped(r.screen);
  assert.match(r.screen, /ACCEPT SECOND LINE +destructive/);
});

Deno.test("escaping: tools show and tools call --help (titles, descriptions)", async () => {
  for (const args of [["tools", "show", "result"], ["tools", "call", "result", "--help"]]) {
    const r = await onPty(args);
    assert.equal(r.code, 0, r.screen);
    assertEscaped(r.screen);
  }
});

Deno.test("escaping: a tool's result, its error text and a JSON-RPC error message", async () => {
  for (const tool of ["result", "fails", "rpcerror"]) {
    const r = await onPty(["tools", "call", tool]);
    assert.equal(r.code === 0, tool === "result", `${tool}: ${r.screen}`);
    assertEscaped(r.screen);
  }
});

Deno.test("escaping: resources and prompts (lists, templates, a read, a get, an error)", async () => {
  const runs: [string[], number][] = [
    [["resources", "list"], 0],
    [["resources", "templates"], 0],
    [["resources", "read", "hostile://text"], 0],
    [["resources", "read", "hostile://error"], 4],
    [["prompts", "list"], 0],
    [["prompts", "get", "evil", "x=1"], 0],
  ];
  for (const [args, code] of runs) {
    const r = await onPty(args);
    assert.equal(r.code, code, `${args.join(" ")}: ${r.screen}`);
    assertEscaped(r.screen);
  }
  // The blob is a note with its size, never its bytes; each note and row stays one line.
  const read = await onPty(["resources", "read", "hostile://text"]);
  assert.match(read.screen, /\n\[blob \\u001b\]0;pwned[^\n]*ACCEPT SECOND LINE, 86 bytes\]\n/);
  const get = await onPty(["prompts", "get", "evil", "x=1"]);
  assert.match(get.screen, /\n\[image \\u001b[^\n]*, 86 bytes\]\n/);
});

Deno.test("escaping: progress messages are one escaped line", async () => {
  const r = await onPty(["tools", "call", "progress"]);
  assert.equal(r.code, 0, r.screen);
  assertEscaped(r.screen, false);
  // The line was drawn (wmcp's redraw), with the server's message on it.
  assert.ok(r.screen.includes("\r\x1b[2Kprogress: "), r.screen);
  assert.match(r.screen, /progress: \d\/8 \(\d+%\) \\u001b\]0;pwned/);
});

Deno.test("escaping: the elicitation prompt names the server and keeps each line one line", async () => {
  const r = await onPty(["tools", "call", "ask"], "hostile", "2\na\n");
  assert.equal(r.code, 0, r.screen);
  assertEscaped(r.screen);
  const ask = r.screen.split("\n").find((l) => l.includes(" asks: "));
  assert.ok(ask, r.screen);
  // The user's label first, the server's own name beside it; the message on the same line.
  assert.ok(ask.startsWith('[server "hostile" (calls itself "evil\\u001b]0;pwned'), ask);
  assert.ok(ask.includes("asks: \\u001b]0;pwned\\u0007"), ask);
  assert.ok(ask.includes("ACCEPT SECOND LINE"), ask);
  const field = r.screen.split("\n").find((l) => l.includes("one of "));
  assert.ok(field, r.screen);
  assert.ok(field.includes("ACCEPT SECOND LINE | 2=plain"), field);
  assert.match(r.screen, /answered/);
});

Deno.test("escaping: the stderr of a server that dies, and server logs", async () => {
  const died = await onPty(["server-info"], "dying");
  assert.notEqual(died.code, 0, died.screen);
  assertEscaped(died.screen);
  assert.match(died.screen, /last lines of its stderr/);
  const logs = await onPty(["tools", "call", "result", "--server-logs"], "chatty");
  assert.equal(logs.code, 0, logs.screen);
  assertEscaped(logs.screen);
  assert.match(logs.screen, /starting \\u001b/);
});

Deno.test("escaping: with colour on, wmcp's own SGR styles the screen and nothing of the server's does", async () => {
  const runs: [string[], string, string, number][] = [
    [["tools", "list"], "hostile", "", 0],
    [["server-info"], "hostile", "", 0],
    [["tools", "call", "rpcerror"], "hostile", "", 4],
    [["tools", "call", "ask"], "hostile", "2\na\n", 0],
    [["tools", "call", "progress", "--server-logs"], "chatty", "", 0],
  ];
  const screens: string[] = [];
  for (const [args, server, answers, code] of runs) {
    const r = await onPty(args, server, answers, false, true);
    assert.equal(r.code, code, `${args.join(" ")}: ${r.screen}`);
    // A progress line is cut to the terminal's width (see assertEscaped's `whole`).
    assertEscaped(r.screen, !args.includes("progress"), true);
    screens.push(r.screen);
  }
  // Colour was on (the table's header, the error label and the progress line are styled), and
  // the prompt was asked.
  const [list, , error, ask, progress] = screens;
  const c = palette(true);
  assert.ok(list.includes(c.bold("TOOL")), list);
  assert.ok(error.startsWith(c.red(c.bold("error"))), error);
  assert.ok(progress.includes("\r\x1b[2K\x1b[2mprogress: "), progress);
  assert.ok(ask.includes("asks: \\u001b]0;pwned"), ask);
});
