/**
 * Workaround: the SSE first-frame commit of modern responses. With `responseMode: "sse"`, the
 * MCP SDK's createMcpHandler answers every tools/call with a 200 event stream at once, so a
 * MissingRequiredClientCapability error (-32021: a handler's input request the client did not
 * declare a capability for) reaches the client as a frame of that 200 stream, although
 * 2026-07-28 requires HTTP 400 for it; the SDK's own table (httpStatusForErrorCode) says 400,
 * and its JSON response mode sends 400, but the SSE mode has already committed 200. Here a
 * response whose first frame is that error becomes the error as JSON with HTTP 400; any other
 * first frame commits the 200 SSE stream unchanged.
 *
 * Upstream: no issue found in modelcontextprotocol/typescript-sdk (searched: "responseMode
 * sse -32021 HTTP 400", "MissingRequiredClientCapability SSE 200"). Minimal reproduction:
 * createMcpHandler(factory, { responseMode: "sse" }) with a tool that returns an
 * input_required result asking for elicitation; POST tools/call declaring no elicitation
 * capability: the answer is 200 text/event-stream whose first frame carries -32021.
 * Checked: @modelcontextprotocol/server 2.4.0, Deno 2.9.6.
 * Delete when: tests/workarounds/sse_first_frame_test.ts fails (the SDK itself answers 400 in
 * SSE mode); then src/server/http.ts returns the SDK's response as it is.
 */
import { ProtocolErrorCode } from "@modelcontextprotocol/server";

/** JSON-RPC code of MissingRequiredClientCapabilityError (2026-07-28). */
const MISSING_CLIENT_CAPABILITY: number = ProtocolErrorCode.MissingRequiredClientCapability;
const MAX_ERROR_FRAME_BYTES = 16 * 1024;
const frameDecoder = new TextDecoder();

/**
 * Modern responses are SSE streams (responseMode "sse"), committed at their first frame:
 * when that frame is a MissingRequiredClientCapability error (a handler's input request
 * the client did not declare a capability for), the answer is that error as JSON with
 * HTTP 400, as the protocol requires, instead of a 200 stream. Any other first frame
 * (a result, a notification, a keep-alive comment) commits the 200 SSE response: frames
 * already written (a whole result) go out as one body, a stream still open is piped on, so
 * progress and cancellation by closing the stream work as before.
 */
export async function commitAtFirstFrame(res: Response): Promise<Response> {
  if (res.body === null || !(res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    return res;
  }
  const reader = res.body.getReader();
  let first: Uint8Array;
  try {
    const r = await reader.read();
    if (r.done) return new Response(null, { status: res.status, headers: res.headers });
    first = r.value;
  } catch {
    return new Response(null, { status: res.status, headers: res.headers });
  }
  // An error frame is small; anything else is committed without being decoded.
  const frame = first.length <= MAX_ERROR_FRAME_BYTES ? frameDecoder.decode(first) : "";
  const data = frame.endsWith("\n\n") && frame.includes(String(MISSING_CLIENT_CAPABILITY))
    ? /^data: (.*)$/m.exec(frame)?.[1]
    : undefined;
  if (data !== undefined) {
    try {
      const message = JSON.parse(data) as { id?: unknown; error?: { code?: unknown } };
      if (message.error?.code === MISSING_CLIENT_CAPABILITY && "id" in message) {
        await reader.cancel().catch(() => {});
        return Response.json(message, { status: 400 });
      }
    } catch {
      // not JSON: commit the stream as it is
    }
  }
  // Frames already written (a result is written and its stream closed in one go) are sent as
  // one body; a stream still open is piped on, so later frames and cancellation flow through.
  const read = () => {
    const p = reader.read();
    p.catch(() => {}); // awaited later, or never when the client cancels first
    return p;
  };
  const chunks = [first];
  let next = read();
  while (true) {
    const r = await Promise.race([next, PENDING]);
    if (r === PENDING_MARK) break;
    if (r.done) {
      return new Response(concat(chunks) as BodyInit, { status: res.status, headers: res.headers });
    }
    chunks.push(r.value);
    next = read();
  }
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      for (const chunk of chunks) c.enqueue(chunk);
    },
    pull: async (c) => {
      try {
        const { done, value } = await next;
        if (done) c.close();
        else {
          c.enqueue(value);
          next = read();
        }
      } catch (err) {
        c.error(err);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: res.status, headers: res.headers });
}

/** Already settled: loses a race only to a read that is settled too (data or end already there). */
const PENDING_MARK: unique symbol = Symbol("pending");
const PENDING: Promise<typeof PENDING_MARK> = Promise.resolve(PENDING_MARK);

function concat(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}
