/**
 * The HTTP handler on Node 22 and Bun through adapters/node.ts and adapters/bun.ts (bundled by
 * `deno task build:adapters`), with the workspace on node:fs: the contract table's cases over
 * modern Streamable HTTP (v2 SDK client), the Host, Origin and bearer-token guards, the refusal
 * to listen beyond loopback without a token, and a v2 SDK client smoke test. Real processes on
 * 127.0.0.1; Node and Bun come from npm.
 */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { CASES } from "../contract/cases.ts";
import {
  type CaseRun,
  configOf,
  httpAdapter,
  OUTSIDE_SNAPSHOT,
  startHttpServers,
} from "../contract/_adapters.ts";
import { pool } from "../_support/pool.ts";
import {
  comparable,
  type ConfigName,
  CONFIGS,
  fixtureSnapshot,
  normalizeOutcome,
} from "../contract/_model.ts";
import { modernRequest } from "../server/_harness.ts";
import {
  buildAdapters,
  installRuntimes,
  runRefused,
  type Runtime,
  startAdapter,
} from "./_runtimes.ts";

const USED_CONFIGS = [...new Set(CASES.map(configOf))] as ConfigName[];

function assertRun(c: (typeof CASES)[number], run: CaseRun): void {
  const expect = c.byAdapter?.httpModern ?? c.expect;
  const actual = normalizeOutcome(run.outcome, {
    prefix: run.prefix,
    op: c.op,
    mask: c.mask,
    places: run.places,
  });
  const { expected, actual: got } = comparable(expect, actual);
  assert.deepStrictEqual(got, expected, `outcome differs (raw: ${JSON.stringify(run.outcome)})`);
  assert.deepStrictEqual(
    run.after,
    fixtureSnapshot(c.after ?? c.fixture ?? {}),
    "files afterwards",
  );
  if (CONFIGS[configOf(c)].readOnlyRoot) {
    assert.deepStrictEqual(
      run.second?.after,
      fixtureSnapshot(c.secondAfter ?? c.second ?? {}),
      "files in the second root afterwards",
    );
  }
  assert.deepStrictEqual(run.outsideAfter, OUTSIDE_SNAPSHOT, "outside untouched");
}

/** The contract table's cases through one runtime's adapter (modern era, as the httpModern adapter). */
async function contractCases(t: Deno.TestContext, runtime: Runtime): Promise<void> {
  const http = await startHttpServers(
    USED_CONFIGS,
    (root, o) => startAdapter(runtime, root, { write: o?.write, args: o?.args }),
  );
  try {
    const adapter = await httpAdapter(http, "modern");
    const runs: (CaseRun | Error)[] = new Array(CASES.length);
    try {
      await pool(CASES, 4, async (c, i) => {
        if (c.ignore?.httpModern !== undefined) return;
        runs[i] = await adapter.run(c, i).catch((e) => e as Error);
      });
    } finally {
      await adapter.close();
    }
    for (const [i, c] of CASES.entries()) {
      const reason = c.ignore?.httpModern;
      await t.step({
        name: `${runtime.name}: ${c.name}`,
        ignore: reason !== undefined,
        fn: () => {
          const run = runs[i];
          if (run instanceof Error) throw run;
          assertRun(c, run);
        },
      });
    }
  } finally {
    const statuses = await http.close();
    for (const [config, server] of http.servers) {
      assert.ok(statuses.length > 0, `${config}: ${server.stderr()}`);
    }
  }
}

/** Sends one raw HTTP/1.1 request (any Host header) and returns the status line's code. */
async function rawStatus(port: number, request: string): Promise<number> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const timer = setTimeout(() => conn.close(), 10_000);
  try {
    await conn.write(new TextEncoder().encode(request));
    const buf = new Uint8Array(256);
    const n = await conn.read(buf);
    const head = new TextDecoder().decode(buf.subarray(0, n ?? 0));
    return Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? "0");
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the timer */ }
  }
}

