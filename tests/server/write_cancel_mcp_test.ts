/**
 * What a cancelled or timed-out write did, over MCP: stdio and Streamable HTTP, both eras, with
 * the SDK client's own cancellation (notifications/cancelled, or closing the request's stream on
 * modern HTTP). Before the commit point nothing changed; after it the write completed, and the
 * server's log says which when no result was sent.
 *
 * A write cancelled while it waits behind a reader runs in process: the stdio server on a pair of
 * in-memory streams and the HTTP handler through its fetch, with the SDK client on each, and the
 * test holding the workspace's read lock itself, so the write is known to be queued (the lock's
 * waiter count) when it is cancelled, with no CPU spent and no timing involved. A write cancelled
 * at any moment, and one that runs out of its time budget, go through real server processes.
 */
import assert from "node:assert/strict";
import type { Buffer } from "node:buffer";
import { PassThrough } from "node:stream";
import {
  Client,
  type JSONRPCMessage,
  ReadBuffer,
  serializeMessage,
  StreamableHTTPClientTransport,
  type Transport,
} from "@modelcontextprotocol/client";
import { createHttpHandler, startStdioServer, Workspace } from "../../mod.ts";
import { IN_PROCESS_URL, inProcessFetch } from "../_support/handler.ts";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { events, permissionFlags, SERVE_STDIO, startHttpServer, until } from "./_harness.ts";
import { GrowingText } from "../_support/wait.ts";

interface Connected {
  client: Client;
  stderr: () => string;
  /** Resolves true once `holds(stderr so far)` is true (woken by each chunk), false after ms. */
  waitStderr: (holds: (stderr: string) => boolean, ms?: number) => Promise<boolean>;
  close(): Promise<void>;
}

interface Target {
  name: string;
  connect(root: string, args?: string[]): Promise<Connected>;
}

function stdioTarget(mode: "auto" | "legacy"): Target {
  return {
    name: `stdio ${mode}`,
    async connect(root, args = []) {
      const transport = new StdioClientTransport({
        command: Deno.execPath(),
        args: [
          "run",
          ...permissionFlags(root, true),
          SERVE_STDIO,
          "--root",
          root,
          "--write",
          ...args,
        ],
        stderr: "pipe",
      });
      const err = new GrowingText();
      const client = new Client({ name: "t", version: "0" }, {
        versionNegotiation: { mode, probe: { timeoutMs: 5000 } },
      });
      await client.connect(transport);
      const stream = transport.stderr as unknown as AsyncIterable<Uint8Array> | null;
      if (stream) err.drain(stream);
      return {
        client,
        stderr: () => err.text,
        waitStderr: (holds, ms) => err.waitFor(holds, ms),
        close: () => client.close(),
      };
    },
  };
}

function httpTarget(mode: "auto" | "legacy"): Target {
  return {
    name: `http ${mode}`,
    async connect(root, args = []) {
      const server = await startHttpServer(root, { write: true, args });
      const client = new Client({ name: "t", version: "0" }, { versionNegotiation: { mode } });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      return {
        client,
        stderr: server.stderr,
        waitStderr: server.waitStderr,
        close: async () => {
          await client.close();
          await server.stop();
        },
      };
    },
  };
}

