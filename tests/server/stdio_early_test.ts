/**
 * The stdio entry's first answers (src/server/stdio_early.ts, issue 21 §3): first_answers.json is
 * what this checkout's server answers; with no server at all, a modern tools/list and
 * server/discover get their answers and everything read is handed over in order; a real
 * serve_stdio.ts child that answers early gives, for every id, the very bytes the same child gives
 * when it cannot answer early (a relative root), once each, whatever follows; and what is not
 * certain is never answered early. Nothing here is timed.
 */
import assert from "node:assert/strict";
import { firstAnswersText } from "../../scripts/first_answers.ts";
import {
  type ByteSource,
  earlyFlags,
  earlyRequest,
  startEarlyStdio,
  Suppressor,
} from "../../src/server/stdio_early.ts";
import { envelope, makeWorkspace, permissionFlags, SERVE_STDIO } from "./_harness.ts";

type Message = Record<string, unknown>;

const request = (id: unknown, method: string, meta: Message = envelope(), extra: Message = {}) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params: { _meta: meta, ...extra } });

Deno.test("first_answers.json is what this checkout's server answers (run scripts/first_answers.ts)", async () => {
  const file = await Deno.readTextFile(
    new URL("../../src/server/first_answers.json", import.meta.url),
  );
  assert.equal(file, await firstAnswersText());
});

Deno.test("earlyFlags: only --root /ABS and --write", () => {
  assert.deepEqual(earlyFlags(["--root", "/w"]), { root: "/w", writable: false });
  assert.deepEqual(earlyFlags(["--write", "--root=/w"]), { root: "/w", writable: true });
  for (
    const args of [
      [],
      ["--root", "w"],
      ["--root", "/w", "--limit", "maxResults=5"],
      ["--root", "/w", "--root", "/v"],
      ["--root", "/w", "--write", "--write"],
      ["--root", "/w", "--help"],
      ["--root"],
      ["--page-size", "3", "--root", "/w"],
      // Several roots, or a read-only one, are the full server's to answer (decision 0064).
      ["--read-only-root", "/w"],
      ["--read-only-root=/w", "--write"],
      ["--root", "/w", "--read-only-root", "/v", "--write"],
      ["--read-only-root", "/v", "--root", "/w"],
    ]
  ) assert.equal(earlyFlags(args), undefined, args.join(" "));
});

Deno.test("a read-only root, or several roots: nothing is answered early, the full server answers (no write tools from a read-only root)", async () => {
  const root = await makeWorkspace({ "a.txt": "alpha\n" });
  const other = await makeWorkspace({ "b.txt": "bravo\n" });
  try {
    for (
      const args of [
        ["--read-only-root", root, "--write"],
        ["--root", root, "--read-only-root", other, "--write"],
      ]
    ) {
      const written: string[] = [];
      assert.equal(startEarlyStdio(args, new FakeStdin(), (l) => written.push(l)), undefined);
      assert.deepEqual(written, []);
    }
    // The real entry: a read-only root under --write serves no write tool, which the stored
    // read-write answer would have listed.
    const parent = root.slice(0, root.lastIndexOf("/"));
    const input = `${request(1, "tools/list")}\n`;
    const answers = await answersOf(["--read-only-root", root, "--write"], parent, root, input);
    const [line] = answers.get(1)!;
    const tools = (JSON.parse(line).result as { tools: Message[] }).tools.map((t) => t.name);
    assert.ok(tools.includes("read_file") && !tools.includes("write_file"), tools.join(" "));
    // Two roots: the full server's instructions, which name two directories.
    const both = await makeWorkspace({ "a/a.txt": "alpha\n", "b/b.txt": "bravo\n" });
    try {
      const args = ["--root", `${both}/a`, "--read-only-root", `${both}/b`, "--write"];
      const discover = `${request(1, "server/discover")}\n`;
      const [answer] = (await answersOf(args, parent, both, discover)).get(1)!;
      const instructions = String((JSON.parse(answer).result as Message).instructions);
      assert.match(instructions, /^Workspace tools for 2 directories \(read-write\)/);
    } finally {
      await Deno.remove(both, { recursive: true });
    }
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(other, { recursive: true });
  }
});

