/**
 * The engine's acknowledgement window is counted in CPU time as well as wall time: a stopped
 * worker that is not running (a thread the scheduler starves on a busy machine, played here by a
 * worker that sleeps without using the CPU) is kept until it answers, while a worker that burns
 * the CPU without reaching a checkpoint (stuck in one synchronous call) is abandoned and replaced.
 */
import assert from "node:assert/strict";
import { ACK_MS, Engine } from "../../src/workspace/engine/pool.ts";
import { JOBS } from "../../src/workspace/engine/jobs.ts";
import type { JobSpec } from "../../src/workspace/engine/protocol.ts";
import { DEFAULT_LIMITS } from "../../src/workspace/limits.ts";

const LATE_ACK = new URL("./fixtures/late_ack_worker.ts", import.meta.url);

function spec(query: string): JobSpec {
  const dir = { rel: ".", abs: "/", dev: 0, ino: 0 };
  return {
    op: "search",
    args: { query },
    root: dir,
    base: dir,
    limits: DEFAULT_LIMITS,
    fs: "deno",
  };
}

/** Runs `query` on a one-worker engine, stops it once the worker holds it, waits for the answer. */
async function stopAndSettle(query: string): Promise<Engine> {
  const engine = new Engine({ jobs: JOBS, mode: "workers", size: 1, worker: LATE_ACK });
  // Loaded first, so the window starts at the stop (a loading worker's starts when it is ready).
  assert.deepEqual(await engine.run(spec("warm")), { matches: [] });
  const ac = new AbortController();
  const call = engine.run(spec(query), { signal: ac.signal }).catch((e) => e.code);
  assert.equal(engine.stats.busy, 1);
  ac.abort();
  assert.equal(await call, "CANCELLED");
  // The slot is released when the worker answers or when it is abandoned: either way an event.
  const deadline = Date.now() + 30_000;
  while (engine.stats.busy > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(engine.stats.busy, 0, JSON.stringify(engine.stats));
  return engine;
}

Deno.test("a stopped worker that gets no CPU is kept past ACK_MS of wall time until it answers", async () => {
  const engine = await stopAndSettle(`sleep:${6 * ACK_MS}`);
  try {
    assert.equal(engine.stats.abandoned, 0, JSON.stringify(engine.stats));
    // The same worker runs the next call.
    assert.deepEqual(await engine.run(spec("next")), { matches: [] });
    assert.equal(engine.stats.live, 1);
    assert.equal(engine.stats.abandoned, 0);
  } finally {
    engine.close();
  }
});

Deno.test("a stopped worker that burns CPU without a checkpoint is abandoned and replaced", async () => {
  // Spins for up to 20 s: abandoned long before on any machine (ACK_MS of CPU, ACK_MAX_MS wall).
  const engine = await stopAndSettle("spin:20000");
  try {
    assert.equal(engine.stats.abandoned, 1, JSON.stringify(engine.stats));
    assert.deepEqual(await engine.run(spec("next")), { matches: [] });
    assert.equal(engine.stats.abandoned, 1);
  } finally {
    engine.close();
  }
});
