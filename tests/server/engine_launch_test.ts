/**
 * The server launcher and the native search engine (decision 0054), through real processes as a
 * host starts them (`cli.ts serve stdio` with the tasks' permissions): with `--engine auto` (the
 * default) on a machine with bubblewrap and ripgrep the server reports and uses the native engine,
 * inside the sandbox or not; `--engine builtin` starts no broker; a bad value is a usage error;
 * a broker that dies takes the server with it (exit 1, said on stderr, no process left); and a
 * signal to the launcher's whole process group (as a terminal sends Ctrl-C or a hang-up) ends the
 * server and the broker without blaming the broker, leaving no process or directory.
 */
import assert from "node:assert/strict";
import { CLI } from "../_support/cli.ts";
import { makeTempDir, removeDir } from "../_support/fs.ts";
import { nativeAvailable } from "../_support/native.ts";

/** The `cli` task's permissions (what a host's entry grants the launcher). */
const LAUNCHER = [
  "--quiet",
  "--no-prompt",
  "--allow-env=INIT_CWD,DENO_DIR,XDG_CACHE_HOME,HOME",
  "--allow-run=bwrap,kill,/proc/self/exe",
];

/** The module the launcher starts for a stdio server (it loads the server after its first answers). */
const LAUNCHED_STDIO = "src/server/stdio_launched.ts";
const available = await nativeAvailable();

/** A stdio server started through the launcher, spoken to one JSON line at a time. */
class Served {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #answers = new Map<number, (v: Record<string, unknown>) => void>();
  stderr = "";
  #next = 10;

  /**
   * `session`: in a session (and process group) of its own, as a terminal's foreground job is,
   * so that a signal can go to its whole group (setsid(1) execs it: the child's pid is the group's).
   */
  constructor(args: string[], o: { session?: boolean } = {}) {
    const argv = [Deno.execPath(), "run", ...LAUNCHER, CLI, "serve", "stdio", ...args];
    const child = new Deno.Command(o.session ? "setsid" : argv[0], {
      args: o.session ? argv : argv.slice(1),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.child = child;
    this.#writer = child.stdin.getWriter();
    void this.#read();
    void (async () => {
      for await (const c of child.stderr.pipeThrough(new TextDecoderStream())) this.stderr += c;
    })();
  }

  async #read(): Promise<void> {
    let pending = "";
    for await (const c of this.child.stdout.pipeThrough(new TextDecoderStream())) {
      pending += c;
      let nl;
      while ((nl = pending.indexOf("\n")) !== -1) {
        const m = JSON.parse(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
        this.#answers.get(m.id)?.(m);
      }
    }
  }

  async #send(m: unknown): Promise<void> {
    await this.#writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  }

  async start(): Promise<void> {
    await this.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "t", version: "0" },
    });
    await this.#send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }

