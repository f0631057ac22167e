/**
 * Progress display: on a real terminal (a pty from `script`) a running call's progress
 * notifications are one updating stderr line, cleared before the result; plain under
 * NO_COLOR; nothing at all when stderr is not a terminal.
 */
import assert from "node:assert/strict";
import { progressLine, progressText } from "../../src/client/progress.ts";
import { runClient } from "./_client.ts";
import { cliArgv, shellQuote } from "../_support/cli.ts";
import { exists } from "../_support/fs.ts";
import { GrowingText } from "../_support/wait.ts";

const HOLD_SERVER = new URL("./fixtures/hold_server.ts", import.meta.url).pathname;
const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;
const ERASE = "\r\x1b[2K";
const DIM = "\x1b[2m";

async function holdConfig(dir: string): Promise<string> {
  const config = `${dir}/mcp.json`;
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      mcpServers: {
        hold: {
          command: Deno.execPath(),
          args: ["run", "--quiet", "-A", "--config", DENO_JSON, HOLD_SERVER],
        },
      },
    }),
  );
  return config;
}

/** Runs `tools call hold` on a pty; releases the call once progress was drawn; returns the screen. */
async function holdOnTerminal(dir: string, env: Record<string, string>): Promise<string> {
  const config = await holdConfig(dir);
  const client = [
    Deno.execPath(),
    ...cliArgv(["--quiet", "--no-prompt", `--allow-read=${dir}`, "--allow-env", "--allow-run"], [
      "tools",
      "call",
      "hold",
      "--config",
      config,
      "--server",
      "hold",
      "--output",
      "json",
      "--arguments",
      JSON.stringify({ dir }),
    ]),
  ].map(shellQuote).join(" ");
  // Exactly the environment asked for: an inherited NO_COLOR (CI sets it) must not leak in.
  const inherited = Deno.env.toObject();
  delete inherited.NO_COLOR;
  delete inherited.FORCE_COLOR;
  inherited.TERM = "xterm-256color"; // TERM=dumb (some CI) turns colour off as NO_COLOR does
  const child = new Deno.Command("script", {
    args: ["-qec", client, "/dev/null"],
    env: { ...inherited, ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const screen = new GrowingText();
  const read = screen.drain(child.stdout);
  // Release the call once two progress redraws were on the screen (woken by each read; the
  // limit only bounds a failure).
  await screen.waitFor((text) => text.split(ERASE).length >= 3, 30_000);
  await Deno.writeTextFile(`${dir}/release`, "");
  const watchdog = setTimeout(() => child.kill("SIGKILL"), 30_000);
  await child.status;
  clearTimeout(watchdog);
  await read;
  return screen.text;
}

for (const noColor of [false, true]) {
  Deno.test(`a call's progress is one updating stderr line on a terminal, cleared before the result${noColor ? " (NO_COLOR)" : ""}`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "wmcp-progress-" });
    try {
      const env: Record<string, string> = noColor ? { NO_COLOR: "1" } : {};
      const screen = await holdOnTerminal(dir, env);
      assert.ok(await exists(`${dir}/started`), screen);
      const at = screen.indexOf('{"operation"');
      assert.ok(at > 0, `no result on the screen: ${JSON.stringify(screen)}`);
      const before = screen.slice(0, at);
      // Redraws of one line: each starts with carriage return + erase line, no newline between.
      const draws = before.split(ERASE).slice(1);
      assert.ok(
        draws.length >= 3,
        `two or more progress lines and a clear: ${JSON.stringify(before)}`,
      );
      for (const d of draws.slice(0, -1)) {
        const text = d.startsWith(DIM) ? d.slice(DIM.length) : d;
        // The server's message, without its notification count (progress has no total).
        assert.match(text, /^hold: started/, JSON.stringify(d));
        assert.ok(!d.includes("\n"), "the progress line never scrolls");
      }
      // The last erase clears the line: nothing of it is left before the result.
      assert.equal(draws[draws.length - 1].trim(), "");
      assert.equal(before.includes(DIM), !noColor, "dim unless NO_COLOR");
      assert.match(screen.slice(at), /released/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("no progress display when stderr is not a terminal", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-progress-pipe-" });
  try {
    const config = await holdConfig(dir);
    await Deno.writeTextFile(`${dir}/release`, ""); // answers at once, after its first progress
    const run = await runClient(
      [
        "tools",
        "call",
        "hold",
        "--arguments",
        JSON.stringify({ dir }),
        "--config",
        config,
        "--server",
        "hold",
      ],
      { read: [dir] },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("progress line text: counts, percentage, message; truncated to the terminal width", () => {
  assert.equal(
    progressText("t", { progress: 3, total: 12, message: "walking\n src" }),
    "t: 3/12 (25%) walking src",
  );
  assert.equal(progressText("t", { progress: 7 }), "t: 7");
  // Without a total the count says nothing next to a message: the message alone, once named.
  assert.equal(
    progressText("t", { progress: 8, message: "3255 files searched" }),
    "t: 3255 files searched",
  );
  assert.equal(progressText("t", { progress: 2, message: "t: started" }), "t: started");
  const written: string[] = [];
  const line = progressLine({
    isTerminal: () => true,
    writeSync: (b) => (written.push(new TextDecoder().decode(b)), b.length),
    columns: () => 30,
  }, { noColor: true });
  line.clear(); // nothing drawn yet: nothing to clear
  line.update("search_text", { progress: 1, message: "x".repeat(100) });
  line.clear();
  assert.equal(written.length, 2);
  assert.equal(written[0], `${ERASE}search_text: ${"x".repeat(15)}…`);
  assert.equal(written[1], ERASE);
  const off = progressLine({ isTerminal: () => false, writeSync: () => assert.fail("drawn") }, {
    noColor: false,
  });
  off.update("t", { progress: 1 });
  off.clear();
  // With delayMs, a call that ends before the delay draws (and clears) nothing.
  const quiet: string[] = [];
  const delayed = progressLine({
    isTerminal: () => true,
    writeSync: (b) => (quiet.push(new TextDecoder().decode(b)), b.length),
  }, { noColor: true, delayMs: 60_000 });
  delayed.update("t", { progress: 1, message: "x" });
  delayed.update("t", { progress: 2, message: "y" });
  delayed.clear();
  assert.deepEqual(quiet, []);
});
