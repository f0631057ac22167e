/**
 * Several roots under attack (issue 23, decision 0064): a later root keeps its own containment
 * while it is swapped, removed or linked across during an operation.
 *
 * Layout (fixture()): base/a is the first root (x.txt holds A_ONLY, sub/s.txt), base/b the second
 * (f.txt, d/g.txt, d/sub/h.txt, d/sub/i.txt, each "inside common NAME"); base/outside and
 * base/impostor hold B's names with SECRET content (and SECRET_NAME); base/link is a link to
 * base/outside. The calls address B by its absolute path, or walk every root (allRoots); both roots
 * take writes. Before any attack, each call is run once on B untouched and must reach it.
 *
 * 1. B swapped at every point of a call (in process, deterministic): trial n puts the link out or
 *    the impostor directory in B's place (alternately) right after the call's n-th file-system
 *    call (every path-taking call of Deno's API and node:fs the workspace layer makes; the walks
 *    run inline so theirs count too), for good, until a call makes fewer than n. read_file,
 *    list_directory, find_files on B, search_text over every root, write_file over a file of B
 *    and of a new file into B, a recursive copy_path from B into A.
 * 2. B swapped by another process (_root_swapper.py, renameat2 RENAME_EXCHANGE) at a moment of its
 *    own (a random delay within the call's duration), inside system calls and between them, and
 *    kept swapped until the call has returned: reads, read_files (whose path in A is always read),
 *    dry-run edits, listings, find_files and search_text on B and over every root, write_file into
 *    B (over a file and a new one), copies from B into A and from A into B.
 * 3. B removed while a recursive copy_path copies it into A: at every point, and by another process
 *    running rm -rf. A stopped copy that wrote something says what (committed, copied).
 * 4. A file of B replaced at every point by a link into A (absolute, relative) or out, during
 *    read_file, search_text, edit_file and copy_path of that file into A.
 *
 * Each asserts zero escapes (assertContained): no result or error holds SECRET, SECRET_NAME or an
 * outside path, or A_ONLY under a path of B; every failure is a typed WorkspaceError among
 * REFUSALS; nothing outside the roots changes and A's file never does; every file a copy leaves in
 * A is an inside file, whole, and no temporary entry is left in A (one left in B, whose directory
 * no verified path reached any more, must be named in the call's details.leftBehind: a call that
 * left the temporary name of a new file it had linked into place without naming it was the defect
 * this suite found in atomic.ts). One exception outside the roots, asserted narrowly:
 * decision 0010's window, where a swap lands between a write's last check and its temporary file's
 * creation (open O_CREAT|O_EXCL or mkdir by path, no openat in Deno): that empty, random-named
 * `.wmcp-tmp-*` file or directory then lands where B's name led, and the error names it in
 * details.leftBehind. A swap made *and undone* within one call is that window for reads and walks
 * too, measured (not zero) by read_race_test.ts, walk_race_test.ts and write_race_test.ts and
 * closed by the kernel sandbox, so the swaps here stay in place until the call returns.
 */
import assert from "node:assert/strict";
import nodeFs from "node:fs";
import fsp from "node:fs/promises";
import { runOperation, Workspace, WorkspaceError } from "../../mod.ts";
import { type SnapEntry, snapshotSync } from "../_support/fs.ts";
import { withTimeout } from "./_helpers.ts";

const ROOT_SWAPPER = new URL("./_root_swapper.py", import.meta.url).pathname;
const SECRET = "OUTSIDE-SECRET-ROOTS-3e9d";
const SECRET_NAME = "outside-only-name-77b1.txt";
/** The content of A's x.txt: never shown under a path of B, never changed. */
const A_ONLY = "A-ONLY-CONTENT-0c4f";
/** Typed refusals a call on a swapped, removed or re-linked root may meet. */
const REFUSALS = new Set([
  "CHANGED_DURING_OPERATION",
  "NOT_FOUND",
  "OUTSIDE_WORKSPACE",
  "NOT_A_DIRECTORY",
]);
const TEMP = ".wmcp-tmp-";

