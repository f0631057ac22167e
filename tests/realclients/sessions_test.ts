/**
 * Legacy sessions real clients leave open (issue 9, point 5). The v1 and v2 SDK clients and the
 * Inspector CLI never DELETE their session, and mcp-remote leaves two per start: short-lived
 * clients of each kind in a row, well past the table's cap, are all served (the least recently
 * used idle session makes room), each client's share protects another's session, and idle
 * sessions are reclaimed. The handler runs in this process on a real 127.0.0.1 socket so the
 * test can read its session count; the clients are the real npm packages in their own processes.
 */
import assert from "node:assert/strict";
import { Workspace } from "../../mod.ts";
import type { HttpHandlerOptions } from "../../src/server/http.ts";
import { withLoopbackServer } from "../_support/handler.ts";
import {
  installClients,
  makeClientWorkspace,
  run,
  runDriver,
  viaMcpRemote,
} from "./_realclients.ts";
import { availableOperations } from "../../mod.ts";

const clients = await installClients();
const INSPECTOR = clients.module("@modelcontextprotocol/inspector/clients/launcher/build/index.js");

/** What a `repeat` driver run reports. */
interface RepeatReport {
  served: number;
  failures: string[];
  holderTools?: number;
  holderError?: string;
}

/** Serves a read-only workspace on 127.0.0.1 through the real handler, for the test's body. */
async function withServer(
  options: Omit<HttpHandlerOptions, "workspace">,
  body: (url: string, sessions: () => number) => Promise<void>,
): Promise<void> {
  const root = await makeClientWorkspace();
  try {
    const workspace = await Workspace.open({ root });
    await withLoopbackServer(
      { workspace, ...options },
      ({ url, handler }) => body(url, handler.sessionCount),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** `count` Inspector CLI runs (legacy era, tools/list), `concurrency` at a time; failures. */
async function inspectorRuns(url: string, count: number, concurrency: number): Promise<string[]> {
  const home = await Deno.makeTempDir({ prefix: "wmcp-inspector-home-" });
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const out = await run(clients.node22, {
        args: [INSPECTOR, "--cli", "--format", "json", "-q", "--protocol-era", "legacy"]
          .concat(["--method", "tools/list", "--server-url", url]),
        env: {
          HOME: home,
          PATH: Deno.env.get("PATH") ?? "",
          NODE_COMPILE_CACHE: clients.compileCache,
        },
      });
      const listed = out.code === 0 &&
        JSON.parse(out.stdout).result?.tools?.length === availableOperations(false).length;
      if (!listed) failures.push(`run ${i}: exit ${out.code}: ${out.stderr.slice(0, 300)}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await Deno.remove(home, { recursive: true });
  }
  return failures;
}

for (const [kind, script] of [["v1", "v1_client.mjs"], ["v2", "v2_client.mjs"]] as const) {
  Deno.test(`200 short-lived ${kind} SDK clients in a row (legacy, never DELETE) are all served; the table stays at its cap`, async () => {
    await withServer({}, async (url, sessions) => {
      const report = await runDriver<RepeatReport>(clients.node, clients.script(script), {
        target: { type: "http", url },
        era: "legacy",
        repeat: 200,
      });
      assert.deepEqual(report.failures, []);
      assert.equal(report.served, 200);
      // They left every session open: the table filled to its default cap of 100 and each
      // newcomer past it replaced the least recently used idle session.
      assert.equal(sessions(), 100);
    });
  });
}

Deno.test("short-lived Inspector CLI runs and mcp-remote starts, 2.5x the session cap, are all served", async () => {
  // 200 processes of each kind would take minutes: the cap is lowered to 6 (from 100) and 15
  // runs of each kind keep the ratio (and more: mcp-remote leaves two sessions per start).
  await withServer({ maxSessions: 6 }, async (url, sessions) => {
    assert.deepEqual(await inspectorRuns(url, 15, 2), []);
    assert.equal(sessions(), 6, "the Inspector runs left their sessions: the table is full");
    const configDir = await Deno.makeTempDir({ prefix: "wmcp-mcp-remote-" });
    try {
      const report = await runDriver<RepeatReport>(clients.node, clients.script("v1_client.mjs"), {
        target: viaMcpRemote(clients, url, configDir),
        repeat: 15,
      });
      assert.deepEqual(report.failures, []);
      assert.equal(report.served, 15);
    } finally {
      await Deno.remove(configDir, { recursive: true });
    }
    assert.equal(sessions(), 6);
  });
});

Deno.test("with tokens, one host's short-lived clients never push out another host's session", async () => {
  const a = "token-of-host-a-0123456789";
  const b = "token-of-host-b-0123456789";
  await withServer({ tokens: [a, b], maxSessions: 10 }, async (url, sessions) => {
    const report = await runDriver<RepeatReport>(clients.node, clients.script("v1_client.mjs"), {
      target: { type: "http", url, headers: { authorization: `Bearer ${a}` } },
      holder: { type: "http", url, headers: { authorization: `Bearer ${b}` } },
      repeat: 30,
    });
    assert.deepEqual(report.failures, []);
    assert.equal(report.served, 30);
    assert.equal(report.holderError, undefined, "host B's session survived");
    assert.equal(report.holderTools, availableOperations(false).length);
    assert.equal(sessions(), 6, "A holds its share (5), B its one session");
  });
});

Deno.test("sessions the real clients leave open are reclaimed once idle", async () => {
  await withServer({ sessionIdleMs: 2000, unusedSessionMs: 2000 }, async (url, sessions) => {
    assert.deepEqual(await inspectorRuns(url, 3, 3), []);
    const configDir = await Deno.makeTempDir({ prefix: "wmcp-mcp-remote-" });
    try {
      const viaRemote = await runDriver<RepeatReport>(
        clients.node,
        clients.script("v1_client.mjs"),
        { target: viaMcpRemote(clients, url, configDir), repeat: 2 },
      );
      assert.equal(viaRemote.served, 2, viaRemote.failures.join("\n"));
    } finally {
      await Deno.remove(configDir, { recursive: true });
    }
    for (const script of ["v1_client.mjs", "v2_client.mjs"]) {
      const r = await runDriver<RepeatReport>(clients.node, clients.script(script), {
        target: { type: "http", url },
        era: "legacy",
        repeat: 3,
      });
      assert.equal(r.served, 3, r.failures.join("\n"));
    }
    const left = sessions();
    assert.ok(left >= 3, `the clients left sessions open (${left})`);
    // Idle (and never-used) sessions expire: the sweep runs every second; wait at most 20 s.
    const deadline = Date.now() + 20_000;
    while (sessions() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    assert.equal(sessions(), 0, `reclaimed: ${left} sessions, ${sessions()} left`);
  });
});
