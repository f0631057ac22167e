/**
 * The conformance fixture (and so the generic server definition: resources, templates,
 * prompts, completions, logging, subscriptions, input_required) through real SDK clients,
 * without the conformance suite. run_server_suite.ts runs the suite itself.
 */
import assert from "node:assert/strict";
import { Client, ProtocolError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { messagesOf, modernRequest } from "../server/_harness.ts";

const FIXTURE = new URL("./fixture_server.ts", import.meta.url).pathname;

async function startFixture(): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "--allow-net=127.0.0.1",
      "--unstable-no-legacy-abort",
      FIXTURE,
      "--port",
      "0",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  while (!buf.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) throw new Error("the fixture exited before its ready line");
    buf += value;
  }
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  const ready = JSON.parse(buf.slice(0, buf.indexOf("\n")));
  assert.equal(ready.event, "ready");
  return {
    url: ready.url,
    stop: async () => {
      child.kill("SIGTERM");
      assert.equal((await child.status).code, 0);
    },
  };
}

function client(mode: "auto" | "legacy", capabilities: Record<string, unknown> = {}) {
  return new Client({ name: "fixture-test", version: "0" }, {
    versionNegotiation: { mode },
    capabilities,
  });
}

const textOf = (r: { content?: unknown }) =>
  (r.content as { type: string; text?: string }[])[0].text;

