/**
 * The engine's acknowledgement window starts when a worker is ready: a call stopped while its
 * worker is still loading its modules ends at once, and the worker is kept while it loads (not
 * abandoned and replaced, however long the load takes); once loaded, the next call runs.
 */
import assert from "node:assert/strict";
import { ACK_MS, Engine } from "../../src/workspace/engine/pool.ts";
import { runOperation, Workspace, type WorkspaceError } from "../../mod.ts";
import { withTempDir } from "../_support/fs.ts";

const SLOW_BOOT = new URL("./fixtures/slow_boot_worker.ts", import.meta.url);

Deno.test("a call stopped while its worker loads: CANCELLED at once, the worker is not abandoned", async () => {
  await withTempDir(async (root) => {
    await Deno.writeTextFile(`${root}/a.txt`, "needle\n");
    // The worker loads until this file exists (slow_boot_worker.ts).
    const gate = `${await Deno.makeTempDir({ prefix: "wmcp-boot-" })}/open`;
    Deno.env.set("WMCP_TEST_BOOT_GATE", gate);
    const ws = await Workspace.open({
      root,
      engine: "workers",
      engineWorker: SLOW_BOOT,
      engineSize: 1,
    });
    try {
      assert.ok(ws.engine instanceof Engine);
      const ac = new AbortController();
      const p = runOperation({ workspace: ws, signal: ac.signal }, "search_text", {
        query: "needle",
      })
        .then(() => "done", (e: WorkspaceError) => e.code);
      // Stopped once the call is the (still loading) worker's: a fixed delay could fire before the
      // call reaches the engine on a busy machine, and then nothing is stopped while it loads.
      const deadline = Date.now() + 30_000;
      while (ws.engine.stats.busy === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 2));
      }
      assert.equal(ws.engine.stats.busy, 1, JSON.stringify(ws.engine.stats));
      ac.abort();
      assert.equal(await p, "CANCELLED");
      // The caller is answered without waiting for the worker: it is still loading (busy with
      // the stopped call, which it has not acknowledged).
      assert.equal(ws.engine.stats.busy, 1, JSON.stringify(ws.engine.stats));
      // Well past ACK_MS while it still loads: a window counted from the dispatch would have
      // abandoned it by now.
      await new Promise((r) => setTimeout(r, 4 * ACK_MS));
      assert.equal(ws.engine.stats.busy, 1, JSON.stringify(ws.engine.stats));
      assert.equal(ws.engine.stats.abandoned, 0, JSON.stringify(ws.engine.stats));
      // The load ends; the worker's ACK_MS window starts now and the next call runs. Whether the
      // ready worker reaches its first checkpoint within those 100 ms is up to the scheduler (on
      // a machine whose cores are busy it may not, and is replaced, by design), so what is
      // asserted past this point is that the call runs on one live worker, not which one.
      await Deno.writeTextFile(gate, "");
      const found = await runOperation({ workspace: ws }, "search_text", { query: "needle" }) as {
        matches: unknown[];
      };
      assert.equal(found.matches.length, 1);
      assert.ok(ws.engine.stats.abandoned <= 1, JSON.stringify(ws.engine.stats));
      assert.equal(ws.engine.stats.live, 1);
    } finally {
      ws.engine.close();
      Deno.env.delete("WMCP_TEST_BOOT_GATE");
      await Deno.remove(gate.slice(0, -"/open".length), { recursive: true });
    }
  });
});