interface Fixture {
  base: string;
  a: string;
  b: string;
  outside: string;
  impostor: string;
  link: string;
  /** The outside and impostor directories as fixture() left them. */
  pristine: Record<string, Record<string, SnapEntry>>;
}

/** B's names below `dir` (and `extra` more files in d/more/), with `text` in every file. */
function fillLikeB(dir: string, text: string, extra = 0): void {
  Deno.mkdirSync(`${dir}/d/sub`, { recursive: true });
  const names = ["f.txt", "d/g.txt", "d/sub/h.txt", "d/sub/i.txt"];
  if (extra > 0) Deno.mkdirSync(`${dir}/d/more`);
  for (let i = 0; i < extra; i++) names.push(`d/more/m${i}.txt`);
  for (const name of names) Deno.writeTextFileSync(`${dir}/${name}`, `${text} common ${name}\n`);
}

function removeIfThere(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

/** (Re)creates the two roots as the module's words describe them. */
function makeRoots(f: Fixture, extra = 0): void {
  removeIfThere(f.a);
  removeIfThere(f.b);
  Deno.mkdirSync(`${f.a}/sub`, { recursive: true });
  Deno.writeTextFileSync(`${f.a}/x.txt`, `${A_ONLY} common\n`);
  Deno.writeTextFileSync(`${f.a}/sub/s.txt`, "inside common sub/s.txt\n");
  fillLikeB(f.b, "inside", extra);
}

/** The layout of the module's words, under a fresh temporary directory. */
async function fixture(): Promise<Fixture> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-roots-race-" }));
  const f: Fixture = {
    base,
    a: `${base}/a`,
    b: `${base}/b`,
    outside: `${base}/outside`,
    impostor: `${base}/impostor`,
    link: `${base}/link`,
    pristine: {},
  };
  makeRoots(f);
  for (const dir of [f.outside, f.impostor]) {
    fillLikeB(dir, SECRET);
    Deno.writeTextFileSync(`${dir}/${SECRET_NAME}`, `${SECRET}\n`);
    f.pristine[dir] = snapshotSync(dir);
  }
  Deno.symlinkSync(f.outside, f.link);
  return f;
}

function openRoots(f: Fixture, engine?: "inline"): Promise<Workspace> {
  return Workspace.open({ roots: [{ path: f.a }, { path: f.b }], writable: true, engine });
}

/** A snapshot, or {} when nothing is there. */
function snap(dir: string): Record<string, SnapEntry> {
  try {
    return snapshotSync(dir);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return {};
    throw err;
  }
}

/** The outcome of one call: its error, if any, and its result or error as JSON text. */
interface Outcome {
  error?: WorkspaceError;
  text: string;
}

async function outcome(
  ws: Workspace,
  name: string,
  args: Record<string, unknown>,
): Promise<Outcome> {
  try {
    const r = await withTimeout(runOperation({ workspace: ws }, name, args), 20_000, name);
    return { text: JSON.stringify(r) };
  } catch (err) {
    assert.ok(err instanceof WorkspaceError, `${name}: an untyped failure: ${err}`);
    return { error: err, text: JSON.stringify(err.toJSON()) };
  }
}

/** The error codes of a call: its error's, or those read_files answers per path. */
function codesIn(o: Outcome): string[] {
  if (o.error !== undefined) return [o.error.code];
  return [...o.text.matchAll(/"code":"([A-Z_]+)"/g)].map((m) => m[1]);
}

/** The names an error says it left behind (details.leftBehind), by their last component. */
function leftBehind(o: Outcome): Set<string> {
  const left = o.error?.details?.leftBehind;
  return new Set(Array.isArray(left) ? left.map((p) => String(p).split("/").pop()!) : []);
}

/** Empty temporary entries met outside, each named in its call's leftBehind (decision 0010). */
let windowHits = 0;

/**
 * The zero-escape checks of one call (the module's words), made once B is back in place; then
 * removes the temporary files the call reported left behind, so the next call starts clean.
 */
