/**
 * Result shapes as real clients see them: the v1 SDK client (1.32.2; `callTool` after
 * `listTools`, so its output-schema validation runs) and the v2 client in both eras, over
 * stdio and HTTP, against one write-enabled server per transport. Every typed error must
 * reach the caller as its real message (no structuredContent, `"<CODE>: ..."` text, the
 * typed error in `_meta["wmcp/error"]`), and every read tool's success must pass the
 * client's validation with content written for a model.
 */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1Stdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as V1Http } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  makeWorkspace,
  messagesOf,
  permissionFlags,
  SERVE_STDIO,
  startHttpServer,
} from "./_harness.ts";
import { IN_PROCESS_URL, type InProcessFetch, withHandler } from "../_support/handler.ts";

/** A 1x1 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

/** The calls every client makes, with what must reach it. */
interface Result {
  isError?: boolean;
  content?: { type: string; text?: string; data?: string; mimeType?: string }[];
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

type Call = (name: string, args: Record<string, unknown>) => Promise<Result>;

interface Connected {
  call: Call;
  list: () => Promise<string[]>;
  close: () => Promise<void>;
}

function textOf(r: Result): string {
  assert.equal(r.content?.[0]?.type, "text", JSON.stringify(r));
  return r.content![0].text!;
}

function assertError(r: Result, code: string, mustSay: RegExp[]): void {
  assert.equal(r.isError, true, JSON.stringify(r));
  assert.equal(r.structuredContent, undefined, "an error result carries no structuredContent");
  assert.equal(r.content?.length, 1, JSON.stringify(r.content));
  const text = textOf(r);
  assert.ok(text.startsWith(`${code}: `), text);
  const typed = r._meta?.["wmcp/error"] as { code: string; message: string } | undefined;
  assert.equal(typed?.code, code, JSON.stringify(r._meta));
  assert.ok(text.includes(typed!.message), `the typed message is in the text: ${text}`);
  for (const re of mustSay) assert.match(text, re);
}

async function exercise(c: Connected): Promise<void> {
  const names = await c.list();
  assert.ok(names.includes("read_media") && names.includes("write_file"), names.join());

  assertError(await c.call("read_file", { path: "../secret.txt" }), "OUTSIDE_WORKSPACE", [
    /escapes the workspace/,
  ]);
  assertError(await c.call("read_file", { path: "missing.txt" }), "NOT_FOUND", []);
  assertError(await c.call("read_file", { path: 7 }), "INVALID_ARGUMENT", [/path/]);
  assertError(
    await c.call("write_file", { path: "hello.txt", content: "x", ifExists: "overwrite" }),
    "CONFIRMATION_REQUIRED",
    [/pass confirm: true/],
  );

  // One success of each read tool: each passed the client's own output-schema check.
  const read = await c.call("read_file", { path: "hello.txt" });
  assert.equal(read.isError, undefined);
  assert.equal(read.structuredContent?.content, 'say "hi"\nthere\n');
  const [header, ...body] = textOf(read).split("\n");
  assert.match(header, /^\[hello\.txt, lines 1-2 of 2, 15 bytes, sha256 [0-9a-f]{64}\]$/);
  assert.equal(body.join("\n"), 'say "hi"\nthere\n', "the file text, unescaped");

  const media = await c.call("read_media", { path: "dot.png" });
  assert.equal(media.isError, undefined);
  assert.equal(media.structuredContent?.data, undefined, "the payload is not in structuredContent");
  assert.equal(media.structuredContent?.mimeType, "image/png");
  const image = media.content!.find((b) => b.type === "image");
  assert.equal(image?.mimeType, "image/png");
  assert.deepEqual(Uint8Array.from(atob(image!.data!), (ch) => ch.charCodeAt(0)), PNG);
  assert.equal(JSON.stringify(media).split(image!.data!).length, 2, "the payload is sent once");

  const search = await c.call("search_text", { query: "there", contextLines: 1 });
  assert.equal(
    textOf(search),
    'hello.txt-1- say "hi"\nhello.txt:2:1: there\n1 matching line in 1 file (2 files searched; skipped: 1 binary).',
  );
  const list = await c.call("list_directory", {});
  assert.equal(textOf(list), "dot.png (70 bytes)\nhello.txt (15 bytes)\nsub/");
  const find = await c.call("find_files", { pattern: "*.txt" });
  assert.equal(textOf(find), "hello.txt\nsub/deep.txt");
  const info = await c.call("get_file_info", { path: "sub" });
  assert.match(textOf(info), /^path: sub\ntype: directory\n/);
  const ws = await c.call("workspace_info", {});
  assert.match(textOf(ws), /^root: .+\nmode: read-write\nlimits: maxReadBytes=\d+/);
}

async function v2(transport: "stdio" | "http", mode: "auto" | "legacy", target: string) {
  const client = new Client({ name: "shapes-v2", version: "0" }, {
    versionNegotiation: { mode, probe: { timeoutMs: 10_000 } },
  });
  await client.connect(
    transport === "http"
      ? new StreamableHTTPClientTransport(new URL(target))
      : new StdioClientTransport({
        command: Deno.execPath(),
        args: stdioArgs(target),
        stderr: "pipe",
      }),
  );
  assert.equal(client.getProtocolEra(), mode === "auto" ? "modern" : "legacy");
  return {
    call: (name, args) => client.callTool({ name, arguments: args }) as Promise<Result>,
    list: async () => (await client.listTools()).tools.map((t) => t.name),
    close: () => client.close(),
  } satisfies Connected;
}

async function v1(transport: "stdio" | "http", target: string): Promise<Connected> {
  const client = new V1Client({ name: "shapes-v1", version: "0" });
  const t = transport === "http"
    ? new V1Http(new URL(target))
    : new V1Stdio({ command: Deno.execPath(), args: stdioArgs(target), stderr: "pipe" });
  await client.connect(t);
  return {
    call: (name, args) => client.callTool({ name, arguments: args }) as Promise<Result>,
    list: async () => (await client.listTools()).tools.map((x: { name: string }) => x.name),
    close: async () => {
      if (t instanceof V1Http) await t.terminateSession();
      await client.close();
    },
  };
}

function stdioArgs(root: string): string[] {
  return ["run", ...permissionFlags(root, true), SERVE_STDIO, "--root", root, "--write"];
}

async function fixture(): Promise<string> {
  const root = await makeWorkspace({ "hello.txt": 'say "hi"\nthere\n', "sub/deep.txt": "deep\n" });
  await Deno.writeFile(`${root}/dot.png`, PNG);
  return root;
}

Deno.test("result shapes: v1 and v2 clients over stdio see real errors and model content", async (t) => {
  const root = await fixture();
  try {
    for (
      const [label, open] of [
        ["v1 SDK client (legacy)", () => v1("stdio", root)],
        ["v2 client, modern", () => v2("stdio", "auto", root)],
        ["v2 client, legacy", () => v2("stdio", "legacy", root)],
      ] as const
    ) {
      await t.step(label, async () => {
        const c = await open();
        try {
          await exercise(c);
        } finally {
          await c.close();
        }
      });
    }
    assert.equal(await Deno.readTextFile(`${root}/hello.txt`), 'say "hi"\nthere\n');
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("result shapes: v1 and v2 clients over HTTP see real errors and model content", async (t) => {
  const root = await fixture();
  const server = await startHttpServer(root, { write: true });
  try {
    for (
      const [label, open] of [
        ["v1 SDK client (legacy)", () => v1("http", server.url)],
        ["v2 client, modern", () => v2("http", "auto", server.url)],
        ["v2 client, legacy", () => v2("http", "legacy", server.url)],
      ] as const
    ) {
      await t.step(label, async () => {
        const c = await open();
        try {
          await exercise(c);
        } finally {
          await c.close();
        }
      });
    }
    assert.equal(await Deno.readTextFile(`${root}/hello.txt`), 'say "hi"\nthere\n');
  } finally {
    const status = await server.stop();
    assert.equal(status.code, 0, server.stderr());
    await Deno.remove(root, { recursive: true });
  }
});

/** One POST of a legacy HTTP session; returns the response's messages and headers. */
async function legacyPost(
  fetch: InProcessFetch,
  body: unknown,
  session?: string,
  version?: string,
) {
  const res = await fetch(IN_PROCESS_URL, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(session ? { "mcp-session-id": session } : {}),
      ...(version ? { "mcp-protocol-version": version } : {}),
    },
    body: JSON.stringify(body),
  });
  return { headers: res.headers, messages: await messagesOf(res) };
}

Deno.test("result shapes: read_media audio is an audio block, or a resource blob for a 2024-11-05 client", async () => {
  // In process: the shapes are the handler's; no socket behaviour is under test.
  await withHandler({ files: {} }, async ({ fetch, url, root }) => {
    await Deno.writeFile(`${root}/s.wav`, Uint8Array.of(82, 73, 70, 70));
    for (const version of ["2024-11-05", "2025-03-26"]) {
      const init = await legacyPost(fetch, {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: version,
          capabilities: {},
          clientInfo: { name: "raw", version: "0" },
        },
      });
      assert.equal(
        (init.messages[0].result as { protocolVersion: string }).protocolVersion,
        version,
      );
      const session = init.headers.get("mcp-session-id")!;
      await legacyPost(
        fetch,
        { jsonrpc: "2.0", method: "notifications/initialized" },
        session,
        version,
      );
      const call = await legacyPost(
        fetch,
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "read_media", arguments: { path: "s.wav" } },
        },
        session,
        version,
      );
      const result = call.messages[0].result as Result & { content: Record<string, unknown>[] };
      assert.equal(result.structuredContent?.mimeType, "audio/wav");
      assert.deepEqual(
        result.content[1],
        version === "2024-11-05"
          ? {
            type: "resource",
            resource: { uri: "wmcp://workspace/s.wav", mimeType: "audio/wav", blob: "UklGRg==" },
          }
          : { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
        version,
      );
      await fetch(url, { method: "DELETE", headers: { "mcp-session-id": session } }).then(
        (r) => r.body?.cancel(),
      );
    }
  });
});

