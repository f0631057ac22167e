/**
 * The engine's acknowledgement window is counted in CPU time as well as wall time: a stopped
 * worker that is not running (a thread the scheduler starves on a busy machine, played here by a
 * worker that sleeps without using the CPU) is kept until it answers, while a worker that burns
 * the CPU without reaching a checkpoint (stuck in one synchronous call) is abandoned and replaced.
 * Each scenario runs in a process of its own (fixtures/late_ack_scenario.ts), since the window
 * counts the whole process's CPU time and the suite's process may hold other busy threads.
 */
import assert from "node:assert/strict";

const SCENARIO = new URL("./fixtures/late_ack_scenario.ts", import.meta.url).pathname;

interface Stats {
  live: number;
  busy: number;
  abandoned: number;
}

async function scenario(how: string): Promise<{
  busyAtStop: number;
  stopped: string;
  afterStop: Stats;
  next: unknown;
  end: Stats;
}> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-check", "-A", SCENARIO, how],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, err);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

Deno.test("a stopped worker that gets no CPU is kept past ACK_MS of wall time until it answers", async () => {
  const r = await scenario("sleep:600"); // six times ACK_MS, asleep
  assert.equal(r.busyAtStop, 1);
  assert.equal(r.stopped, "CANCELLED");
  assert.equal(r.afterStop.busy, 0, JSON.stringify(r.afterStop));
  assert.equal(r.afterStop.abandoned, 0, JSON.stringify(r.afterStop));
  // The same worker runs the next call.
  assert.deepEqual(r.next, { matches: [] });
  assert.equal(r.end.live, 1);
  assert.equal(r.end.abandoned, 0);
});

Deno.test("a stopped worker that burns CPU without a checkpoint is abandoned and replaced", async () => {
  // Spins for up to 20 s: abandoned long before on any machine (ACK_MS of CPU, ACK_MAX_MS wall).
  const r = await scenario("spin:20000");
  assert.equal(r.stopped, "CANCELLED");
  assert.equal(r.afterStop.abandoned, 1, JSON.stringify(r.afterStop));
  assert.deepEqual(r.next, { matches: [] });
  assert.equal(r.end.abandoned, 1);
});