  request(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = this.#next++;
    const answer = new Promise<Record<string, unknown>>((r) => this.#answers.set(id, r));
    return this.#send({ jsonrpc: "2.0", id, method, params }).then(() => answer);
  }

  async tool(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const m = await this.request("tools/call", { name, arguments: args });
    return (m.result as { structuredContent: Record<string, unknown> }).structuredContent;
  }

  async close(): Promise<Deno.CommandStatus> {
    await this.#writer.close().catch(() => {});
    return await this.child.status;
  }
}

/** The processes, as ps(1) lists them: pid, parent pid, command line (Deno may not read /proc). */
async function processes(): Promise<{ pid: number; ppid: number; args: string }[]> {
  const out = await new Deno.Command("ps", {
    args: ["-eo", "pid=,ppid=,args="],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").flatMap((line) => {
    const m = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    return m ? [{ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }] : [];
  });
}

/** The pids of processes whose parent is `ppid` and whose command line holds `text`. */
async function childrenOf(ppid: number, text: string): Promise<number[]> {
  return (await processes()).filter((p) => p.ppid === ppid && p.args.includes(text)).map((p) =>
    p.pid
  );
}

/** Whether a process runs (or is yet to be reaped). */
async function alive(pid: number): Promise<boolean> {
  return (await processes()).some((p) => p.pid === pid);
}

/** The directory a broker was started with (its `--dir`, from its command line). */
async function brokerDir(pid: number): Promise<string> {
  const args = (await processes()).find((p) => p.pid === pid)?.args ?? "";
  const dir = /--dir (\/tmp\/wmcp-engine-[0-9a-f]+)/.exec(args)?.[1];
  assert.ok(dir, `the broker's directory in ${args}`);
  return dir;
}

/**
 * Waits until a process that is not this test's child has ended (it cannot be awaited): true once
 * ps no longer lists it, false if it still runs after a generous bound.
 */
async function gone(pid: number, boundMs = 30_000): Promise<boolean> {
  const end = Date.now() + boundMs;
  while (await alive(pid)) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** Whether a path exists (links not followed). */
async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

async function withTree(fn: (root: string) => Promise<void>): Promise<void> {
  const root = await makeTempDir("wmcp-engine-launch-");
  await Deno.writeTextFile(`${root}/a.txt`, "alpha\nneedle here\n");
  await Deno.writeTextFile(`${root}/b.txt`, "nothing\n");
  try {
    await fn(root);
  } finally {
    await removeDir(root);
  }
}

for (const sandbox of ["auto", "off"]) {
  Deno.test({
    name:
      `--engine auto (--sandbox ${sandbox}): workspace_info says native, and search_text uses it`,
    ignore: !available,
    async fn() {
      await withTree(async (root) => {
        const s = new Served(["--root", root, "--sandbox", sandbox]);
        try {
          await s.start();
          const info = await s.tool("workspace_info", {});
          const engine = info.engine as Record<string, unknown>;
          assert.equal(engine.search, "native", JSON.stringify(engine));
          assert.match(String(engine.native), /^ripgrep \d+/);
          const found = await s.tool("search_text", { query: "needle" });
          assert.deepEqual(found.matches, [
            { path: "a.txt", line: 2, column: 1, text: "needle here" },
          ]);
          // One broker beside the server, outside its sandbox.
          assert.equal((await childrenOf(s.child.pid, "broker/main.ts")).length, 1);
        } finally {
          assert.equal((await s.close()).code, 0, s.stderr);
        }
        assert.doesNotMatch(s.stderr, /broker exited/);
      });
    },
  });
}

Deno.test({
  name:
    "several roots: the broker serves the first (a --read-only-root before a --root here); a later root searches with the built-in engine",
  ignore: !available,
  async fn() {
    await withTree(async (first) => {
      await withTree(async (later) => {
        await Deno.writeTextFile(`${later}/c.txt`, "needle in the later root\n");
        const s = new Served(["--read-only-root", first, "--root", later, "--sandbox", "auto"]);
        try {
          await s.start();
          const [broker] = await childrenOf(s.child.pid, "broker/main.ts");
          assert.ok(broker, "the broker runs");
          const args = (await processes()).find((p) => p.pid === broker)?.args ?? "";
          assert.ok(args.endsWith(`--root ${first}`), args);
          const info = await s.tool("workspace_info", {});
          assert.equal((info.engine as { search: string }).search, "native");
          // The first root's paths are relative, the later root's absolute; each finds its own.
          const inFirst = await s.tool("search_text", { query: "needle" });
          assert.deepEqual(inFirst.matches, [
            { path: "a.txt", line: 2, column: 1, text: "needle here" },
          ]);
          const inLater = await s.tool("search_text", { query: "needle", path: later });
          assert.deepEqual((inLater.matches as { path: string }[]).map((m) => m.path).sort(), [
            `${later}/a.txt`,
            `${later}/c.txt`,
          ]);
        } finally {
          assert.equal((await s.close()).code, 0, s.stderr);
        }
      });
    });
  },
});

Deno.test({
  name: "--engine builtin starts no broker; workspace_info says builtin",
  ignore: !available,
  async fn() {
    await withTree(async (root) => {
      const s = new Served(["--root", root, "--engine", "builtin"]);
      try {
        await s.start();
        const info = await s.tool("workspace_info", {});
        assert.deepEqual(
          { ...(info.engine as Record<string, unknown>), mode: "-", workers: 0 },
          { mode: "-", workers: 0, search: "builtin" },
        );
        assert.deepEqual(await childrenOf(s.child.pid, "broker/main.ts"), []);
      } finally {
        await s.close();
      }
    });
  },
});

Deno.test("--engine takes auto, native or builtin (a usage error otherwise)", async () => {
  await withTree(async (root) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...LAUNCHER, CLI, "serve", "stdio", "--root", root, "--engine", "rg"],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 2);
    assert.match(new TextDecoder().decode(out.stderr), /--engine takes auto, native or builtin/);
  });
});

