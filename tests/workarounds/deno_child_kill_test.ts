/**
 * The upstream misbehaviour behind src/workarounds/deno_child_kill.ts (denoland/deno#36643):
 * a `node:child_process` child is sent one signal at most; the SDK's SIGTERM-then-SIGKILL
 * escalation therefore never kills a child that ignores SIGTERM, and reapChild does. When the
 * first test fails, Deno delivers repeated signals again: delete the workaround.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { reapChild } from "../../src/workarounds/deno_child_kill.ts";

/** A shell that ignores SIGTERM, says "ready" and sleeps (bounded: it ends by itself). */
async function stubbornChild() {
  const child = spawn("sh", ["-c", "trap '' TERM; echo ready; sleep 20"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  await new Promise((r) => child.stdout!.once("data", r));
  const exited = new Promise<[number | null, string | null]>((r) =>
    child.once("exit", (code, signal) => r([code, signal]))
  );
  return { child, exited };
}

function within<T>(p: Promise<T>, ms: number): Promise<T | "pending"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<"pending">((r) => timer = setTimeout(() => r("pending"), ms)),
  ]).finally(() => clearTimeout(timer));
}

Deno.test("upstream: a second kill() of a node:child_process child is not delivered (Deno 2.9.6)", async () => {
  const { child, exited } = await stubbornChild();
  try {
    assert.ok(child.kill("SIGTERM"), "the first signal is sent");
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(child.exitCode, null, "the child ignores SIGTERM");
    // The misbehaviour: Node sends this SIGKILL; Deno returns false and sends nothing.
    assert.deepEqual(child.kill("SIGKILL"), false, "upstream fixed? delete deno_child_kill.ts");
    assert.deepEqual(await within(exited, 1000), "pending", "the child outlived the SIGKILL");
  } finally {
    reapChild(child.pid ?? null);
    await within(exited, 5000);
  }
});

Deno.test("reapChild kills a child that ignores SIGTERM; a gone or null pid is a no-op", async () => {
  const { child, exited } = await stubbornChild();
  child.kill("SIGTERM");
  reapChild(child.pid ?? null);
  const end = await within(exited, 5000);
  assert.notEqual(end, "pending", "the child is gone");
  // Killed by a signal (Deno names the one kill() sent, SIGTERM, which the child ignored).
  assert.equal((end as [number | null, string | null])[0], null);
  reapChild(child.pid ?? null); // already gone: no throw
  reapChild(null);
});
