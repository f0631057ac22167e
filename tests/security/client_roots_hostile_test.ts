/**
 * The client's roots (decision 0065) from a hostile client, over real stdio: serve_stdio.ts started
 * without a root flag in its start directory, and a client that speaks raw JSON-RPC lines on its
 * stdin (declaring `roots`, answering each roots/list as the test says, following each new answer
 * with notifications/roots/list_changed).
 *
 * The server runs with read permission everywhere (as `deno run -A` would, or a runtime without
 * Deno's permission layer), so what stops a root here is the server's own rule, not Deno's wall:
 * `/` and $HOME or above are never served, by any spelling (`file:///..`, `file:////`, `%2e%2e`,
 * a link to `/`, a link to $HOME, $HOME's real path when $HOME itself is a link); `%2F` and `%00`
 * encodings, hosts, non-file schemes and malformed entries are skipped; at most 32 roots are
 * served; a root that is a link to a directory inside the start directory is served as that
 * directory; an answer that is not an object, or whose roots are not an array, or an error, is
 * NO_ROOT with a warning. Every skipped root is warned about, every call is answered, and the
 * server never crashes. A second client re-points a root's link between the server's check and its
 * opening of the roots (the swapper exchanging two links): $HOME is never served.
 */
import assert from "node:assert/strict";
import { withTimeout } from "./_helpers.ts";

const SERVER = new URL("../../serve_stdio.ts", import.meta.url).pathname;
const SWAPPER = new URL("./_swapper.py", import.meta.url).pathname;
const HOME_SECRET = "HOME-SECRET-CONTENT-51a0";

/** The Deno cache this machine uses, so the server's fixture HOME does not mean an empty cache. */
function denoDir(): string {
  const real = Deno.env.get("DENO_DIR");
  if (real) return real;
  const xdg = Deno.env.get("XDG_CACHE_HOME");
  return xdg ? `${xdg}/deno` : `${Deno.env.get("HOME")}/.cache/deno`;
}

type Message = Record<string, unknown> & {
  id?: number | string;
  method?: string;
  result?: Record<string, unknown>;
  error?: unknown;
};

/** A raw JSON-RPC client of serve_stdio.ts; roots/list is answered by `answer`. */
class RawClient {
  readonly child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #reader: ReadableStreamDefaultReader<string>;
  #buf = "";
  #id = 100;
  #stderr = "";
  #stderrDone: Promise<void>;
  /** How the next roots/list is answered: the whole JSON-RPC answer, without jsonrpc and id. */
  answer: Record<string, unknown> = { result: { roots: [] } };
  /** roots/list requests seen. */
  asked = 0;

  constructor(cwd: string, home: string) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", "--allow-env=HOME", SERVER],
      cwd,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      clearEnv: true,
      env: { HOME: home, PATH: Deno.env.get("PATH") ?? "", DENO_DIR: denoDir() },
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#reader = this.child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    this.#stderrDone = this.child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
      new WritableStream({ write: (s) => void (this.#stderr += s) }),
    );
  }

  get stderr(): string {
    return this.#stderr;
  }

  /**
   * Waits until stderr holds `count` lines matching `re` (the server writes them before its answer
   * on stdout, but the two pipes are read apart); returns stderr.
   */
  async stderrHas(re: RegExp, count: number): Promise<string> {
    const lines = () => this.#stderr.split("\n").filter((l) => re.test(l)).length;
    for (let waited = 0; lines() < count && waited < 10_000; waited += 20) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(lines(), count, `${count} lines matching ${re} on stderr:\n${this.#stderr}`);
    return this.#stderr;
  }

  async send(message: Record<string, unknown>): Promise<void> {
    const line = JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n";
    await this.#writer.write(new TextEncoder().encode(line));
  }

  async #next(): Promise<Message> {
    while (!this.#buf.includes("\n")) {
      const { done, value } = await withTimeout(this.#reader.read(), 20_000, "the server's line");
      if (done) throw new Error(`the server closed stdout; stderr:\n${this.#stderr}`);
      this.#buf += value;
    }
    const i = this.#buf.indexOf("\n");
    const line = this.#buf.slice(0, i);
    this.#buf = this.#buf.slice(i + 1);
    return JSON.parse(line);
  }

  /** Reads until the answer to `id`, answering every roots/list on the way. */
  async #until(id: number): Promise<Message> {
    while (true) {
      const m = await this.#next();
      if (m.method === "roots/list" && m.id !== undefined) {
        this.asked++;
        await this.send({ id: m.id, ...this.answer });
      } else if (m.id === id && m.method === undefined) return m;
    }
  }

  async request(method: string, params: Record<string, unknown>): Promise<Message> {
    const id = ++this.#id;
    await this.send({ id, method, params });
    return await this.#until(id);
  }

  /** A tool call: its structured result, or its typed error ({code, message}). */
  async call(name: string, args: Record<string, unknown>) {
    const r = (await this.request("tools/call", { name, arguments: args })).result!;
    if (r.isError === true) {
      const meta = r._meta as Record<string, { code: string; message: string }>;
      return { error: meta["wmcp/error"], text: JSON.stringify(r) };
    }
    return { result: r.structuredContent as Record<string, unknown>, text: JSON.stringify(r) };
  }

