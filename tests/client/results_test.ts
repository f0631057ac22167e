/** Result classes that need a misbehaving server: invalid result (5) and unanswered input (6). */
import assert from "node:assert/strict";
import { runClient } from "./_client.ts";

const FIXTURES = new URL("./fixtures", import.meta.url).pathname;
const CONFIG_DENO = new URL("../../deno.json", import.meta.url).pathname;

const client = (dir: string, args: string[]) => runClient(args, { read: [dir] });

async function withConfig(fn: (dir: string, config: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-results-" });
  try {
    const config = `${dir}/mcp.json`;
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        mcpServers: {
          fake: {
            command: Deno.execPath(),
            args: [
              "run",
              "--quiet",
              "-A",
              `${FIXTURES}/paging_server.ts`,
              "--pages",
              `${FIXTURES}/results_pages.json`,
            ],
          },
          form: {
            command: Deno.execPath(),
            args: ["run", "--quiet", "-A", "--config", CONFIG_DENO, `${FIXTURES}/form_server.ts`],
          },
        },
      }),
    );
    await fn(dir, config);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("structuredContent that fails the outputSchema is exit 5; the envelope still shows what came", async () => {
  await withConfig(async (dir, config) => {
    const r = await client(dir, [
      "tools",
      "call",
      "bad_structured",
      "--config",
      config,
      "--server",
      "fake",
    ]);
    assert.equal(r.code, 5, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).mcpResult.structuredContent, { count: "many" });
    const err = JSON.parse(r.stderr.trim().split("\n").pop()!).error;
    assert.equal(err.class, "invalid-result");
    assert.equal(err.exitCode, 5);
  });
});

Deno.test("an unknown resultType is exit 5", async () => {
  await withConfig(async (dir, config) => {
    const r = await client(dir, [
      "tools",
      "call",
      "weird_type",
      "--config",
      config,
      "--server",
      "fake",
    ]);
    assert.equal(r.code, 5, r.stderr);
    assert.equal(JSON.parse(r.stdout).mcpResult.resultType, "something_new");
  });
});

Deno.test("non-interactive: an input_required result is printed as received and is exit 6", async () => {
  await withConfig(async (dir, config) => {
    const r = await client(dir, [
      "tools",
      "call",
      "needs_input",
      "--config",
      config,
      "--server",
      "fake",
      "--non-interactive",
    ]);
    assert.equal(r.code, 6, r.stderr);
    const env = JSON.parse(r.stdout);
    assert.deepEqual(env.mcpResult, {
      resultType: "input_required",
      inputRequests: {
        q: {
          method: "elicitation/create",
          params: { message: "Which?", requestedSchema: { type: "object" } },
        },
      },
      requestState: "opaque-state",
    });
    assert.equal(env.metadata.rounds, 1, "never retried");
    assert.equal(JSON.parse(r.stderr.trim().split("\n").pop()!).error.class, "input-required");
  });
});

Deno.test("a spec-conforming server does not ask a client that declared no elicitation (exit 4, -32021)", async () => {
  await withConfig(async (dir, config) => {
    const r = await client(dir, [
      "tools",
      "call",
      "ask",
      "--config",
      config,
      "--server",
      "form",
      "--non-interactive",
      "--protocol-version",
      "2026-07-28",
    ]);
    assert.equal(r.code, 4, r.stderr);
    assert.equal(JSON.parse(r.stderr.trim().split("\n").pop()!).error.code, -32021);
  });
});
