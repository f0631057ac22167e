/**
 * `resources list|templates|read`, `prompts list|get` and `ping` (issue 20 §5), run in process
 * (runInProcess) against a server of this stack on 127.0.0.1 (withLoopbackServer) that serves
 * resources, templates and prompts in pages of two (tests/_support/resources_prompts.ts), in both
 * eras: the lossless envelopes and their paging, the derived views, the text for people, the
 * local check of a prompt's arguments (nothing sent), the exit classes of a server's refusal; the
 * bundled stdio server in both eras; hostile strings in the JSON outputs; and the message cap on
 * an endless resources/read.
 */
import assert from "node:assert/strict";
import { runInProcess } from "../_support/in_process.ts";
import { withLoopbackServer } from "../_support/handler.ts";
import { withTempDir } from "../_support/fs.ts";
import { withResourcesAndPrompts } from "../_support/resources_prompts.ts";
import { EVIL } from "../security/_hostile_text.ts";
import { type Json, stderrError, stdoutJson, stdoutLines } from "./_client.ts";

const HOSTILE = new URL("../security/_hostile_server.ts", import.meta.url).pathname;
/** A character a terminal would act on, other than the newline ending each line. */
const RAW = /(?!\n)[\p{Cc}\u202e\u2028]/u;
const BLOB = new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
const BLOB_B64 = btoa(String.fromCharCode(...BLOB));

/** The prompts/get arguments the server received, in order. */
const gets: Record<string, string>[] = [];

const DEFINITION = withResourcesAndPrompts({
  name: "beyond",
  version: "1.0.0",
  tools: [],
  resources: [
    {
      uri: "test://docs/a.md",
      name: "a.md",
      title: "Document A",
      mimeType: "text/markdown",
      read: (uri) => ({
        contents: [{ uri: uri.href, mimeType: "text/markdown", text: "# A\nline two\n" }],
      }),
    },
    {
      uri: "test://bin/b.bin",
      name: "b.bin",
      mimeType: "application/octet-stream",
      read: (uri) => ({
        contents: [{ uri: uri.href, mimeType: "application/octet-stream", blob: BLOB_B64 }],
      }),
    },
    {
      uri: "test://docs/c.txt",
      name: "c.txt",
      read: (uri) => ({
        contents: [
          { uri: uri.href, text: "first" },
          { uri: `${uri.href}#2`, mimeType: "text/plain", text: "second" },
        ],
      }),
    },
  ],
  resourceTemplates: [
    {
      uriTemplate: "test://item/{id}",
      name: "item",
      mimeType: "text/plain",
      read: (uri, v) => ({ contents: [{ uri: uri.href, text: `item ${v.id}` }] }),
    },
    { uriTemplate: "test://user/{name}", name: "user", read: () => ({ contents: [] }) },
    { uriTemplate: "test://tag/{tag}", name: "tag", read: () => ({ contents: [] }) },
  ],
  prompts: [
    {
      name: "greet",
      title: "Greeting",
      description: "Greets a city",
      arguments: [{ name: "city", required: true }, { name: "state" }],
      get: (args) => {
        gets.push(args);
        return {
          description: "A greeting",
          messages: [{ role: "user", content: { type: "text", text: `Hello ${args.city}` } }],
        };
      },
    },
    {
      name: "plain",
      get: () => ({
        messages: [
          { role: "user", content: { type: "text", text: "one" } },
          { role: "assistant", content: { type: "image", mimeType: "image/png", data: BLOB_B64 } },
        ],
      }),
    },
    { name: "third", get: () => ({ messages: [] }) },
  ],
});

const ERAS = [
  { name: "modern", args: [], era: "modern", protocolVersion: "2026-07-28" },
  {
    name: "legacy",
    args: ["--protocol-version", "2025-11-25"],
    era: "legacy",
    protocolVersion: "2025-11-25",
  },
] as const;

type Era = (typeof ERAS)[number];

/** Runs body with the server on 127.0.0.1 and a client command runner for one era. */
async function withServer(
  body: (run: (args: string[], era: Era) => ReturnType<typeof runInProcess>) => Promise<void>,
): Promise<void> {
  await withLoopbackServer({ definition: DEFINITION, pageSize: 2 }, async ({ url }) => {
    await body((args, era) => runInProcess([...args, "--endpoint", url, ...era.args]));
  });
}

