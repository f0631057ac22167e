/**
 * Runaway patterns (issue 8, section 2): a catastrophic regex in search_text and a
 * catastrophic glob in find_files must not stop a real server from answering /healthz and
 * other calls, must end with CANCELLED when cancelled and with TIME_BUDGET_EXCEEDED when
 * the time budget runs out, and must leave the engine usable. Servers and library runs are
 * child processes, so a worker stuck in a backtracking matcher ends with its process.
 *
 * Once the matchers are linear-time (re2js, a non-backtracking glob), these inputs finish
 * quickly: a case then records that the hostile call completed on its own (correctly), and
 * the ordering, cancellation and budget assertions apply whenever the call was still running.
 */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ENGINE_READ_PATH } from "../../src/workspace/engine/read_path.ts";
import {
  envelope,
  type HttpServerProcess,
  makeWorkspace,
  MODERN,
  startHttpServer,
} from "../server/_harness.ts";

const CHILD = new URL("./_runaway_child.ts", import.meta.url).pathname;
/** A name of 44 characters without an X: what the glob below backtracks on. */
const LONG_NAME = "a".repeat(44);

const CASES = [
  {
    tool: "search_text",
    args: { query: "^(a+)+$", regex: true },
  },
  {
    tool: "find_files",
    args: { pattern: "*?*?*?*?*?*?*?*?*?*?*?*?X" },
  },
] as const;

function workspaceFiles(): Record<string, string> {
  return {
    "hostile.txt": "a".repeat(40) + "b\n",
    [LONG_NAME]: "x\n",
    "ok.txt": "fine\n",
  };
}

/** One modern tools/call over real HTTP; resolves with the tool result (or throws on abort). */
async function toolCall(
  url: string,
  name: string,
  args: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<{
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
  text: string;
}> {
  const res = await fetch(url, {
    method: "POST",
    signal,
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": name,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name, arguments: args, _meta: envelope() },
    }),
  });
  const text = await res.text();
  const line = text.includes("data: ")
    ? text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).pop()!
    : text;
  const msg = JSON.parse(line) as {
    result?: {
      isError?: boolean;
      structuredContent?: Record<string, unknown>;
      _meta?: Record<string, unknown>;
      content: { text: string }[];
    };
  };
  assert.ok(msg.result, `no result in ${text.slice(0, 300)}`);
  return { ...msg.result, text: msg.result.content.map((c) => c.text).join("") };
}

function healthzUrl(url: string): string {
  return new URL("/healthz", url).href;
}

