/**
 * Decision 0022: size limits hold on every transport. Real servers (stdio children, HTTP on
 * 127.0.0.1) at the default caps and at small ones: the largest allowed write succeeds in any JSON
 * encoding, one byte more is TOO_LARGE, a message over the request cap fails alone (HTTP 413,
 * stdio -32600 for its id, the connection kept), and the largest result reaches the bundled client.
 *
 * What is a real process: a stdio child at the default caps (the largest write, one byte more, a
 * line over the request cap answered -32600 and logged, the connection kept) and an HTTP child at
 * small caps (the largest \uXXXX-escaped write, one byte more, 413 over the request cap), each
 * started as a host starts it (serverPermissions' flags, `--limit` on its command line); the
 * servers' refusals to start (exit 2); and the bundled client's server, a stdio child from a
 * --config entry, whose result crosses a real pipe into the client's message cap. The other cases
 * run the same server code in this process, the workspace opened from the same words as the
 * entries open it (parseServerFlags, openWorkspaceFromFlags): the stdio server on a stream pair
 * (startStdioServer: stdio_lines.ts's framing under the request cap, the SDK's transport) and the
 * HTTP handler on a real socket on 127.0.0.1 (withLoopbackServer: the body cap and 413 are the
 * handler's); the bundled client's CLI runs in process too (runInProcess).
 */
import assert from "node:assert/strict";
import { PassThrough, Readable } from "node:stream";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { resolveLimits } from "../../src/workspace/limits.ts";
import {
  assertServable,
  JSON_ESCAPE_FACTOR,
  MAX_MESSAGE_BYTES,
  MAX_REQUEST_BYTES,
  MAX_RESULT_BYTES_CEILING,
  MAX_WRITE_BYTES_CEILING,
  MESSAGE_RESERVE_BYTES,
  requestCapFor,
  responseCapFor,
} from "../../src/workspace/message_limits.ts";
import { DEFAULT_MAX_BODY_BYTES } from "../../src/server/http.ts";
import { stdioLineFilter } from "../../src/server/stdio_lines.ts";
import { startStdioServer } from "../../src/server/stdio_server.ts";
import { parseServerFlags } from "../../src/cli/server_flags.ts";
import { openWorkspaceFromFlags } from "../../src/open_workspace.ts";
import { withLoopbackServer } from "../_support/handler.ts";
import { runInProcess } from "../_support/in_process.ts";
import { permissionFlags, SERVE_HTTP, SERVE_STDIO, startHttpServer } from "./_harness.ts";

const MiB = 1024 * 1024;
const DEFAULT_WRITE = 10 * MiB;

async function tempRoot(): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-limits-" }));
}

/** The stdio client side of one connection: lines written, answers read by id. */
interface StdioPeer {
  /** Writes text and a newline to the server. */
  sendRaw(text: string): Promise<void>;
  /** The answer with this id (at most ms: a bound on a failure, never a wait for time). */
  answer(id: number | string, ms?: number): Promise<Record<string, unknown>>;
  /** Sends a tools/call and resolves with its answer. */
  call(id: number, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Ends the connection; resolves with what the server logged (its stderr). */
  close(): Promise<string>;
}

/**
 * Speaks newline-delimited JSON-RPC to a server reached through `write` and `output`, and
 * initializes the connection (2025 era). `end` ends it and resolves with the server's log.
 */
async function stdioPeer(
  write: (bytes: Uint8Array) => Promise<void>,
  output: ReadableStream<Uint8Array>,
  end: () => Promise<string>,
): Promise<StdioPeer> {
  const enc = new TextEncoder();
  const answers = new Map<number | string, Record<string, unknown>>();
  const waiters = new Map<number | string, () => void>();
  const lines = output.pipeThrough(new TextDecoderStream()).getReader();
  const reading = (async () => {
    // The pieces of the line being read: each chunk is searched once for its newlines.
    let pieces: string[] = [];
    while (true) {
      const { done, value } = await lines.read();
      if (done) return;
      let rest = value;
      let nl;
      while ((nl = rest.indexOf("\n")) >= 0) {
        const msg = JSON.parse(pieces.join("") + rest.slice(0, nl));
        pieces = [];
        rest = rest.slice(nl + 1);
        if (msg.id !== undefined) {
          answers.set(msg.id, msg);
          waiters.get(msg.id)?.();
        }
      }
      pieces.push(rest);
    }
  })();
  const sendRaw = (text: string) => write(enc.encode(text + "\n"));
  const answer = (id: number | string, ms = 120_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      if (answers.has(id)) return resolve(answers.get(id)!);
      const timer = setTimeout(() => reject(new Error(`no answer for ${id} in ${ms} ms`)), ms);
      waiters.set(id, () => {
        clearTimeout(timer);
        resolve(answers.get(id)!);
      });
    });
  const call = async (id: number, name: string, args: Record<string, unknown>) => {
    await sendRaw(JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name, arguments: args },
    }));
    return await answer(id);
  };
  await sendRaw(JSON.stringify({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", v: "0" } },
  }));
  await answer(0);
  await sendRaw(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  return {
    sendRaw,
    answer,
    call,
    async close() {
      const log = await end();
      await reading;
      return log;
    },
  };
}

