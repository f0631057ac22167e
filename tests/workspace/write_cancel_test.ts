/**
 * What a cancelled or timed-out write leaves behind, through the library (AbortSignal): every
 * write operation has a commit point; before it, cancellation and the time budget end the call
 * with CANCELLED / TIME_BUDGET_EXCEEDED and nothing changed; after it, the call completes.
 */
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import { runOperation, Workspace } from "../../mod.ts";
import { sha256, TEMP_PREFIX, withTempDir } from "./_helpers.ts";

/** Every entry below dir: relative path -> "file:<content>", "dir" or "link:<target>". */
function snapshot(dir: string, rel = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of Deno.readDirSync(rel ? `${dir}/${rel}` : dir)) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isSymlink) out[p] = `link:${Deno.readLinkSync(`${dir}/${p}`)}`;
    else if (e.isDirectory) {
      out[p] = "dir";
      Object.assign(out, snapshot(dir, p));
    } else out[p] = `file:${Deno.readTextFileSync(`${dir}/${p}`)}`;
  }
  return out;
}

/** One write call, its fixture and the tree it leaves when it completes. */
interface WriteCase {
  name: string;
  op: string;
  args: Record<string, unknown>;
  /** The fixture's tree after the call completed. */
  after: (before: Record<string, string>) => Record<string, string>;
  /**
   * Each entry is its own commit (recursive delete_path, a directory's copy_path): it can stop
   * part-way. Given the tree before and the details of a stop right after its first commit,
   * checks them and returns the tree then.
   */
  partial?: (before: Record<string, string>, details: Record<string, unknown>) => Record<
    string,
    string
  >;
}

const FIXTURE: Record<string, string> = {
  "a.txt": "file:old line\n",
  "keep": "dir",
  "keep/k.txt": "file:k\n",
  "tree": "dir",
  "tree/x.txt": "file:x\n",
  "tree/sub": "dir",
  "tree/sub/y.txt": "file:y\n",
};

function without(s: Record<string, string>, prefix: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(s).filter(([k]) => k !== prefix && !k.startsWith(prefix + "/")),
  );
}

const CASES: WriteCase[] = [
  {
    name: "write_file (new file)",
    op: "write_file",
    args: { path: "new.txt", content: "hello\n" },
    after: (b) => ({ ...b, "new.txt": "file:hello\n" }),
  },
  {
    name: "write_file (overwrite)",
    op: "write_file",
    args: { path: "a.txt", content: "replaced\n", ifExists: "overwrite", confirm: true },
    after: (b) => ({ ...b, "a.txt": "file:replaced\n" }),
  },
  {
    name: "write_file (createParents)",
    op: "write_file",
    args: { path: "p/q/new.txt", content: "deep\n", createParents: true },
    after: (b) => ({ ...b, "p": "dir", "p/q": "dir", "p/q/new.txt": "file:deep\n" }),
  },
  {
    name: "edit_file",
    op: "edit_file",
    args: { path: "a.txt", edits: [{ oldText: "old", newText: "new" }] },
    after: (b) => ({ ...b, "a.txt": "file:new line\n" }),
  },
  {
    name: "create_directory",
    op: "create_directory",
    args: { path: "m/n" },
    after: (b) => ({ ...b, "m": "dir", "m/n": "dir" }),
  },
  {
    name: "move_path",
    op: "move_path",
    args: { source: "a.txt", destination: "b.txt" },
    after: (b) => ({ ...without(b, "a.txt"), "b.txt": b["a.txt"] }),
  },
  {
    name: "delete_path (file)",
    op: "delete_path",
    args: { path: "a.txt", confirm: true },
    after: (b) => without(b, "a.txt"),
  },
  {
    name: "delete_path (recursive)",
    op: "delete_path",
    args: { path: "tree", recursive: true, confirm: true },
    after: (b) => without(b, "tree"),
    partial: (b, d) => {
      assert.equal(d.removedCount, 1);
      const left = without(b, (d.removed as string[])[0]);
      assert.equal(left["tree"], "dir", "the target itself is removed last");
      return left;
    },
  },
  {
    name: "copy_path (file)",
    op: "copy_path",
    args: { source: "a.txt", destination: "c.txt" },
    after: (b) => ({ ...b, "c.txt": b["a.txt"] }),
  },
  {
    name: "copy_path (directory)",
    op: "copy_path",
    args: { source: "tree", destination: "tree2", recursive: true },
    after: (b) => ({
      ...b,
      ...Object.fromEntries(
        Object.entries(b).filter(([k]) => k === "tree" || k.startsWith("tree/")).map((
          [k, v],
        ) => [`tree2${k.slice("tree".length)}`, v]),
      ),
    }),
    partial: (b, d) => {
      // The first commit is the destination directory: it is the one entry copied.
      assert.equal(d.committed, true);
      assert.equal(d.copiedCount, 1);
      assert.deepEqual(d.copied, ["tree2"]);
      return { ...b, "tree2": "dir" };
    },
  },
];