const TARGETS = [
  stdioTarget("auto"),
  stdioTarget("legacy"),
  httpTarget("auto"),
  httpTarget("legacy"),
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The SDK client on the stdio server's in-memory streams (a Transport over them). */
class StreamTransport implements Transport {
  onmessage?: (m: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (e: Error) => void;
  readonly #buffer = new ReadBuffer();
  constructor(readonly fromServer: PassThrough, readonly toServer: PassThrough) {}
  start(): Promise<void> {
    this.fromServer.on("data", (chunk: Buffer) => {
      this.#buffer.append(chunk);
      for (let m = this.#buffer.readMessage(); m !== null; m = this.#buffer.readMessage()) {
        this.onmessage?.(m);
      }
    });
    return Promise.resolve();
  }
  send(m: JSONRPCMessage): Promise<void> {
    this.toServer.write(serializeMessage(m));
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.toServer.end();
    this.onclose?.();
    return Promise.resolve();
  }
}

/** A server in this process on `ws`, spoken to by an SDK client in one era. */
interface InProcess {
  name: string;
  connect(
    ws: Workspace,
    mode: "auto" | "legacy",
  ): Promise<{ client: Client; close(): Promise<void> }>;
}

const IN_PROCESS: InProcess[] = [
  {
    name: "stdio",
    async connect(ws, mode) {
      const input = new PassThrough();
      const output = new PassThrough();
      const server = startStdioServer({ workspace: ws, input, output });
      const client = new Client({ name: "t", version: "0" }, { versionNegotiation: { mode } });
      await client.connect(new StreamTransport(output, input));
      return {
        client,
        close: async () => {
          await client.close();
          await server.close();
        },
      };
    },
  },
  {
    name: "http",
    async connect(ws, mode) {
      const handler = createHttpHandler({ workspace: ws });
      const client = new Client({ name: "t", version: "0" }, { versionNegotiation: { mode } });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(IN_PROCESS_URL), {
          fetch: inProcessFetch(handler),
        }),
      );
      return {
        client,
        close: async () => {
          await client.close();
          await handler.close();
        },
      };
    },
  },
];

/** Runs fn with console.error's lines collected (the server's log events), then restores it. */
async function withLog<T>(fn: (log: () => string) => Promise<T>): Promise<T> {
  const original = console.error;
  let text = "";
  console.error = (...args: unknown[]) => {
    text += args.map(String).join(" ") + "\n";
  };
  try {
    return await fn(() => text);
  } finally {
    console.error = original;
  }
}

