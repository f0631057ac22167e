/**
 * Workaround: the response stream of a cancelled legacy request. On a sessionful (2025-11-25
 * era) `WebStandardStreamableHTTPServerTransport`, a POST's SSE response stream is closed only
 * once every request it carried has been answered; a request cancelled by
 * `notifications/cancelled` is, as the spec says, never answered (the SDK's Protocol drops the
 * response of an aborted handler), so its stream stays open for the life of the connection,
 * kept alive by the keep-alive comments: each cancelled call holds an HTTP stream and an
 * in-flight slot of its session, and a graceful shutdown waits its full grace for it. The
 * transport also keeps each such request's id in its private `_requestToStreamMapping` for the
 * life of the session (and, in a batch, the responses of the other requests in its private
 * `_requestResponseMap`).
 *
 * Here the transport's public `onmessage` and `send` are wrapped: every request the transport
 * hands to the Protocol is remembered with the POST (stream) that carried it, every response or
 * error sent for it marks it answered, and a cancellation marks it cancelled when the Protocol
 * aborted it, that is when the request was handed over before the Protocol acted on the
 * cancellation (one microtask after handing it over): a request of an earlier POST, or of the
 * same POST, before or after the cancellation in its batch, counts; a request of a later POST
 * does not (the Protocol ignores that cancellation, and the request is answered as usual). Once
 * every request of a stream is answered or cancelled, and at least one cancelled, the stream is
 * closed through the public `closeSSEStream(requestId)` (which ends it after the frames already
 * written, so nothing sent is lost), and the stream's ids are deleted from those private maps
 * (guarded: only when they are Maps).
 *
 * Upstream: no modelcontextprotocol/typescript-sdk issue found (searched: "cancelled request
 * SSE stream never closed", "notifications/cancelled stream keep-alive leak"); the same SDK
 * behaviour is reported downstream in cyanheads/mcp-ts-core#401 and upstash/context7#3019.
 * Checked: @modelcontextprotocol/server 2.4.0, Deno 2.9.6.
 * Delete when: tests/workarounds/legacy_cancel_stream_test.ts's upstream tests fail (the SDK
 * transport itself closes the stream of a cancelled request and forgets its id); then
 * src/server/http/legacy_sessions.ts needs no `cancelClosesStreams`.
 */
import type {
  RequestId,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";

/** The transport members the workaround uses (public ones; the private maps are probed). */
export type CancelWatchedTransport = Pick<
  WebStandardStreamableHTTPServerTransport,
  "closeSSEStream" | "onmessage" | "send"
>;

/** One POST's response stream: the ids of its requests, those neither answered nor cancelled. */
interface Stream {
  ids: RequestId[];
  pending: Set<RequestId>;
  cancelled: boolean;
}

const isId = (v: unknown): v is RequestId => typeof v === "string" || typeof v === "number";

/** A private Map of the transport by name, if it is one. */
function privateMap(transport: object, name: string): Map<unknown, unknown> | undefined {
  const value = (transport as Record<string, unknown>)[name];
  return value instanceof Map ? value : undefined;
}

/**
 * Closes, on `transport` (a session's, already connected to its server), the POST stream whose
 * every request is answered or cancelled once one of them is cancelled. Call once per transport,
 * after `server.connect(transport)` (it wraps the `onmessage` the server installed).
 */
export function cancelClosesStreams(transport: CancelWatchedTransport): void {
  /** Each remembered request id's stream (the newest, for an id a client reused). */
  const owner = new Map<RequestId, Stream>();
  /** The stream of each POST, by the Request the transport hands over with its messages. */
  const byPost = new WeakMap<object, Stream>();

  /** Forgets a stream all of whose requests are done; closes it if one was cancelled. */
  const settle = (s: Stream) => {
    if (s.pending.size > 0) return;
    const own = s.ids.filter((id) => owner.get(id) === s);
    for (const id of own) owner.delete(id);
    if (!s.cancelled || own.length === 0) return;
    const toStream = privateMap(transport, "_requestToStreamMapping");
    const responses = privateMap(transport, "_requestResponseMap");
    const streamId = toStream?.get(own[0]);
    transport.closeSSEStream(own[0]);
    // The transport forgets a stream's ids only when it answers all of them: do it here.
    if (toStream === undefined || streamId === undefined) return;
    for (const id of own) {
      if (toStream.get(id) !== streamId) continue;
      toStream.delete(id);
      responses?.delete(id);
    }
  };

  const onmessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const m = message as { method?: unknown; id?: unknown; params?: unknown };
    if (typeof m.method === "string" && isId(m.id)) {
      // Remembered before the Protocol sees it: it may answer at once (an error response).
      const post = extra?.request ?? {};
      let s = byPost.get(post);
      if (s === undefined) {
        s = { ids: [], pending: new Set(), cancelled: false };
        byPost.set(post, s);
      }
      const previous = owner.get(m.id);
      s.ids.push(m.id);
      s.pending.add(m.id);
      owner.set(m.id, s);
      // A reused id: the transport routes it to the newest stream only.
      if (previous !== undefined && previous !== s && previous.pending.delete(m.id)) {
        settle(previous);
      }
    }
    onmessage?.(message, extra);
    if (
      m.method !== "notifications/cancelled" || m.params === null || typeof m.params !== "object"
    ) {
      return;
    }
    const requestId = (m.params as { requestId?: unknown }).requestId;
    if (!isId(requestId)) return;
    // The Protocol acts on a notification one microtask after it is handed over (aborting the
    // request if it knows it by then); this runs just after that, seeing the same requests.
    queueMicrotask(() => {
      const s = owner.get(requestId);
      if (s === undefined || !s.pending.delete(requestId)) return;
      s.cancelled = true;
      settle(s);
    });
  };

  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    try {
      await send(message, options);
    } finally {
      // A response or an error for a request: answered (its frame written, or undeliverable).
      const m = message as { method?: unknown; id?: unknown };
      if (m.method === undefined && isId(m.id)) {
        const s = owner.get(m.id);
        if (s !== undefined && s.pending.delete(m.id)) settle(s);
      }
    }
  };
}