/**
 * A tree a write that is its own commit per entry left when it stopped part-way: every entry has
 * its value before or its value after the whole write (a file is whole, never a third content),
 * and what both keep is there.
 */
function assertPartial(
  now: Record<string, string>,
  before: Record<string, string>,
  after: Record<string, string>,
  label: string,
): void {
  for (const [k, v] of Object.entries(now)) {
    assert.ok(v === before[k] || v === after[k], `${label}: ${k} is ${v}`);
  }
  for (const k of Object.keys(before)) {
    if (k in after) assert.equal(now[k], before[k], `${label}: ${k} kept`);
  }
}

async function makeFixture(dir: string): Promise<Record<string, string>> {
  for (const [p, v] of Object.entries(FIXTURE)) {
    if (v === "dir") await Deno.mkdir(`${dir}/${p}`, { recursive: true });
    else await Deno.writeTextFile(`${dir}/${p}`, v.slice("file:".length));
  }
  const s = snapshot(dir);
  assert.deepEqual(s, FIXTURE);
  return s;
}

type Outcome =
  | { kind: "ok"; result: Record<string, unknown> }
  | { kind: "error"; code: string; message: string; details?: Record<string, unknown> };

async function run(
  ws: Workspace,
  c: WriteCase,
  signal?: AbortSignal,
): Promise<Outcome> {
  try {
    return { kind: "ok", result: await runOperation({ workspace: ws, signal }, c.op, c.args) };
  } catch (err) {
    const e = err as { code: string; message: string; details?: Record<string, unknown> };
    return { kind: "error", code: e.code, message: e.message, details: e.details };
  }
}

/** Replaces properties of an object for the duration of fn, then puts the originals back. */
async function patched<T>(
  target: object,
  patches: Record<string, (orig: (...a: unknown[]) => unknown) => (...a: unknown[]) => unknown>,
  fn: () => Promise<T>,
): Promise<T> {
  const t = target as Record<string, (...a: unknown[]) => unknown>;
  const originals = Object.fromEntries(Object.keys(patches).map((k) => [k, t[k]]));
  for (const [k, make] of Object.entries(patches)) t[k] = make(originals[k].bind(target));
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(originals)) t[k] = v;
  }
}

/** The asynchronous file-system calls a write makes, wrapped to run `after` once each resolves. */
function asyncFsPatches(after: () => void) {
  const wrap = (orig: (...a: unknown[]) => unknown) => async (...a: unknown[]) => {
    try {
      return await orig(...a);
    } finally {
      after();
    }
  };
  return {
    deno: { lstat: wrap, stat: wrap, realPath: wrap, readLink: wrap },
    fsp: { open: wrap },
  };
}

function assertNoTemp(dir: string): void {
  const temps = Object.keys(snapshot(dir)).filter((p) =>
    p.split("/").pop()!.startsWith(TEMP_PREFIX)
  );
  assert.deepEqual(temps, [], "no temporary entry is left");
}

