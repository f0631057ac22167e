/**
 * The legacy (initialization-era) session table: one sessionful transport and McpServer per
 * `initialize`, bounded so that no client can lock the others out. A session never used after
 * its `initialize` expires after `unusedSessionMs`; any session idle for `sessionIdleMs` expires.
 * Idle means no request in flight: a standing GET stream does not keep a session alive, its last
 * request does (expiring or evicting the session ends the stream). Each client (token) holds at
 * most its share of the table, `ceil(maxSessions / clients)`: a client at its share replaces its
 * own least recently used idle session; a newcomer under its share at a full table evicts the
 * least recently used idle session of the client holding the most sessions (among clients holding
 * at least as many as the newcomer's). See docs/decisions/0015. Behind a balancer, a session id
 * carries its instance's tag (`NAME.<uuid>`, docs/decisions/0037): an id this table does not hold,
 * another instance's included, is 404 like any unknown session, never served here. A POST
 * stream of a session all of whose requests are answered or cancelled (`notifications/cancelled`,
 * as the SDK's Protocol aborts them) ends at once (src/workarounds/legacy_cancel_stream.ts): a
 * cancelled request gets no response, so the SDK alone would leave it open, in flight.
 */
import {
  type AuthInfo,
  type McpServer,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { ServerFactory } from "../factory.ts";
import { jsonRpcError } from "./context.ts";
import { newSessionId } from "./instance.ts";
import { cancelClosesStreams } from "../../workarounds/legacy_cancel_stream.ts";

/** Default most open legacy sessions. */
export const DEFAULT_MAX_SESSIONS = 100;
/** Default time after which an idle session is closed (ms). */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;
/** Default time after which a session never used after its `initialize` is closed (ms). */
export const DEFAULT_UNUSED_SESSION_MS = 60 * 1000;
/** Seconds a client refused a session (every one has a request in flight) waits: `Retry-After`. */
export const SESSIONS_FULL_RETRY_AFTER_S = 1;

/** Options of the legacy session table. */
export interface LegacySessionsOptions {
  /** Builds each session's McpServer. */
  factory: ServerFactory;
  /** Most open sessions. */
  maxSessions: number;
  /** Number of distinct clients (tokens; 1 without tokens): each holds at most its share. */
  clients: number;
  /** A session idle this long is closed (ms). */
  sessionIdleMs: number;
  /** A session never used after its `initialize` is closed this long after it (ms). */
  unusedSessionMs: number;
  /** Largest request body the transports accept (bytes). */
  maxBodyBytes: number;
  /** SSE keep-alive interval (ms). */
  keepAliveMs: number;
  /** This instance's tag, the prefix of its session ids (`NAME.<uuid>`); none: bare UUIDs. */
  instance?: string;
  /** The clock (ms); injectable for tests. */
  now: () => number;
  /** Out-of-band errors. */
  onError: (err: Error) => void;
}

/** One open session. */
interface Session {
  id: string;
  /** The client (token) that opened it; only that client may use it. */
  client: string;
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  createdAt: number;
  lastSeen: number;
  /** Whether any request carried its id after the `initialize`. */
  used: boolean;
  /** Requests in flight (their responses still being sent); standalone GET streams excluded. */
  inflight: number;
}

/** The session table and how the handler talks to it. */
export interface LegacySessions {
  /**
   * Serves a legacy request from `client` (its session, or a new one for an `initialize`, built
   * for what `authInfo` grants).
   */
  serve(req: Request, client: string, authInfo?: AuthInfo): Promise<Response>;
  /** The servers of the open sessions (for notifications). */
  servers(): McpServer[];
  /** Number of open sessions. */
  size(): number;
  /** Closes the sessions' standalone GET streams. */
  closeIdleStreams(): void;
  /** Closes every session and stops the expiry timer. */
  close(): Promise<void>;
}

/**
 * Calls `done` once when the response's body has been sent in full, failed or been cancelled
 * by the peer (at once for a response without a body). The body flows through unchanged.
 */
function onBodyEnd(res: Response, done: () => void): Response {
  if (res.body === null) {
    done();
    return res;
  }
  let ended = false;
  const end = () => {
    if (!ended) {
      ended = true;
      done();
    }
  };
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    pull: async (c) => {
      try {
        const { done: finished, value } = await reader.read();
        if (finished) {
          end();
          c.close();
        } else c.enqueue(value);
      } catch (err) {
        end();
        c.error(err);
      }
    },
    cancel: (reason) => {
      end();
      return reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

/** Creates the legacy session table. */
export function createLegacySessions(options: LegacySessionsOptions): LegacySessions {
  const sessions = new Map<string, Session>();
  /** Initializations admitted whose session is not in the table yet, by client. */
  const pending = new Map<string, number>();
  let pendingTotal = 0;
  /** The most sessions one client may hold. */
  const share = Math.max(1, Math.ceil(options.maxSessions / Math.max(1, options.clients)));
  let timer: ReturnType<typeof setInterval> | undefined;
  const sweepEveryMs = Math.max(
    1000,
    Math.min(options.unusedSessionMs, options.sessionIdleMs) / 4,
  );

  const closeSession = async (id: string) => {
    const s = sessions.get(id);
    if (!s) return;
    sessions.delete(id);
    if (sessions.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
    await s.transport.close().catch(() => {});
    await s.server.close().catch(() => {});
  };

  // A standing GET stream does not count: only a request in flight keeps a session alive.
  const expired = (s: Session, now: number) =>
    s.inflight === 0 &&
    ((!s.used && now - s.createdAt >= options.unusedSessionMs) ||
      now - s.lastSeen >= options.sessionIdleMs);

  const sweep = async () => {
    const now = options.now();
    const gone = [...sessions.values()].filter((s) => expired(s, now));
    await Promise.all(gone.map((s) => closeSession(s.id)));
  };

  /** Sessions held by each client, initializations under way included. */
  const holdings = (): Map<string, number> => {
    const held = new Map(pending);
    for (const s of sessions.values()) held.set(s.client, (held.get(s.client) ?? 0) + 1);
    return held;
  };

  /** The least recently used idle session (no request in flight) of `client`. */
  const ownVictim = (client: string): Session | undefined => {
    let best: Session | undefined;
    for (const s of sessions.values()) {
      if (s.client !== client || s.inflight > 0) continue;
      if (best === undefined || s.lastSeen < best.lastSeen) best = s;
    }
    return best;
  };

  /**
   * The session to evict for a newcomer from `client` when the table is full: an idle session
   * of a client holding at least as many sessions as the newcomer's, the most loaded client
   * first, then the least recently used. None when every such session has a request in flight.
   */
  const victim = (client: string, held: Map<string, number>): Session | undefined => {
    const own = held.get(client) ?? 0;
    let best: Session | undefined;
    for (const s of sessions.values()) {
      const load = held.get(s.client)!;
      if (s.inflight > 0 || load < own) continue;
      if (
        best === undefined || load > held.get(best.client)! ||
        (load === held.get(best.client)! && s.lastSeen < best.lastSeen)
      ) best = s;
    }
    return best;
  };

  /**
   * A request's response: the session is in flight until it has been sent in full (or closed
   * because every request it carried was answered or cancelled).
   */
  const track = (s: Session, res: Response): Response =>
    onBodyEnd(res, () => {
      s.inflight--;
      s.lastSeen = options.now();
    });

  const serveSession = async (req: Request, client: string, id: string): Promise<Response> => {
    const s = sessions.get(id);
    // A session belongs to the client that opened it; to anyone else it does not exist.
    if (!s || s.client !== client) {
      return jsonRpcError(404, { code: -32001, message: "Session not found" });
    }
    s.used = true;
    s.lastSeen = options.now();
    s.inflight++;
    let res: Response;
    try {
      res = await s.transport.handleRequest(req);
    } catch (err) {
      s.inflight--;
      throw err;
    }
    const method = req.method.toUpperCase();
    if (method === "DELETE") {
      s.inflight--;
      await closeSession(id);
      return res;
    }
    // The standalone GET stream is not a request in flight: it stays open as long as the
    // client likes, but the session's idleness is measured from its last request, and closing
    // the session (expiry, eviction) ends the stream.
    if (method === "GET") {
      s.inflight--;
      return res;
    }
    return track(s, res);
  };

  const open = async (req: Request, client: string, authInfo?: AuthInfo): Promise<Response> => {
    let body: unknown;
    try {
      body = await req.clone().json();
    } catch {
      return jsonRpcError(400, { code: -32700, message: "Parse error" });
    }
    const isInit = !Array.isArray(body) && (body as { method?: unknown })?.method === "initialize";
    if (!isInit) {
      return jsonRpcError(400, {
        code: -32000,
        message: "Bad Request: Mcp-Session-Id header is required (send initialize first)",
      });
    }
    const held = holdings();
    let v: Session | undefined | null = null;
    if ((held.get(client) ?? 0) >= share) {
      // At its share: a client replaces its own sessions, never anyone else's.
      v = ownVictim(client);
    } else if (sessions.size + pendingTotal >= options.maxSessions) v = victim(client, held);
    if (v === undefined) {
      return jsonRpcError(503, {
        code: -32000,
        message: "Too many open sessions, all in use; close one (DELETE) or retry later",
      }, { "retry-after": String(SESSIONS_FULL_RETRY_AFTER_S) });
    }
    // Out of the table at once, so a concurrent newcomer cannot pick the same victim.
    if (v !== null) void closeSession(v.id);
    pending.set(client, (pending.get(client) ?? 0) + 1);
    pendingTotal++;
    let isPending = true;
    /** The initialization is no longer pending (it is in the table, or it failed). */
    const settle = () => {
      if (!isPending) return;
      isPending = false;
      pendingTotal--;
      const left = pending.get(client)! - 1;
      if (left === 0) pending.delete(client);
      else pending.set(client, left);
    };
    let created: Session | undefined;
    try {
      const server = options.factory({ era: "legacy", requestInfo: req, authInfo });
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => newSessionId(options.instance),
        onsessioninitialized: (id) => {
          const now = options.now();
          created = {
            id,
            client,
            transport,
            server,
            createdAt: now,
            lastSeen: now,
            used: false,
            inflight: 1, // its initialize response, until that is sent
          };
          sessions.set(id, created);
          settle();
          timer ??= setInterval(() => void sweep(), sweepEveryMs);
        },
        onsessionclosed: (id) => void closeSession(id),
        maxRequestBodySize: options.maxBodyBytes,
        keepAliveMs: options.keepAliveMs,
      });
      transport.onerror = options.onError;
      await server.connect(transport);
      cancelClosesStreams(transport);
      const res = await transport.handleRequest(req, { parsedBody: body });
      return created === undefined ? res : track(created, res);
    } finally {
      settle();
    }
  };

  return {
    serve: async (req, client, authInfo) => {
      await sweep();
      const id = req.headers.get("mcp-session-id");
      if (id !== null) return await serveSession(req, client, id);
      if (req.method.toUpperCase() !== "POST") {
        return jsonRpcError(400, {
          code: -32000,
          message: "Bad Request: Mcp-Session-Id header is required",
        });
      }
      return await open(req, client, authInfo);
    },
    servers: () => [...sessions.values()].map((s) => s.server),
    size: () => sessions.size,
    closeIdleStreams: () => {
      for (const s of sessions.values()) s.transport.closeStandaloneSSEStream();
    },
    close: async () => {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      await Promise.all([...sessions.keys()].map(closeSession));
    },
  };
}