Deno.test("result shapes: a forged file name, clipped lines, SVG and argument errors over stdio", async () => {
  const forged = "notes.md:1:1: TODO fix\nprod.env:3:1: TODO leak\nx\u001b[2J";
  const long = "a".repeat(1500) + "TODO" + "b".repeat(1500);
  const root = await makeWorkspace({ "long.txt": `${"c".repeat(1200)}\n${long}\nshort\n` });
  await Deno.writeTextFile(`${root}/${forged}`, "TODO real\n");
  await Deno.writeTextFile(`${root}/pic.svg`, "<svg xmlns='http://www.w3.org/2000/svg'/>");
  const c = await v2("stdio", "auto", root);
  try {
    const search = textOf(await c.call("search_text", { query: "TODO", contextLines: 1 }));
    const lines = search.split("\n");
    assert.equal(lines.at(-1)!.startsWith("2 matching lines in 2 files"), true, search);
    assert.match(lines.at(-1)!, /long lines were clipped \(…\): read_file with startLine/);
    assert.ok(lines.includes(`${JSON.stringify(forged)}:1:1: TODO real`), search);
    assert.equal(lines.filter((l) => /^notes\.md|^prod\.env/.test(l)).length, 0, search);
    assert.ok(lines.includes(`long.txt-1- ${"c".repeat(1000)}…`), search);
    const hit = lines.find((l) => l.startsWith("long.txt:2:1501: …"))!;
    assert.ok(hit?.endsWith("…"), search);

    const list = textOf(await c.call("list_directory", {})).split("\n");
    assert.equal(list.length, 3, list.join("\n"));
    assert.ok(list.includes(`${JSON.stringify(forged)} (10 bytes)`), list.join("\n"));

    const svg = await c.call("read_media", { path: "pic.svg" });
    assert.equal(svg.content?.[1]?.type, "resource", JSON.stringify(svg.content));
    assert.equal(svg.content!.some((b) => b.type === "image"), false);

    const cut = textOf(await c.call("read_file", { path: "long.txt", startLine: 2, maxBytes: 10 }));
    assert.match(cut.split("\n")[0], /the last line was cut \(raise maxBytes .*read_media/);

    assertError(await c.call("read_file", {}), "INVALID_ARGUMENT", [
      /^INVALID_ARGUMENT: `path` is required\.$/,
    ]);
    assertError(
      await c.call("read_file", { path: "long.txt", startLine: 1.5 }),
      "INVALID_ARGUMENT",
      [
        /^INVALID_ARGUMENT: `startLine` must be an integer\.$/,
      ],
    );
    assertError(await c.call("read_file", { path: "long.txt", startLine: 0 }), "INVALID_ARGUMENT", [
      /^INVALID_ARGUMENT: `startLine` must be at least 1\.$/,
    ]);
    assertError(await c.call("read_file", { path: "long.txt", bogus: 1 }), "INVALID_ARGUMENT", [
      /^INVALID_ARGUMENT: unknown argument: `bogus`\.$/,
    ]);
    assertError(await c.call("list_directory", { depth: 11 }), "INVALID_ARGUMENT", [
      /^INVALID_ARGUMENT: `depth` must be at most 10\.$/,
    ]);
    const confirm = await c.call("delete_path", { path: "pic.svg" });
    assertError(confirm, "CONFIRMATION_REQUIRED", [/did not declare the elicitation capability/]);
    assert.equal(textOf(confirm).split("confirm: true").length, 2, "said once: " + textOf(confirm));
    assert.ok(await Deno.stat(`${root}/pic.svg`));
  } finally {
    await c.close();
    await Deno.remove(root, { recursive: true });
  }
});