Deno.test("a write cancelled while it waits behind a reader changes nothing, on every transport and era", async (t) => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-wcancel-" }));
  try {
    for (const target of IN_PROCESS) {
      for (const mode of ["auto", "legacy"] as const) {
        await t.step(`${target.name} ${mode}`, async () => {
          await Deno.writeTextFile(`${root}/a.txt`, "old\n");
          const ws = await Workspace.open({ root, writable: true });
          const { client, close } = await target.connect(ws, mode);
          try {
            await withLog(async (log) => {
              // The reader: the test holds the workspace's read lock.
              const release = await ws.lock.acquire("read");
              const ac = new AbortController();
              const write = client.callTool({
                name: "write_file",
                arguments: {
                  path: "a.txt",
                  content: "new\n",
                  ifExists: "overwrite",
                  confirm: true,
                },
              }, { signal: ac.signal });
              // Queued behind the reader: the lock's waiter count says so.
              assert.ok(await until(() => ws.lock.waiting === 1, 30_000), "the write waits");
              ac.abort();
              await assert.rejects(write);
              // The server saw the cancellation: the waiter left the queue.
              assert.ok(await until(() => ws.lock.waiting === 0, 30_000), "the write left");
              release();
              // Whatever the server does next with a call it dropped, it is done once the lock is
              // free for a writer: a read-then-probe shows the file.
              const probe = await client.callTool({
                name: "read_file",
                arguments: { path: "a.txt" },
              });
              assert.equal((probe.structuredContent as { content: string }).content, "old\n");
              assert.equal(await Deno.readTextFile(`${root}/a.txt`), "old\n");
              assert.ok(
                await until(() => events(log(), "write_file").some((e) => e.event === "cancelled")),
                `the server logs the cancellation; log:\n${log()}`,
              );
              const ev = events(log(), "write_file").find((e) => e.event === "cancelled")!;
              assert.equal(ev.code, "CANCELLED");
              assert.equal(events(log(), "write_file").some((e) => e.event !== "cancelled"), false);
            });
          } finally {
            await close();
            ws.engine.close();
          }
        });
      }
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a write cancelled at any moment either changed nothing or completed, and the server says which", async (t) => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-wcancel-" }));
  try {
    for (const target of TARGETS) {
      await t.step(target.name, async () => {
        const { client, stderr, close } = await target.connect(root);
        try {
          // Bounded: a few trials with the cancellation sent at different moments.
          for (const [i, delay] of [0, 0, 1, 2, 5, 10].entries()) {
            const path = `${target.name.replace(" ", "-")}-${i}.txt`;
            const content = `trial ${i}\n`;
            const ac = new AbortController();
            const before = events(stderr(), "write_file").length;
            const call = client.callTool(
              { name: "write_file", arguments: { path, content } },
              { signal: ac.signal },
            );
            if (delay > 0) await sleep(delay);
            ac.abort();
            const answered = await call.then((r) => r, () => null);
            const present = () => {
              try {
                return Deno.statSync(`${root}/${path}`).isFile;
              } catch {
                return false;
              }
            };
            // A barrier: a second write through the same client. Writes run one at a time in
            // the order they reach the workspace's lock, so once its result is back the first one
            // has ended, if it reached the server at all (one cancelled before it was sent never
            // does).
            await client.callTool({
              name: "write_file",
              arguments: { path: `${path}.after`, content },
            });
            const exists = present();
            // A write the server saw cancelled after it committed logs so, and its line may trail
            // the barrier's answer on another pipe: when the file is there without an answer, a
            // little time is given for that line. Without it the server never saw the cancellation
            // (the write is then whole), which is checked either way.
            if (answered === null && exists) {
              await until(() => events(stderr(), "write_file").length > before, 2000);
            }
            const ev = events(stderr(), "write_file").slice(before)[0];
            if (answered !== null) {
              // The result beat the cancellation: it is complete and true.
              assert.equal(answered.isError, undefined);
              assert.equal(await Deno.readTextFile(`${root}/${path}`), content);
            } else if (ev?.event === "completed-after-cancellation") {
              assert.ok(exists, `trial ${i}: logged as completed, so the file is there`);
              assert.equal(await Deno.readTextFile(`${root}/${path}`), content);
              assert.equal((ev.result as { path: string }).path, path);
            } else if (ev !== undefined) {
              assert.equal(ev.event, "cancelled", `trial ${i}: ${JSON.stringify(ev)}`);
              assert.equal(ev.code, "CANCELLED");
              assert.equal(exists, false, `trial ${i}: cancelled, so nothing was written`);
            } else if (exists) {
              // The server never saw the cancellation (it came after the result was sent, or,
              // on modern HTTP, the connection stayed open): the write is whole.
              assert.equal(await Deno.readTextFile(`${root}/${path}`), content);
            }
            // else: cancelled before the request left the client; nothing reached the server.
            const temps = [...Deno.readDirSync(root)].filter((e) =>
              e.name.startsWith(".wmcp-tmp-")
            );
            assert.deepEqual(temps, []);
          }
        } finally {
          await close();
        }
      });
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a write that runs out of maxOperationMs before its commit point reports TIME_BUDGET_EXCEEDED and changed nothing", async (t) => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-wcancel-" }));
  const big = "x".repeat(9 * 1024 * 1024); // hashed before it is replaced: far more than 1 ms
  try {
    await Deno.writeTextFile(`${root}/big.txt`, big);
    for (const target of [TARGETS[0], TARGETS[2]]) {
      await t.step(target.name, async () => {
        const { client, close } = await target.connect(root, ["--limit", "maxOperationMs=1"]);
        try {
          const r = await client.callTool({
            name: "write_file",
            arguments: {
              path: "big.txt",
              content: "small\n",
              ifExists: "overwrite",
              confirm: true,
            },
          });
          assert.equal(r.isError, true);
          const e = (r._meta as Record<string, { code: string }>)["wmcp/error"];
          assert.equal(e.code, "TIME_BUDGET_EXCEEDED");
          assert.equal((await Deno.stat(`${root}/big.txt`)).size, big.length);
        } finally {
          await close();
        }
      });
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
