/**
 * Workaround: the MCP SDK parses `tools/call` arguments with a zod record, which silently drops
 * an own `"__proto__"` key (JSON.parse keeps it as an own key; zod skips it), so a tool would
 * never learn that the caller sent one. Before the SDK sees a message, an own `__proto__` key of
 * `tools/call` arguments is renamed to PROTO_KEY_SENTINEL, which the registry refuses as
 * INVALID_ARGUMENT naming `__proto__`, like every other unknown argument. Only messages whose
 * text contains `__proto__` or a `\u` escape (which can spell it) are parsed.
 *
 * Upstream: zod drops input-derived `__proto__` keys on purpose (colinhacks/zod#5898, kept by
 * colinhacks/zod#6354: "`z.record(z.string())` still drop them"); no
 * modelcontextprotocol/typescript-sdk issue asks the SDK to keep or refuse the key. Minimal
 * reproduction: `specTypeSchemas.CallToolRequest` of @modelcontextprotocol/server validating
 * `JSON.parse('{"method":"tools/call","params":{"name":"x","arguments":{"__proto__":1}}}')`
 * succeeds with `arguments: {}`.
 * Checked: @modelcontextprotocol/server 2.4.0 with zod 4.6.7, Deno 2.9.6.
 * Delete when: tests/workarounds/proto_key_upstream_test.ts fails (the SDK keeps the key or
 * refuses the request); tests/security/proto_key_test.ts then still pins the behaviour.
 */
import { Buffer } from "node:buffer";
import { Transform } from "node:stream";
import { PROTO_KEY_SENTINEL } from "../operations/registry.ts";

const MARK = "__proto__";
/** A JSON escape: `"\u005f_proto__"` parses to the same own key without spelling MARK. */
const ESCAPE = "\\u";

/** Whether a message's text (or bytes) may hold an own `__proto__` key, literal or escaped. */
export function mayHoldProtoKey(text: { includes(s: string): boolean }): boolean {
  return text.includes(MARK) || text.includes(ESCAPE);
}

const MARK_BYTES = new TextEncoder().encode(MARK);
const ESCAPE_BYTES = new TextEncoder().encode(ESCAPE);

/** Whether bytes hold needle (a short ASCII sequence): indexOf of its first byte, then compared. */
function holds(bytes: Uint8Array, needle: Uint8Array): boolean {
  const last = bytes.length - needle.length;
  for (
    let i = bytes.indexOf(needle[0]);
    i !== -1 && i <= last;
    i = bytes.indexOf(needle[0], i + 1)
  ) {
    let j = 1;
    while (j < needle.length && bytes[i + j] === needle[j]) j++;
    if (j === needle.length) return true;
  }
  return false;
}

/**
 * mayHoldProtoKey on a message's UTF-8 bytes, without decoding them or a Buffer (the HTTP body
 * guard asks it of every body: Buffer.includes cost about 2.5 µs a request there). The needles are
 * ASCII, and in UTF-8 an ASCII byte is never part of another character, so the bytes hold one
 * exactly when the text does.
 */
export function mayHoldProtoKeyBytes(bytes: Uint8Array): boolean {
  return holds(bytes, MARK_BYTES) || holds(bytes, ESCAPE_BYTES);
}
/** Largest partial line held while waiting for its end; past it bytes pass through untouched. */
const MAX_PENDING_BYTES = 64 * 1024 * 1024;

function exposeIn(message: unknown): boolean {
  if (message === null || typeof message !== "object") return false;
  if (Array.isArray(message)) {
    let changed = false;
    for (const m of message) changed = exposeIn(m) || changed;
    return changed;
  }
  const m = message as { method?: unknown; params?: { arguments?: unknown } };
  const args = m.method === "tools/call" ? m.params?.arguments : undefined;
  if (args === null || typeof args !== "object" || !Object.hasOwn(args, MARK)) return false;
  const value = (args as Record<string, unknown>)[MARK];
  delete (args as Record<string, unknown>)[MARK];
  Object.defineProperty(args, PROTO_KEY_SENTINEL, { value, enumerable: true, writable: true });
  return true;
}

/** Rewrites one JSON-RPC message text (a single message or a batch); unchanged when it has no such key. */
export function exposeProtoKey(text: string): string {
  if (!mayHoldProtoKey(text)) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text; // the SDK answers the parse error
  }
  return exposeIn(parsed) ? JSON.stringify(parsed) : text;
}

/** A newline-delimited stream filter applying exposeProtoKey to each line (stdio). */
export function protoKeyFilter(): Transform {
  let pending: Buffer = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const data = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      const end = data.lastIndexOf(10);
      if (end === -1) {
        if (data.length > MAX_PENDING_BYTES) {
          pending = Buffer.alloc(0);
          return done(null, data);
        }
        pending = data;
        return done();
      }
      pending = Buffer.from(data.subarray(end + 1));
      const lines = data.subarray(0, end + 1);
      if (!mayHoldProtoKey(lines)) return done(null, lines);
      const out = lines.toString("utf8").split("\n").map(exposeProtoKey).join("\n");
      done(null, Buffer.from(out, "utf8"));
    },
    flush(done) {
      done(null, pending.length > 0 ? Buffer.from(exposeProtoKey(pending.toString("utf8"))) : null);
    },
  });
}