/** serve_stdio.ts as a child process, started as a host starts it (serverPermissions' flags). */
async function stdioServer(root: string, extra: string[] = []): Promise<StdioPeer> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissionFlags(root, true), SERVE_STDIO, "--root", root, "--write", ...extra],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const stderr = new Response(child.stderr).text();
  return await stdioPeer((bytes) => writer.write(bytes), child.stdout, async () => {
    await writer.close().catch(() => {});
    await child.status;
    return await stderr;
  });
}

/**
 * A server's workspace opened from the words of its command line as serve_stdio.ts and
 * serve_http.ts open it (parseServerFlags, openWorkspaceFromFlags): the same limits and caps.
 */
async function workspaceFromFlags(kind: "stdio" | "http", args: string[]) {
  const flags = await parseServerFlags(kind, args);
  const workspace = await openWorkspaceFromFlags(flags, { refuseBroadDefaultRoot: true });
  return { flags, workspace };
}

/**
 * The stdio server of serve_stdio.ts run in this process on a stream pair (startStdioServer:
 * the line framing under the request cap, the SDK's stdio transport), from the same words
 * (`--root ROOT --write EXTRA`); what it logs is what close() resolves with.
 */
async function inProcessStdioServer(root: string, extra: string[] = []): Promise<StdioPeer> {
  const { flags, workspace } = await workspaceFromFlags("stdio", [
    "--root",
    root,
    "--write",
    ...extra,
  ]);
  const input = new PassThrough();
  const output = new PassThrough();
  const log: string[] = [];
  const server = startStdioServer({
    workspace,
    pageSize: flags.pageSize,
    input,
    output,
    log: (line) => log.push(line),
  });
  const write = (bytes: Uint8Array) =>
    new Promise<void>((resolve) => {
      if (input.write(bytes)) resolve();
      else input.once("drain", () => resolve());
    });
  return await stdioPeer(write, Readable.toWeb(output) as ReadableStream<Uint8Array>, async () => {
    await server.close();
    input.end();
    output.end();
    workspace.engine.close();
    return log.map((l) => l + "\n").join("");
  });
}

/**
 * The HTTP handler of serve_http.ts on a real socket on 127.0.0.1 in this process
 * (withLoopbackServer), its workspace opened from `--root ROOT --write EXTRA`.
 */
async function withInProcessHttpServer(
  root: string,
  extra: string[],
  body: (url: string) => Promise<void>,
): Promise<void> {
  const { flags, workspace } = await workspaceFromFlags("http", [
    "--root",
    root,
    "--write",
    ...extra,
  ]);
  try {
    await withLoopbackServer({ workspace, pageSize: flags.pageSize }, ({ url }) => body(url));
  } finally {
    workspace.engine.close();
  }
}