/** An envelope's pages chain: each request cursor is the previous page's nextCursor. */
function checkChain(env: Json, method: string, key: string, era: Era): Json[] {
  assert.equal(env.contractVersion, "1");
  assert.equal(env.operation, method);
  assert.deepEqual(
    [env.metadata.era, env.metadata.protocolVersion, env.metadata.pageCount],
    [era.era, era.protocolVersion, env.pages.length],
  );
  env.pages.forEach((p: Json, i: number) => {
    assert.equal(p.requestCursor, i === 0 ? null : env.pages[i - 1].mcpResult.nextCursor);
    // Each page as received: the modern era's resultType is there, never added in the other.
    assert.equal(p.mcpResult.resultType, era.era === "modern" ? "complete" : undefined);
  });
  assert.equal(env.pages.at(-1).mcpResult.nextCursor, undefined);
  return env.pages.flatMap((p: Json) => p.mcpResult[key]);
}

for (const era of ERAS) {
  Deno.test(`beyond tools (${era.name}): every page of resources, templates and prompts, as received and derived`, async () => {
    await withServer(async (run) => {
      const lists = [
        ["resources", "list", "resources/list", "resources", "resourceCount"],
        [
          "resources",
          "templates",
          "resources/templates/list",
          "resourceTemplates",
          "resourceTemplateCount",
        ],
        ["prompts", "list", "prompts/list", "prompts", "promptCount"],
      ];
      for (const [command, sub, method, key, count] of lists) {
        const full = await run([command, sub, "--output", "mcp-json"], era);
        assert.equal(full.code, 0, full.stderr);
        assert.equal(full.stderr, "");
        const env = stdoutJson(full);
        const items = checkChain(env, method, key, era);
        assert.equal(env.pages.length, 2, method);
        assert.equal(items.length, 3, method);

        const json = stdoutJson(await run([command, sub, "--output", "json"], era));
        assert.deepEqual(json[key], items, "the json view holds every item as listed");
        assert.equal(json.metadata[count], 3);
        assert.match(json.derived, /not lossless/);
        const jsonl = await run([command, sub, "--output", "jsonl"], era);
        assert.deepEqual(stdoutLines(jsonl), items, "jsonl: one item a line");

        // --single-page stops after the first; --cursor starts at the page it names.
        const single = stdoutJson(await run([command, sub, "--single-page"], era));
        assert.equal(single.pages.length, 1);
        const next = single.pages[0].mcpResult.nextCursor;
        assert.equal(typeof next, "string");
        const rest = stdoutJson(await run([command, sub, "--cursor", next], era));
        assert.deepEqual(rest.pages, [env.pages[1]]);

        // More pages than --max-pages: a protocol error (exit 4), nothing on stdout.
        const capped = await run([command, sub, "--max-pages", "1", "--output", "json"], era);
        assert.equal(capped.code, 4, capped.stderr);
        assert.equal(capped.stdout, "");
        assert.match(stderrError(capped).message, new RegExp(`${method} did not end within`));
      }
      const table = await run(["resources", "list", "--output", "pretty"], era);
      assert.equal(table.code, 0, table.stderr);
      assert.match(table.stdout, /^URI +MIME TYPE +NAME\n/);
      assert.match(table.stdout, /test:\/\/docs\/a\.md +text\/markdown +Document A\n/);
      assert.match(table.stdout, new RegExp(`\n3 resources, 2 page\\(s\\), ${era.era} `));
      const prompts = await run(["prompts", "list", "--output", "pretty"], era);
      assert.match(prompts.stdout, /greet +city, \[state\] +Greets a city\n/);
    });
  });

  Deno.test(`beyond tools (${era.name}): resources read shows text, notes a blob, keeps contents whole; a refusal is exit 4`, async () => {
    await withServer(async (run) => {
      const text = await run(["resources", "read", "test://docs/a.md", "--output", "pretty"], era);
      assert.equal(text.code, 0, text.stderr);
      assert.equal(text.stdout, "# A\nline two\n");
      const blob = await run(["resources", "read", "test://bin/b.bin", "--output", "pretty"], era);
      assert.equal(blob.stdout, "[blob application/octet-stream, 10 bytes]\n");
      const two = await run(["resources", "read", "test://docs/c.txt", "--output", "pretty"], era);
      assert.equal(
        two.stdout,
        "--- test://docs/c.txt\nfirst\n--- test://docs/c.txt#2 (text/plain)\nsecond\n",
      );

      const env = stdoutJson(await run(["resources", "read", "test://bin/b.bin"], era));
      assert.equal(env.operation, "resources/read");
      assert.deepEqual(env.mcpResult.contents, [
        { uri: "test://bin/b.bin", mimeType: "application/octet-stream", blob: BLOB_B64 },
      ]);
      assert.deepEqual(
        [env.metadata.era, env.metadata.protocolVersion, env.metadata.rounds],
        [era.era, era.protocolVersion, 1],
      );
      const item = await run(["resources", "read", "test://item/42", "--output", "jsonl"], era);
      assert.deepEqual(stdoutLines(item), [{ uri: "test://item/42", text: "item 42" }]);
      const json = stdoutJson(
        await run(["resources", "read", "test://docs/a.md", "--output", "json"], era),
      );
      assert.equal(json.contents[0].text, "# A\nline two\n");

      // The server's JSON-RPC error: the envelope keeps it, exit 4 (protocol).
      const missing = await run(["resources", "read", "test://nope"], era);
      assert.equal(missing.code, 4, missing.stderr);
      const failed = stdoutJson(missing);
      assert.equal(failed.operation, "resources/read");
      assert.equal(failed.mcpError.code, -32602);
      assert.equal(failed.mcpResult, undefined);
      const e = stderrError(missing);
      assert.deepEqual([e.class, e.exitCode, e.code], ["protocol", 4, -32602]);
      const pretty = await run(["resources", "read", "test://nope", "--output", "pretty"], era);
      assert.equal(pretty.code, 4);
      assert.equal(pretty.stdout, "");
      assert.match(pretty.stderr, /^error \(protocol\): Resource not found/);
    });
  });

  Deno.test(`beyond tools (${era.name}): prompts get checks the arguments before sending, then gets the messages`, async () => {
    await withServer(async (run) => {
      gets.length = 0;
      const ok = await run(["prompts", "get", "greet", "city=Lisbon", "--output", "pretty"], era);
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(ok.stdout, "A greeting\n\nuser:\nHello Lisbon\n");
      const env = stdoutJson(
        await run(["prompts", "get", "greet", "--arguments", '{"city":"Oslo","state":"N"}'], era),
      );
      assert.equal(env.operation, "prompts/get");
      assert.deepEqual(env.mcpResult.messages, [
        { role: "user", content: { type: "text", text: "Hello Oslo" } },
      ]);
      assert.deepEqual(gets, [{ city: "Lisbon" }, { city: "Oslo", state: "N" }]);
      const plain = await run(["prompts", "get", "plain", "--output", "pretty"], era);
      assert.equal(plain.stdout, "user:\none\n\nassistant:\n[image image/png, 10 bytes]\n");
      const jsonl = await run(["prompts", "get", "plain", "--output", "jsonl"], era);
      assert.equal(stdoutLines(jsonl).length, 2, "a message a line");

      // Refused locally (exit 2, nothing sent): an unknown argument, a missing required one, a
      // value that is not a string, a prompt the server does not list.
      const refused: [string[], RegExp][] = [
        [["greet", "city=X", "stat=Y"], /unknown argument: `stat` \(did you mean `state`\?\)/],
        [["greet", "state=Y"], /missing required argument `city`/],
        [["greet", "city:=5"], /`city` must be a string/],
        [["gret"], /no prompt named "gret" \(did you mean greet\?\); see `wmcp prompts list`/],
      ];
      for (const [words, message] of refused) {
        const r = await run(["prompts", "get", ...words, "--output", "json"], era);
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stdout, "");
        const e = stderrError(r);
        assert.equal(e.class, "usage");
        assert.match(e.message, message);
      }
      assert.equal(gets.length, 2, "nothing refused locally was sent");

      // --skip-local-validation sends it: the server's refusal is exit 4.
      const sent = await run(["prompts", "get", "greet", "--skip-local-validation"], era);
      assert.equal(sent.code, 4, sent.stderr);
      assert.equal(stdoutJson(sent).mcpError.code, -32602);
      assert.equal(stderrError(sent).class, "protocol");
    });
  });

  Deno.test(`beyond tools (${era.name}): ping answers, with its round trip for people`, async () => {
    await withServer(async (run) => {
      const env = stdoutJson(await run(["ping"], era));
      assert.equal(env.operation, "ping");
      // The 2026-07-28 revision has no ping: its round trip is server/discover.
      const method = era.era === "modern" ? "server/discover" : "ping";
      assert.equal(env.metadata.method, method);
      assert.equal(typeof env.metadata.roundTripMs, "number");
      if (era.era === "legacy") assert.deepEqual(env.mcpResult, {});
      else assert.deepEqual(env.mcpResult.supportedVersions, ["2026-07-28"]);
      const pretty = await run(["ping", "--output", "pretty"], era);
      assert.equal(pretty.code, 0, pretty.stderr);
      const via = era.era === "modern" ? "server/discover, " : "";
      assert.match(
        pretty.stdout,
        new RegExp(
          `^ping: answered in [0-9.]+ ms \\(${via}${era.era} ${era.protocolVersion}\\)\n$`,
        ),
      );
    });
  });
}

