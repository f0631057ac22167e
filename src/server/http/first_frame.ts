/**
 * The SSE first-frame commit of modern responses: a response whose first frame is a
 * MissingRequiredClientCapability error becomes that error as JSON with HTTP 400, as 2026-07-28
 * requires; any other first frame commits the 200 SSE stream unchanged.
 */
/** JSON-RPC code of MissingRequiredClientCapabilityError (2026-07-28). */
const MISSING_CLIENT_CAPABILITY = -32021;
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
