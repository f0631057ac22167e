/**
 * Tools-only races: an agent with --write swaps a directory for a symlink the workspace ships
 * (two move_path calls) while its other calls walk, read and write under that directory,
 * through concurrent requests to the real HTTP handler. The workspace's readers/writer lock
 * makes every call see one state of the tree: no response may reveal an outside byte or name,
 * and nothing outside may change. Also the lock's own ordering and cancellation.
 */
import assert from "node:assert/strict";
import { runOperation, WorkspaceError } from "../../mod.ts";
import { ReadersWriterLock } from "../../src/workspace/lock.ts";
import { createHttpHandler } from "../../src/server/http.ts";
import { envelope, messagesOf, MODERN } from "../server/_harness.ts";
import { SECRET, SECRET_NAME, snapshot, withEnv, withTimeout } from "./_helpers.ts";

const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

Deno.test("lock: a writer waits for readers in flight; later readers wait behind a waiting writer", async () => {
  const lock = new ReadersWriterLock();
  const order: string[] = [];
  const r1 = await lock.acquire("read");
  const r2 = await lock.acquire("read");
  const w = lock.acquire("write").then((rel) => (order.push("w"), rel));
  const r3 = lock.acquire("read").then((rel) => (order.push("r3"), rel));
  const w2 = lock.acquire("write").then((rel) => (order.push("w2"), rel));
  const r4 = lock.acquire("read").then((rel) => (order.push("r4"), rel));
  const r5 = lock.acquire("read").then((rel) => (order.push("r5"), rel));
  await tick();
  assert.deepEqual(
    order,
    [],
    "nothing is granted while two readers hold the lock and a writer waits",
  );
  r1();
  await tick();
  assert.deepEqual(order, [], "the writer still waits for the second reader");
  r2();
  const wRel = await w;
  await tick();
  assert.deepEqual(order, ["w"], "the reader that came after the writer waits behind it");
  assert.equal(lock.writing, true);
  wRel();
  const r3Rel = await r3;
  await tick();
  assert.deepEqual(
    order,
    ["w", "r3"],
    "readers behind the first writer go in, the next writer waits",
  );
  r3Rel();
  const w2Rel = await w2;
  wRel(); // a second release does nothing
  assert.equal(lock.writing, true);
  w2Rel();
  const [r4Rel, r5Rel] = await Promise.all([r4, r5]);
  assert.deepEqual(order, ["w", "r3", "w2", "r4", "r5"]);
  assert.equal(lock.readers, 2, "consecutive readers share the lock");
  r4Rel();
  r5Rel();
  assert.equal(lock.readers, 0);
  assert.equal(lock.waiting, 0);
});

Deno.test("lock: cancellation while queued leaves the queue with CANCELLED", async () => {
  const lock = new ReadersWriterLock();
  const held = await lock.acquire("read");
  const ac = new AbortController();
  const queuedWriter = lock.acquire("write", { signal: ac.signal });
  const behind = lock.acquire("read");
  await tick();
  assert.equal(lock.waiting, 2);
  ac.abort();
  await assert.rejects(queuedWriter, (e) => e instanceof WorkspaceError && e.code === "CANCELLED");
  // The cancelled writer no longer blocks the reader behind it.
  const behindRel = await withTimeout(behind, 5_000, "reader behind a cancelled writer");
  assert.equal(lock.waiting, 0);
  assert.equal(lock.readers, 2);
  behindRel();
  held();
  // An already aborted signal never enters the queue; a bounded wait ends typed.
  const w = await lock.acquire("write");
  await assert.rejects(
    lock.acquire("read", { signal: AbortSignal.abort() }),
    (e) => e instanceof WorkspaceError && e.code === "CANCELLED",
  );
  await assert.rejects(
    lock.acquire("read", { timeoutMs: 30 }),
    (e) => e instanceof WorkspaceError && e.code === "TIME_BUDGET_EXCEEDED",
  );
  assert.equal(lock.waiting, 0);
  w();
});

Deno.test("runOperation takes the workspace lock: reads shared, writes exclusive, cancellable while queued", async () => {
  await withEnv(async (env) => {
    const ws = env.ws;
    // A read in flight holds the write back.
    const read = await ws.lock.acquire("read");
    let written = false;
    const write = runOperation({ workspace: ws }, "write_file", { path: "w.txt", content: "w" })
      .then(() => (written = true));
    // Another read is not held back by the read in flight... unless a writer waits: it is.
    let readDone = false;
    const laterRead = runOperation({ workspace: ws }, "read_file", { path: "inside.txt" })
      .then(() => (readDone = true));
    await tick(50);
    assert.equal(written, false, "a write ran while a read was in flight");
    await assert.rejects(Deno.lstat(`${env.W}/w.txt`), Deno.errors.NotFound);
    assert.equal(readDone, false, "a read overtook a waiting write");
    read();
    await withTimeout(Promise.all([write, laterRead]), 5_000, "queued operations");
    assert.equal(await Deno.readTextFile(`${env.W}/w.txt`), "w");
    // Cancellation while queued behind a writer.
    const w = await ws.lock.acquire("write");
    const ac = new AbortController();
    const queued = runOperation({ workspace: ws, signal: ac.signal }, "list_directory", {
      path: ".",
    });
    await tick();
    ac.abort();
    await assert.rejects(queued, (e) => e instanceof WorkspaceError && e.code === "CANCELLED");
    assert.equal(ws.lock.waiting, 0);
    w();
  });
});

