/**
 * The Streamable HTTP MCP handler: a pure `(Request) => Promise<Response>` (a hono
 * app's fetch). Every request passes the same guards, in order, before any JSON-RPC
 * dispatch: body size, Host, Origin, authentication; the SDK then checks the protocol
 * headers. Modern (2026-07-28) requests are served statelessly; an `initialize`
 * opens a legacy session (Mcp-Session-Id, GET stream, DELETE) from the same factory.
 */
import { Hono } from "hono";
import { createHash, timingSafeEqual } from "node:crypto";
import process from "node:process";
import {
  createMcpHandler,
  isLegacyRequest,
  type McpServer,
  type ServerNotifier,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { Workspace } from "../workspace/workspace.ts";
import type { ServerDefinition } from "./definition.ts";
import { createServerFactory } from "./factory.ts";

/** Default largest request body (bytes). */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Host names accepted by default (any port). */
export const LOOPBACK_HOSTS: readonly string[] = ["localhost", "127.0.0.1", "[::1]"];

/** Options of the HTTP handler. */
export interface HttpHandlerOptions {
  /** Serve the workspace tools on this workspace. Exactly one of workspace and definition. */
  workspace?: Workspace;
  /** Serve this server definition instead (same guards, era routing and sessions). */
  definition?: ServerDefinition;
  /** Path of the MCP endpoint. Default "/mcp". */
  endpoint?: string;
  /** Host names accepted besides the loopback names (no port; IPv6 in brackets). */
  allowedHosts?: string[];
  /** Origins accepted besides loopback origins, exactly (scheme://host[:port]). */
  allowedOrigins?: string[];
  /** Bearer token every MCP request must carry; none means no authentication. */
  token?: string;
  /** Largest request body (bytes). */
  maxBodyBytes?: number;
  /** Page size of tools/list and the other lists. */
  pageSize?: number;
  /** HMAC key for confirmation requestState (shared by instances behind one balancer). */
  requestStateKey?: Uint8Array | string;
  /** How long a confirmation request stays valid (seconds). */
  confirmationTtlSeconds?: number;
  /** Most open legacy sessions. Default 100. */
  maxSessions?: number;
  /** A legacy session unused this long is closed (ms). Default 30 minutes. */
  sessionIdleMs?: number;
  /** SSE keep-alive interval (ms). Default 15000. */
  keepAliveMs?: number;
  /** Called with out-of-band errors (logged to stderr by the entry). */
  onError?: (err: Error) => void;
}

/** The handler and its lifecycle. */
export interface HttpHandler {
  /** Serves one HTTP request. */
  fetch: (request: Request) => Promise<Response>;
  /** Aborts in-flight modern exchanges and closes every legacy session. */
  close: () => Promise<void>;
  /** Closes the long-lived legacy GET streams (first step of a graceful shutdown). */
  closeIdleStreams: () => void;
  /** Number of open legacy sessions. */
  sessionCount: () => number;
  /**
   * Announces list and resource changes: to the modern subscriptions/listen streams that asked
   * for them and to every legacy session (for the lists whose listChanged the definition declares).
   */
  notify: ServerNotifier;
}

function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
) {
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

function hostnameOf(host: string): string | null {
  try {
    const u = new URL(`http://${host}`);
    return u.hostname.toLowerCase();
  } catch {
    return null;
  }
}

function normalizeOrigin(origin: string): string | null {
  try {
    const u = new URL(origin);
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    return u.origin;
  } catch {
    return null;
  }
}

function digest(s: string): Uint8Array {
  return createHash("sha256").update(s).digest();
}

/** Reads a body under a byte cap; null when it is larger. */
async function readCapped(
  body: ReadableStream<Uint8Array>,
  max: number,
): Promise<Uint8Array | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

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
async function commitAtFirstFrame(res: Response): Promise<Response> {
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

interface LegacySession {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  lastSeen: number;
}

/** Creates the guarded Streamable HTTP handler for a workspace (or any server definition). */
export function createHttpHandler(options: HttpHandlerOptions): HttpHandler {
  const endpoint = options.endpoint ?? "/mcp";
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxSessions = options.maxSessions ?? 100;
  const idleMs = options.sessionIdleMs ?? 30 * 60 * 1000;
  const allowedHosts = new Set(
    [...LOOPBACK_HOSTS, ...(options.allowedHosts ?? [])].map((h) => h.toLowerCase()),
  );
  const allowedOrigins = new Set(
    (options.allowedOrigins ?? []).map((o) => {
      const n = normalizeOrigin(o);
      if (!n) throw new TypeError(`allowed origin ${JSON.stringify(o)} is not an http(s) origin`);
      return n;
    }),
  );
  const tokenDigest = options.token === undefined ? undefined : digest(options.token);
  const factory = createServerFactory({
    workspace: options.workspace,
    definition: options.definition,
    pageSize: options.pageSize,
    requestStateKey: options.requestStateKey,
    confirmationTtlSeconds: options.confirmationTtlSeconds,
    authenticated: tokenDigest !== undefined,
  });
  const onError = options.onError ?? (() => {});
  const listChanged = factory.compiled.definition.listChanged;
  const modern = createMcpHandler(factory, {
    legacy: "reject",
    responseMode: "sse",
    keepAliveMs: options.keepAliveMs ?? 15_000,
    maxRequestBodySize: maxBody,
    onerror: onError,
  });
  const sessions = new Map<string, LegacySession>();

  const closeSession = async (id: string) => {
    const s = sessions.get(id);
    if (!s) return;
    sessions.delete(id);
    await s.transport.close().catch(() => {});
    await s.server.close().catch(() => {});
  };
  const sweep = async () => {
    const now = Date.now();
    for (const [id, s] of sessions) if (now - s.lastSeen > idleMs) await closeSession(id);
  };

  const serveLegacy = async (req: Request): Promise<Response> => {
    const id = req.headers.get("mcp-session-id");
    if (id !== null) {
      const s = sessions.get(id);
      if (!s) return jsonRpcError(404, -32001, "Session not found");
      s.lastSeen = Date.now();
      const res = await s.transport.handleRequest(req);
      if (req.method === "DELETE") await closeSession(id);
      return res;
    }
    if (req.method !== "POST") {
      return jsonRpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required");
    }
    let body: unknown;
    try {
      body = await req.clone().json();
    } catch {
      return jsonRpcError(400, -32700, "Parse error");
    }
    const isInit = !Array.isArray(body) && (body as { method?: unknown })?.method === "initialize";
    if (!isInit) {
      return jsonRpcError(
        400,
        -32000,
        "Bad Request: Mcp-Session-Id header is required (send initialize first)",
      );
    }
    await sweep();
    if (sessions.size >= maxSessions) {
      return jsonRpcError(503, -32000, "Too many open sessions; close one (DELETE) or retry later");
    }
    const server = factory({ era: "legacy", requestInfo: req });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sid) => {
        sessions.set(sid, { transport, server, lastSeen: Date.now() });
      },
      onsessionclosed: (sid) => {
        sessions.delete(sid);
      },
      maxRequestBodySize: maxBody,
      keepAliveMs: options.keepAliveMs ?? 15_000,
    });
    transport.onerror = onError;
    await server.connect(transport);
    return await transport.handleRequest(req, { parsedBody: body });
  };

  const app = new Hono();

  // Guards, in order, on every request (never per connection).
  app.use("*", async (c, next) => {
    const req = c.req.raw;
    // 1. Body size.
    if (req.body !== null) {
      const declared = req.headers.get("content-length");
      if (declared !== null && Number(declared) > maxBody) {
        return jsonRpcError(413, -32600, `Request body over ${maxBody} bytes`);
      }
      if (declared === null) {
        const bytes = await readCapped(req.body, maxBody);
        if (bytes === null) return jsonRpcError(413, -32600, `Request body over ${maxBody} bytes`);
        c.req.raw = new Request(req, { body: bytes as BodyInit });
      }
    }
    // 2. Host.
    const host = req.headers.get("host");
    const hostname = host === null ? null : hostnameOf(host);
    if (hostname === null || !allowedHosts.has(hostname)) {
      return jsonRpcError(403, -32600, `Invalid Host header: ${host ?? "(none)"}`);
    }
    // 3. Origin: absent is accepted (non-browser clients); "null" and foreign origins are not.
    const origin = req.headers.get("origin");
    if (origin !== null) {
      const n = normalizeOrigin(origin);
      const ok = n !== null &&
        (LOOPBACK_HOSTS.includes(new URL(n).hostname) || allowedOrigins.has(n));
      if (!ok) return jsonRpcError(403, -32600, `Invalid Origin: ${origin}`);
    }
    await next();
  });

  app.get("/healthz", (c) => c.json({ status: "ok", pid: process.pid }));

  app.all(endpoint, async (c) => {
    const req = c.req.raw;
    // 4. Authentication.
    if (tokenDigest !== undefined) {
      const auth = req.headers.get("authorization") ?? "";
      const m = /^Bearer (.+)$/i.exec(auth);
      const ok = m !== null && timingSafeEqual(digest(m[1]), tokenDigest);
      if (!ok) {
        return jsonRpcError(401, -32001, "Unauthorized", {
          "www-authenticate": m === null
            ? 'Bearer realm="wmcp"'
            : 'Bearer realm="wmcp", error="invalid_token"',
        });
      }
    }
    // 5. Protocol headers are checked by the SDK before it dispatches (modern: version,
    // Mcp-Method, Mcp-Name, Mcp-Param-*; legacy: MCP-Protocol-Version, session).
    if (await isLegacyRequest(req, undefined, { maxRequestBodySize: maxBody })) {
      return await serveLegacy(req);
    }
    return await commitAtFirstFrame(await modern.fetch(req));
  });

  app.notFound(() => jsonRpcError(404, -32601, "Not found"));
  app.onError((err) => {
    onError(err);
    return jsonRpcError(500, -32603, "Internal error");
  });

  return {
    fetch: (request: Request) => Promise.resolve(app.fetch(request)),
    close: async () => {
      await modern.close();
      await Promise.all([...sessions.keys()].map(closeSession));
      // Cancelled operations stop within 100 ms; let them finish unwinding (and log) first.
      await factory.settled(2000);
    },
    closeIdleStreams: () => {
      for (const s of sessions.values()) s.transport.closeStandaloneSSEStream();
    },
    sessionCount: () => sessions.size,
    notify: {
      toolsChanged: () => {
        modern.notify.toolsChanged();
        if (!listChanged?.tools) return;
        for (const s of sessions.values()) s.server.server.sendToolListChanged().catch(() => {});
      },
      promptsChanged: () => {
        modern.notify.promptsChanged();
        if (!listChanged?.prompts) return;
        for (const s of sessions.values()) s.server.server.sendPromptListChanged().catch(() => {});
      },
      resourcesChanged: () => {
        modern.notify.resourcesChanged();
        if (!listChanged?.resources) return;
        for (const s of sessions.values()) {
          s.server.server.sendResourceListChanged().catch(() => {});
        }
      },
      resourceUpdated: (uri: string) => {
        modern.notify.resourceUpdated(uri);
        for (const s of sessions.values()) {
          if (factory.isSubscribed(s.server, uri)) {
            s.server.server.sendResourceUpdated({ uri }).catch(() => {});
          }
        }
      },
    },
  };
}
