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

/** The most sessions one client may hold: its share of the table. */
function shareOf(options: LegacySessionsOptions): number {
  return Math.max(1, Math.ceil(options.maxSessions / Math.max(1, options.clients)));
}

/** How often expired sessions are swept while any is open (ms). */
function sweepIntervalOf(options: LegacySessionsOptions): number {
  return Math.max(1000, Math.min(options.unusedSessionMs, options.sessionIdleMs) / 4);
}

/** The 400 answer to a request without a session id that is not an `initialize`. */
function notInitialize(): Response {
  return jsonRpcError(400, {
    code: -32000,
    message: "Bad Request: Mcp-Session-Id header is required (send initialize first)",
  });
}

/** The session table: sessions by id, initializations under way, and the expiry timer. */
class LegacySessionTable implements LegacySessions {
  readonly #options: LegacySessionsOptions;
  readonly #sessions = new Map<string, Session>();
  /** Initializations admitted whose session is not in the table yet, by client. */
  readonly #pending = new Map<string, number>();
  #pendingTotal = 0;
  readonly #share: number;
  readonly #sweepEveryMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: LegacySessionsOptions) {
    this.#options = options;
    this.#share = shareOf(options);
    this.#sweepEveryMs = sweepIntervalOf(options);
  }

  async serve(req: Request, client: string, authInfo?: AuthInfo): Promise<Response> {
    await this.#sweep();
    const id = req.headers.get("mcp-session-id");
    if (id !== null) return await this.#serveSession(req, client, id);
    if (req.method.toUpperCase() !== "POST") {
      return jsonRpcError(400, {
        code: -32000,
        message: "Bad Request: Mcp-Session-Id header is required",
      });
    }
    return await this.#open(req, client, authInfo);
  }

  servers(): McpServer[] {
    return [...this.#sessions.values()].map((s) => s.server);
  }

  size(): number {
    return this.#sessions.size;
  }

  closeIdleStreams(): void {
    for (const s of this.#sessions.values()) s.transport.closeStandaloneSSEStream();
  }

  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await Promise.all([...this.#sessions.keys()].map((id) => this.#closeSession(id)));
  }

  /** Takes a session out of the table at once, then closes its transport and server. */
  async #closeSession(id: string): Promise<void> {
    const s = this.#sessions.get(id);
    if (!s) return;
    this.#sessions.delete(id);
    if (this.#sessions.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
    await s.transport.close().catch(() => {});
    await s.server.close().catch(() => {});
  }

  /** Whether a session has expired: a standing GET stream does not count, a request does. */
  #expired(s: Session, now: number): boolean {
    const { unusedSessionMs, sessionIdleMs } = this.#options;
    return s.inflight === 0 &&
      ((!s.used && now - s.createdAt >= unusedSessionMs) || now - s.lastSeen >= sessionIdleMs);
  }

  async #sweep(): Promise<void> {
    const now = this.#options.now();
    const gone = [...this.#sessions.values()].filter((s) => this.#expired(s, now));
    await Promise.all(gone.map((s) => this.#closeSession(s.id)));
  }

  /** Sessions held by each client, initializations under way included. */
  #holdings(): Map<string, number> {
    const held = new Map(this.#pending);
    for (const s of this.#sessions.values()) held.set(s.client, (held.get(s.client) ?? 0) + 1);
    return held;
  }

  /** The least recently used idle session (no request in flight) of `client`. */
  #ownVictim(client: string): Session | undefined {
    let best: Session | undefined;
    for (const s of this.#sessions.values()) {
      if (s.client !== client || s.inflight > 0) continue;
      if (best === undefined || s.lastSeen < best.lastSeen) best = s;
    }
    return best;
  }

  /**
   * The session to evict for a newcomer from `client` when the table is full: an idle session
   * of a client holding at least as many sessions as the newcomer's, the most loaded client
   * first, then the least recently used. None when every such session has a request in flight.
   */
  #victim(client: string, held: Map<string, number>): Session | undefined {
    const own = held.get(client) ?? 0;
    let best: Session | undefined;
    for (const s of this.#sessions.values()) {
      const load = held.get(s.client)!;
      if (s.inflight > 0 || load < own) continue;
      if (
        best === undefined || load > held.get(best.client)! ||
        (load === held.get(best.client)! && s.lastSeen < best.lastSeen)
      ) best = s;
    }
    return best;
  }

  /**
   * A request's response: the session is in flight until it has been sent in full (or closed
   * because every request it carried was answered or cancelled).
   */
  #track(s: Session, res: Response): Response {
    return onBodyEnd(res, () => {
      s.inflight--;
      s.lastSeen = this.#options.now();
    });
  }

  async #serveSession(req: Request, client: string, id: string): Promise<Response> {
    const s = this.#sessions.get(id);
    // A session belongs to the client that opened it; to anyone else it does not exist.
    if (!s || s.client !== client) {
      return jsonRpcError(404, { code: -32001, message: "Session not found" });
    }
    s.used = true;
    s.lastSeen = this.#options.now();
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
      await this.#closeSession(id);
      return res;
    }
    // The standalone GET stream is not a request in flight: it stays open as long as the
    // client likes, but the session's idleness is measured from its last request, and closing
    // the session (expiry, eviction) ends the stream.
    if (method === "GET") {
      s.inflight--;
      return res;
    }
    return this.#track(s, res);
  }

  /** Opens a session for an `initialize` from `client`, if the table has room for it. */
  async #open(req: Request, client: string, authInfo?: AuthInfo): Promise<Response> {
    let body: unknown;
    try {
      body = await req.clone().json();
    } catch {
      return jsonRpcError(400, { code: -32700, message: "Parse error" });
    }
    const isInit = !Array.isArray(body) && (body as { method?: unknown })?.method === "initialize";
    if (!isInit) return notInitialize();
    if (!this.#admit(client)) {
      return jsonRpcError(503, {
        code: -32000,
        message: "Too many open sessions, all in use; close one (DELETE) or retry later",
      }, { "retry-after": String(SESSIONS_FULL_RETRY_AFTER_S) });
    }
    const settle = this.#reserve(client);
    try {
      return await this.#connect(req, body, client, authInfo, settle);
    } finally {
      settle();
    }
  }

  /**
   * Makes room for a newcomer from `client`: false when there is none (every session it may
   * replace has a request in flight). A victim leaves the table at once, so a concurrent newcomer
   * cannot pick the same one.
   */
  #admit(client: string): boolean {
    const held = this.#holdings();
    let v: Session | undefined | null = null;
    if ((held.get(client) ?? 0) >= this.#share) {
      // At its share: a client replaces its own sessions, never anyone else's.
      v = this.#ownVictim(client);
    } else if (this.#sessions.size + this.#pendingTotal >= this.#options.maxSessions) {
      v = this.#victim(client, held);
    }
    if (v === undefined) return false;
    if (v !== null) void this.#closeSession(v.id);
    return true;
  }

  /**
   * Counts an initialization of `client` as pending; the function returned ends that (it is in
   * the table, or it failed), once however often it is called.
   */
  #reserve(client: string): () => void {
    this.#pending.set(client, (this.#pending.get(client) ?? 0) + 1);
    this.#pendingTotal++;
    let isPending = true;
    return () => {
      if (!isPending) return;
      isPending = false;
      this.#pendingTotal--;
      const left = this.#pending.get(client)! - 1;
      if (left === 0) this.#pending.delete(client);
      else this.#pending.set(client, left);
    };
  }

  /** Builds the session's server and transport and serves its `initialize` on them. */
  async #connect(
    req: Request,
    body: unknown,
    client: string,
    authInfo: AuthInfo | undefined,
    settle: () => void,
  ): Promise<Response> {
    const options = this.#options;
    let created: Session | undefined;
    const server = options.factory({ era: "legacy", requestInfo: req, authInfo });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => newSessionId(options.instance),
      onsessioninitialized: (id) => {
        const now = options.now();
        // In flight: its initialize response, until that is sent.
        created = {
          id,
          client,
          transport,
          server,
          createdAt: now,
          lastSeen: now,
          used: false,
          inflight: 1,
        };
        this.#sessions.set(id, created);
        settle();
        this.#timer ??= setInterval(() => void this.#sweep(), this.#sweepEveryMs);
      },
      onsessionclosed: (id) => void this.#closeSession(id),
      maxRequestBodySize: options.maxBodyBytes,
      keepAliveMs: options.keepAliveMs,
    });
    transport.onerror = options.onError;
    await server.connect(transport);
    cancelClosesStreams(transport);
    const res = await transport.handleRequest(req, { parsedBody: body });
    return created === undefined ? res : this.#track(created, res);
  }
}

/** Creates the legacy session table. */
export function createLegacySessions(options: LegacySessionsOptions): LegacySessions {
  return new LegacySessionTable(options);
}
