/**
 * The engine broker (src/launch/broker/, decision 0054) as the server meets it: a real broker
 * child started by startBroker with its own grants, and raw connections to its socket. It keeps
 * its directory private and removes it when it ends; it answers only a connection that says the
 * token first, and only one; every request is checked before anything runs (hostile fields are
 * refused with a typed answer, a pattern is never an option, a base never leaves the workspace);
 * a cancelled grep gets no answer and the broker goes on; it ends when its stdin closes.
 */
import assert from "node:assert/strict";
import { makePrivateDir, startBroker } from "../../src/launch/broker.ts";
import { NativeEngine } from "../../src/workspace/native/client.ts";
import { spawnDeno } from "../../src/launch/child.ts";
import { projectFile } from "../../src/launch/project.ts";
import {
  FIND_CANDIDATES,
  largeFromDebug,
  RG_CANDIDATES,
} from "../../src/launch/broker/programs.ts";
import { BrokerSession } from "../../src/launch/broker/session.ts";
import { LinesReader } from "../../src/launch/broker/lines.ts";
import { BadRequest, checkRequest, MAX_REQUEST_LINE } from "../../src/workspace/native/protocol.ts";
import { makeTempDir, removeDir } from "../_support/fs.ts";
import { nativeAvailable, testEngineDir } from "../_support/native.ts";

const available = await nativeAvailable();

/** A line-based connection to a broker's socket. */
class Line {
  readonly #conn: Deno.Conn;
  readonly #lines: string[] = [];
  #wake?: () => void;
  closed = false;

  private constructor(conn: Deno.Conn) {
    this.#conn = conn;
    void this.#read();
  }

  static async open(socket: string): Promise<Line> {
    return new Line(await Deno.connect({ transport: "unix", path: socket }));
  }

  async #read(): Promise<void> {
    const dec = new TextDecoder();
    let pending = "";
    try {
      for await (const chunk of this.#conn.readable) {
        pending += dec.decode(chunk, { stream: true });
        let nl;
        while ((nl = pending.indexOf("\n")) !== -1) {
          this.#lines.push(pending.slice(0, nl));
          pending = pending.slice(nl + 1);
        }
        this.#wake?.();
      }
    } catch { /* closed */ }
    this.closed = true;
    this.#wake?.();
  }

  async send(v: unknown): Promise<void> {
    const text = typeof v === "string" ? v : JSON.stringify(v);
    await this.#conn.write(new TextEncoder().encode(text + "\n"));
  }

  /** The next answer, or null once the broker closed the connection (bounded by a generous wait). */
  async next(): Promise<Record<string, unknown> | null> {
    const deadline = Date.now() + 30_000;
    while (this.#lines.length === 0 && !this.closed && Date.now() < deadline) {
      await new Promise<void>((r) => {
        this.#wake = r;
        setTimeout(r, 1000);
      });
    }
    const line = this.#lines.shift();
    return line === undefined ? null : JSON.parse(line);
  }

  close(): void {
    try {
      this.#conn.close();
    } catch { /* closed */ }
  }
}