  async initialize(): Promise<void> {
    await this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: { roots: { listChanged: true } },
      clientInfo: { name: "hostile-host", version: "0" },
    });
    await this.send({ method: "notifications/initialized" });
  }

  /** Answers the next roots/list with `answer`, after a list_changed (unless it is the first). */
  async rootsChanged(answer: Record<string, unknown>): Promise<void> {
    this.answer = answer;
    await this.send({ method: "notifications/roots/list_changed" });
  }

  /** Closes stdin; the server must exit 0 by itself. */
  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
    await this.#reader.cancel().catch(() => {});
    const status = await withTimeout(this.child.status, 20_000, "the server's exit");
    await this.#stderrDone.catch(() => {});
    assert.equal(status.code, 0, `the server exited ${status.code}; stderr:\n${this.#stderr}`);
  }
}

const uri = (path: string) => new URL(`file://${path}`).href;

/** base/start (the server's directory: which.txt, inner/, a link to inner), base/home. */
async function fixture(options: { homeLink: boolean }) {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-hostile-roots-" }));
  const start = `${base}/start`;
  const realHome = `${base}/home`;
  await Deno.mkdir(`${start}/inner`, { recursive: true });
  await Deno.mkdir(realHome);
  await Deno.writeTextFile(`${start}/which.txt`, "start\n");
  await Deno.writeTextFile(`${start}/inner/which.txt`, "inner\n");
  await Deno.writeTextFile(`${realHome}/secret.txt`, `${HOME_SECRET}\n`);
  await Deno.writeTextFile(`${realHome}/which.txt`, `${HOME_SECRET}\n`);
  await Deno.symlink(`${start}/inner`, `${start}/inner-link`);
  await Deno.symlink("/", `${start}/to-slash`);
  await Deno.symlink(realHome, `${start}/to-home`);
  // $HOME as the server sees it: the directory, or a link to it.
  const home = options.homeLink ? `${base}/home-link` : realHome;
  if (options.homeLink) await Deno.symlink(realHome, home);
  return { base, start, realHome, home };
}

/** Asserts a call is refused NO_ROOT, its message matching `why`. */
async function assertNoRoot(c: RawClient, why: RegExp, label: string): Promise<void> {
  for (const [name, args] of [["read_file", { path: "which.txt" }], ["workspace_info", {}]]) {
    const r = await c.call(name as string, args as Record<string, unknown>);
    assert.equal(r.error?.code, "NO_ROOT", `${label}: ${name} answered ${r.text}`);
    assert.match(r.error!.message, why, label);
    assert.ok(!r.text.includes(HOME_SECRET), label);
  }
}

