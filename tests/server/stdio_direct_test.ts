/**
 * The stdio server reads the process's stdin in a plain loop (no Node streams; issue 21 §2) when
 * it runs as serve_stdio.ts: a real child, its stdin written in pieces that do not respect line
 * ends. Lines the fast path answers and lines the SDK answers, in one chunk and split across
 * writes, all get their answers; a line over the request cap fails alone with its id; a line
 * starting with a byte-order mark is the SDK's (a parse error), not answered twice; the end of
 * stdin ends the server with exit 0, and a last line without its newline is never answered.
 */
import assert from "node:assert/strict";
import { envelope, makeWorkspace, permissionFlags, SERVE_STDIO } from "./_harness.ts";

type Message = Record<string, unknown>;

/** serve_stdio.ts as a real child on a workspace; its answers read as JSON lines. */
function start(root: string, extra: string[] = []) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissionFlags(root), SERVE_STDIO, "--root", root, ...extra],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const stderr = new Response(child.stderr).text();
  const answers: Message[] = [];
  const waiters: { id: unknown; resolve: (m: Message) => void }[] = [];
  const reading = (async () => {
    let buffer = "";
    for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += text;
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const message = JSON.parse(buffer.slice(0, nl)) as Message;
        buffer = buffer.slice(nl + 1);
        answers.push(message);
        for (const w of waiters.filter((w) => w.id === message.id)) w.resolve(message);
      }
    }
    return buffer;
  })();
  const answer = (id: unknown) =>
    new Promise<Message>((resolve) => {
      const seen = answers.find((m) => m.id === id);
      if (seen) resolve(seen);
      else waiters.push({ id, resolve });
    });
  const write = (text: string) => writer.write(new TextEncoder().encode(text));
  const end = async () => {
    await writer.close();
    const [status, rest, log] = await Promise.all([child.status, reading, stderr]);
    return { status, rest, log, answers };
  };
  return { answer, write, end };
}

const call = (id: number, name: string, args: Message) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args, _meta: envelope() },
  });
/** A request the SDK answers (the fast path takes only read-tool calls, tools/list, discover). */
const sdkList = (id: number) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "resources/list", params: { _meta: envelope() } });

Deno.test("stdio read directly: lines in one chunk and split across writes, fast and SDK, all answered in full", async () => {
  const root = await makeWorkspace({ "a.txt": "alpha\n", "b.txt": "beta\n" });
  const s = start(root);
  try {
    // Three lines in one write: a fast-path read, an SDK resources/list, another read.
    await s.write(
      `${call(1, "read_file", { path: "a.txt" })}\n${sdkList(2)}\n${
        call(3, "read_file", { path: "b.txt" })
      }\n`,
    );
    // One line in three writes, each awaited before the next.
    const line = call(4, "get_file_info", { path: "a.txt" });
    await s.write(line.slice(0, 10));
    await s.write(line.slice(10, 40));
    await s.write(`${line.slice(40)}\n${sdkList(5)}\n`);
    const [a, p, b, info, p2] = await Promise.all([1, 2, 3, 4, 5].map(s.answer));
    assert.equal(
      (a.result as Message & { structuredContent: Message }).structuredContent.content,
      "alpha\n",
    );
    assert.deepEqual((p.result as Message).resources, [], JSON.stringify(p));
    assert.equal(
      (b.result as Message & { structuredContent: Message }).structuredContent.content,
      "beta\n",
    );
    assert.equal(
      (info.result as Message & { structuredContent: Message }).structuredContent.type,
      "file",
    );
    assert.deepEqual((p2.result as Message).resources, [], JSON.stringify(p2));
  } finally {
    const { status, rest } = await s.end();
    assert.equal(status.code, 0);
    assert.equal(rest, "", "every answer is a whole line");
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("stdio read directly: a line over the cap in many writes fails alone; a BOM line is answered once; the last line without a newline is not answered", async () => {
  const root = await makeWorkspace({ "a.txt": "alpha\n" });
  // The smallest write cap makes a small request cap (6 x maxWriteBytes + 64 KiB).
  const s = start(root, ["--limit", "maxWriteBytes=1024"]);
  let log = "";
  try {
    const huge = call(7, "read_file", { path: "x".repeat(200 * 1024) });
    for (let i = 0; i < huge.length; i += 16 * 1024) await s.write(huge.slice(i, i + 16 * 1024));
    await s.write("\n");
    const refused = await s.answer(7);
    assert.equal((refused.error as Message).code, -32600, JSON.stringify(refused).slice(0, 300));
    await s.write(`\uFEFF${call(8, "read_file", { path: "a.txt" })}\n${sdkList(9)}\n`);
    assert.deepEqual(((await s.answer(9)).result as Message).resources, []);
    await s.write(call(10, "read_file", { path: "a.txt" })); // no newline, then the end
  } finally {
    const ended = await s.end();
    log = ended.log;
    assert.equal(ended.status.code, 0, log);
    // The BOM line: the SDK cannot parse it, so it has no answer with id 8 (never a fast answer).
    assert.equal(ended.answers.filter((m) => m.id === 8).length, 0, JSON.stringify(ended.answers));
    assert.equal(ended.answers.filter((m) => m.id === 10).length, 0);
    assert.equal(ended.answers.filter((m) => m.id === 7).length, 1);
    await Deno.remove(root, { recursive: true });
  }
  assert.match(log, /refused request 7/);
});