function toolError(msg: Record<string, unknown>): Record<string, unknown> | undefined {
  const result = msg.result as { isError?: boolean; _meta?: Record<string, unknown> } | undefined;
  return result?.isError ? result._meta?.["wmcp/error"] as Record<string, unknown> : undefined;
}

Deno.test("the caps derive from the limits: request covers 6x maxWriteBytes, response fits the client", () => {
  const d = resolveLimits();
  assert.equal(requestCapFor(d), JSON_ESCAPE_FACTOR * DEFAULT_WRITE + MESSAGE_RESERVE_BYTES);
  assert.equal(DEFAULT_MAX_BODY_BYTES, requestCapFor(d), "the HTTP body cap is the request cap");
  assert.equal(responseCapFor(d), 2 * d.maxResultBytes + MESSAGE_RESERVE_BYTES);
  assert.ok(responseCapFor(d) <= MAX_MESSAGE_BYTES);
  assert.equal(
    resolveLimits({ maxResultBytes: MAX_RESULT_BYTES_CEILING }).maxResultBytes,
    MAX_RESULT_BYTES_CEILING,
  );
  // The cap measures the result; the JSON-RPC envelope around it needs room too.
  assert.ok(
    responseCapFor({ maxResultBytes: MAX_RESULT_BYTES_CEILING }) + MESSAGE_RESERVE_BYTES <=
      MAX_MESSAGE_BYTES,
  );
  const w = DEFAULT_WRITE;
  assert.doesNotThrow(() =>
    assertServable({ maxResultBytes: MAX_RESULT_BYTES_CEILING, maxWriteBytes: w })
  );
  assert.throws(
    () => assertServable({ maxResultBytes: MAX_RESULT_BYTES_CEILING + 1, maxWriteBytes: w }),
    /maxResultBytes.*message cap of the bundled client/,
  );
  assert.ok(requestCapFor({ maxWriteBytes: MAX_WRITE_BYTES_CEILING }) <= MAX_REQUEST_BYTES);
  assert.ok(requestCapFor({ maxWriteBytes: MAX_WRITE_BYTES_CEILING + 1 }) > MAX_REQUEST_BYTES);
  assert.ok(MAX_REQUEST_BYTES <= 512 * MiB / 2, "a copy of the longest request fits V8's strings");
  assert.doesNotThrow(() =>
    assertServable({ maxResultBytes: 4 * MiB, maxWriteBytes: MAX_WRITE_BYTES_CEILING })
  );
  assert.throws(
    () => assertServable({ maxResultBytes: 4 * MiB, maxWriteBytes: MAX_WRITE_BYTES_CEILING + 1 }),
    /maxWriteBytes.*request cap/,
  );
});

