/**
 * Runaway compilation and runaway workers (issue 8 review): hostile patterns compile in the
 * engine job, never on the server's thread; oversized patterns and programs are refused as
 * INVALID_ARGUMENT naming the argument (never IO_ERROR); a long literal scan stops when
 * cancelled; abandoned workers are capped at the pool size and a queue stuck behind them
 * ends in TIME_BUDGET_EXCEEDED.
 */
import assert from "node:assert/strict";
import { withTempDir } from "../_support/fs.ts";
import { runOperation, Workspace } from "../../mod.ts";
import { WorkspaceError } from "../../src/workspace/errors.ts";
import { DEFAULT_GLOB_LIMITS } from "../../src/workspace/globs.ts";
import {
  MAX_LITERAL_LENGTH,
  MAX_REGEX_LENGTH,
  MAX_REGEX_PROGRAM,
} from "../../src/workspace/query.ts";

/** Runs fn in a fresh temporary root holding a.txt, removed afterwards. */
const withRoot = (fn: (root: string) => Promise<void>) =>
  withTempDir(fn, { prefix: "wmcp-compile-", files: { "a.txt": "alpha\n" } });

/** Runs `p`, counting 10 ms interval ticks until it settles. */
async function ticking<T>(
  p: () => Promise<T>,
): Promise<{ ticks: number; value?: T; err?: unknown }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  try {
    return { ticks, value: await p() };
  } catch (err) {
    return { ticks, err };
  } finally {
    clearInterval(timer);
  }
}

function invalid(err: unknown, argument: string): WorkspaceError {
  assert.ok(err instanceof WorkspaceError, String(err));
  assert.equal(err.code, "INVALID_ARGUMENT", err.message);
  assert.equal(err.argument, argument);
  return err;
}

Deno.test("hostile globs compile in the job: the event loop keeps ticking, the refusal is INVALID_ARGUMENT", async () => {
  await withRoot(async (root) => {
    const ws = await Workspace.open({ root, engine: "workers" });
    try {
      // 4 x ("*a" x 2000): 16,000 characters, under maxGlobTotalLength, so it is compiled
      // (on the main thread before, without a tick).
      let ticks = 0;
      const timer = setInterval(() => ticks++, 10);
      const t0 = performance.now();
      let outcome: unknown;
      try {
        outcome = await runOperation({ workspace: ws }, "find_files", {
          pattern: "*",
          exclude: Array.from({ length: 4 }, () => "*a".repeat(2000)),
        });
      } catch (err) {
        outcome = err;
      } finally {
        clearInterval(timer);
      }
      const ms = performance.now() - t0;
      if (outcome instanceof Error) invalid(outcome, "exclude");
      // Generous: a quarter of the ticks a free event loop would have had.
      assert.ok(ticks >= Math.floor(ms / 40) - 2, `${ticks} ticks in ${Math.round(ms)} ms`);

      // 4 x ("?" x 4000) = 16,000 characters: compiled in the job; refused by a bound or a
      // caught compile failure (never IO_ERROR), or accepted.
      const r = await ticking(() =>
        runOperation({ workspace: ws }, "find_files", {
          pattern: "*",
          exclude: Array.from({ length: 4 }, () => "?".repeat(4000)),
        })
      );
      if (r.err !== undefined) invalid(r.err, "exclude");

      // 30 x ("?" x 4000): over maxGlobTotalLength, refused on the calling thread, named.
      const total = await ticking(() =>
        runOperation({ workspace: ws }, "find_files", {
          pattern: "*",
          exclude: Array.from({ length: 30 }, () => "?".repeat(4000)),
        })
      );
      const e = invalid(total.err, "exclude");
      assert.equal(e.details?.name, "maxGlobTotalLength");
      assert.equal(e.details?.limit, DEFAULT_GLOB_LIMITS.maxGlobTotalLength);
      // The engine is still usable.
      const ok = await runOperation({ workspace: ws }, "find_files", { pattern: "*.txt" }) as {
        matches: { path: string }[];
      };
      assert.deepEqual(ok.matches.map((m) => m.path), ["a.txt"]);
    } finally {
      ws.engine.close();
    }
  });
});

