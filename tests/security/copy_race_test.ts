/**
 * copy_path while a directory of the source is swapped for a symbolic link to an outside
 * directory holding the same names (secret content).
 *
 * 1. At every point of the copy (deterministic): trial n swaps the directory, for good, right
 *    after the copy's n-th file-system call (every WorkspaceFs call and every checked open), until
 *    a trial's copy makes fewer calls than n. Each trial must end in a success or a typed refusal,
 *    and in every one nothing outside is read into the destination, nothing outside changes, no
 *    outside name or path is revealed, every file at the destination is an inside file whole, and
 *    no temporary file is left.
 * 2. Under a racer (tests/security/_swapper.py exchanging the directory and the link in a tight
 *    loop): typed refusals only, nothing outside changed; destination files with outside content
 *    are counted and printed, with plain reads by path under the same racer as the baseline. A
 *    swap made and undone between two checks is the in-process window of decision 0010 (the
 *    kernel sandbox has no outside): the checks must stop at least three in four of what a plain
 *    read lets out, as for read_file (read_race_test.ts).
 */
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import { runOperation, Workspace, WorkspaceError } from "../../mod.ts";
import { denoFs } from "../../src/workspace/fs/deno.ts";
import type { WorkspaceFs } from "../../src/workspace/fs/types.ts";
import { snapshotSync } from "../_support/fs.ts";

const SECRET = "OUTSIDE-SECRET-COPY-5d2c";
const SWAPPER = new URL("./_swapper.py", import.meta.url).pathname;
/** Typed refusals a copy may meet while its source is swapped. */
const REFUSALS = new Set(["CHANGED_DURING_OPERATION", "OUTSIDE_WORKSPACE", "NOT_FOUND"]);

/**
 * base/ws/src: top.txt, d/{f1.txt, sub/f3.txt, ln -> f1.txt}; base/outside: the same names under
 * d's place, secret content, and one name only outside. Returns base (real path).
 */
async function makeBase(): Promise<string> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-crace-" }));
  for (const [root, text] of [[`${base}/ws/src/d`, "inside"], [`${base}/outside`, SECRET]]) {
    await Deno.mkdir(`${root}/sub`, { recursive: true });
    for (const f of ["f1.txt", "sub/f3.txt"]) {
      await Deno.writeTextFile(`${root}/${f}`, `${text} ${f}\n`);
    }
    await Deno.symlink("f1.txt", `${root}/ln`);
  }
  await Deno.writeTextFile(`${base}/outside/${SECRET}.name`, "a name only outside\n");
  await Deno.writeTextFile(`${base}/ws/src/top.txt`, "inside top\n");
  return base;
}

/** Swaps base/ws/src/d for a link to base/outside, for good. */
function swap(base: string): void {
  Deno.renameSync(`${base}/ws/src/d`, `${base}/ws/d.away`);
  Deno.symlinkSync(`${base}/outside`, `${base}/ws/src/d`);
}