function assertContained(f: Fixture, o: Outcome, label: string): void {
  for (const code of codesIn(o)) assert.ok(REFUSALS.has(code), `${label}: ${code}: ${o.text}`);
  for (const needle of [SECRET, SECRET_NAME, f.outside, f.impostor, f.link]) {
    assert.ok(!o.text.includes(needle), `${label} reveals ${needle}: ${o.text}`);
  }
  const underB = new RegExp(`"path":"${RegExp.escape(f.b)}[^"]*"[^}]*${A_ONLY}`);
  assert.doesNotMatch(o.text, underB, `${label} shows A's content under a path of B`);
  const left = leftBehind(o);
  const reported: string[] = [];
  for (const dir of [f.outside, f.impostor]) {
    const before = f.pristine[dir];
    const now = snap(dir);
    for (const p of Object.keys(before)) assert.ok(p in now, `${label}: ${dir}/${p} was removed`);
    for (const [p, e] of Object.entries(now)) {
      const was = before[p];
      if (JSON.stringify(e) === JSON.stringify(was)) continue;
      // A directory's own times change with what is in it, which is checked by name.
      if (e.type === "directory" && was?.type === "directory") continue;
      const name = p.split("/").pop()!;
      const empty = e.type === "file"
        ? e.size === 0
        : e.type === "directory" && !Object.keys(now).some((q) => q.startsWith(`${p}/`));
      assert.ok(
        name.startsWith(TEMP) && left.has(name) && empty,
        `${label}: ${dir}/${p} was written (${JSON.stringify(e)}); the call: ${o.text}`,
      );
      reported.push(`${dir}/${p}`);
      windowHits++;
    }
  }
  const inA = snap(f.a);
  assert.equal(inA["x.txt"]?.content, `${A_ONLY} common\n`, `${label}: A's x.txt changed`);
  for (const [p, e] of Object.entries(inA)) {
    assert.ok(!p.includes(TEMP), `${label}: a temporary entry was left in A: ${p}`);
    if (e.type === "file" && p !== "x.txt") {
      assert.match(
        e.content!,
        /^inside common \S+\n$/,
        `${label}: A/${p} is an inside file, whole`,
      );
    }
  }
  for (const p of Object.keys(snap(f.b))) {
    const name = p.split("/").pop()!;
    if (!name.startsWith(TEMP)) continue;
    assert.ok(left.has(name), `${label}: an unreported temporary entry in B: ${p}; ${o.text}`);
    reported.push(`${f.b}/${p}`);
  }
  for (const p of reported) Deno.removeSync(p, { recursive: true });
}

/** Path-taking calls of Deno's API the workspace layer makes (through its WorkspaceFs). */
const DENO_CALLS = [
  "lstat",
  "lstatSync",
  "stat",
  "realPath",
  "readLink",
  "readDir",
  "readDirSync",
  "mkdirSync",
  "renameSync",
  "linkSync",
  "removeSync",
] as const;

/**
 * Wraps every path-taking file-system call the workspace layer makes (DENO_CALLS, node:fs's
 * openSync, node:fs/promises's open) so that `after()` runs once each returned (an async one
 * once it settled); returns the function that unwraps them.
 */
function hookCalls(after: () => void): () => void {
  const saved: [Record<string, unknown>, string, unknown][] = [];
  const wrap = (obj: Record<string, unknown>, name: string) => {
    const f = obj[name] as (...a: unknown[]) => unknown;
    saved.push([obj, name, f]);
    obj[name] = (...a: unknown[]) => {
      let r: unknown;
      try {
        r = f.apply(obj, a);
      } catch (err) {
        after();
        throw err;
      }
      if (r instanceof Promise) return r.finally(after);
      after();
      return r;
    };
  };
  for (const name of DENO_CALLS) wrap(Deno as unknown as Record<string, unknown>, name);
  wrap(nodeFs as unknown as Record<string, unknown>, "openSync");
  wrap(fsp as unknown as Record<string, unknown>, "open");
  return () => {
    for (const [obj, name, f] of saved.reverse()) obj[name] = f;
  };
}

/** Exchanges two paths (through a third name; the test's own calls, made while hooks are off). */
function exchange(x: string, y: string): void {
  Deno.renameSync(x, `${x}.swapping`);
  Deno.renameSync(y, x);
  Deno.renameSync(`${x}.swapping`, y);
}