Deno.test("regex bounds: length on the calling thread, program size in the job, both INVALID_ARGUMENT on query", async () => {
  await withRoot(async (root) => {
    const ws = await Workspace.open({ root, engine: "workers" });
    try {
      const long = await ticking(() =>
        runOperation({ workspace: ws }, "search_text", {
          query: "[a-z]{1000}".repeat(1200),
          regex: true,
          wholeWord: true,
        })
      );
      assert.equal(invalid(long.err, "query").details?.limit, MAX_REGEX_LENGTH);
      for (const wholeWord of [false, true]) {
        const big = await ticking(() =>
          runOperation({ workspace: ws }, "search_text", {
            query: "[a-z]{1000}".repeat(6),
            regex: true,
            wholeWord,
          })
        );
        assert.equal(invalid(big.err, "query").details?.limit, MAX_REGEX_PROGRAM);
      }
      // A bad regex is still INVALID_ARGUMENT with RE2's reason, now from the job.
      const bad = await ticking(() =>
        runOperation({ workspace: ws }, "search_text", { query: "(a", regex: true })
      );
      assert.match(invalid(bad.err, "query").message, /RE2/);
      const lit = await ticking(() =>
        runOperation({ workspace: ws }, "search_text", {
          query: "a".repeat(MAX_LITERAL_LENGTH + 1),
        })
      );
      assert.equal(invalid(lit.err, "query").details?.limit, MAX_LITERAL_LENGTH);
      // wholeWord regexes still match at word boundaries.
      const hit = await runOperation({ workspace: ws }, "search_text", {
        query: "alp\\w+",
        regex: true,
        wholeWord: true,
      }) as { matches: { column: number }[] };
      assert.deepEqual(hit.matches.map((m) => m.column), [1]);
    } finally {
      ws.engine.close();
    }
  });
});

Deno.test("a long literal over a 4 MiB line is linear, and stops when cancelled without abandoning its worker", async () => {
  await withRoot(async (root) => {
    await Deno.writeTextFile(`${root}/big.txt`, "a".repeat(4 * 1024 * 1024) + "\n");
    const ws = await Workspace.open({
      root,
      engine: "workers",
      limits: { maxSearchFileBytes: 8 * 1024 * 1024 },
    });
    try {
      const query = "a".repeat(2000) + "b" + "a".repeat(2000);
      const done = await runOperation({ workspace: ws }, "search_text", { query }) as {
        matches: unknown[];
        filesSearched: number;
      };
      assert.equal(done.matches.length, 0);
      assert.equal(done.filesSearched, 2);
      // Case-insensitive literals run on V8 in shrinking windows: cancel one mid-scan. The
      // worker must acknowledge the stop between windows instead of being abandoned. A worker
      // thread starved of CPU on a loaded machine can miss the 100 ms acknowledgement, so a
      // bounded number of attempts is allowed (each on a ready worker: the replacement of an
      // abandoned one gets its window only once it has loaded, engine_boot_test.ts); a scan
      // that never checks its stop flag is abandoned on every attempt and fails.
      let acknowledged = false;
      for (let attempt = 0; attempt < 5 && !acknowledged; attempt++) {
        const before = ws.engine.stats.abandoned;
        const ac = new AbortController();
        const p = runOperation({ workspace: ws, signal: ac.signal }, "search_text", {
          query,
          caseSensitive: false,
        }).then(() => "done", (e: WorkspaceError) => e.code);
        setTimeout(() => ac.abort(), 50);
        const code = await p;
        assert.ok(code === "CANCELLED" || code === "done", String(code));
        await new Promise((r) => setTimeout(r, 300));
        acknowledged = ws.engine.stats.abandoned === before;
      }
      assert.ok(acknowledged, `abandoned on every attempt: ${JSON.stringify(ws.engine.stats)}`);
    } finally {
      ws.engine.close();
    }
  });
});

Deno.test("abandoned workers are capped at the pool size; a queue behind them ends in TIME_BUDGET_EXCEEDED", async () => {
  await withRoot(async (root) => {
    // One 300,000-character line: RE2's NFA on a ~4,000-instruction program is stuck for
    // many seconds inside one synchronous call, where no checkpoint is reached.
    await Deno.writeTextFile(`${root}/line.txt`, "ab".repeat(150_000) + "\n");
    const ws = await Workspace.open({ root, engine: "workers", limits: { maxOperationMs: 1500 } });
    try {
      const size = ws.engine.size;
      const hostile = { query: "[a-z]{999}".repeat(4), regex: true };
      for (let i = 0; i < size + 2; i++) {
        const ac = new AbortController();
        const p = runOperation(
          { workspace: ws, signal: ac.signal },
          "search_text",
          hostile,
        )
          .then(() => "done", (e: WorkspaceError) => e.code);
        setTimeout(() => ac.abort(), 300);
        assert.ok(["CANCELLED", "TIME_BUDGET_EXCEEDED", "done"].includes(await p));
        const s = ws.engine.stats;
        assert.ok(s.abandonedAlive <= size, JSON.stringify(s));
        assert.ok(s.live + s.abandonedAlive <= 2 * size, JSON.stringify(s));
      }
      const s = ws.engine.stats;
      if (s.abandonedAlive === size) {
        // At the cap no thread is spawned: a new job waits, and its budget (counted from
        // run(), queue included) ends it.
        const live = s.live;
        const code = await runOperation({ workspace: ws }, "search_text", hostile)
          .then(() => "done", (e: WorkspaceError) => e.code);
        assert.ok(code === "TIME_BUDGET_EXCEEDED" || code === "done", code);
        assert.ok(ws.engine.stats.live <= Math.max(live, size));
        assert.ok(ws.engine.stats.abandonedAlive <= size);
      }
    } finally {
      ws.engine.close();
    }
  });
});
