/**
 * The bundled client against a hostile server, on a real terminal (a pty from `script`): every
 * string the server supplies (progress and elicitation text, results, errors, JSON-RPC error
 * messages, server name, version, title and instructions, tool names and descriptions, the
 * stderr of a server that dies or logs, resource and prompt names, URIs, MIME types, contents and
 * messages) reaches the terminal escaped (decision 0042). The screen
 * holds no ESC, BEL, C1 CSI, bidi override, line separator or bare carriage return of the
 * server's; wmcp's own redraw of the progress line (`\r` then erase-line) is the one sequence
 * that may appear (NO_COLOR is set, so wmcp styles nothing).
 */
import assert from "node:assert/strict";
import { cliArgv, shellQuote } from "../_support/cli.ts";
import { terminalJson, terminalLine, terminalSafe } from "../../src/client/terminal_text.ts";
import { EVIL } from "./_hostile_text.ts";

const FIXTURE = new URL("./_hostile_server.ts", import.meta.url).pathname;

/**
 * What runs the command on the pty: the router's child entry (scoped_main.ts: main, what cli.ts
 * runs each command in) with the permissions the test names, or cli.ts itself (the router, which
 * starts that child). The terminal is the subject here, not the router's grants: one test runs
 * both and asserts the same screen.
 */
const SCOPED_MAIN = new URL("../../src/cli/scoped_main.ts", import.meta.url).pathname;

/** Runs the client on a pty against the hostile server config entry `server` (answers typed in). */
async function onPty(args: string[], server = "hostile", answers = "", viaRouter = false) {
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
      env: { NO_COLOR: "1" },
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

/** Nothing of the server's reached the terminal raw; its text did arrive, escaped. */
function assertEscaped(screen: string, whole = true) {
  const show = JSON.stringify(screen);
  // wmcp's own progress redraw; nothing else may move the cursor or style the screen.
  const rest = screen.replaceAll("\r\x1b[2K", "");
  for (
    const [c, what] of [
      ["\x1b", "ESC"],
      ["\x07", "BEL"],
      ["\x9b", "C1 CSI"],
      [
        "\u202e",
        "bidi override",
      ],
      ["\u2028", "line separator"],
      ["\r", "carriage return"],
    ]
  ) {
    assert.ok(!rest.includes(c), `a raw ${what} reached the terminal: ${show}`);
  }
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
