/**
 * TimerList (src/server/http/timer_list.ts): the HTTP handler's body and keep-alive deadlines on
 * one timer. Each deadline fires once, never before its duration has passed, in start order; a
 * cancelled one never fires and does not hold back the ones after it; a deadline started while
 * the timer still waits for a cancelled one fires at its own time; an onExpire that throws does
 * not strand the others. Time is only bounded from below (a loaded machine is late, never early).
 */
import assert from "node:assert/strict";
import { TimerList } from "../../src/server/http/timer_list.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts a deadline that records when it fired (ms after its start) into fired, by name. */
function track(list: TimerList, name: string, fired: { name: string; after: number }[]) {
  const started = performance.now();
  return list.start(() => fired.push({ name, after: performance.now() - started }));
}

/** Waits until cond holds (checked every 10 ms), at most 10 s. */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !cond(); waited += 10) {
    if (waited > 10_000) throw new Error(`not within 10 s: ${what}`);
    await sleep(10);
  }
}

Deno.test("deadlines fire once each, in start order, never before their duration", async () => {
  const list = new TimerList(50);
  const fired: { name: string; after: number }[] = [];
  track(list, "a", fired);
  await sleep(5);
  track(list, "b", fired);
  track(list, "c", fired);
  assert.equal(list.size(), 3);
  await until(() => fired.length === 3, "three deadlines");
  assert.deepEqual(fired.map((f) => f.name), ["a", "b", "c"]);
  for (const f of fired) assert.ok(f.after >= 49, `${f.name} fired ${f.after} ms after its start`);
  await sleep(80);
  assert.equal(fired.length, 3, "each fires once");
  assert.equal(list.size(), 0);
});

Deno.test("a cancelled deadline never fires; the others around it still do", async () => {
  const list = new TimerList(40);
  const fired: { name: string; after: number }[] = [];
  const cancelHead = track(list, "head", fired);
  track(list, "second", fired);
  const cancelMiddle = track(list, "middle", fired);
  track(list, "fourth", fired);
  const cancelTail = track(list, "tail", fired);
  cancelHead();
  cancelMiddle();
  cancelTail();
  cancelMiddle(); // twice: nothing more happens
  assert.equal(list.size(), 2);
  await until(() => fired.length === 2, "the two left");
  await sleep(60);
  assert.deepEqual(fired.map((f) => f.name), ["second", "fourth"]);
  cancelHead(); // after the others fired: nothing happens
  assert.equal(list.size(), 0);
});

Deno.test("a deadline started while the timer waits for a cancelled one fires at its own time", async () => {
  const list = new TimerList(150);
  const fired: { name: string; after: number }[] = [];
  // The timer is armed for this one; cancelled, it stays armed until then (and finds nothing).
  track(list, "cancelled", fired)();
  await sleep(60);
  track(list, "late", fired);
  await until(() => fired.length === 1, "the late deadline");
  assert.equal(fired[0].name, "late");
  assert.ok(
    fired[0].after >= 149,
    `fired ${fired[0].after} ms after its start, not at the old one's`,
  );
});

Deno.test("an onExpire that throws does not keep the other deadlines from firing", async () => {
  const list = new TimerList(20);
  const fired: { name: string; after: number }[] = [];
  const errors: unknown[] = [];
  const onError = (e: ErrorEvent) => {
    errors.push(e.error);
    e.preventDefault(); // handled here: not the process's uncaught error
  };
  globalThis.addEventListener("error", onError);
  try {
    track(list, "before", fired);
    list.start(() => {
      throw new Error("boom");
    });
    track(list, "after", fired);
    await sleep(30);
    track(list, "later", fired); // started after the throwing one's group: its own timer turn
    await until(() => fired.length === 3, "the three that do not throw");
  } finally {
    globalThis.removeEventListener("error", onError);
  }
  assert.deepEqual(fired.map((f) => f.name), ["before", "after", "later"]);
  assert.equal(errors.length, 1);
  assert.match(String(errors[0]), /boom/);
});

/** Runs code in a child Deno with TimerList imported; its output once it exits (at most 30 s). */
async function inChild(code: string): Promise<string> {
  const module = new URL("../../src/server/http/timer_list.ts", import.meta.url).href;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", `import { TimerList } from ${JSON.stringify(module)};\n${code}`],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const kill = setTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    const out = await child.output();
    assert.equal(out.code, 0, "the child exits by itself, not killed at 30 s");
    return new TextDecoder().decode(out.stdout);
  } finally {
    clearTimeout(kill);
  }
}

Deno.test("the timer holds the process open exactly while a deadline waits", async () => {
  // Cancelled: the timer stays armed for 60 s but holds nothing; the process ends at once.
  assert.equal(
    await inChild(`const l = new TimerList(60_000); l.start(() => console.log("fired"))();`),
    "",
  );
  // Waiting: the process stays until the deadline fires, also when it was started after the list
  // had been emptied (the timer is held again).
  assert.equal(
    await inChild(`const l = new TimerList(200); l.start(() => console.log("first"));`),
    "first\n",
  );
  assert.equal(
    await inChild(
      `const l = new TimerList(200); l.start(() => console.log("cancelled"))();\n` +
        `setTimeout(() => l.start(() => console.log("second")), 0);`,
    ),
    "second\n",
  );
});