Deno.test("beyond tools: the bundled stdio server in both eras (empty lists, ping, an unknown resource)", async () => {
  await withTempDir(async (root) => {
    for (const era of ERAS) {
      const run = (args: string[]) => runInProcess([...args, "--root", root, ...era.args]);
      const list = stdoutJson(await run(["resources", "list"]));
      assert.deepEqual(list.pages.map((p: Json) => p.mcpResult.resources), [[]]);
      assert.equal(list.metadata.era, era.era);
      const prompts = await run(["prompts", "list", "--output", "pretty"]);
      assert.match(prompts.stdout, /^PROMPT +ARGUMENTS +DESCRIPTION\n0 prompts, 1 page\(s\)/);
      const ping = await run(["ping", "--output", "json"]);
      assert.equal(ping.code, 0, ping.stderr);
      const read = await run(["resources", "read", "file:///nothing"]);
      assert.equal(read.code, 4, read.stderr);
      assert.equal(stderrError(read).code, -32602);
    }
  });
});

Deno.test("beyond tools: a hostile server's strings stay intact in every JSON output, escaped", async () => {
  await withTempDir(async (dir) => {
    const config = `${dir}/mcp.json`;
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        mcpServers: {
          hostile: { command: Deno.execPath(), args: ["run", "--quiet", "-A", HOSTILE] },
        },
      }),
    );
    const target = ["--config", config, "--server", "hostile"];
    const runs = [
      ["resources", "list"],
      ["resources", "templates"],
      ["resources", "read", "hostile://text"],
      ["prompts", "list"],
      ["prompts", "get", "evil", "x=1"],
    ];
    for (const args of runs) {
      for (const output of ["mcp-json", "json", "jsonl"]) {
        const r = await runInProcess([...args, ...target, "--output", output]);
        assert.equal(r.code, 0, r.stderr);
        // No raw control, bidi or separator character: each is a \uXXXX escape in the JSON.
        assert.ok(!RAW.test(r.stdout), r.stdout);
        assert.ok(r.stdout.includes("\\u001b]0;pwned\\u0007"), `${args.join(" ")} ${output}`);
        // ...and parse back to the server's text.
        assert.ok(stdoutLines(r).some((v) => JSON.stringify(v).includes(JSON.stringify(EVIL))));
      }
    }
    const failed = await runInProcess(["resources", "read", "hostile://error", ...target]);
    assert.equal(failed.code, 4);
    assert.equal(stdoutJson(failed).mcpError.message, EVIL);
    assert.ok(!RAW.test(failed.stderr), failed.stderr);
  });
});