/** Puts base/ws back as makeBase left it: d in its place, no destination. */
function reset(base: string): void {
  if (Deno.lstatSync(`${base}/ws/src/d`).isSymlink) {
    Deno.removeSync(`${base}/ws/src/d`);
    Deno.renameSync(`${base}/ws/d.away`, `${base}/ws/src/d`);
  }
  try {
    Deno.removeSync(`${base}/ws/dst`, { recursive: true });
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

/** denoFs with `after(name)` called after each call (an async one once it resolved). */
function countingFs(after: (name: string) => void): WorkspaceFs {
  const fs: Record<string, unknown> = { ...denoFs };
  for (const [name, f] of Object.entries(denoFs)) {
    if (typeof f !== "function" || name === "cwd") continue;
    fs[name] = (...a: unknown[]) => {
      const r = (f as (...a: unknown[]) => unknown)(...a);
      if (r instanceof Promise) return r.finally(() => after(name));
      after(name);
      return r;
    };
  }
  return fs as unknown as WorkspaceFs;
}

/** Asserts what every trial must leave: nothing from outside in W, outside unchanged, no temp. */
function assertContained(base: string, outsideBefore: unknown, label: string): void {
  assert.deepEqual(snapshotSync(`${base}/outside`), outsideBefore, `${label}: outside changed`);
  const dst = `${base}/ws/dst`;
  let inW: Record<string, { type: string; content?: string; target?: string }> = {};
  try {
    inW = snapshotSync(dst);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  for (const [p, e] of Object.entries(inW)) {
    assert.ok(!p.includes(".wmcp-tmp-"), `${label}: a temporary entry was left: ${p}`);
    assert.ok(!p.includes(SECRET), `${label}: an outside name was copied: ${p}`);
    if (e.type === "file") {
      assert.ok(!e.content!.includes(SECRET), `${label}: ${p} holds outside content`);
      assert.match(e.content!, /^inside /, `${label}: ${p} is an inside file, whole`);
    }
    assert.ok(e.type !== "other", `${label}: ${p} is a special file`);
  }
}

Deno.test("copy_path with a source directory swapped for a link out at each of its steps: nothing from outside, ever", async () => {
  const base = await makeBase();
  const outsideBefore = snapshotSync(`${base}/outside`);
  const open = fsp.open;
  let successes = 0;
  const codes: Record<string, number> = {};
  try {
    for (let n = 1;; n++) {
      let calls = 0;
      let armed = false; // the workspace's opening makes calls of its own
      const hit = () => {
        if (armed && ++calls === n) swap(base);
      };
      // deno-lint-ignore no-explicit-any
      (fsp as any).open = (...a: Parameters<typeof fsp.open>) => open(...a).finally(hit);
      const ws = await Workspace.open({ root: `${base}/ws`, writable: true, fs: countingFs(hit) });
      armed = true;
      try {
        const args = { source: "src", destination: "dst", recursive: true };
        const r = await runOperation({ workspace: ws }, "copy_path", args);
        successes++;
        assert.ok(!JSON.stringify(r).includes(SECRET), `trial ${n}: the result reveals O`);
      } catch (err) {
        assert.ok(err instanceof WorkspaceError, `trial ${n}: an untyped failure: ${err}`);
        assert.ok(REFUSALS.has(err.code), `trial ${n}: ${err.code}: ${err.message}`);
        const json = JSON.stringify(err.toJSON());
        assert.ok(!json.includes(SECRET) && !json.includes(`${base}/outside`), `trial ${n}`);
        codes[err.code] = (codes[err.code] ?? 0) + 1;
      } finally {
        // deno-lint-ignore no-explicit-any
        (fsp as any).open = open;
        ws.engine.close();
      }
      assertContained(base, outsideBefore, `trial ${n}`);
      reset(base);
      if (calls < n) {
        // This copy made fewer calls than n: every point was tried, this one with no swap.
        console.error(
          `copy_path swap points: ${n - 1}; ${successes} copies completed, refused: ${
            JSON.stringify(codes)
          }`,
        );
        assert.ok(Object.keys(codes).length > 0, "some swap was refused");
        assert.ok(successes > 1, "some copy completed after a swap once d was copied");
        return;
      }
    }
  } finally {
    // deno-lint-ignore no-explicit-any
    (fsp as any).open = open;
    await Deno.remove(base, { recursive: true });
  }
});

/** Whether something is at path (a link not followed). */
function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** One run of copies under the racer; returns its tally. */
async function raceCopies(maxMs: number) {
  const base = await makeBase();
  const outsideBefore = snapshotSync(`${base}/outside`);
  const ws = await Workspace.open({ root: `${base}/ws`, writable: true });
  const t = { attempts: 0, ok: 0, refused: 0, escapes: 0, plain: 0, plainEscapes: 0 };
  const racer = new Deno.Command("python3", {
    args: [SWAPPER, `${base}/ws/src/d`, `${base}/ws/link`, String(maxMs / 1000 + 5)],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  });
  await Deno.symlink(`${base}/outside`, `${base}/ws/link`);
  const child = racer.spawn();
  const out = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    assert.match((await out.read()).value ?? "", /ready/);
    const started = Date.now();
    for (let i = 0; Date.now() - started < maxMs; i++) {
      t.attempts++;
      const args = { source: "src", destination: `dst${i}`, recursive: true };
      try {
        await runOperation({ workspace: ws }, "copy_path", args);
        t.ok++;
      } catch (err) {
        assert.ok(err instanceof WorkspaceError, `an untyped failure: ${err}`);
        assert.ok(REFUSALS.has(err.code), `${err.code}: ${err.message}`);
        const json = JSON.stringify(err.toJSON());
        assert.ok(!json.includes(SECRET), `an error reveals an outside name: ${json}`);
        t.refused++;
      }
      const copied = exists(`${base}/ws/dst${i}`) ? snapshotSync(`${base}/ws/dst${i}`) : {};
      const leaked = Object.entries(copied).some(([p, e]) =>
        p.includes(SECRET) || (e.content ?? "").includes(SECRET)
      );
      if (leaked) t.escapes++;
      for (const p of Object.keys(copied)) {
        assert.ok(!p.includes(".wmcp-tmp-"), `a temporary entry was left: ${p}`);
      }
      // The baseline: the same file read the plain way, by its path, under the same racer.
      try {
        const plain = await Deno.readTextFile(`${base}/ws/src/d/f1.txt`);
        t.plain++;
        if (plain.includes(SECRET)) t.plainEscapes++;
      } catch {
        // a look-up that met the swap half-way
      }
    }
    assert.deepEqual(snapshotSync(`${base}/outside`), outsideBefore, "outside changed");
  } finally {
    await child.stdin.close();
    while (!(await out.read()).done) { /* drain */ }
    await child.status;
    ws.engine.close();
    await Deno.remove(base, { recursive: true });
  }
  return t;
}

Deno.test("copy_path under an outside swapper: typed refusals, nothing outside changed, escapes rare", async () => {
  let t = await raceCopies(2000);
  for (let round = 2; round <= 3 && t.plain < 30; round++) {
    const more = await raceCopies(2000);
    t = Object.fromEntries(
      Object.entries(t).map(([k, v]) => [k, v + more[k as keyof typeof t]]),
    ) as typeof t;
  }
  console.log(
    `copy_path: ${t.attempts} copies, ${t.ok} completed, ${t.refused} refused, ${t.escapes} ` +
      `ESCAPES; plain reads: ${t.plainEscapes} of ${t.plain} escaped`,
  );
  assert.ok(t.plain >= 30, `only ${t.plain} plain samples in three rounds`);
  assert.ok(t.plainEscapes * 10 >= t.plain, `the racer raced: ${t.plainEscapes} of ${t.plain}`);
  assert.ok(
    t.escapes * t.plain * 4 <= t.plainEscapes * t.attempts,
    `${t.escapes} of ${t.attempts} copies escaped; plain reads ${t.plainEscapes} of ${t.plain}`,
  );
});
