/**
 * The HTTP face of the fast path (../fast_path.ts): a taken request is answered the way the SDK's
 * modern path answers it with `responseMode: "sse"` after the first-frame commit
 * (../../workarounds/sse_first_frame.ts): a 200 event stream holding one `event: message` frame.
 * A call still running after keepAliveMs commits the stream with `: keepalive` comments every
 * keepAliveMs until its frame, as the SDK's stream does. The request's signal (the client went
 * away) and the handler's close abort the call; an aborted call's stream ends without a frame.
 */
import type { FastCall } from "../fast_path.ts";
import type { TimerList } from "./timer_list.ts";

/** The headers of the SDK's modern SSE responses. */
const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  "x-accel-buffering": "no",
});
const KEEP_ALIVE_FRAME = ": keepalive\n\n";
const TICK: unique symbol = Symbol("tick");

/** Options of fastResponse. */
export interface FastResponseOptions {
  /** SSE keep-alive interval (ms). */
  keepAliveMs: number;
  /**
   * The handler's deadlines of keepAliveMs (timer_list.ts): a tool call still running at its
   * deadline commits the stream with a keep-alive.
   */
  firstFrame: TimerList;
  /** The handler's in-flight fast calls, aborted by its close(). */
  inflight: Set<AbortController>;
}

function frameOf(message: Record<string, unknown>): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/** Serves a taken fast call as the SDK's SSE answer. */
export async function fastResponse(
  call: FastCall,
  requestSignal: AbortSignal,
  options: FastResponseOptions,
): Promise<Response> {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  requestSignal.addEventListener("abort", onAbort, { once: true });
  options.inflight.add(controller);
  const done = call.run(controller.signal).finally(() => {
    options.inflight.delete(controller);
    requestSignal.removeEventListener("abort", onAbort);
  });
  let cancel: () => void = () => {};
  const first = call.toolCall
    ? await Promise.race([
      done,
      new Promise<typeof TICK>((resolve) => {
        cancel = options.firstFrame.start(() => resolve(TICK));
      }),
    ])
    : await done;
  cancel();
  if (first !== TICK) {
    return new Response(first === null ? null : frameOf(first), {
      status: 200,
      headers: SSE_HEADERS,
    });
  }
  // Still running: commit the stream with a keep-alive, as the SDK's stream does.
  const encoder = new TextEncoder();
  let interval: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      c.enqueue(encoder.encode(KEEP_ALIVE_FRAME));
      interval = setInterval(
        () => c.enqueue(encoder.encode(KEEP_ALIVE_FRAME)),
        options.keepAliveMs,
      );
      done.then((message) => {
        clearInterval(interval);
        try {
          if (message !== null) c.enqueue(encoder.encode(frameOf(message)));
          c.close();
        } catch {
          // cancelled by the client meanwhile
        }
      });
    },
    cancel: () => {
      clearInterval(interval);
      controller.abort();
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}