for (const c of CASES) {
  Deno.test(`${c.name}: cancelled while it waits for the workspace lock -> CANCELLED, nothing changed`, async () => {
    await withTempDir(async (dir) => {
      const before = await makeFixture(dir);
      const ws = await Workspace.open({ root: dir, writable: true });
      const release = await ws.lock.acquire("read"); // a slow reader
      const ac = new AbortController();
      const pending = run(ws, c, ac.signal);
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(ws.lock.waiting, 1, "the write waits behind the reader");
      ac.abort();
      const out = await pending;
      release();
      assert.equal(out.kind === "error" && out.code, "CANCELLED");
      assert.deepEqual(snapshot(dir), before);
    });
  });

  Deno.test(`${c.name}: timed out behind a slow reader (maxOperationMs) -> TIME_BUDGET_EXCEEDED, nothing changed`, async () => {
    await withTempDir(async (dir) => {
      const before = await makeFixture(dir);
      const ws = await Workspace.open({
        root: dir,
        writable: true,
        limits: { maxOperationMs: 150 },
      });
      const release = await ws.lock.acquire("read");
      try {
        const out = await run(ws, c);
        assert.equal(out.kind === "error" && out.code, "TIME_BUDGET_EXCEEDED");
      } finally {
        release();
      }
      assert.deepEqual(snapshot(dir), before);
      // The lock is free again, and the same call then completes: through a workspace on the same
      // root with the default budget, so that completing does not race 150 ms on a loaded machine
      // (a directory's copy_path flushes each file and directory).
      assert.deepEqual([ws.lock.readers, ws.lock.writing, ws.lock.waiting], [0, false, 0]);
      const again = await run(await Workspace.open({ root: dir, writable: true }), c);
      assert.equal(again.kind, "ok", JSON.stringify(again));
      assert.deepEqual(snapshot(dir), c.after(before));
    });
  });

  Deno.test(`${c.name}: cancelled at each of its asynchronous steps -> CANCELLED with nothing changed before the commit point, completed after it`, async () => {
    // Trial n aborts the signal right after the n-th asynchronous file-system call of the
    // operation resolves: every point where a cancellation can be observed, in order. Each
    // trial must end in exactly one of the two states; never a third.
    let cancelled = 0;
    let completedAfterAbort = 0;
    let stoppedPartWay = 0;
    for (let n = 1; n <= 200; n++) {
      const done = await withTempDir(async (dir) => {
        const before = await makeFixture(dir);
        const ws = await Workspace.open({ root: dir, writable: true });
        const ac = new AbortController();
        let calls = 0;
        const patches = asyncFsPatches(() => {
          if (++calls === n) ac.abort();
        });
        // The first rename or link is the first change a caller can see (the commit point):
        // it must never happen once the signal has aborted.
        let committed = false;
        let committedAfterAbort = false;
        const commit = (orig: (...a: unknown[]) => unknown) => (...a: unknown[]) => {
          if (!committed) committedAfterAbort = ac.signal.aborted;
          committed = true;
          return orig(...a);
        };
        const out = await patched(
          Deno,
          { ...patches.deno, renameSync: commit, linkSync: commit },
          () => patched(fsp, patches.fsp, () => run(ws, c, ac.signal)),
        );
        assert.equal(committedAfterAbort, false, `trial ${n}: committed after the abort`);
        assertNoTemp(dir);
        const partWay = out.kind === "error" &&
          (out.details?.removedCount !== undefined || out.details?.copiedCount !== undefined);
        if (out.kind === "error" && c.partial && partWay) {
          // Stopped part-way: it changed what it names and nothing else, every file whole.
          assert.equal(out.code, "CANCELLED", `trial ${n}: ${out.message}`);
          assertPartial(snapshot(dir), before, c.after(before), `trial ${n}`);
          stoppedPartWay++;
        } else if (out.kind === "error") {
          assert.equal(out.code, "CANCELLED", `trial ${n}: ${out.message}`);
          assert.deepEqual(snapshot(dir), before, `trial ${n}: nothing changed`);
          cancelled++;
        } else {
          assert.deepEqual(snapshot(dir), c.after(before), `trial ${n}: completed`);
          if (ac.signal.aborted) completedAfterAbort++;
        }
        return !ac.signal.aborted; // the operation made fewer than n calls: all positions seen
      });
      if (done) break;
    }
    assert.ok(cancelled > 0, "some trial cancelled before the commit point");
    assert.ok(
      completedAfterAbort + stoppedPartWay > 0,
      "some trial was cancelled after the commit point",
    );
  });

  Deno.test(
    `${c.name}: cancelled right after its commit (the rename or link) -> ${
      c.partial ? "stops after that one entry and says so" : "completes and returns its result"
    }`,
    async () => {
      await withTempDir(async (dir) => {
        const before = await makeFixture(dir);
        const ws = await Workspace.open({ root: dir, writable: true });
        const ac = new AbortController();
        const abortAfter = (orig: (...a: unknown[]) => unknown) => (...a: unknown[]) => {
          const r = orig(...a);
          ac.abort();
          return r;
        };
        const out = await patched(
          Deno,
          { renameSync: abortAfter, linkSync: abortAfter },
          () => run(ws, c, ac.signal),
        );
        assert.ok(ac.signal.aborted);
        assertNoTemp(dir);
        if (c.partial) {
          // The exceptions: every entry of a recursive delete or copy is its own commit.
          assert.equal(out.kind === "error" && out.code, "CANCELLED", JSON.stringify(out));
          const d = (out as { details?: Record<string, unknown> }).details ?? {};
          assert.deepEqual(snapshot(dir), c.partial(before, d));
          return;
        }
        assert.equal(out.kind, "ok", JSON.stringify(out));
        assert.deepEqual(snapshot(dir), c.after(before));
      });
    },
  );
}