Deno.test("conformance fixture: resources, prompts, completion and input_required on both eras", async (t) => {
  const fixture = await startFixture();
  try {
    for (const mode of ["auto", "legacy"] as const) {
      await t.step(`${mode}: resources, templates, prompts, completion`, async () => {
        const c = client(mode);
        await c.connect(new StreamableHTTPClientTransport(new URL(fixture.url)));
        try {
          const resources = (await c.listResources()).resources.map((r) => r.uri);
          assert.deepEqual(resources, [
            "test://static-text",
            "test://static-binary",
            "test://watched-resource",
          ]);
          const templates = (await c.listResourceTemplates()).resourceTemplates;
          assert.equal(templates[0].uriTemplate, "test://template/{id}/data");
          const read = await c.readResource({ uri: "test://template/42/data" });
          assert.deepEqual(JSON.parse((read.contents[0] as { text: string }).text), {
            id: "42",
            templateTest: true,
            data: "Data for ID: 42",
          });
          const blob = await c.readResource({ uri: "test://static-binary" });
          assert.equal(blob.contents[0].mimeType, "image/png");
          await assert.rejects(
            c.readResource({ uri: "test://missing" }),
            (e: unknown) =>
              e instanceof ProtocolError && e.code === -32602 &&
              (e.data as { uri?: string }).uri === "test://missing",
          );
          const prompts = (await c.listPrompts()).prompts.map((p) => p.name);
          assert.ok(prompts.includes("test_prompt_with_arguments"));
          const got = await c.getPrompt({
            name: "test_prompt_with_arguments",
            arguments: { arg1: "a", arg2: "b" },
          });
          assert.equal(
            (got.messages[0].content as { text: string }).text,
            "Prompt with arguments: arg1='a', arg2='b'",
          );
          await assert.rejects(
            c.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "a" } }),
            (e: unknown) => e instanceof ProtocolError && e.code === -32602,
          );
          const done = await c.complete({
            ref: { type: "ref/prompt", name: "test_prompt_with_arguments" },
            argument: { name: "arg1", value: "pa" },
          });
          assert.deepEqual(done.completion.values, ["paris", "park", "party"]);
          const ids = await c.complete({
            ref: { type: "ref/resource", uri: "test://template/{id}/data" },
            argument: { name: "id", value: "4" },
          });
          assert.deepEqual(ids.completion.values, ["456"]);
        } finally {
          await c.close();
        }
      });

      await t.step(`${mode}: multi-round input_required answered by the client`, async () => {
        const c = client(mode, { elicitation: { form: {} } });
        const asked: string[] = [];
        c.setRequestHandler("elicitation/create", (req) => {
          const message = String((req.params as { message: string }).message);
          asked.push(message);
          const content: Record<string, string> = message.startsWith("Step 1")
            ? { name: "Ada" }
            : { color: "teal" };
          return { action: "accept", content };
        });
        await c.connect(new StreamableHTTPClientTransport(new URL(fixture.url)));
        try {
          const r = await c.callTool({
            name: "test_input_required_result_multi_round",
            arguments: {},
          });
          assert.equal(textOf(r), "Multi-round complete for Ada who likes teal");
          assert.equal(asked.length, 2);
        } finally {
          await c.close();
        }
      });
    }

    await t.step("legacy: logging level, subscriptions, sampling through the session", async () => {
      const c = client("legacy", { sampling: {} });
      const logs: unknown[] = [];
      c.setNotificationHandler("notifications/message", (n) => void logs.push(n.params));
      c.setRequestHandler("sampling/createMessage", () => ({
        role: "assistant",
        content: { type: "text", text: "hi there" },
        model: "m",
        stopReason: "endTurn",
      }));
      await c.connect(new StreamableHTTPClientTransport(new URL(fixture.url)));
      try {
        await c.subscribeResource({ uri: "test://watched-resource" });
        await c.unsubscribeResource({ uri: "test://watched-resource" });
        await assert.rejects(c.subscribeResource({ uri: "test://missing" }));
        await c.setLoggingLevel("warning");
        await c.callTool({ name: "test_tool_with_logging", arguments: {} });
        assert.equal(logs.length, 0, "info messages are below the warning threshold");
        await c.setLoggingLevel("debug");
        await c.callTool({ name: "test_tool_with_logging", arguments: {} });
        assert.equal(logs.length, 3);
        const r = await c.callTool({ name: "test_sampling", arguments: { prompt: "hello" } });
        assert.equal(textOf(r), "LLM response: hi there");
      } finally {
        await c.close();
      }
    });

    await t.step("legacy: a list change reaches the session's stream", async () => {
      const c = client("legacy");
      let changed = 0;
      c.setNotificationHandler("notifications/tools/list_changed", () => void changed++);
      await c.connect(new StreamableHTTPClientTransport(new URL(fixture.url)));
      try {
        const deadline = Date.now() + 5000;
        while (changed === 0 && Date.now() < deadline) {
          // The standalone GET stream may open after connect; trigger until it is there.
          await c.callTool({ name: "test_trigger_tool_change", arguments: {} });
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.ok(changed > 0, "notifications/tools/list_changed arrived");
      } finally {
        await c.close();
      }
    });

    await t.step(
      "modern: a tampered requestState is -32602; a missing capability is HTTP 400 / -32021",
      async () => {
        const call = (params: Record<string, unknown>, capabilities: Record<string, unknown>) =>
          modernRequest(fixture.url, "tools/call", params, { capabilities });
        const first = await call({
          name: "test_input_required_result_tampered_state",
          arguments: {},
        }, { elicitation: {} });
        const result = first.messages.at(-1)!.result as {
          resultType: string;
          requestState: string;
        };
        assert.equal(result.resultType, "input_required");
        const answer = { confirm: { action: "accept", content: { ok: true } } };
        const ok = await call({
          name: "test_input_required_result_tampered_state",
          arguments: {},
          inputResponses: answer,
          requestState: result.requestState,
        }, { elicitation: {} });
        assert.equal(textOf(ok.messages.at(-1)!.result as object), "integrity-ok: state verified");
        const bad = await call({
          name: "test_input_required_result_tampered_state",
          arguments: {},
          inputResponses: answer,
          requestState: result.requestState + "x",
        }, { elicitation: {} });
        assert.equal((bad.messages.at(-1)!.error as { code: number }).code, -32602);

        const missing = await call({ name: "test_missing_capability", arguments: {} }, {});
        assert.equal(missing.status, 400);
        assert.match(missing.headers.get("content-type") ?? "", /application\/json/);
        const error = missing.messages[0].error as { code: number; data: unknown };
        assert.equal(error.code, -32021);
        assert.deepEqual(error.data, { requiredCapabilities: { sampling: {} } });
        // Everything else stays a stream.
        const stream = await call({ name: "test_simple_text", arguments: {} }, {});
        assert.equal(stream.status, 200);
        assert.match(stream.headers.get("content-type") ?? "", /text\/event-stream/);
      },
    );

    await t.step("modern: a log message only when the request sets a logLevel", async () => {
      const methods = async (meta: Record<string, unknown>) => {
        const res = await fetch(fixture.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "test_logging_tool",
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: {
              name: "test_logging_tool",
              arguments: {},
              _meta: {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                ...meta,
              },
            },
          }),
        });
        return (await messagesOf(res)).map((m) => m.method ?? "response");
      };
      assert.deepEqual(await methods({}), ["response"]);
      assert.deepEqual(await methods({ "io.modelcontextprotocol/logLevel": "info" }), [
        "notifications/message",
        "response",
      ]);
      assert.deepEqual(await methods({ "io.modelcontextprotocol/logLevel": "error" }), [
        "response",
      ]);
    });
  } finally {
    await fixture.stop();
  }
});
