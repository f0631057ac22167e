/** Interactive mode on a real terminal (a pty from `script`): form fields of every kind, accept/decline. */
import assert from "node:assert/strict";
import { cliArgv, shellQuote } from "../_support/cli.ts";

const FIXTURE = new URL("./fixtures/form_server.ts", import.meta.url).pathname;
const CONFIG_DENO = new URL("../../deno.json", import.meta.url).pathname;

async function onTerminal(answers: string, protocolVersion: string) {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-tty-" });
  try {
    const config = `${dir}/mcp.json`;
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        mcpServers: {
          form: {
            command: Deno.execPath(),
            args: ["run", "--quiet", "-A", "--config", CONFIG_DENO, FIXTURE],
          },
        },
      }),
    );
    const client = [
      Deno.execPath(),
      ...cliArgv(["--quiet", "--no-prompt", `--allow-read=${dir}`, "--allow-env", "--allow-run"], [
        "tools",
        "call",
        "ask",
        "--config",
        config,
        "--server",
        "form",
        "--output",
        "json",
        "--protocol-version",
        protocolVersion,
      ]),
    ].map(shellQuote).join(" ");
    // `script` gives the client a pseudo-terminal, so it prompts; our answers are typed into it.
    const child = new Deno.Command("script", {
      args: ["-qec", client, "/dev/null"],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(answers));
    await w.close();
    const out = await child.output();
    const text = new TextDecoder().decode(out.stdout);
    // The terminal interleaves prompts (stderr) and the result (stdout) on one screen.
    const at = text.indexOf('{"operation"');
    const jsonLine = at === -1 ? undefined : text.slice(at).split(/\r?\n/)[0];
    return { code: out.code, text, result: jsonLine ? JSON.parse(jsonLine) : null };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

for (const version of ["2026-07-28", "2025-11-25"]) {
  Deno.test(`terminal prompts fill a form of every field kind and accept (${version})`, async () => {
    // name: empty takes the default; age: a bad answer is asked again; enum by number;
    // toppings: an unknown option and one too many are asked again, then a value and a number.
    const r = await onTerminal(
      "\nold\n42\n0.5\nyes\n2\nham\nolive,2,3\nchili, 1, chili\na\n",
      version,
    );
    assert.equal(r.code, 0, r.text);
    assert.deepEqual(r.result.structuredContent, {
      action: "accept",
      content: {
        name: "anon",
        age: 42,
        ratio: 0.5,
        agree: true,
        color: "green",
        toppings: ["chili", "olive"],
      },
    });
    assert.match(r.text, /Tell me about you/);
    assert.match(r.text, /enter an integer/);
    // The options are listed with their titles and numbers, and the bound is said.
    assert.match(
      r.text,
      /Toppings \(array, any of 1=Olives \(olive\) \| 2=Basil \(basil\) \| 3=Chili \(chili\), comma-separated \(at most 2\), optional\)/,
    );
    assert.match(r.text, /ham is not an option; choose from olive, basil, chili/);
    assert.match(r.text, /choose at most 2/);
    assert.match(r.text, /Color \(string, one of 1=red \| 2=green, required\)/);
  });
}

Deno.test("terminal prompts: decline is sent as decline", async () => {
  const r = await onTerminal("\n1\n1\nno\nred\n\nd\n", "2026-07-28");
  assert.equal(r.code, 0, r.text);
  assert.deepEqual(r.result.structuredContent, { action: "decline", content: null });
});
