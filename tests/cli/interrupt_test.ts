/**
 * One Ctrl-C reaches a command twice under the router (the terminal's SIGINT to the process group
 * and the router's forwarded copy). A command that handled the first must not be killed by the
 * second while it reports the cancellation: it ends with its own exit code, not 130.
 */
import assert from "node:assert/strict";

const interrupt = new URL("../../src/cli/interrupt.ts", import.meta.url).href;

/** Runs `script` in a fresh Deno and returns what it did. */
async function feed(script: string): Promise<Deno.CommandOutput> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", script],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return await child.output();
}

Deno.test("a handled SIGINT repeated after dispose does not kill the command", async () => {
  const out = await feed(`
    import { onInterrupt } from ${JSON.stringify(interrupt)};
    const first = Promise.withResolvers();
    let calls = 0;
    const listener = onInterrupt(() => { calls++; first.resolve(); });
    Deno.kill(Deno.pid, "SIGINT");
    await first.promise;
    listener.dispose();
    Deno.kill(Deno.pid, "SIGINT"); // the same press, delivered again
    await new Promise((r) => setTimeout(r, 300));
    console.log(JSON.stringify({ calls, fired: listener.fired }));
    Deno.exit(7);
  `);
  assert.equal(out.code, 7, new TextDecoder().decode(out.stderr));
  const seen = JSON.parse(new TextDecoder().decode(out.stdout));
  assert.equal(seen.fired, true);
  assert.ok(seen.calls >= 1 && seen.calls <= 2, JSON.stringify(seen));
});

Deno.test("a listener that never fired is removed: a later SIGINT ends the process with 130", async () => {
  const out = await feed(`
    import { onInterrupt } from ${JSON.stringify(interrupt)};
    const listener = onInterrupt(() => {});
    listener.dispose();
    Deno.kill(Deno.pid, "SIGINT");
    await new Promise((r) => setTimeout(r, 5000));
    Deno.exit(0);
  `);
  assert.equal(out.signal, "SIGINT");
});