async function withServer(
  args: string[],
  fn: (server: HttpServerProcess) => Promise<void>,
): Promise<void> {
  const root = await makeWorkspace(workspaceFiles());
  const server = await startHttpServer(root, { args });
  try {
    await fn(server);
  } finally {
    const status = await server.stop();
    // SIGTERM's graceful path ran and the process exited, stuck workers notwithstanding.
    assert.equal(status.code, 0, `server exit status; stderr:\n${server.stderr()}`);
    await Deno.remove(root, { recursive: true });
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The follow-up call proving a server still answers after a runaway input. */
function smallSearch(url: string) {
  return toolCall(url, "search_text", { query: "fine" }, AbortSignal.timeout(5000));
}

for (const c of CASES) {
  Deno.test(`runaway ${c.tool}: the server answers /healthz and another call while it runs; cancelling it frees the pool`, async () => {
    await withServer([], async (server) => {
      // Both engine workers started first (two calls at once): on a loaded machine a worker's
      // start alone can outlast the wait below, and the ordering checks are about matching, not
      // about starting threads.
      await Promise.all([smallSearch(server.url), smallSearch(server.url)]);
      // The hostile call goes through the SDK client, whose abort sends the protocol's cancellation.
      const client = new Client({ name: "runaway", version: "0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const controller = new AbortController();
      let hostileDone = false;
      const hostile = client.callTool({ name: c.tool, arguments: c.args }, {
        signal: controller.signal,
        timeout: 60_000,
      }).then(
        (r) => ({ ok: true as const, r }),
        (e) => ({ ok: false as const, e }),
      ).finally(() => (hostileDone = true));
      await sleep(300); // let it reach its matcher
      const runningAtStart = !hostileDone;

      const health = await fetch(healthzUrl(server.url), { signal: AbortSignal.timeout(5000) });
      assert.equal(health.status, 200);
      await health.body?.cancel();
      const healthBeforeHostile = !hostileDone;
      const other = await toolCall(server.url, "list_directory", {}, AbortSignal.timeout(5000));
      assert.notEqual(other.isError, true, other.text);
      const otherBeforeHostile = !hostileDone;

      if (runningAtStart) {
        assert.ok(healthBeforeHostile, "/healthz answered only after the hostile call ended");
        assert.ok(otherBeforeHostile, "list_directory answered only after the hostile call ended");
        controller.abort();
        const outcome = await hostile;
        assert.equal(outcome.ok, false, "the aborted request did not end");
        // The server logs how fast the call stopped after the cancellation.
        const deadline = Date.now() + 5000;
        let m: RegExpMatchArray | null = null;
        while (Date.now() < deadline) {
          m = server.stderr().match(
            new RegExp(`"event":"cancelled","tool":"${c.tool}","stopMs":(\\d+)`),
          );
          if (m) break;
          await sleep(50);
        }
        assert.ok(m, `the server never reported the cancellation; stderr:\n${server.stderr()}`);
        assert.ok(Number(m[1]) < 5000, `stopped ${m[1]} ms after the cancellation`);
        console.log(`${c.tool}: cancelled, server stopped the call ${m[1]} ms after the abort`);
      } else {
        const outcome = await hostile;
        assert.ok(outcome.ok && outcome.r.isError !== true, "the hostile call failed on its own");
        console.log(`${c.tool}: the hostile input completed on its own (linear-time matcher)`);
      }
      await client.close();
      // The pool is usable afterwards (a stuck worker was abandoned and replaced).
      const after = await toolCall(
        server.url,
        "search_text",
        { query: "fine" },
        AbortSignal.timeout(5000),
      );
      assert.notEqual(after.isError, true, after.text);
      assert.equal((after.structuredContent?.matches as unknown[]).length, 1);
      const found = await toolCall(
        server.url,
        "find_files",
        { pattern: "ok.txt" },
        AbortSignal.timeout(5000),
      );
      assert.equal((found.structuredContent?.matches as unknown[]).length, 1);
    });
  });

  Deno.test(`runaway ${c.tool}: --limit maxOperationMs ends it with TIME_BUDGET_EXCEEDED and the server stays usable`, async () => {
    await withServer(["--limit", "maxOperationMs=300"], async (server) => {
      let hostileDone = false;
      const hostile = toolCall(server.url, c.tool, c.args, AbortSignal.timeout(10_000)).finally(
        () => (hostileDone = true),
      );
      await sleep(100);
      const health = await fetch(healthzUrl(server.url), { signal: AbortSignal.timeout(5000) });
      assert.equal(health.status, 200);
      await health.body?.cancel();
      const r = await hostile;
      if (r.isError) {
        // The typed error travels in _meta["wmcp/error"]; the text is "<CODE>: <sentence>".
        const error = r._meta?.["wmcp/error"] as { code: string; details?: { limit?: number } };
        assert.equal(error.code, "TIME_BUDGET_EXCEEDED", r.text);
        assert.ok(r.text.startsWith("TIME_BUDGET_EXCEEDED: "), r.text);
        assert.deepEqual(error.details, { limit: 300 });
      } else {
        console.log(`${c.tool}: the hostile input completed within 300 ms (linear-time matcher)`);
      }
      assert.ok(hostileDone);
      // Usable again: a small search succeeds. On a loaded machine a small search can itself
      // exceed the 300 ms budget, so that one outcome is retried a bounded number of times; a
      // server that stayed wedged would answer TIME_BUDGET_EXCEEDED every time and fail.
      let after = await smallSearch(server.url);
      for (let i = 0; i < 5 && after.text.startsWith("TIME_BUDGET_EXCEEDED: "); i++) {
        await sleep(500);
        after = await smallSearch(server.url);
      }
      assert.notEqual(after.isError, true, after.text);
      assert.equal((after.structuredContent?.matches as unknown[]).length, 1);
    });
  });

  Deno.test(`runaway ${c.tool}: through the library, cancellation rejects with CANCELLED and the engine stays usable`, async () => {
    const root = await makeWorkspace(workspaceFiles());
    try {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--no-prompt",
          `--allow-read=${root},${ENGINE_READ_PATH}`,
          CHILD,
          root,
          c.tool,
          JSON.stringify(c.args),
          "300",
        ],
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(30_000),
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, stderr);
      const o = JSON.parse(new TextDecoder().decode(out.stdout).trim()) as {
        mode: string;
        code?: string;
        stopMs?: number;
        settledBeforeAbort: boolean;
        afterMatches: number;
      };
      assert.equal(o.mode, "workers");
      if (o.settledBeforeAbort) {
        assert.equal(o.code, undefined, `failed on its own: ${o.code}`);
        console.log(`${c.tool}: the hostile input completed on its own (linear-time matcher)`);
      } else {
        assert.equal(o.code, "CANCELLED");
        assert.ok(o.stopMs !== undefined && o.stopMs < 5000, `stopped after ${o.stopMs} ms`);
        console.log(`${c.tool}: CANCELLED ${o.stopMs} ms after the abort`);
      }
      assert.equal(o.afterMatches, 1);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
}