for (const server of ["stdio", "http"] as const) {
  Deno.test(`a ${server} server refuses to start with a maxWriteBytes whose request cap is over ${256} MiB`, async () => {
    const root = await tempRoot();
    try {
      const entry = server === "stdio"
        ? [SERVE_STDIO]
        : ["--allow-net=127.0.0.1", "--allow-env", "--unstable-no-legacy-abort", SERVE_HTTP];
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          ...permissionFlags(root, true),
          ...entry,
          "--root",
          root,
          "--write",
          "--limit",
          `maxWriteBytes=${MAX_WRITE_BYTES_CEILING + 1}`,
        ],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 2, stderr);
      assert.equal(out.stdout.length, 0);
      assert.match(stderr, /maxWriteBytes.*request cap/);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
}

Deno.test("a server refuses to start with a maxResultBytes whose response cap the client cannot take", async () => {
  const root = await tempRoot();
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...permissionFlags(root),
        SERVE_STDIO,
        "--root",
        root,
        "--limit",
        `maxResultBytes=${MAX_RESULT_BYTES_CEILING + 1}`,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 2);
    assert.equal(out.stdout.length, 0);
    assert.match(new TextDecoder().decode(out.stderr), /message cap of the bundled client/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("stdio line filter: the id of a line over the cap is found wherever it stands", async () => {
  const seen: unknown[] = [];
  const filter = stdioLineFilter({ maxLineBytes: 100, onOversize: (l) => seen.push(l) });
  const out: string[] = [];
  filter.on("data", (c) => out.push(String(c)));
  const big = "y".repeat(300);
  const first = `{"jsonrpc":"2.0","method":"m","params":{"id":9,"s":"${big}"},"id":"a\\"b"}`;
  const second = [`{"id":7,"params":{"s":"${big.slice(0, 100)}`, `${big}"}}`];
  const third = `{"method":"note","params":{"s":"${big}"}}`;
  filter.write(first + "\n");
  filter.write(second[0]);
  filter.write(second[1] + '\n{"ok":1}\n');
  filter.write(third + "\n");
  filter.end();
  await new Promise((r) => filter.on("end", r));
  assert.deepEqual(seen, [
    { id: 'a"b', size: first.length },
    { id: 7, size: second.join("").length },
    { id: undefined, size: third.length },
  ]);
  assert.deepEqual(out.join(""), '{"ok":1}\n');
});

Deno.test("stdio, default caps: a write of maxWriteBytes succeeds, one byte more is TOO_LARGE, an over-cap line fails alone", async () => {
  const root = await tempRoot();
  const srv = await stdioServer(root);
  try {
    const at = await srv.call(1, "write_file", {
      path: "at.txt",
      content: "a".repeat(DEFAULT_WRITE),
    });
    assert.equal(toolError(at), undefined, JSON.stringify(at).slice(0, 300));
    assert.equal((await Deno.stat(`${root}/at.txt`)).size, DEFAULT_WRITE);
    const over = await srv.call(2, "write_file", {
      path: "over.txt",
      content: "a".repeat(DEFAULT_WRITE + 1),
    });
    assert.equal(toolError(over)?.code, "TOO_LARGE");
    assert.deepEqual(toolError(over)?.details, { size: DEFAULT_WRITE + 1, limit: DEFAULT_WRITE });
    // A line over the request cap: that request gets -32600, the connection stays open.
    const cap = requestCapFor(resolveLimits());
    const huge = await srv.call(3, "write_file", { path: "huge.txt", content: "a".repeat(cap) });
    const error = huge.error as { code: number; message: string };
    assert.equal(error.code, -32600);
    assert.match(error.message, new RegExp(`over ${cap} bytes, the request cap`));
    await srv.sendRaw(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping" }));
    assert.deepEqual((await srv.answer(4)).result, {});
    await assert.rejects(Deno.stat(`${root}/over.txt`));
    await assert.rejects(Deno.stat(`${root}/huge.txt`));
  } finally {
    const log = await srv.close();
    assert.match(log, /refused request 3/);
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("stdio and HTTP: a write of maxWriteBytes whose every character JSON escapes as \\uXXXX succeeds", async () => {
  const root = await tempRoot();
  const content = "\u0001".repeat(MiB);
  const limit = ["--limit", `maxWriteBytes=${MiB}`];
  const srv = await inProcessStdioServer(root, limit);
  const http = await startHttpServer(root, { write: true, args: limit });
  try {
    const line = JSON.stringify({ path: "s.txt", content });
    assert.ok(line.length > 6 * MiB, "the content travels six times its size");
    const s = await srv.call(1, "write_file", { path: "s.txt", content });
    assert.equal(toolError(s), undefined, JSON.stringify(s).slice(0, 300));
    const client = new Client({ name: "t", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    const h = await client.callTool({ name: "write_file", arguments: { path: "h.txt", content } });
    assert.equal(h.isError, undefined, JSON.stringify(h).slice(0, 300));
    const over = await client.callTool({
      name: "write_file",
      arguments: { path: "o.txt", content: content + "\u0001" },
    });
    assert.equal((over._meta?.["wmcp/error"] as { code: string }).code, "TOO_LARGE");
    await client.close();
    // Over the cap: 413 with a JSON-RPC error body, never read past the cap.
    const cap = requestCapFor({ maxWriteBytes: MiB });
    const res = await fetch(http.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "write_file", arguments: { path: "x.txt", content: "a".repeat(cap) } },
      }),
    });
    assert.equal(res.status, 413);
    const body = await res.json();
    assert.equal(body.jsonrpc, "2.0");
    assert.equal(body.error.code, -32600);
    assert.match(body.error.message, new RegExp(`over ${cap} bytes`));
    assert.equal((await Deno.stat(`${root}/s.txt`)).size, MiB);
    assert.equal((await Deno.stat(`${root}/h.txt`)).size, MiB);
  } finally {
    await srv.close();
    await http.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("HTTP, default caps: a 5 MiB and a maxWriteBytes write succeed in both eras, one byte more is TOO_LARGE", async () => {
  const root = await tempRoot();
  try {
    await withInProcessHttpServer(root, [], async (url) => {
      for (const era of ["modern", "legacy"] as const) {
        const client = new Client({ name: "t", version: "0" }, {
          versionNegotiation: { mode: era === "modern" ? "auto" : "legacy" },
        });
        await client.connect(new StreamableHTTPClientTransport(new URL(url)));
        for (const size of [5 * MiB, DEFAULT_WRITE]) {
          const path = `${era}-${size}.txt`;
          const r = await client.callTool({
            name: "write_file",
            arguments: { path, content: "b".repeat(size) },
          });
          assert.equal(r.isError, undefined, `${era} ${size}: ${JSON.stringify(r).slice(0, 300)}`);
          assert.equal((await Deno.stat(`${root}/${path}`)).size, size);
        }
        const over = await client.callTool({
          name: "write_file",
          arguments: { path: `${era}-over.txt`, content: "b".repeat(DEFAULT_WRITE + 1) },
        });
        assert.equal((over._meta?.["wmcp/error"] as { code: string }).code, "TOO_LARGE", era);
        await client.close();
      }
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the bundled stdio client carries a read_media result over the SDK's 10 MiB default", async () => {
  // maxResultBytes 16 MiB lets maxMediaBytes reach 12 MiB - 3 KiB: a 9 MiB file is 12 MiB of base64,
  // which closed the connection before (exit 3) and must now arrive whole.
  const root = await tempRoot();
  const bytes = new Uint8Array(9 * MiB);
  for (let i = 0; i < bytes.length; i += 65536) {
    crypto.getRandomValues(bytes.subarray(i, i + 65536));
  }
  await Deno.writeFile(`${root}/big.png`, bytes);
  const config = `${root}.json`;
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      mcpServers: {
        big: {
          command: Deno.execPath(),
          args: [
            "run",
            ...permissionFlags(root),
            SERVE_STDIO,
            "--root",
            root,
            "--limit",
            `maxResultBytes=${16 * MiB}`,
            "--limit",
            `maxMediaBytes=${12 * MiB - 3 * 1024}`,
          ],
        },
      },
    }),
  );
  try {
    // The client's main in this process; the server is its real stdio child (the entry's command).
    const out = await runInProcess([
      "tools",
      "call",
      "read_media",
      "--config",
      config,
      "--server",
      "big",
      "--arguments",
      '{"path":"big.png"}',
      "--output",
      "mcp-json",
    ]);
    const text = out.stdout;
    assert.equal(out.code, 0, out.stderr + text.slice(0, 300));
    assert.ok(text.length > 12 * MiB, "the whole base64 payload arrived");
    assert.match(text, /"type":\s*"image"/);
  } finally {
    await Deno.remove(config);
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a read result whose text would outgrow maxResultBytes keeps its whole structured result and a cut text", async () => {
  // search_text's grep-style text repeats the path on every context line, so a small structured
  // result can render large: with maxResultBytes 16 KiB the text is cut at 16 KiB of JSON at a line
  // boundary (intended change: this was TOO_LARGE with reason responseCap before).
  const root = await tempRoot();
  const dir = `${root}/${"d".repeat(200)}/${"e".repeat(200)}/${"f".repeat(200)}`;
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/${"g".repeat(200)}.txt`,
    ("\n".repeat(10) + "hit\n").repeat(200),
  );
  const max = 16 * 1024;
  const srv = await inProcessStdioServer(root, ["--limit", `maxResultBytes=${max}`]);
  try {
    const r = await srv.call(1, "search_text", { query: "hit", contextLines: 10 });
    assert.equal(toolError(r), undefined, JSON.stringify(r).slice(0, 300));
    const result = r.result as {
      content: { text: string }[];
      structuredContent: { matches: unknown[] };
    };
    const text = result.content[0].text;
    assert.ok(new TextEncoder().encode(JSON.stringify(text)).length <= max);
    assert.match(text.split("\n").at(-1)!, /text was cut.*structuredContent holds the whole page/);
    assert.ok(result.structuredContent.matches.length > 0);
    assert.ok(JSON.stringify(r).length <= responseCapFor({ maxResultBytes: max }));
  } finally {
    await srv.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("names of control characters: list_directory and find_files give a cut page with total and nextCursor, within the response cap", async () => {
  // Such names show JSON-quoted in the text (\u0001, six bytes) and the message escapes that
  // again (seven), so the text would outgrow the structured result; it is bounded instead.
  const root = await tempRoot();
  let dir = root;
  for (let i = 0; i < 9; i++) dir += "/" + "\x01".repeat(250);
  await Deno.mkdir(dir, { recursive: true });
  for (let i = 0; i < 400; i++) {
    await Deno.writeFile(
      `${dir}/${"\x01".repeat(240)}${String(i).padStart(4, "0")}`,
      new Uint8Array(),
    );
  }
  const srv = await inProcessStdioServer(root);
  const max = resolveLimits().maxResultBytes;
  try {
    const cases = [
      [1, "list_directory", { path: ".", depth: 10 }, "entries"],
      [2, "find_files", { pattern: "**", includeHidden: true }, "matches"],
    ] as const;
    for (const [id, name, args, field] of cases) {
      const r = await srv.call(id, name, args);
      assert.equal(toolError(r), undefined, `${name}: ${JSON.stringify(r).slice(0, 300)}`);
      const result = r.result as {
        content: { text: string }[];
        structuredContent: Record<string, unknown>;
      };
      const sc = result.structuredContent;
      assert.equal(sc.truncated, true, name);
      assert.ok((sc[field] as unknown[]).length > 0, name);
      const text = result.content[0].text;
      assert.ok(new TextEncoder().encode(JSON.stringify(text)).length <= max, name);
      const last = text.split("\n").at(-1)!;
      assert.match(last, /text was cut.*structuredContent holds the whole page/, name);
      if (name === "list_directory") {
        assert.equal(typeof sc.total, "number");
        assert.equal(typeof sc.nextCursor, "string");
        assert.ok(last.includes(sc.nextCursor as string), "the cut text names the cursor");
      }
      assert.ok(
        new TextEncoder().encode(JSON.stringify(r)).length <=
          responseCapFor({ maxResultBytes: max }),
      );
    }
  } finally {
    await srv.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("stdio: an over-cap line without an id is dropped and logged on stderr; the connection still answers", async () => {
  const root = await tempRoot();
  const limits = ["--limit", "maxWriteBytes=1024"];
  const cap = requestCapFor({ maxWriteBytes: 1024 });
  // In process: what serve_stdio.ts writes on stderr is the server's log (close() returns it).
  const srv = await inProcessStdioServer(root, limits);
  try {
    const note = JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { pad: "n".repeat(cap + 10) },
    });
    await srv.sendRaw(note);
    await srv.sendRaw(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping" }));
    const pong = await srv.answer(5);
    assert.deepEqual(pong.result, {}, JSON.stringify(pong));
  } finally {
    const stderr = await srv.close();
    await Deno.remove(root, { recursive: true });
    assert.match(
      stderr,
      new RegExp(`wmcp: refused a message without an id: Message of \\d+ bytes over ${cap} bytes`),
    );
  }
});
