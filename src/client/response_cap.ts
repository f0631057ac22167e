/**
 * The response caps of the client's HTTP transports (decision 0047), below the SDK: every
 * response body is counted as it arrives. A JSON (or any non-SSE) body is bounded in total bytes
 * (a Content-Length over the cap is refused before the body is read); an SSE body is bounded per
 * event, the bytes since the last event boundary (a blank line), so a long-lived stream of small
 * events is fine and one endless `data:` line is not. The cap of MCP traffic is the stdio
 * transport's (`--max-message-bytes`, default 64 MiB, a protocol error, exit 4); OAuth documents
 * (metadata, registration, token) get AUTH_RESPONSE_BYTES (an authorization error, exit 8).
 */
import { ClientError, type FailureClass } from "./errors.ts";

/** Most bytes of one OAuth response (metadata, registration, token): small documents. */
export const AUTH_RESPONSE_BYTES = 1024 * 1024;

/** What a capped fetch refuses over: the cap, the failure class, and what the body is. */
export interface ResponseCap {
  /** Most bytes of one message (non-SSE: the whole body; SSE: one event). */
  maxBytes: number;
  /** `protocol` for MCP traffic, `auth` for the authorization flow's documents. */
  failure: FailureClass;
  /** What the message calls the response ("response", "OAuth response"). */
  what: string;
  /** Called once with the error when a response went over (the session ends itself). */
  onExceeded?: (err: ClientError) => void;
}

/** The error of a response over the cap: names the cap and the flag that sets it. */
export function capError(cap: ResponseCap, sse: boolean): ClientError {
  const unit = sse ? "an SSE event" : `a ${cap.what} body`;
  const flag = cap.failure === "auth" ? "" : " (--max-message-bytes)";
  return new ClientError(
    cap.failure,
    `the server sent ${unit} over the ${cap.maxBytes}-byte message cap${flag}; refused`,
    { details: { cap: cap.maxBytes, unit: sse ? "sse-event" : "body" } },
  );
}

/** A body stream counting bytes (all of them, or per SSE event) that errors past the cap. */
function counted(
  body: ReadableStream<Uint8Array>,
  sse: boolean,
  max: number,
  exceeded: () => ClientError,
): ReadableStream<Uint8Array> {
  let run = 0;
  let lineEmpty = true;
  let prevCr = false;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (!sse) {
          run += chunk.byteLength;
          if (run > max) return controller.error(exceeded());
          return controller.enqueue(chunk);
        }
        for (let i = 0; i < chunk.length; i++) {
          const b = chunk[i];
          if (b === 0x0a && prevCr) {
            prevCr = false;
            continue; // the LF of a CRLF: one line end
          }
          prevCr = b === 0x0d;
          if (b === 0x0a || b === 0x0d) {
            if (lineEmpty) run = 0; // a blank line: the event ended
            lineEmpty = true;
          } else {
            lineEmpty = false;
            if (++run > max) return controller.error(exceeded());
          }
        }
        controller.enqueue(chunk);
      },
    }),
  );
}

/** Whether a response is an SSE stream. */
function isSse(res: Response): boolean {
  return (res.headers.get("content-type") ?? "").toLowerCase().includes("text/event-stream");
}

/**
 * `inner` with every response body capped by `capOf(input, init)` (undefined: not capped). Past
 * the cap the request is aborted, the body errors with the cap's error, and `onExceeded` is told;
 * from then on every request of this fetch is refused with that error (no reconnect loop).
 */
export function cappedFetch(
  inner: typeof fetch,
  capOf: (input: string | URL | Request, init?: RequestInit) => ResponseCap | undefined,
): typeof fetch {
  let failed: ClientError | undefined;
  return async (input, init) => {
    if (failed !== undefined) throw failed;
    const cap = capOf(input, init);
    if (cap === undefined) return inner(input, init);
    const abort = new AbortController();
    const signal = init?.signal ? AbortSignal.any([init.signal, abort.signal]) : abort.signal;
    const exceeded = (sse: boolean) => {
      if (failed === undefined) {
        failed = capError(cap, sse);
        abort.abort(failed);
        cap.onExceeded?.(failed);
      }
      return failed;
    };
    const res = await inner(input, { ...init, signal });
    if (res.body === null) return res;
    const sse = isSse(res);
    const length = Number(res.headers.get("content-length") ?? NaN);
    if (!sse && Number.isFinite(length) && length > cap.maxBytes) {
      await res.body.cancel().catch(() => {});
      throw exceeded(false);
    }
    const out = new Response(counted(res.body, sse, cap.maxBytes, () => exceeded(sse)), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
    // What the SDK may read besides the body (redirects followed, the final URL).
    Object.defineProperty(out, "url", { value: res.url });
    Object.defineProperty(out, "redirected", { value: res.redirected });
    return out;
  };
}

/** Whether a request carries JSON-RPC (MCP traffic), judged by its body. */
export function isJsonRpcRequest(init?: RequestInit): boolean {
  return typeof init?.body === "string" && /"jsonrpc"\s*:/.test(init.body);
}