Deno.test("earlyRequest: the standard shapes only", () => {
  assert.deepEqual(earlyRequest(request(1, "tools/list")), { id: 1, method: "tools/list" });
  assert.deepEqual(earlyRequest(request("a", "server/discover")), {
    id: "a",
    method: "server/discover",
  });
  const caps = {
    roots: { listChanged: true },
    elicitation: { form: {}, url: {} },
    sampling: {},
  };
  assert.ok(earlyRequest(request(2, "tools/list", envelope(caps))));
  const meta = envelope();
  const refused: [string, string][] = [
    ["tools/call", request(1, "tools/call")],
    ["a cursor", request(1, "tools/list", meta, { cursor: "x" })],
    ["a float id", request(1.5, "tools/list")],
    ["a null id", request(null, "tools/list")],
    ["a long id", request("x".repeat(257), "tools/list")],
    ["an escape", request("\\u0041", "tools/list")],
    ["__proto__", request(1, "tools/list", { ...meta, __proto__x: 1 })],
    ["another revision", request(1, "tools/list", { ...meta, [PV]: "2025-11-25" })],
    [
      "a log level",
      request(1, "tools/list", { ...meta, "io.modelcontextprotocol/logLevel": "info" }),
    ],
    ["no client info", request(1, "tools/list", { [PV]: "2026-07-28", [CC]: {} })],
    ["an unknown capability", request(1, "tools/list", envelope({ experimental: {} }))],
    ["a deep capability", request(1, "tools/list", envelope({ elicitation: { form: { a: 1 } } }))],
    ["a non-object capability", request(1, "tools/list", envelope({ roots: true }))],
    ["a progress token", request(1, "tools/list", { ...meta, progressToken: 1 })],
    [
      "an extra member",
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: meta },
        x: 1,
      }),
    ],
    ["a batch", `[${request(1, "tools/list")}]`],
    ["not JSON", "{"],
  ];
  for (const [why, text] of refused) assert.equal(earlyRequest(text), undefined, why);
});
const PV = "io.modelcontextprotocol/protocolVersion";
const CC = "io.modelcontextprotocol/clientCapabilities";