/** One call: its operation and arguments (n: the trial, for fresh destination names). */
interface Call {
  label: string;
  name: string;
  args: (f: Fixture, n: number) => Record<string, unknown>;
}

/** What trial n of an every-point run changes right after the n-th call, and how it is undone. */
interface Change {
  label: (n: number) => string;
  make(f: Fixture, n: number): void;
  undo(f: Fixture, n: number): void;
}

type Tally = { trials: number; ok: number; codes: Record<string, number> };

function count(t: Tally, o: Outcome): void {
  t.trials++;
  const codes = codesIn(o);
  if (codes.length === 0) t.ok++;
  for (const code of codes) t.codes[code] = (t.codes[code] ?? 0) + 1;
}

/**
 * Runs `call` on fresh roots with `change` made right after its n-th file-system call, for
 * n = 1, 2, ... until the call makes fewer than n; `check` runs once the change is undone.
 */
async function atEveryCall(
  f: Fixture,
  call: Call,
  change: Change,
  check: (o: Outcome, label: string, n: number) => void,
  extra = 0,
): Promise<Tally> {
  const tally: Tally = { trials: 0, ok: 0, codes: {} };
  for (let n = 1;; n++) {
    makeRoots(f, extra);
    const ws = await openRoots(f, "inline");
    let calls = 0;
    let made = false;
    const unhook = hookCalls(() => {
      if (++calls !== n || made) return;
      made = true;
      change.make(f, n);
    });
    let o: Outcome;
    try {
      o = await outcome(ws, call.name, call.args(f, n));
    } finally {
      unhook();
      if (made) change.undo(f, n);
      ws.engine.close();
    }
    check(o, `${call.label}, ${made ? change.label(n) : "nothing changed"} after call ${n}`, n);
    count(tally, o);
    if (!made) return tally; // the call made fewer than n calls: every point was tried
  }
}

const readFile: Call = {
  label: "read_file",
  name: "read_file",
  args: (f) => ({ path: `${f.b}/d/g.txt` }),
};
const readFiles: Call = {
  label: "read_files",
  name: "read_files",
  args: (f) => ({ paths: ["x.txt", `${f.b}/f.txt`, `${f.b}/d/sub/h.txt`] }),
};
const dryEdit: Call = {
  label: "edit_file(dryRun)",
  name: "edit_file",
  args: (f) => ({
    path: `${f.b}/d/g.txt`,
    edits: [{ oldText: "common", newText: "C" }],
    dryRun: true,
  }),
};
const listB: Call = {
  label: "list_directory",
  name: "list_directory",
  args: (f) => ({ path: f.b, depth: 3, includeHidden: true }),
};
const findB: Call = {
  label: "find_files",
  name: "find_files",
  args: (f) => ({ path: f.b, pattern: "**", includeHidden: true }),
};
const findAll: Call = {
  label: "find_files(allRoots)",
  name: "find_files",
  args: () => ({ pattern: "**", includeHidden: true, allRoots: true }),
};
const searchB: Call = {
  label: "search_text",
  name: "search_text",
  args: (f) => ({ path: f.b, query: "common", includeHidden: true }),
};
const searchAll: Call = {
  label: "search_text(allRoots)",
  name: "search_text",
  args: () => ({ query: "common", includeHidden: true, allRoots: true }),
};
const writeB: Call = {
  label: "write_file(into B)",
  name: "write_file",
  args: (f) => ({
    path: `${f.b}/d/g.txt`,
    content: "inside common written\n",
    ifExists: "overwrite",
    confirm: true,
  }),
};
const createB: Call = {
  label: "write_file(a new file in B)",
  name: "write_file",
  args: (f, n) => ({ path: `${f.b}/d/new${n}.txt`, content: "inside common new\n" }),
};
const copyBA: Call = {
  label: "copy_path(B into A)",
  name: "copy_path",
  args: (f, n) => ({ source: `${f.b}/d/sub`, destination: `copy${n}`, recursive: true }),
};
const copyAB: Call = {
  label: "copy_path(A into B)",
  name: "copy_path",
  args: (f, n) => ({ source: "sub", destination: `${f.b}/d/from-a${n}`, recursive: true }),
};
const editB: Call = {
  label: "edit_file",
  name: "edit_file",
  args: (f) => ({ path: `${f.b}/d/sub/h.txt`, edits: [{ oldText: "common", newText: "common!" }] }),
};
const copyFileBA: Call = {
  label: "copy_path(a file of B into A)",
  name: "copy_path",
  args: (f, n) => ({ source: `${f.b}/d/sub/h.txt`, destination: `copy${n}.txt` }),
};
const readH: Call = {
  label: "read_file",
  name: "read_file",
  args: (f) => ({ path: `${f.b}/d/sub/h.txt` }),
};