Deno.test("write_file, move_path: the time budget is checked at the commit point too -> TIME_BUDGET_EXCEEDED, nothing changed", async () => {
  for (const c of [CASES[0], CASES[5]]) {
    await withTempDir(async (dir) => {
      const before = await makeFixture(dir);
      const ws = await Workspace.open({
        root: dir,
        writable: true,
        limits: { maxOperationMs: 50 },
      });
      // A slow file system: each realPath takes 80 ms, so the budget is gone before the commit.
      const slow = (orig: (...a: unknown[]) => unknown) => async (...a: unknown[]) => {
        await new Promise((r) => setTimeout(r, 80));
        return orig(...a);
      };
      const out = await patched(Deno, { realPath: slow }, () => run(ws, c));
      assert.equal(out.kind === "error" && out.code, "TIME_BUDGET_EXCEEDED", JSON.stringify(out));
      assert.equal(out.kind === "error" && out.details?.committed, false);
      assert.deepEqual(snapshot(dir), before);
      assertNoTemp(dir);
    });
  }
});

Deno.test("delete_path recursive cancelled part-way: CANCELLED naming what it removed; the target is removed last; a retry finishes", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/tree/sub`, { recursive: true });
    for (let i = 0; i < 20; i++) await Deno.writeTextFile(`${dir}/tree/sub/f${i}.txt`, "x");
    const ws = await Workspace.open({ root: dir, writable: true });
    const ac = new AbortController();
    let removals = 0;
    const counting = (orig: (...a: unknown[]) => unknown) => (...a: unknown[]) => {
      const r = orig(...a);
      if (++removals === 5) ac.abort();
      return r;
    };
    const args = { path: "tree", recursive: true, confirm: true };
    const c = { name: "", op: "delete_path", args, after: () => ({}) };
    const out = await patched(Deno, { removeSync: counting }, () => run(ws, c, ac.signal));
    assert.equal(out.kind === "error" && out.code, "CANCELLED", JSON.stringify(out));
    const details = (out as unknown as { details: { removedCount: number; removed: string[] } })
      .details;
    assert.equal(details.removedCount, 5);
    const left = snapshot(dir);
    assert.equal(left["tree"], "dir", "the target itself is removed last");
    for (const p of details.removed) assert.equal(left[p], undefined, `${p} is gone`);
    assert.equal(Object.keys(left).length, 2 + 20 - 5, "exactly what it names is gone");
    // The same call again finishes the job; once more is NOT_FOUND (it is already gone).
    assert.equal((await run(ws, c)).kind, "ok");
    assert.deepEqual(snapshot(dir), {});
    const third = await run(ws, c);
    assert.equal(third.kind === "error" && third.code, "NOT_FOUND");
  });
});

Deno.test("the recipe after an unknown outcome: read_file's sha256 and expectedSha256 tell whether a write happened", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/a.txt`, "v1\n");
    const ws = await Workspace.open({ root: dir, writable: true });
    const call = (name: string, args: Record<string, unknown>, signal?: AbortSignal) =>
      runOperation({ workspace: ws, signal }, name, args);
    const seen = await call("read_file", { path: "a.txt", endLine: 1 }) as { sha256: string };
    assert.equal(seen.sha256, sha256("v1\n"));
    const write = {
      path: "a.txt",
      content: "v2\n",
      ifExists: "overwrite",
      confirm: true,
      expectedSha256: seen.sha256,
    };
    // The caller cancels; the write had passed its commit point (the caller never learns it).
    const ac = new AbortController();
    const abortAfter = (orig: (...a: unknown[]) => unknown) => (...a: unknown[]) => {
      const r = orig(...a);
      ac.abort();
      return r;
    };
    await patched(Deno, { renameSync: abortAfter }, () => call("write_file", write, ac.signal));
    // Step 1: the file's sha256 now is the sha256 of the content sent: the write happened.
    const now = await call("read_file", { path: "a.txt", endLine: 1 }) as { sha256: string };
    assert.equal(now.sha256, sha256("v2\n"));
    // Step 2 (or instead): retrying the same call is safe: CONFLICT, details.actual says it is ours.
    await assert.rejects(
      call("write_file", write),
      (e: { code: string; details: { actual: string } }) =>
        e.code === "CONFLICT" && e.details.actual === sha256("v2\n"),
    );
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "v2\n");

    // edit_file: a dry run says the sha256 the edit will produce.
    const edit = {
      path: "a.txt",
      edits: [{ oldText: "v2", newText: "v3" }],
      expectedSha256: now.sha256,
    };
    const dry = await call("edit_file", { ...edit, dryRun: true }) as { sha256After: string };
    const ac2 = new AbortController();
    ac2.abort(); // cancelled before it ran
    await assert.rejects(
      call("edit_file", edit, ac2.signal),
      (e: { code: string }) => e.code === "CANCELLED",
    );
    const unchanged = await call("read_file", { path: "a.txt", endLine: 1 }) as { sha256: string };
    assert.equal(unchanged.sha256, now.sha256, "still sha256Before: not applied, retry it");
    const applied = await call("edit_file", edit) as { sha256After: string };
    assert.equal(applied.sha256After, dry.sha256After);
  });
});