Deno.test({
  name: "a broker that dies takes the server with it: exit 1, said on stderr, nothing left",
  ignore: !available,
  async fn() {
    await withTree(async (root) => {
      const s = new Served(["--root", root]);
      await s.start();
      // The server has connected once it answered a search natively.
      const info = await s.tool("workspace_info", {});
      assert.equal((info.engine as { search: string }).search, "native");
      const [broker] = await childrenOf(s.child.pid, "broker/main.ts");
      const servers = await childrenOf(s.child.pid, LAUNCHED_STDIO);
      assert.ok(broker, "the broker runs");
      assert.equal(servers.length, 1, "the server runs (in bubblewrap)");
      const dir = await brokerDir(broker);
      Deno.kill(broker, "SIGKILL");
      const status = await s.child.status;
      assert.equal(status.code, 1, s.stderr);
      assert.match(s.stderr, /broker exited .* the server was stopped/);
      assert.equal(await alive(servers[0]), false, "the server (and its bubblewrap) ended");
      await s.close().catch(() => {});
      // A killed broker cannot remove its directory (the launcher may not write there): this
      // test killed it, so this test removes what it left.
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    });
  },
});

for (const signal of ["SIGINT", "SIGHUP", "SIGTERM"] as const) {
  Deno.test({
    name:
      `${signal} to the launcher's whole process group: the server and the broker end, no broker blamed, nothing left`,
    ignore: !available,
    async fn() {
      await withTree(async (root) => {
        const s = new Served(["--root", root], { session: true });
        await s.start();
        const found = await s.tool("search_text", { query: "needle" });
        assert.equal((found.matches as unknown[]).length, 1);
        const [broker] = await childrenOf(s.child.pid, "broker/main.ts");
        assert.ok(broker, "the broker runs");
        const dir = await brokerDir(broker);
        const servers = await childrenOf(s.child.pid, LAUNCHED_STDIO);
        assert.equal(servers.length, 1, "the server runs (in bubblewrap)");
        // As a terminal sends Ctrl-C or a hang-up to its foreground job: to every process of it.
        const kill = await new Deno.Command("kill", {
          args: [`-${signal.slice(3)}`, "--", `-${s.child.pid}`],
        }).output();
        assert.ok(kill.success);
        const status = await s.child.status;
        await s.close().catch(() => {});
        assert.notEqual(status.code, 1, s.stderr);
        assert.doesNotMatch(s.stderr, /broker exited/);
        if (signal === "SIGINT") assert.equal(status.code, 130, s.stderr);
        // A launcher that ends on the signal closes the broker's stdin as it goes: the broker
        // ends on its own after it, removing its directory.
        assert.ok(await gone(broker), "the broker ended");
        assert.ok(await gone(servers[0]), "the server (and its bubblewrap) ended");
        assert.equal(await exists(dir), false, "the broker's directory is gone");
      });
    },
  });
}