/** What each call answers with nothing changed: it reaches B (what the attacks then attack). */
function assertReachesB(f: Fixture, call: Call, o: Outcome): void {
  assert.equal(o.error, undefined, `${call.label}: ${o.text}`);
  assert.deepEqual(codesIn(o), [], `${call.label}: ${o.text}`);
  const shown: Record<string, string> = {
    "read_file": "inside common d/g.txt",
    "read_files": "inside common d/sub/h.txt",
    "edit_file(dryRun)": "inside C d/g.txt",
    "list_directory": `${f.b}/d/sub/h.txt`,
    "find_files": `${f.b}/d/sub/h.txt`,
    "find_files(allRoots)": `${f.b}/d/sub/h.txt`,
    "search_text": "inside common d/sub/h.txt",
    "search_text(allRoots)": "inside common d/sub/h.txt",
    "copy_path(A into B)": `${f.b}/d/from-a`,
  };
  if (call.label in shown) {
    assert.ok(o.text.includes(shown[call.label]), `${call.label}: ${o.text}`);
  }
  if (call === writeB) {
    assert.equal(Deno.readTextFileSync(`${f.b}/d/g.txt`), "inside common written\n");
  }
  if (call === createB) {
    assert.equal(Deno.readTextFileSync(`${f.b}/d/new0.txt`), "inside common new\n");
  }
  if (call === copyBA) assert.match(o.text, /"destination":"copy0".*"files":2,"directories":1/);
}

/** B exchanged with the link out (odd trials) or the impostor directory (even ones). */
const SWAP_B: Change = {
  label: (n) => n % 2 === 1 ? "B swapped for a link out" : "B swapped for an impostor",
  make: (f, n) => exchange(f.b, n % 2 === 1 ? f.link : f.impostor),
  undo: (f, n) => exchange(f.b, n % 2 === 1 ? f.link : f.impostor),
};

Deno.test("several roots: a later root swapped (a link out, an impostor) at every point of reads, walks and writes: zero escapes", async () => {
  const f = await fixture();
  const summary: Record<string, Tally> = {};
  try {
    for (const call of [readFile, listB, searchAll, findB, writeB, createB, copyBA]) {
      makeRoots(f);
      const ws = await openRoots(f, "inline");
      assertReachesB(f, call, await outcome(ws, call.name, call.args(f, 0)));
      ws.engine.close();
      const t = await atEveryCall(f, call, SWAP_B, (o, label) => assertContained(f, o, label));
      summary[call.label] = t;
      assert.ok(t.trials > 3 && t.ok > 0, `${call.label}: ${JSON.stringify(t)}`);
      assert.ok(t.codes.CHANGED_DURING_OPERATION > 0, `${call.label}: no swap was refused`);
    }
  } finally {
    console.log(`B swapped at every point: ${JSON.stringify(summary)}`);
    console.log(`empty temporary entries left outside, each reported: ${windowHits}`);
    await Deno.remove(f.base, { recursive: true });
  }
});