/** A stdin whose reads are given by the test, one chunk each; null ends it. */
class FakeStdin implements ByteSource {
  readonly #chunks: (Uint8Array | null)[] = [];
  #waiting: (() => void) | undefined;
  give(chunk: string | null): void {
    this.#chunks.push(chunk === null ? null : new TextEncoder().encode(chunk));
    this.#waiting?.();
  }
  async read(buffer: Uint8Array): Promise<number | null> {
    while (this.#chunks.length === 0) await new Promise<void>((r) => (this.#waiting = r));
    const chunk = this.#chunks.shift()!;
    if (chunk === null) return null;
    buffer.set(chunk);
    return chunk.length;
  }
}

async function readAll(source: ByteSource, size: number): Promise<string> {
  const out: number[] = [];
  const buffer = new Uint8Array(size);
  for (let n = await source.read(buffer); n !== null; n = await source.read(buffer)) {
    out.push(...buffer.subarray(0, n));
  }
  return new TextDecoder().decode(new Uint8Array(out));
}

Deno.test("with no server at all: the prefix of certain requests is answered, every byte handed over in order", async () => {
  const root = await makeWorkspace();
  try {
    const stdin = new FakeStdin();
    const written: string[] = [];
    const early = startEarlyStdio(["--root", root, "--write"], stdin, (l) => written.push(l))!;
    const first = `${request(1, "tools/list")}\n${request("d", "server/discover")}\n${
      request(3, "tools/call")
    }\n`;
    stdin.give(first.slice(0, 50));
    stdin.give(first.slice(50));
    await early.firstSeen(60_000);
    // Two answered (a line split across reads included); the tools/call ended the answers.
    const answers = written.map((l) => JSON.parse(l) as Message);
    assert.deepEqual(answers.map((a) => a.id), [1, "d"]);
    const tools = (answers[0].result as { tools: Message[] }).tools.map((t) => t.name);
    assert.ok(tools.includes("write_file"), "the read-write list");
    const discover = answers[1].result as Message;
    assert.match(
      String(discover.instructions),
      new RegExp(`"${root.split("/").at(-1)}" \\(read-write\\)`),
    );
    stdin.give(`${request(4, "tools/list")}\n`); // after the end of the answers: not answered
    const handover = early.handover();
    stdin.give("tail");
    stdin.give(null);
    assert.equal(await readAll(handover.input, 7), `${first}${request(4, "tools/list")}\ntail`);
    assert.equal(written.length, 2);
    // The server's own answers to 1 and "d" (the same lines) are dropped, once each.
    const s = handover.suppressor;
    assert.equal(s.drop(written[1]), true);
    assert.equal(s.drop(written[1]), false);
    assert.equal(s.drop(JSON.stringify({ jsonrpc: "2.0", id: 3, result: {} }) + "\n"), false);
    assert.equal(s.drop(JSON.stringify({ jsonrpc: "2.0", id: 1, result: {} }) + "\n"), false);
    assert.equal(s.drop(written[0]), true);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("firstSeen: with nothing to read it gives up after its turns and grace; a later request is still answered", async () => {
  const root = await makeWorkspace();
  try {
    const stdin = new FakeStdin();
    const written: string[] = [];
    const early = startEarlyStdio(["--root", root], stdin, (l) => written.push(l))!;
    // No input at all: the turns pass, then the timer ends the wait (the server would load now),
    // not before the grace (a lower bound only: a loaded machine makes the wait longer).
    const t0 = performance.now();
    await early.firstSeen(20);
    assert.ok(performance.now() - t0 >= 15, `waited ${performance.now() - t0} ms`);
    assert.equal(written.length, 0);
    // The first request comes after that: the early reader still answers it.
    stdin.give(`${request(7, "tools/list")}\n`);
    await early.firstSeen(60_000);
    assert.deepEqual(written.map((l) => (JSON.parse(l) as Message).id), [7]);
    const handover = early.handover();
    stdin.give(null);
    assert.equal(await readAll(handover.input, 64), `${request(7, "tools/list")}\n`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("Suppressor: drops the one line given for each id, once; other lines are kept", () => {
  const s = new Suppressor([[1, '{"id":1,"a":1}\n'], ["1", '{"id":"1"}\n']]);
  assert.equal(s.drop("not json"), false);
  assert.equal(s.drop('{"id":1,"a":2}\n'), false, "the same id, another answer");
  assert.equal(s.drop('{"id":"1"}\n'), true);
  assert.equal(s.drop('{"id":"1"}\n'), false);
  assert.equal(s.drop('{"id":1,"a":1}\n'), true);
  assert.equal(s.drop('{"id":1,"a":1}\n'), false);
});

/** The lines a real serve_stdio.ts child answers to `input` (all of it, then the end), by id. */
/**
 * The server's answers to `input`, by id. Stdin stays open until every id asked has been answered
 * once: a tools/call still running when stdin ends is abandoned by design (in both modes), so
 * closing at once would make the comparison depend on the machine's speed.
 */
async function answersOf(args: string[], cwd: string, root: string, input: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissionFlags(root, true), SERVE_STDIO, ...args],
    cwd,
    env: { INIT_CWD: cwd },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const asked = new Set(
    input.split("\n").filter(Boolean).map((l) => (JSON.parse(l) as Message).id),
  );
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(input));
  const byId = new Map<unknown, string[]>();
  let closed = false;
  // A server that never answers some id still ends (stdin closed), and the comparison says so.
  const stop = setTimeout(() => {
    closed = true;
    w.close().catch(() => {});
  }, 60_000);
  let rest = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    rest += chunk;
    const lines = rest.split("\n");
    rest = lines.pop()!;
    for (const line of lines.filter(Boolean)) {
      const id = (JSON.parse(line) as Message).id;
      byId.set(id, [...(byId.get(id) ?? []), line]);
    }
    if (!closed && [...asked].every((id) => byId.has(id))) {
      closed = true;
      await w.close();
    }
  }
  clearTimeout(stop);
  if (!closed) await w.close().catch(() => {});
  await child.status;
  return byId;
}

Deno.test("a real child answering early gives every id the bytes it gives without early answers, once", async () => {
  const root = await makeWorkspace({ "a.txt": "alpha\n" });
  const parent = root.slice(0, root.lastIndexOf("/"));
  const name = root.slice(root.lastIndexOf("/") + 1);
  const caps = envelope({ roots: { listChanged: true }, elicitation: { form: {} } });
  const inputs = [
    [request(1, "tools/list"), request("two", "server/discover", caps), request(3, "tools/list")],
    [
      request(1, "server/discover"),
      request(2, "tools/call", envelope(), {
        name: "read_file",
        arguments: { path: "a.txt" },
      }),
      request(3, "resources/list"),
    ],
    [request(1, "tools/list"), request(1, "server/discover")],
    [
      request(1, "tools/list"),
      JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "x", version: "1" },
        },
      }),
    ],
  ];
  try {
    for (const write of [[], ["--write"]]) {
      for (const lines of inputs) {
        const input = lines.join("\n") + "\n";
        const early = await answersOf(["--root", root, ...write], parent, root, input);
        const late = await answersOf(["--root", name, ...write], parent, root, input);
        const what = `${write.join(" ")} ${input.slice(0, 200)}`;
        assert.deepEqual([...early.keys()].sort(), [...late.keys()].sort(), what);
        for (const [id, answers] of early) {
          assert.ok(
            answers.sort().join("\n") === late.get(id)!.sort().join("\n"),
            `id ${id}: ${what}`,
          );
          assert.equal(
            answers.length,
            lines.filter((l) => JSON.parse(l).id === id).length,
            `${id}`,
          );
        }
      }
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
