/**
 * The server's progress cadence on every transport and era: a call with a progressToken gets
 * a notification as soon as it starts (before the operation reported anything, its walk
 * included), progress values strictly increase, and nothing arrives after the response, on
 * success and on a tool error alike. Order and outcome only; no durations.
 */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { makeWorkspace, permissionFlags, SERVE_STDIO, startHttpServer } from "./_harness.ts";
import { PROGRESS_INTERVAL_MS } from "../../src/server/progress.ts";

/** What crossed the wire towards the client, in order. */
type Seen = Record<string, unknown>;

interface Connected {
  client: Client;
  seen: Seen[];
  close(): Promise<void>;
}

/** Connects a client and taps every message it receives, in arrival order. */
async function tapped(
  transport: StdioClientTransport | StreamableHTTPClientTransport,
  mode: "auto" | "legacy",
): Promise<Connected> {
  const client = new Client({ name: "t", version: "0" }, {
    versionNegotiation: { mode, probe: { timeoutMs: 10_000 } },
  });
  await client.connect(transport);
  const seen: Seen[] = [];
  const inner = transport.onmessage!;
  transport.onmessage = ((m: Seen, extra?: unknown) => {
    seen.push(m);
    (inner as (m: unknown, e?: unknown) => void)(m, extra);
  }) as typeof transport.onmessage;
  // The SDK reports a progress notification for a finished request as an error; the test
  // checks that none arrives, so the report itself must not throw.
  client.onerror = () => {};
  return { client, seen, close: () => client.close() };
}

const TARGETS: {
  name: string;
  connect(root: string): Promise<Connected & { stop?: () => Promise<unknown> }>;
}[] = [
  ...(["auto", "legacy"] as const).map((mode) => ({
    name: `stdio ${mode}`,
    connect: (root: string) =>
      tapped(
        new StdioClientTransport({
          command: Deno.execPath(),
          args: ["run", ...permissionFlags(root), SERVE_STDIO, "--root", root],
          stderr: "ignore",
        }),
        mode,
      ),
  })),
  ...(["auto", "legacy"] as const).map((mode) => ({
    name: `http ${mode}`,
    async connect(root: string) {
      const server = await startHttpServer(root);
      const c = await tapped(new StreamableHTTPClientTransport(new URL(server.url)), mode);
      return { ...c, stop: () => server.stop() };
    },
  })),
];

/** The progress notifications for a token, and where the response to request `id` came. */
function progressOf(seen: Seen[], token: unknown) {
  return seen.flatMap((m, index) => {
    const p = m.params as { progressToken?: unknown; progress?: number; message?: string };
    return m.method === "notifications/progress" && p?.progressToken === token
      ? [{ index, progress: p.progress!, message: p.message }]
      : [];
  });
}

Deno.test("progress at a steady cadence from the start of a call, none after its response", async (t) => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 300; i++) files[`d${i % 10}/f${i}.txt`] = "some text\n".repeat(50);
  const root = await makeWorkspace(files);
  try {
    for (const target of TARGETS) {
      await t.step(target.name, async () => {
        const c = await target.connect(root);
        try {
          for (
            const [what, args, isError] of [
              // No file matches the include glob: the operation itself reports no progress
              // during the whole walk; the cadence alone speaks.
              ["walk only", { query: "x", include: ["*.none"] }, undefined],
              ["search", { query: "no-such-needle" }, undefined],
              ["tool error", { query: "x", path: "no/such/dir" }, true],
            ] as const
          ) {
            const before = c.seen.length;
            const result = await c.client.callTool(
              { name: "search_text", arguments: args },
              { onprogress: () => {} },
            );
            assert.equal(result.isError, isError, `${what}: ${JSON.stringify(result)}`);
            const mine = c.seen.slice(before);
            const response = mine.findIndex((m) => "id" in m && "result" in m);
            assert.ok(response >= 0, `${what}: no response seen`);
            const token = (mine.find((m) => m.method === "notifications/progress")
              ?.params as { progressToken?: unknown })?.progressToken;
            assert.notEqual(token, undefined, `${what}: no progress notification at all`);
            // Let several intervals pass: nothing more may come for this call.
            await new Promise((r) => setTimeout(r, PROGRESS_INTERVAL_MS * 5));
            const progress = progressOf(c.seen.slice(before), token);
            assert.ok(progress.length >= 1, `${what}: the start notification is missing`);
            assert.equal(progress[0].message, "search_text: started", what);
            for (const [i, p] of progress.entries()) {
              assert.ok(p.index < response, `${what}: progress after the response`);
              assert.equal(p.progress, i + 1, `${what}: progress values strictly increase`);
              assert.match(
                String(p.message),
                /^(search_text: started|\d+ files searched, \d+ matches)$/,
              );
            }
          }
        } finally {
          await c.close();
          await c.stop?.();
        }
      });
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