/** One tools/call through the handler's fetch, modern era; returns the raw response text. */
async function callTool(
  handler: { fetch: (r: Request) => Promise<Response> },
  id: number,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const headers: Record<string, string> = {
    host: "127.0.0.1",
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/call",
    "mcp-name": name,
  };
  if (typeof args.path === "string") headers["mcp-param-path"] = args.path;
  const res = await handler.fetch(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name, arguments: args, _meta: envelope() },
      }),
    }),
  );
  const messages = await messagesOf(res);
  return JSON.stringify(messages);
}

Deno.test("tools-only swaps through concurrent HTTP requests reveal and change nothing outside", async () => {
  await withEnv(async (env) => {
    // A workspace that ships a link to an outside directory (as a cloned repository may).
    await Deno.mkdir(`${env.W}/d/sub`, { recursive: true });
    await Deno.writeTextFile(`${env.W}/d/f.txt`, "inside SECRET-ish twin\n");
    await Deno.writeTextFile(`${env.W}/d/sub/g.txt`, "inside\n");
    await Deno.symlink(env.O, `${env.W}/ln`);
    const outsideBefore = await snapshot(env.O);
    const handler = createHttpHandler({ workspace: env.ws, keepAliveMs: 0 });
    const ROUNDS = 25;
    let id = 0;
    let responses = 0;
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const calls: [string, Record<string, unknown>][] = [
          ["move_path", { source: "d", destination: "d2" }],
          ["move_path", { source: "ln", destination: "d" }],
          ["search_text", {
            query: "SECRET",
            path: "d",
            includeHidden: true,
            respectGitignore: false,
          }],
          ["find_files", {
            pattern: "**",
            path: "d",
            includeHidden: true,
            respectGitignore: false,
          }],
          ["list_directory", { path: "d", depth: 5, includeHidden: true }],
          ["read_file", { path: "d/secret" }],
          ["get_file_info", { path: "d/secret" }],
          ["write_file", { path: `d/w${round}.txt`, content: "pwned\n" }],
          ["delete_path", { path: "d/sub", recursive: true, confirm: true }],
          ["move_path", { source: "d", destination: "ln" }],
          ["move_path", { source: "d2", destination: "d" }],
          ["search_text", {
            query: "SECRET",
            path: ".",
            includeHidden: true,
            respectGitignore: false,
          }],
          ["find_files", { pattern: "**/*", includeHidden: true, respectGitignore: false }],
          ["create_directory", { path: `d/new${round}/x` }],
          ["edit_file", { path: "d/secret", edits: [{ oldText: "TOP", newText: "pwned" }] }],
        ];
        // Rotate the order so each kind of call meets each state of the tree.
        const rotated = [
          ...calls.slice(round % calls.length),
          ...calls.slice(0, round % calls.length),
        ];
        const texts = await withTimeout(
          Promise.all(rotated.map(([name, args]) => callTool(handler, ++id, name, args))),
          30_000,
          `round ${round}`,
        );
        for (const [i, text] of texts.entries()) {
          responses++;
          for (const needle of [SECRET, SECRET_NAME, "secretdir", "inner.txt", env.O]) {
            assert.ok(
              !text.includes(needle),
              `round ${round}: ${rotated[i][0]} revealed ${needle}: ${text.slice(0, 400)}`,
            );
          }
        }
        // Put the tree back for the next round: d a directory, ln the link.
        const dInfo = await Deno.lstat(`${env.W}/d`).catch(() => null);
        if (dInfo?.isSymlink) {
          await Deno.remove(`${env.W}/d`);
          if (await Deno.lstat(`${env.W}/ln`).catch(() => null) === null) {
            await Deno.symlink(env.O, `${env.W}/ln`);
          }
        }
        if (await Deno.lstat(`${env.W}/d`).catch(() => null) === null) {
          const d2 = await Deno.lstat(`${env.W}/d2`).catch(() => null);
          if (d2?.isDirectory) await Deno.rename(`${env.W}/d2`, `${env.W}/d`);
          else await Deno.mkdir(`${env.W}/d`);
        }
        await Deno.mkdir(`${env.W}/d/sub`, { recursive: true });
        if (await Deno.lstat(`${env.W}/ln`).catch(() => null) === null) {
          await Deno.symlink(env.O, `${env.W}/ln`);
        }
      }
    } finally {
      await handler.close();
    }
    assert.equal(responses, ROUNDS * 15);
    assert.deepEqual(await snapshot(env.O), outsideBefore, "something outside changed");
  });
});