/** A legacy-era endpoint whose resources/read answer is an endless JSON body. */
function endlessReadServer(): Deno.HttpServer<Deno.NetAddr> {
  const chunk = new TextEncoder().encode("a".repeat(64 * 1024));
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (req.method !== "POST") return new Response(null, { status: 405 });
    const msg = await req.json();
    if (msg.id === undefined) return new Response(null, { status: 202 });
    if (msg.method === "initialize") {
      return Response.json({
        jsonrpc: "2.0",
        id: msg.id,
        result: {
          protocolVersion: "2025-11-25",
          capabilities: { resources: {} },
          serverInfo: { name: "endless", version: "1" },
        },
      });
    }
    let sent = 0;
    const head = `{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":{"contents":[{"text":"`;
    // Ends by itself after 64 MiB, so a client without a cap fails on its exit code, not a hang.
    const body = new ReadableStream<Uint8Array>({
      start: (c) => c.enqueue(new TextEncoder().encode(head)),
      pull: (c) => {
        if (sent >= 64 * 1024 * 1024) {
          c.enqueue(new TextEncoder().encode('"}]}}'));
          return c.close();
        }
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    return new Response(body, { headers: { "content-type": "application/json" } });
  });
}

Deno.test("beyond tools: a resources/read answer over --max-message-bytes is exit 4 with nothing on stdout", async () => {
  const server = endlessReadServer();
  try {
    const url = `http://127.0.0.1:${server.addr.port}/mcp`;
    for (const output of ["mcp-json", "pretty"]) {
      const r = await runInProcess([
        "resources",
        "read",
        "test://big",
        "--endpoint",
        url,
        "--protocol-version",
        "2025-11-25",
        "--max-message-bytes",
        "1048576",
        "--output",
        output,
      ]);
      assert.equal(r.code, 4, r.stderr);
      assert.equal(r.stdout, "", "no partial output");
      assert.match(r.stderr, /over the 1048576-byte message cap \(--max-message-bytes\)/);
      if (output === "mcp-json") {
        const e = stderrError(r);
        assert.deepEqual([e.class, e.details.cap, e.details.unit], ["protocol", 1048576, "body"]);
      }
    }
  } finally {
    await server.shutdown();
  }
});