Deno.test("client roots, hostile: broad roots by any spelling, bad encodings, too many, malformed answers: skipped or NO_ROOT, warned, never served, never a crash", async () => {
  const f = await fixture({ homeLink: true });
  const c = new RawClient(f.start, f.home);
  try {
    // 1. Answers that hold no roots list: NO_ROOT, with a warning, and the server goes on. A result
    // that is not an object is no answer to the SDK: it is dropped, and the request times out
    // (ROOTS_LIST_TIMEOUT_MS, 10 s) into the same NO_ROOT.
    c.answer = { result: "not an object" };
    await c.initialize();
    const malformed: [string, Record<string, unknown>][] = [
      ["not an object", { result: "not an object" }],
      ["roots not an array", { result: { roots: "file:///tmp" } }],
      ["roots an object", { result: { roots: { uri: uri(f.start) } } }],
      ["no roots", { result: {} }],
      ["an error", { error: { code: -32601, message: "roots? never heard of them" } }],
    ];
    for (const [label, answer] of malformed) {
      if (label !== "not an object") await c.rootsChanged(answer);
      await assertNoRoot(c, /the client's roots could not be read/, label);
    }
    assert.equal(c.asked, malformed.length);
    await c.stderrHas(/warning: the client's roots could not be read/, malformed.length);

    // 2. Roots that must never be served, each skipped with a warning: none left is NO_ROOT.
    const hostile: [string, RegExp][] = [
      ["file:///", /whole file system/],
      ["file:///..", /whole file system/],
      ["file:////", /whole file system/],
      ["file:///%2e%2e/%2E%2E", /whole file system/],
      [uri(`${f.start}/to-slash`), /whole file system/],
      [uri(`${f.start}/to-home`), /your home directory/],
      [uri(f.home), /your home directory/],
      [uri(f.realHome), /your home directory/],
      [uri(f.base), /contains your home directory/],
      [`file://${f.start}%2Finner`, /encoded \/|must not include encoded/i],
      [`file://${f.start}/inner%00`, /NUL/],
      [`file://elsewhere${f.start}/inner`, /another host/],
      ["https://example.com/repo", /not a file:\/\/ URI/],
      [`vscode-file://vscode-app${f.start}/inner`, /not a file:\/\/ URI/],
      [uri(`${f.start}/missing`), /cannot be opened/],
      [uri(`${f.start}/which.txt`), /not a directory/],
    ];
    const listed: unknown[] = [
      ...hostile.map(([u]) => ({ uri: u })),
      null,
      42,
      "file:///",
      {},
      { uri: 7 },
    ];
    await c.rootsChanged({ result: { roots: listed } });
    await assertNoRoot(c, /none of the client's roots can be served/, "hostile roots");
    const skips = /^wmcp: warning: skipped a client root /;
    const stderr = await c.stderrHas(skips, listed.length); // one for every root listed
    for (const [u, why] of hostile) {
      const warned = stderr.split("\n").find((l) =>
        l.startsWith("wmcp: warning: skipped a client root ") && l.includes(JSON.stringify(u))
      );
      assert.ok(warned, `no warning for ${u}:\n${stderr}`);
      assert.match(warned, why, warned);
    }

    // 3. A root reached through a link inside the start directory is served as its directory;
    // nothing beyond it is, by any spelling, and the hostile ones beside it are still skipped.
    await c.rootsChanged({
      result: { roots: [{ uri: "file:///" }, { uri: uri(`${f.start}/inner-link`) }] },
    });
    const inner = await c.call("read_file", { path: "which.txt" });
    assert.equal(inner.result?.content, "inner\n", inner.text);
    for (const path of [`${f.start}/inner/which.txt`, `${f.start}/inner-link/which.txt`]) {
      const r = await c.call("read_file", { path });
      assert.equal(r.result?.content, "inner\n", `${path}: ${r.text}`);
    }
    for (const path of ["../which.txt", `${f.start}/which.txt`, `${f.realHome}/secret.txt`]) {
      const r = await c.call("read_file", { path });
      assert.equal(r.error?.code, "OUTSIDE_WORKSPACE", `${path}: ${r.text}`);
    }
    const info = (await c.call("workspace_info", {})).result!;
    assert.equal(info.rootsFrom, "client");
    assert.equal((info.roots as unknown[]).length, 1);

    // 4. More than 32 roots: the first 32 are served, the rest skipped with a warning each.
    const many: string[] = [];
    for (let i = 0; i < 40; i++) {
      const dir = `${f.start}/r${String(i).padStart(2, "0")}`;
      await Deno.mkdir(dir);
      await Deno.writeTextFile(`${dir}/which.txt`, `r${i}\n`);
      many.push(dir);
    }
    await c.rootsChanged({ result: { roots: many.map((d) => ({ uri: uri(d) })) } });
    assert.equal(
      (await c.call("read_file", { path: `${many[31]}/which.txt` })).result?.content,
      "r31\n",
    );
    const over = await c.call("read_file", { path: `${many[32]}/which.txt` });
    assert.equal(over.error?.code, "OUTSIDE_WORKSPACE", over.text);
    const roots = (await c.call("workspace_info", {})).result!.roots as unknown[];
    assert.equal(roots.length, 32);
    await c.stderrHas(/more than 32 roots/, 8);

    // 5. Very many entries (all broad): answered in bounded time, NO_ROOT, the server alive.
    const flood = Array.from({ length: 5000 }, () => ({ uri: "file:///" }));
    await c.rootsChanged({ result: { roots: flood } });
    await assertNoRoot(c, /none of the client's roots can be served/, "5000 roots");
    assert.ok(!c.stderr.includes(HOME_SECRET));
  } finally {
    await c.close();
    await Deno.remove(f.base, { recursive: true });
  }
});

Deno.test("client roots, hostile: a root's link re-pointed at $HOME between the server's check and its opening: $HOME is never served", async () => {
  const f = await fixture({ homeLink: false });
  // flip leads to inner, flop to $HOME; the swapper exchanges the two links as fast as it can.
  await Deno.symlink(`${f.start}/inner`, `${f.start}/flip`);
  await Deno.symlink(f.realHome, `${f.start}/flop`);
  const c = new RawClient(f.start, f.home);
  const swapper = new Deno.Command("python3", {
    args: [SWAPPER, `${f.start}/flip`, `${f.start}/flop`, "60"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const out = swapper.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const tally = { served: 0, noRoot: 0, home: 0 };
  try {
    assert.match((await out.read()).value ?? "", /ready/);
    c.answer = { result: { roots: [{ uri: uri(`${f.start}/flip`) }] } };
    await c.initialize();
    for (let i = 0; i < 60; i++) {
      if (i > 0) await c.rootsChanged(c.answer);
      const r = await c.call("read_file", { path: "which.txt" });
      if (r.text.includes(HOME_SECRET)) tally.home++;
      else if (r.error?.code === "NO_ROOT") tally.noRoot++;
      else {
        assert.equal(r.result?.content, "inner\n", r.text);
        tally.served++;
      }
    }
    console.log(`a root's link flipping between inner and $HOME: ${JSON.stringify(tally)}`);
    assert.equal(tally.home, 0, "$HOME was served");
    assert.ok(tally.served > 0 && tally.noRoot > 0, "the link flipped under the server's checks");
  } finally {
    await swapper.stdin.close();
    while (!(await out.read()).done) { /* drain */ }
    await swapper.status;
    await c.close();
    await Deno.remove(f.base, { recursive: true });
  }
});
