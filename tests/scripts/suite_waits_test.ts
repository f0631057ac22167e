/**
 * The suite's event waits (tests/_support/wait.ts): each ends on its event, and is false only
 * when none came.
 */
import assert from "node:assert/strict";
import { Changes, GrowingText, waitForFile } from "../_support/wait.ts";
import { withTempDir } from "../_support/fs.ts";

Deno.test("waitForFile: a file already there, one made later, one renamed in, and none", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/there`, "");
    assert.equal(await waitForFile(`${dir}/there`, 1000), true);

    const later = waitForFile(`${dir}/later`, 30_000);
    await Deno.writeTextFile(`${dir}/later`, "x");
    assert.equal(await later, true);

    await Deno.mkdir(`${dir}/sub`);
    await Deno.writeTextFile(`${dir}/sub/moved`, "x");
    const renamed = waitForFile(`${dir}/moved`, 30_000);
    await Deno.rename(`${dir}/sub/moved`, `${dir}/moved`);
    assert.equal(await renamed, true);

    assert.equal(await waitForFile(`${dir}/never`, 50), false);
  });
});

Deno.test("Changes and GrowingText: a wait ends on the change that makes it hold", async () => {
  const changes = new Changes();
  let n = 0;
  const three = changes.until(() => n >= 3, 30_000);
  for (let i = 0; i < 3; i++) {
    n++;
    changes.notify();
  }
  assert.equal(await three, true);
  assert.equal(await changes.until(() => n > 3, 20), false);

  const text = new GrowingText();
  const ready = text.waitFor((t) => t.includes("ready\n"), 30_000);
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const part of ["wmcp: rea", "dy\n"]) c.enqueue(new TextEncoder().encode(part));
      c.close();
    },
  });
  await text.drain(body);
  assert.equal(await ready, true);
  assert.equal(text.text, "wmcp: ready\n");
});
