/**
 * Workaround: the response stream of a cancelled legacy request. On a sessionful (2025-11-25
 * era) `WebStandardStreamableHTTPServerTransport`, a POST's SSE response stream is closed only
 * once every request it carried has been answered; a request cancelled by
 * `notifications/cancelled` is, as the spec says, never answered (the SDK's Protocol drops the
 * response of an aborted handler), so its stream stays open for the life of the connection,
 * kept alive by the keep-alive comments: each cancelled call holds an HTTP stream and an
 * in-flight slot of its session, and a graceful shutdown waits its full grace for it. Here each
 * session remembers which request ids each of its open POST streams carries; when a POST of
 * the same session cancels every request of such a stream, the stream is closed through the
 * transport's public `closeSSEStream(requestId)` (which ends it after the frames already
 * written, so nothing sent is lost). An unknown or finished id, or a stream some of whose
 * requests are still uncancelled (a batch), is left alone.
 *
 * Upstream: no modelcontextprotocol/typescript-sdk issue found (searched: "cancelled request
 * SSE stream never closed", "notifications/cancelled stream keep-alive leak"); the same SDK
 * behaviour is reported downstream in cyanheads/mcp-ts-core#401 and upstash/context7#3019.
 * Checked: @modelcontextprotocol/server 2.4.0, Deno 2.9.6.
 * Delete when: tests/workarounds/legacy_cancel_stream_test.ts fails (the SDK transport itself
 * closes the stream of a cancelled request); then src/server/http/legacy_sessions.ts needs
 * no `cancelClosesStreams`.
 */
import type {
  RequestId,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";

/** The requests of one POST and the cancellations it carries. */
export interface PostMessages {
  /** Ids of the JSON-RPC requests (messages with a method and an id). */
  requests: RequestId[];
  /** Request ids named by its `notifications/cancelled`. */
  cancels: RequestId[];
}

const isId = (v: unknown): v is RequestId => typeof v === "string" || typeof v === "number";

/** The request ids and cancellations of a parsed POST body (a message or a batch). */
export function postMessages(body: unknown): PostMessages {
  const requests: RequestId[] = [];
  const cancels: RequestId[] = [];
  for (const m of Array.isArray(body) ? body : [body]) {
    if (m === null || typeof m !== "object") continue;
    const { method, id, params } = m as { method?: unknown; id?: unknown; params?: unknown };
    if (typeof method !== "string") continue;
    if (isId(id)) requests.push(id);
    else if (
      method === "notifications/cancelled" && params !== null && typeof params === "object"
    ) {
      const requestId = (params as { requestId?: unknown }).requestId;
      if (isId(requestId)) cancels.push(requestId);
    }
  }
  return { requests, cancels };
}

/** One session's open POST streams, by the request ids they carry. */
export interface CancelClosesStreams {
  /**
   * A POST carrying these request ids got its stream; call the returned function when that
   * stream has ended (sent in full, failed or closed).
   */
  opened(requests: RequestId[]): () => void;
  /** A POST of this session cancelled these ids: close each stream all of whose requests are. */
  cancelled(ids: RequestId[]): void;
}

/** The bookkeeping for one session's transport. */
export function cancelClosesStreams(
  transport: Pick<WebStandardStreamableHTTPServerTransport, "closeSSEStream">,
): CancelClosesStreams {
  /** Each open stream's still uncancelled request ids, shared by the ids it carries. */
  const streams = new Map<RequestId, Set<RequestId>>();
  return {
    opened: (requests) => {
      const pending = new Set(requests);
      // A reused id (a misbehaving client) names its newest stream, as in the transport.
      for (const id of requests) streams.set(id, pending);
      return () => {
        for (const id of requests) if (streams.get(id) === pending) streams.delete(id);
      };
    },
    cancelled: (ids) => {
      for (const id of ids) {
        const pending = streams.get(id);
        if (pending === undefined) continue;
        pending.delete(id);
        if (pending.size === 0) transport.closeSSEStream(id);
      }
    },
  };
}