/** The swapper process: swaps on request after a delay it is given, until told to undo. */
async function startSwapper() {
  const child = new Deno.Command("python3", {
    args: [ROOT_SWAPPER, "120"],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  const line = async (): Promise<string> => {
    while (!buf.includes("\n")) {
      const { done, value } = await withTimeout(reader.read(), 10_000, "the swapper's answer");
      if (done) throw new Error("the swapper exited");
      buf += value;
    }
    const i = buf.indexOf("\n");
    const l = buf.slice(0, i);
    buf = buf.slice(i + 1);
    return l;
  };
  assert.equal(await line(), "ready");
  const send = (text: string) => writer.write(new TextEncoder().encode(text + "\n"));
  return {
    send,
    /** Undoes the last swap (once the swapper has made it) and waits until it is undone. */
    async back(): Promise<void> {
      await send("back");
      assert.equal(await line(), "back");
    },
    async stop(): Promise<void> {
      await writer.close().catch(() => {});
      while (!(await reader.read()).done) { /* drain */ }
      await child.status;
    },
  };
}

/** Rounds of the swapper test: each call this many times, half with each swapped-in thing. */
const SWAPPER_ROUNDS = 12;

Deno.test("several roots: a later root swapped by another process during each kind of call, kept swapped until it returns: zero escapes", async () => {
  const f = await fixture();
  const calls = [
    readFile,
    readFiles,
    dryEdit,
    listB,
    findB,
    findAll,
    searchB,
    searchAll,
    writeB,
    createB,
    copyBA,
    copyAB,
  ];
  const ws = await openRoots(f);
  const tally: Record<string, Tally> = {};
  const took: Record<string, number> = {};
  const swapper = await startSwapper();
  try {
    // Each call reaches B with nothing swapped, and how long it takes is what the delays span.
    for (const call of calls) {
      const t0 = performance.now();
      assertReachesB(f, call, await outcome(ws, call.name, call.args(f, 0)));
      took[call.label] = performance.now() - t0;
    }
    for (let i = 0; i < SWAPPER_ROUNDS * calls.length; i++) {
      const call = calls[i % calls.length];
      const t = tally[call.label] ??= { trials: 0, ok: 0, codes: {} };
      const into = Math.floor(i / calls.length) % 2 === 0 ? f.link : f.impostor;
      const delayUs = Math.floor(Math.random() * took[call.label] * 1000 * 1.5);
      await swapper.send(`swap ${delayUs} ${f.b} ${into}`);
      const t0 = performance.now();
      const o = await outcome(ws, call.name, call.args(f, i + 1));
      took[call.label] = (took[call.label] + performance.now() - t0) / 2;
      await swapper.back();
      const label = `${call.label} #${i}, B swapped for ${into} after ${delayUs} µs`;
      assertContained(f, o, label);
      // The first root is another root: B's swap never fails a read of A's file.
      if (call === readFiles) assert.ok(o.text.includes(A_ONLY), `${label}: ${o.text}`);
      count(t, o);
      // Fresh destinations each time; B's file back to its first content after a write.
      removeIfThere(`${f.a}/copy${i + 1}`);
      removeIfThere(`${f.b}/d/from-a${i + 1}`);
      removeIfThere(`${f.b}/d/new${i + 1}.txt`);
      Deno.writeTextFileSync(`${f.b}/d/g.txt`, "inside common d/g.txt\n");
    }
    const refused = Object.values(tally).reduce(
      (a, t) => a + (t.codes.CHANGED_DURING_OPERATION ?? 0),
      0,
    );
    assert.ok(refused > 0, "no swap landed in a call");
  } finally {
    console.log(`B swapped by another process: ${JSON.stringify(tally)}`);
    console.log(`empty temporary entries left outside, each reported: ${windowHits}`);
    await swapper.stop();
    ws.engine.close();
    await Deno.remove(f.base, { recursive: true });
  }
});

/**
 * The checks of a copy of B's d into A that B's removal stopped or did not: typed; every file it
 * left in A whole (assertContained); a stopped copy that wrote something says so (committed,
 * copiedCount, copied: destination paths that are there), one that wrote nothing left nothing.
 */
function assertCopyWhole(f: Fixture, o: Outcome, destination: string, label: string): void {
  assertContained(f, o, label);
  const inA = Object.keys(snap(`${f.a}/${destination}`));
  if (o.error === undefined) return;
  assert.ok(
    ["CHANGED_DURING_OPERATION", "NOT_FOUND"].includes(o.error.code),
    `${label}: ${o.text}`,
  );
  const d = o.error.details ?? {};
  if (d.committed !== true) {
    assert.deepEqual(inA, [], `${label}: a copy that says it wrote nothing left ${inA}`);
    return;
  }
  assert.ok((d.copiedCount as number) > 0, label);
  for (const p of d.copied as string[]) {
    assert.ok(p === destination || p.startsWith(`${destination}/`), `${label}: copied ${p}`);
    Deno.lstatSync(`${f.a}/${p}`); // each one it names is there
  }
}

Deno.test("several roots: a later root removed while a recursive copy_path copies it into the first, at every point: typed, what was copied whole", async () => {
  const f = await fixture();
  const remove: Change = {
    label: () => "B removed",
    make: (f) => Deno.removeSync(f.b, { recursive: true }),
    undo: () => {},
  };
  try {
    const t = await atEveryCall(
      f,
      copyBA,
      remove,
      (o, label, n) => assertCopyWhole(f, o, `copy${n}`, label),
    );
    console.log(`B removed at every point of a copy: ${JSON.stringify(t)}`);
    assert.ok(t.ok > 0 && t.codes.CHANGED_DURING_OPERATION > 0, JSON.stringify(t));
  } finally {
    await Deno.remove(f.base, { recursive: true });
  }
});

Deno.test("several roots: a later root removed by another process (rm -rf) during a recursive copy into the first: typed, what was copied whole", async () => {
  const f = await fixture();
  const tally: Tally = { trials: 0, ok: 0, codes: {} };
  try {
    let took = 0;
    for (let i = 0; i < 8; i++) {
      makeRoots(f, 40);
      const ws = await openRoots(f);
      const destination = `copy${i}`;
      const t0 = performance.now();
      const copying = outcome(ws, "copy_path", {
        source: `${f.b}/d`,
        destination,
        recursive: true,
      });
      let o: Outcome;
      if (i === 0) {
        o = await copying; // the first, whole, times the others' removal
        took = performance.now() - t0;
        assert.equal(o.error, undefined, o.text);
        assert.match(o.text, /"files":43/);
      } else {
        await new Promise((r) => setTimeout(r, Math.random() * took));
        const rm = new Deno.Command("rm", { args: ["-rf", f.b] }).output();
        o = await copying;
        assert.ok((await rm).success);
      }
      ws.engine.close();
      assertCopyWhole(f, o, destination, `copy ${i} with B removed`);
      count(tally, o);
    }
  } finally {
    console.log(`B removed by rm -rf during copies: ${JSON.stringify(tally)}`);
    await Deno.remove(f.base, { recursive: true });
  }
});

Deno.test("several roots: a file of a later root replaced at every point by a link into the first root or out: never followed across roots", async () => {
  const f = await fixture();
  const targets = (f: Fixture) => [`${f.a}/x.txt`, "../../../a/x.txt", `${f.outside}/f.txt`];
  const relink: Change = {
    label: (n) => `B's d/sub/h.txt replaced by a link to ${targets(f)[n % 3]}`,
    make: (f, n) => {
      Deno.renameSync(`${f.b}/d/sub/h.txt`, `${f.b}/h.away`);
      Deno.symlinkSync(targets(f)[n % 3], `${f.b}/d/sub/h.txt`);
    },
    undo: () => {}, // the next trial makes the roots afresh
  };
  const summary: Record<string, Tally> = {};
  try {
    for (const call of [readH, searchB, editB, copyFileBA]) {
      const t = await atEveryCall(f, call, relink, (o, label, n) => {
        assertContained(f, o, label);
        if (call === copyFileBA && o.error === undefined) {
          // A link is copied as a link (never its target's content): x.txt stays A's only copy.
          const copied = snap(`${f.a}/copy${n}.txt`)["."];
          assert.ok(
            copied.type === "symlink" || copied.content === "inside common d/sub/h.txt\n",
            label,
          );
        }
      });
      summary[call.label] = t;
      assert.ok(t.ok > 0 && Object.keys(t.codes).length > 0, `${call.label}: ${JSON.stringify(t)}`);
    }
  } finally {
    console.log(`links into A or out at every point: ${JSON.stringify(summary)}`);
    await Deno.remove(f.base, { recursive: true });
  }
});