function healthz(host: string): string {
  return `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
}

async function guards(t: Deno.TestContext, runtime: Runtime, root: string): Promise<void> {
  const open = await startAdapter(runtime, root);
  try {
    const port = Number(new URL(open.url).port);
    await t.step(
      `${runtime.name}: a loopback Host passes, a foreign Host is refused (403)`,
      async () => {
        assert.equal(await rawStatus(port, healthz(`127.0.0.1:${port}`)), 200);
        assert.equal(await rawStatus(port, healthz(`localhost:${port}`)), 200);
        assert.equal(await rawStatus(port, healthz("evil.example")), 403);
        assert.equal(await rawStatus(port, healthz(`evil.example:${port}`)), 403);
      },
    );
    await t.step(
      `${runtime.name}: a foreign Origin is refused (403), a loopback one passes`,
      async () => {
        const bad = await modernRequest(open.url, "tools/list", {}, {
          headers: { origin: "http://evil.example" },
        });
        assert.equal(bad.status, 403);
        const good = await modernRequest(open.url, "tools/list", {}, {
          headers: { origin: `http://localhost:${port}` },
        });
        assert.equal(good.status, 200);
      },
    );
    await t.step(`${runtime.name}: a port in use is exit 3, nothing served`, async () => {
      const r = await runRefused(runtime, ["--root", root, "--port", String(port)]);
      assert.equal(r.code, 3, r.stderr);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, /already in use/);
    });
  } finally {
    await open.stop();
  }
  // The token comes from WMCP_TOKEN (never argv, where ps shows it), at least 16 characters.
  const locked = await startAdapter(runtime, root, { env: { WMCP_TOKEN: "s3cret-token-0123456" } });
  try {
    await t.step(
      `${runtime.name}: the bearer token is required (401 without, 200 with)`,
      async () => {
        const cases = [[undefined, 401], ["Bearer wrong", 401], [
          "Bearer s3cret-token-0123456",
          200,
        ]] as const;
        for (const [auth, status] of cases) {
          const r = await modernRequest(locked.url, "tools/list", {}, {
            headers: auth === undefined ? {} : { authorization: auth },
          });
          assert.equal(r.status, status, `authorization ${auth}`);
        }
      },
    );
  } finally {
    await locked.stop();
  }
  await t.step(
    `${runtime.name}: refuses a non-loopback bind without a token (exit 2)`,
    async () => {
      const r = await runRefused(runtime, ["--root", root, "--host", "0.0.0.0", "--port", "0"]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, "");
      // The Deno server's message (the one flags module), changed on purpose from the adapters' own.
      assert.match(r.stderr, /refusing to listen on 0\.0\.0\.0 without authentication/);
    },
  );
}

async function sdkSmoke(t: Deno.TestContext, runtime: Runtime, root: string): Promise<void> {
  const server = await startAdapter(runtime, root, { write: true });
  try {
    await t.step(
      `${runtime.name}: v2 SDK client lists tools, reads, writes and reads back`,
      async () => {
        const client = new Client({ name: `adapter-smoke-${runtime.name}`, version: "0" });
        await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
        try {
          const { tools } = await client.listTools();
          const names = tools.map((tool) => tool.name);
          for (const n of ["read_file", "search_text", "write_file", "workspace_info"]) {
            assert.ok(names.includes(n), `${n} listed: ${names}`);
          }
          const read = await client.callTool({
            name: "read_file",
            arguments: { path: "hello.txt" },
          });
          assert.equal(read.isError, undefined, JSON.stringify(read));
          assert.match(JSON.stringify(read.content), /hello from the workspace/);
          const wrote = await client.callTool({
            name: "write_file",
            arguments: {
              path: `made/by/${runtime.name}.txt`,
              content: `written on ${runtime.name}\n`,
              createParents: true,
            },
          });
          assert.notEqual(wrote.isError, true, JSON.stringify(wrote));
          assert.equal(
            await Deno.readTextFile(`${root}/made/by/${runtime.name}.txt`),
            `written on ${runtime.name}\n`,
          );
          // search_text runs in the engine's worker pool (the bundled worker on this runtime).
          const found = await client.callTool({
            name: "search_text",
            arguments: { query: `written on ${runtime.name}` },
          });
          assert.notEqual(found.isError, true, JSON.stringify(found));
          assert.match(
            JSON.stringify(found.structuredContent),
            new RegExp(`made/by/${runtime.name}\\.txt`),
          );
          const info = await client.callTool({ name: "workspace_info", arguments: {} });
          const sc = info.structuredContent as { engine: { mode: string }; containment: unknown };
          assert.equal(sc.engine.mode, "workers");
          const escape = await client.callTool({
            name: "read_file",
            arguments: { path: "../secret.txt" },
          });
          assert.equal(escape.isError, true);
          assert.match(
            JSON.stringify(escape.structuredContent ?? escape.content),
            /OUTSIDE_WORKSPACE/,
          );
        } finally {
          await client.close();
        }
      },
    );
  } finally {
    const status = await server.stop();
    assert.ok(status.signal === "SIGTERM" || status.code === 0, server.stderr());
  }
}

Deno.test({
  name: "adapters: the HTTP handler on Node 22 and Bun",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const { runtimes, install } = await installRuntimes();
    const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-adapters-" }));
    try {
      await buildAdapters();
      const root = `${base}/ws`;
      await Deno.mkdir(root);
      await Deno.writeTextFile(`${root}/hello.txt`, "hello from the workspace\n");
      await Deno.writeTextFile(`${base}/secret.txt`, "secret\n");
      for (const runtime of runtimes) {
        await sdkSmoke(t, runtime, root);
        await guards(t, runtime, root);
        await contractCases(t, runtime);
      }
    } finally {
      await Deno.remove(base, { recursive: true });
      await install.cleanup();
    }
  },
});