/** Waits (bounded) until no process's command line names `root`; false if one still does. */
async function noProcessIn(root: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    const out = await new Deno.Command("ps", { args: ["-eo", "args="], stdout: "piped" }).output();
    const lines = new TextDecoder().decode(out.stdout).split("\n");
    if (!lines.some((l) => l.includes(root) && !l.includes("broker/main.ts"))) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

const grep = (id: number, over: Record<string, unknown> = {}) => ({
  type: "grep",
  id,
  base: ".",
  pattern: "needle",
  literal: true,
  ignoreCase: false,
  hidden: false,
  skipGit: true,
  maxFileBytes: 1_000_000,
  lines: null,
  ...over,
});

Deno.test("protocol: every request shape is checked before anything runs", () => {
  assert.deepEqual(checkRequest(grep(1)), grep(1));
  const withLines = grep(2, { lines: { context: 10, maxCount: 1_000_000 } });
  assert.deepEqual(checkRequest(withLines), withLines);
  assert.deepEqual(checkRequest({ type: "cancel", id: 3 }), { type: "cancel", id: 3 });
  const bad: unknown[] = [
    null,
    [],
    "grep",
    { type: "run", cmd: "sh" },
    grep(1, { extra: true }),
    grep(1, { base: "../outside" }),
    grep(1, { base: "/etc" }),
    grep(1, { base: "a//b" }),
    grep(1, { base: "a/./b" }),
    grep(1, { base: "" }),
    grep(1, { base: "a\0b" }),
    grep(1, { pattern: "" }),
    grep(1, { pattern: "a\0b" }),
    grep(1, { pattern: "x".repeat(16 * 1024 + 1) }),
    grep(1, { literal: "yes" }),
    grep(-1),
    grep(1.5),
    grep(1, { maxFileBytes: -1 }),
    grep(1, { maxFileBytes: "1" }),
    grep(1, { lines: {} }),
    grep(1, { lines: [] }),
    grep(1, { lines: { context: 1 } }),
    grep(1, { lines: { context: 11, maxCount: 5 } }),
    grep(1, { lines: { context: -1, maxCount: 5 } }),
    grep(1, { lines: { context: 0, maxCount: 0 } }),
    grep(1, { lines: { context: 0, maxCount: 1_000_001 } }),
    grep(1, { lines: { context: 0, maxCount: 5, pre: "sh" } }),
    grep(1, { lines: "yes" }),
    { type: "hello" },
    { type: "hello", token: 1 },
    { type: "cancel" },
    // As a request line parses: an own "__proto__" key is an unknown field.
    JSON.parse(`{"__proto__":{"hidden":true},${JSON.stringify(grep(1)).slice(1)}`),
  ];
  for (const b of bad) assert.throws(() => checkRequest(b), BadRequest, JSON.stringify(b));
  const { base: _b, ...noBase } = grep(1);
  assert.throws(() => checkRequest(noBase), /missing field "base"/);
});

Deno.test({
  name: "broker: private directory, one connection with the token, checked requests, cancel, end",
  ignore: !available,
  async fn() {
    const root = await makeTempDir("wmcp-broker-");
    await Deno.writeTextFile(`${root}/a.txt`, "needle\n");
    await Deno.mkdir(`${root}/-x`);
    await Deno.writeTextFile(`${root}/-x/b.txt`, "needle\n");
    await Deno.writeTextFile(`${root}/--pre=sh.txt`, "needle\n");
    await Deno.writeTextFile(`${root}/big.txt`, `needle ${"x".repeat(100)}\n`);
    const broker = await startBroker(root, { dir: testEngineDir() });
    assert.ok(!("reason" in broker), JSON.stringify(broker));
    try {
      // Private: 0700, holding the socket until the server connects.
      assert.equal((await Deno.stat(broker.dir)).mode! & 0o777, 0o700);
      assert.ok((await Deno.lstat(broker.socket)).isSocket);

      // A connection that does not say the token is closed, unanswered.
      const stranger = await Line.open(broker.socket);
      await stranger.send({ type: "hello", token: "0".repeat(64) });
      assert.equal(await stranger.next(), null);

      const c = await Line.open(broker.socket);
      await c.send({ type: "hello", token: broker.token });
      const hello = await c.next();
      assert.equal(hello?.type, "hello");
      assert.equal(hello?.native, true, JSON.stringify(hello));
      // Connected: no one else may (the socket file is gone).
      assert.equal(await Deno.lstat(broker.socket).then(() => true, () => false), false);

      // rg 13's --debug log has the form the broker reads (its start probed it): no find runs.
      assert.equal(broker.largeLog, true);
      // A grep: files holding the pattern, and those over maxFileBytes.
      await c.send(grep(1, { maxFileBytes: 50 }));
      const a = await c.next();
      assert.equal(a?.type, "files");
      assert.deepEqual(
        (a?.paths as string[]).sort(),
        ["--pre=sh.txt", "-x/b.txt", "a.txt"],
      );
      assert.deepEqual(a?.large, ["big.txt"]);

      // The base is a path even when it looks like an option; a pattern is never an option.
      await c.send(grep(2, { base: "-x" }));
      assert.deepEqual((await c.next())?.paths, ["-x/b.txt"]);
      await c.send(grep(3, { pattern: "--pre=/bin/sh", literal: false }));
      const pre = await c.next();
      assert.equal(pre?.type, "files", JSON.stringify(pre));
      assert.deepEqual(pre?.paths, []);

      // Hostile requests get a typed answer naming what is wrong; the connection stays.
      await c.send(grep(4, { base: "../.." }));
      const bad = await c.next();
      assert.equal(bad?.type, "error");
      assert.equal(bad?.code, "request");
      assert.equal(bad?.id, 4);
      await c.send(grep(5, { pattern: "a(?<!b)", literal: false }));
      const pattern = await c.next();
      assert.equal(pattern?.code, "pattern", JSON.stringify(pattern));

      // A cancelled grep is never answered; the next one is; and its processes end (killed
      // once bwrap has set them up: KILL_GRACE_MS), none left behind in the workspace.
      await c.send(grep(6));
      await c.send({ type: "cancel", id: 6 });
      await c.send(grep(7));
      const after = await c.next();
      assert.equal(after?.id, 7, JSON.stringify(after));
      assert.ok(await noProcessIn(root), "no rg, find or bwrap left running in the workspace");

      // Signals its launcher's process group gets (Ctrl-C, a closed terminal, kill -- -PGID)
      // are the launcher's to act on: the broker outlives them and still answers.
      for (const sig of ["SIGINT", "SIGHUP", "SIGQUIT", "SIGTERM"] as const) {
        Deno.kill(broker.pid, sig);
      }
      await c.send(grep(8));
      const still = await c.next();
      assert.equal(still?.id, 8, JSON.stringify(still));

      // A line over the cap closes the connection.
      await c.send("x".repeat(MAX_REQUEST_LINE + 10));
      assert.equal(await c.next(), null);
      c.close();
      stranger.close();
    } finally {
      await broker.stop();
    }
    // Ended when its stdin closed, its directory gone.
    assert.equal(await broker.exited, 0);
    assert.equal(await Deno.lstat(broker.dir).then(() => true, () => false), false);
    await removeDir(root);
  },
});

Deno.test("largeFromDebug: the files rg's --debug log says --max-filesize skipped, and whether to trust it", () => {
  const head = [
    "DEBUG|rg::args|crates/core/args.rs:527: not reading config files because --no-config is present",
    "DEBUG|globset|/x/lib.rs:431: built glob set; 0 literals, 1 basenames",
  ];
  const walk = (rest: string) => `DEBUG|ignore::walk|/x/walk.rs:1728: ignoring ${rest}`;
  const log = [
    ...head,
    walk("./big.txt: 100 bytes"),
    walk("./a dir/odd: 7 bytes.txt: 4096 bytes"),
    walk('./.git: Ignore(IgnoreMatch(Override(Glob(Matched(Glob { original: "!.git/" })))))'),
    walk("./.hid: Ignore(IgnoreMatch(Hidden))"),
    "",
  ].join("\n");
  assert.deepEqual(largeFromDebug(log), {
    large: ["big.txt", "a dir/odd: 7 bytes.txt"],
    other: "",
    trusted: true,
  });
  assert.deepEqual(largeFromDebug(""), { large: [], other: "", trusted: true });
  // rg builds some glob sets lazily, on another thread: their lines may follow the walk's.
  const late = largeFromDebug([...head, walk("./big.txt: 100 bytes"), head[1]].join("\n"));
  assert.deepEqual(late, { large: ["big.txt"], other: "", trusted: true });
  // An error message is not a debug line.
  const error = largeFromDebug([...head, "rg: regex parse error:"].join("\n"));
  assert.equal(error.other, "rg: regex parse error:");
  assert.equal(error.trusted, false);
  // A name with a newline that forges a second line: split, and not trusted (find decides).
  const forged = largeFromDebug(
    [...head, walk("./a: 5 bytes"), "DEBUG|ignore::walk|x: ignoring f1.txt: 30 bytes"].join("\n"),
  );
  assert.equal(forged.trusted, false);
  const split = largeFromDebug([...head, walk("./evil"), "tail.txt: 40 bytes"].join("\n"));
  assert.equal(split.trusted, false);
});

/** The first of the paths that exists. */
async function firstOf(paths: readonly string[]): Promise<string> {
  for (const p of paths) if (await Deno.stat(p).then(() => true, () => false)) return p;
  throw new Error(`none of ${paths.join(", ")}`);
}

Deno.test({
  name: "session: the large files are the same from rg's --debug log as from find",
  ignore: !available,
  fn: async () => {
    const root = await makeTempDir();
    try {
      await Deno.writeTextFile(`${root}/small.txt`, "needle\n");
      await Deno.mkdir(`${root}/d/.h`, { recursive: true });
      await Deno.writeTextFile(`${root}/d/big one.txt`, "x".repeat(100));
      await Deno.writeTextFile(`${root}/d/.h/big.txt`, "x".repeat(100));
      // A large file whose name holds a newline: rg's log splits it, so find decides.
      await Deno.writeTextFile(`${root}/d/two\nlines: 9 bytes`, "x".repeat(100));
      const answers = [];
      const rg = await firstOf(RG_CANDIDATES);
      const find = await firstOf(FIND_CANDIDATES);
      for (const largeFromRg of [false, true]) {
        const sent: Record<string, unknown>[] = [];
        const got = new Promise<void>((resolve) => {
          const session = new BrokerSession({
            root,
            rg,
            find,
            largeFromRg,
            token: "t".repeat(64),
            hello: { type: "hello", native: true, engine: "ripgrep" },
          }, (a) => {
            sent.push(a as unknown as Record<string, unknown>);
            if (a.type !== "hello") resolve();
          });
          session.line(JSON.stringify({ type: "hello", token: "t".repeat(64) }));
          session.line(JSON.stringify(grep(1, { maxFileBytes: 50, hidden: true })));
        });
        await got;
        const a = sent[1] as { type: string; paths: string[]; large: string[] };
        assert.equal(a.type, "files", JSON.stringify(a));
        answers.push({ paths: a.paths.sort(), large: a.large.sort() });
      }
      assert.deepEqual(answers[0], {
        paths: ["small.txt"],
        large: ["d/.h/big.txt", "d/big one.txt", "d/two\nlines: 9 bytes"],
      });
      assert.deepEqual(answers[1], answers[0]);
    } finally {
      await removeDir(root);
    }
  },
});

Deno.test({
  name: "startBroker leaves nothing holding its caller's event loop once the broker is stopped",
  ignore: !available,
  fn: async () => {
    const root = await makeTempDir();
    try {
      // A caller that starts and stops a broker, then has nothing left to do, ends: before,
      // the 30 s wait for the ready line stayed armed and kept the process alive that long.
      const script = `import { startBroker } from ${
        JSON.stringify(new URL("../../src/launch/broker.ts", import.meta.url).href)
      };
const b = await startBroker(${JSON.stringify(root)}${
        testEngineDir() ? `, { dir: ${JSON.stringify(testEngineDir())} }` : ""
      });
if ("reason" in b) throw new Error(b.reason);
await b.stop();
console.log("stopped");`;
      const child = new Deno.Command(Deno.execPath(), {
        args: ["eval", "--quiet", script],
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      // Generous: the leak held the process for 30 s; a loaded machine ends it in well under 20.
      const watchdog = setTimeout(() => child.kill("SIGKILL"), 20_000);
      const out = await child.output();
      clearTimeout(watchdog);
      assert.equal(out.signal, null, "ended on its own, not by the watchdog");
      assert.equal(new TextDecoder().decode(out.stdout).trim(), "stopped");
    } finally {
      await removeDir(root);
    }
  },
});

Deno.test({
  name:
    "broker, early ready (--engine auto): ready once it listens; the hello answer carries the checks' verdict, native or why not",
  ignore: !available,
  fn: async () => {
    const root = await makeTempDir("wmcp-broker-early-");
    await Deno.writeTextFile(`${root}/a.txt`, "needle\n");
    try {
      // rg runs in its sandbox here: native, and greps are answered as without early ready.
      const broker = await startBroker(root, { dir: testEngineDir(), earlyReady: true });
      assert.ok(!("reason" in broker), JSON.stringify(broker));
      try {
        assert.equal(broker.largeLog, undefined, "ready before the --debug log was probed");
        const c = await Line.open(broker.socket);
        await c.send({ type: "hello", token: broker.token });
        const hello = await c.next();
        assert.equal(hello?.native, true, JSON.stringify(hello));
        assert.match(String(hello?.engine), /^ripgrep /);
        await c.send(grep(1));
        assert.deepEqual((await c.next())?.paths, ["a.txt"]);
        c.close();
      } finally {
        await broker.stop();
      }

      // A root rg cannot be sandboxed over (gone since the launcher named it): without early
      // ready the launcher learns why at once (and `--engine native` refuses); with it the
      // broker is ready, and its hello says why, so the server serves with the built-in engine
      // and that reason.
      const gone = `${root}/gone`;
      const late = await startBroker(gone, { dir: testEngineDir() });
      assert.ok("reason" in late, JSON.stringify(late));
      assert.match(late.reason, /rg did not run in its sandbox/);
      const early = await startBroker(gone, { dir: testEngineDir(), earlyReady: true });
      assert.ok(!("reason" in early), JSON.stringify(early));
      try {
        const c = await Line.open(early.socket);
        await c.send({ type: "hello", token: early.token });
        const hello = await c.next();
        assert.equal(hello?.native, false, JSON.stringify(hello));
        assert.equal(hello?.reason, late.reason);
        c.close();
      } finally {
        await early.stop();
      }
    } finally {
      await removeDir(root);
    }
  },
});

Deno.test({
  name:
    "broker, no wait (--engine auto): the launcher makes its directory first (0700; an existing name is refused), and the server's client connects once the broker listens",
  ignore: !available,
  fn: async () => {
    const root = await makeTempDir("wmcp-broker-nowait-");
    await Deno.writeTextFile(`${root}/a.txt`, "needle\n");
    const dir = testEngineDir() ?? `${root}/engine`;
    try {
      const broker = await startBroker(root, { dir, noWait: true });
      assert.ok(!("reason" in broker), JSON.stringify(broker));
      try {
        // The directory exists when startBroker returns, before the broker listens: the
        // server's sandbox, which mounts it, starts beside the broker.
        const info = await Deno.lstat(dir);
        assert.ok(info.isDirectory && !info.isSymlink);
        assert.equal((info.mode ?? 0) & 0o777, 0o700);
        // A second make of the same name fails: mkdir without -p.
        assert.match(String(await makePrivateDir(dir)), /exists/i);
        // The server's client retries until the broker listens, then greets it.
        const client = new NativeEngine({ socket: broker.socket, token: broker.token });
        try {
          const report = await client.report();
          assert.equal(report.search, "native", JSON.stringify(report));
          const answer = await client.files({
            base: ".",
            query: "needle",
            regex: false,
            caseSensitive: true,
            includeHidden: false,
            respectGitignore: true,
            maxFileBytes: 1_000_000,
          });
          assert.deepEqual(answer?.files, ["a.txt"], JSON.stringify(answer));
        } finally {
          client.close();
        }
      } finally {
        await broker.stop();
      }
      // The broker removed its directory on the way out, as when it makes it itself.
      await assert.rejects(Deno.lstat(dir), Deno.errors.NotFound);
    } finally {
      await removeDir(root);
    }
  },
});

Deno.test({
  name:
    "broker --dir-made refuses a directory that is not private (open mode, not empty, a link): it exits and listens nowhere",
  ignore: !available,
  fn: async () => {
    const root = await makeTempDir("wmcp-broker-made-");
    const dir = testEngineDir() ?? `${root}/engine`;
    const cases: [string, () => Promise<void>][] = [
      ["mode 0755", () => Deno.mkdir(dir, { mode: 0o755 }).then(() => Deno.chmod(dir, 0o755))],
      ["not empty", async () => {
        await Deno.mkdir(dir, { mode: 0o700 });
        await Deno.writeTextFile(`${dir}/planted`, "");
      }],
      ["a link", async () => {
        await Deno.mkdir(`${root}/real`, { mode: 0o700 });
        await Deno.symlink(`${root}/real`, dir);
      }],
    ];
    try {
      for (const [what, plant] of cases) {
        await plant();
        const child = spawnDeno({
          flags: ["--quiet", "--no-prompt", "-A"],
          module: projectFile("src/launch/broker/main.ts"),
          args: ["--dir-made", "--dir", dir, "--root", root],
          stdin: "piped",
          stdout: "piped",
          stderr: "piped",
        });
        const w = child.stdin.getWriter();
        await w.write(new TextEncoder().encode("t".repeat(64) + "\n"));
        await w.close();
        const out = await child.output();
        const err = new TextDecoder().decode(out.stderr);
        assert.notEqual(out.code, 0, what);
        assert.match(err, /not a private directory|not empty/, `${what}: ${err}`);
        assert.equal(new TextDecoder().decode(out.stdout), "", `${what}: said nothing ready`);
        await assert.rejects(Deno.lstat(`${dir}/engine.sock`), Deno.errors.NotFound, what);
        await Deno.remove(dir, { recursive: true });
        await Deno.remove(`${root}/real`).catch(() => {});
      }
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await removeDir(root);
    }
  },
});

Deno.test("LinesReader: rg's candidate lines as runs per file, bounded; an output not in its form is refused", () => {
  const enc = new TextEncoder();
  const rec = (path: string, n: number, sep: ":" | "-", text: string) =>
    `./${path}\0${n}${sep}${text}\n`;
  const out = rec("a.txt", 1, ":", "needle") + rec("a.txt", 2, "-", "ctx\r") +
    rec("a.txt", 9, ":", "needle again") + rec("b/c.txt", 3, ":", "x needle") +
    rec("many.txt", 1, ":", "needle") + rec("many.txt", 2, ":", "needle") +
    rec("many.txt", 3, ":", "needle");
  // Split anywhere: a record may come in pieces.
  const r = new LinesReader({ maxCount: 3 });
  const bytes = enc.encode(out);
  for (let i = 0; i < bytes.length; i += 7) r.push(bytes.subarray(i, i + 7));
  const read = r.end();
  assert.ok(read !== null);
  assert.deepEqual(read.paths, ["a.txt", "b/c.txt", "many.txt"]);
  assert.deepEqual(read.lines.get("a.txt"), [[1, "needle\nctx\r\n"], [9, "needle again\n"]]);
  assert.deepEqual(read.lines.get("b/c.txt"), [[3, "x needle\n"]]);
  // maxCount candidate lines: rg stopped reading it, so it keeps its name and loses its lines.
  assert.equal(read.lines.has("many.txt"), false);

  // A name with a newline splits a record: nothing of the output is trusted.
  const broken = new LinesReader({ maxCount: 10 });
  broken.push(enc.encode(rec("ok.txt", 1, ":", "needle") + "./bad\nname.txt\u00001:needle\n"));
  assert.equal(broken.end(), null);
  for (
    const bad of [
      "./x.txt\0:needle\n",
      "./x.txt\x000:needle\n",
      "./x.txt\x001=needle\n",
      "x.txt\x001:n\n",
    ]
  ) {
    const b = new LinesReader({ maxCount: 10 });
    b.push(enc.encode(bad));
    assert.equal(b.end(), null, JSON.stringify(bad));
  }

  // Past the text budget a file keeps its name, not its lines; so does a name that did not decode.
  const small = new LinesReader({ maxCount: 10, textBudget: 10 });
  small.push(enc.encode(rec("first.txt", 1, ":", "12345") + rec("second.txt", 1, ":", "1234567")));
  small.push(new Uint8Array([...enc.encode("./bad"), 0xff, ...enc.encode(".txt\x001:needle\n")]));
  const s = small.end()!;
  assert.deepEqual(s.paths, ["first.txt", "second.txt", "bad\uFFFD.txt"]);
  assert.deepEqual([...s.lines.keys()], ["first.txt"]);
});
