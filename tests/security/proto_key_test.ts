/**
 * Issue 8, class 3: an argument named `__proto__` is INVALID_ARGUMENT over MCP too, like every
 * other unknown key. The SDK's zod parser drops such a key before a tool sees it, so the
 * transports expose it first (src/workarounds/proto_key.ts): the HTTP body guard and the stdio
 * server's input filter. Real stdio child process; HTTP in process through the handler.
 */
import assert from "node:assert/strict";
import {
  exposeProtoKey,
  mayHoldProtoKey,
  mayHoldProtoKeyBytes,
  protoKeyFilter,
} from "../../src/workarounds/proto_key.ts";
import { seeded } from "../operations/_arbitrary.ts";
import { ENGINE_READ_PATH } from "../../src/workspace/engine/read_path.ts";
import { envelope, messagesOf, MODERN, stdioInput } from "../server/_harness.ts";
import { withTempDir } from "../_support/fs.ts";
import { withHandler } from "../_support/handler.ts";

const SERVER = new URL("../../serve_stdio.ts", import.meta.url).pathname;
/** A tools/call body whose arguments hold an own "__proto__" key (JSON.parse keeps it own). */
const PROTO_ARGS = '{"path":"a.txt","__proto__":{"polluted":true}}';

function callText(id: number, argsJson: string, meta?: Record<string, unknown>): string {
  const params = `{"name":"read_file","arguments":${argsJson}${
    meta ? `,"_meta":${JSON.stringify(meta)}` : ""
  }}`;
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}`;
}

function errorOf(result: Record<string, unknown>): Record<string, unknown> {
  assert.equal(result.isError, true, JSON.stringify(result));
  const text = (result.content as { text: string }[])[0].text;
  const error = (result._meta as Record<string, Record<string, unknown>>)["wmcp/error"];
  assert.ok(text.startsWith(`${error.code}: `), text);
  return error;
}

/** Runs fn in a fresh temporary workspace holding a.txt. */
const withDir = (fn: (dir: string) => Promise<void>) =>
  withTempDir(fn, { prefix: "wmcp-proto-", files: { "a.txt": "hi\n" } });

Deno.test("exposeProtoKey renames only an own __proto__ key of tools/call arguments", () => {
  const plain = callText(1, '{"path":"__proto__.txt"}');
  assert.equal(exposeProtoKey(plain), plain, "a value that merely contains the word is untouched");
  const out = JSON.parse(exposeProtoKey(callText(1, PROTO_ARGS)));
  assert.equal(Object.hasOwn(out.params.arguments, "__proto__"), false);
  assert.deepEqual(Object.keys(out.params.arguments), ["path", "\u0000__proto__"]);
  const batch = JSON.parse(exposeProtoKey(`[${callText(1, PROTO_ARGS)},${plain}]`));
  assert.deepEqual(Object.keys(batch[0].params.arguments), ["path", "\u0000__proto__"]);
  assert.equal(exposeProtoKey("not json __proto__"), "not json __proto__");
  // The key spelled with JSON escapes is the same own key once parsed: exposed too.
  for (
    const spelled of ["\\u005f_proto__", "\\u005f\\u005fproto\\u005f\\u005f", "__\\u0070roto__"]
  ) {
    const escaped = JSON.parse(exposeProtoKey(callText(1, `{"path":"a.txt","${spelled}":1}`)));
    assert.deepEqual(Object.keys(escaped.params.arguments), ["path", "\u0000__proto__"], spelled);
  }
});

Deno.test("the body guard's byte check says what the text check says of the decoded bytes", () => {
  const enc = new TextEncoder();
  const dec = new TextDecoder(); // as the handler decodes a body: malformed bytes become U+FFFD
  const same = (bytes: Uint8Array, what: string) =>
    assert.equal(mayHoldProtoKeyBytes(bytes), mayHoldProtoKey(dec.decode(bytes)), what);
  const edges = [
    "",
    "_",
    "\\",
    "\\u",
    "__proto__",
    "__proto_",
    "_proto__",
    "___proto__",
    "__proto__x",
    "x__proto__",
    "__prot__proto__",
    "__proto\u005f_",
    "é__proto__",
    "\u{1F600}__proto_",
    '{"path":"apply_7/encode_list_19077.rs"}',
    callText(1, PROTO_ARGS),
    callText(1, '{"path":"a\\u0062.txt"}'),
  ];
  for (const text of edges) same(enc.encode(text), JSON.stringify(text));
  // Invalid UTF-8 around and inside the needles: an ASCII byte never belongs to another character.
  same(Uint8Array.of(0xc3, 0x5f, 0x5f, ...enc.encode("proto__")), "after a cut two-byte lead");
  same(Uint8Array.of(0x5c, 0xff, 0x75), "a backslash, a stray byte, u");
  // Seeded: strings over an alphabet of the needles' pieces, stray and multi-byte bytes.
  const pieces = ["_", "__", "proto", "__proto", "roto__", "\\", "u", "\\u", "p", "é", "x", '"'];
  const random = seeded(0x70_72_6f);
  for (let i = 0; i < 20_000; i++) {
    const parts: number[] = [];
    const n = Math.floor(random() * 8);
    for (let k = 0; k < n; k++) {
      if (random() < 0.1) parts.push(0x80 + Math.floor(random() * 0x80));
      else parts.push(...enc.encode(pieces[Math.floor(random() * pieces.length)]));
    }
    same(Uint8Array.from(parts), JSON.stringify(parts));
  }
});

Deno.test("the stdio filter rewrites lines split across chunks", async () => {
  const filter = protoKeyFilter();
  const chunks: string[] = [];
  filter.on("data", (c: Uint8Array) => chunks.push(new TextDecoder().decode(c)));
  const line = callText(7, PROTO_ARGS) + "\n";
  const done = new Promise((r) => filter.on("end", r));
  filter.write(line.slice(0, 40));
  filter.write(line.slice(40) + callText(8, '{"path":"a.txt"}'));
  filter.end("\n");
  await done;
  const lines = chunks.join("").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  assert.deepEqual(Object.keys(lines[0].params.arguments), ["path", "\u0000__proto__"]);
  assert.deepEqual(lines[1].params.arguments, { path: "a.txt" });
});

Deno.test("stdio server: a __proto__ argument is INVALID_ARGUMENT naming it", async () => {
  await withDir(async (dir) => {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", `--allow-read=${dir},${ENGINE_READ_PATH}`, SERVER, "--root", dir],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const io = stdioInput(child.stdin);
    const send = io.send;
    await io.initialize();
    await send(callText(2, PROTO_ARGS));
    await send(callText(3, '{"path":"a.txt"}'));
    const byId = new Map<number, Record<string, unknown>>();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    while (byId.size < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let nl;
      while ((nl = buf.indexOf("\n")) !== -1) {
        const msg = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        if (typeof msg.id === "number") byId.set(msg.id, msg);
      }
    }
    await io.close();
    await reader.cancel();
    await child.status;
    const e = errorOf(byId.get(2)!.result as Record<string, unknown>);
    assert.equal(e.code, "INVALID_ARGUMENT");
    assert.equal(e.argument, "__proto__");
    const ok = byId.get(3)!.result as Record<string, unknown>;
    assert.equal((ok.structuredContent as { content: string }).content, "hi\n");
  });
});

Deno.test("HTTP server: a __proto__ argument is INVALID_ARGUMENT naming it", async () => {
  await withHandler({ files: { "a.txt": "hi\n" }, keepAliveMs: 0 }, async ({ fetch, url }) => {
    const res = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "read_file",
        "mcp-param-path": "a.txt",
      },
      body: callText(1, PROTO_ARGS, envelope()),
    });
    const messages = await messagesOf(res);
    const final = messages.find((m) => m.id === 1)!;
    const e = errorOf(final.result as Record<string, unknown>);
    assert.equal(e.code, "INVALID_ARGUMENT");
    assert.equal(e.argument, "__proto__");
  });
});
