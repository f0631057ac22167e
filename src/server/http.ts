/**
 * The Streamable HTTP MCP handler: a pure `(Request) => Promise<Response>` (a hono app's
 * fetch). The guards are named middleware, one file each under ./http/guards, and run in the
 * order written below: the checks that need no body first (Host, Origin, bearer token, method
 * and content type), then the body under a size cap and a time limit; the SDK then checks the
 * protocol headers. Modern (2026-07-28) requests are served statelessly; an `initialize` opens a
 * legacy session (./http/legacy_sessions.ts). See docs/decisions/0015. The common modern
 * requests are answered by the fast path (./fast_path.ts, decision 0034) after the same guards;
 * what it does not take goes to the SDK with the body already read.
 */
import { type Context, Hono } from "hono";
import process from "node:process";
import {
  createMcpHandler,
  isLegacyRequest,
  type ServerNotifier,
} from "@modelcontextprotocol/server";
import type { Workspace } from "../workspace/workspace.ts";
import { requestCapFor } from "../workspace/message_limits.ts";
import type { ServerDefinition } from "./definition.ts";
import { createServerFactory, type ServerFactory } from "./factory.ts";
import { createFastPath, type FastPath } from "./fast_path.ts";
import { fastResponse } from "./http/fast_response.ts";
import { type HttpEnv, jsonRpcError } from "./http/context.ts";
import { commitAtFirstFrame } from "../workarounds/sse_first_frame.ts";
import { bearerAuth } from "./http/guards/auth.ts";
import { corsGuard } from "./http/guards/cors.ts";
import {
  bodyLimit,
  bodyRequest,
  BUFFERED_BODIES_PER_CAP,
  createBodyBudget,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
} from "./http/guards/body.ts";
import { hostGuard, LOOPBACK_HOSTS } from "./http/guards/host.ts";
import { methodGuard } from "./http/guards/method.ts";
import { originGuard } from "./http/guards/origin.ts";
import {
  createLegacySessions,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_MS,
  DEFAULT_UNUSED_SESSION_MS,
  type LegacySessions,
} from "./http/legacy_sessions.ts";
import { instanceNameProblem, withInstanceHeader } from "./http/instance.ts";
import { TimerList } from "./http/timer_list.ts";

export {
  BUFFERED_BODIES_PER_CAP,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_MS,
  DEFAULT_UNUSED_SESSION_MS,
  LOOPBACK_HOSTS,
};

/** A well-formed /healthz identity challenge: 32 to 128 lowercase hex digits. */
const CHALLENGE = /^[0-9a-f]{32,128}$/;

/** Options of the HTTP handler. */
export interface HttpHandlerOptions {
  /** Serve the workspace tools on this workspace. Exactly one of workspace and definition. */
  workspace?: Workspace;
  /**
   * Serve this server definition instead (same guards, era routing and sessions; internal,
   * not a stable surface).
   * @ignore
   */
  definition?: ServerDefinition;
  /** Path of the MCP endpoint. Default "/mcp". */
  endpoint?: string;
  /** Host names accepted besides the loopback names (no port; IPv6 in brackets). */
  allowedHosts?: string[];
  /** Origins accepted besides loopback origins, exactly (scheme://host[:port]). */
  allowedOrigins?: string[];
  /** Bearer token every MCP request must carry; none means no authentication. */
  token?: string;
  /** Several accepted read-write bearer tokens, each identifying one client (with or instead of token). */
  tokens?: string[];
  /**
   * Accepted read-only bearer tokens, each identifying one client: a request carrying one sees
   * and may call only the read tools (tools annotated `readOnlyHint: true`).
   */
  readTokens?: string[];
  /**
   * Largest request body (bytes). Default: the workspace's request cap, 6 x maxWriteBytes + 64 KiB
   * (src/workspace/message_limits.ts); a smaller value makes writes under maxWriteBytes 413.
   */
  maxBodyBytes?: number;
  /** Longest time a request body may take to arrive in full (ms). Default 30 s. */
  bodyTimeoutMs?: number;
  /**
   * Most bytes of request bodies being read and handled at once, all requests together (503
   * with `Retry-After` past it). Default 2 x maxBodyBytes; at least maxBodyBytes.
   */
  maxBufferedBodyBytes?: number;
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
  /** A legacy session never used after its initialize is closed this long after it (ms). Default 60 s. */
  unusedSessionMs?: number;
  /** The clock of the session table (ms since the epoch); injectable for tests. */
  now?: () => number;
  /** SSE keep-alive interval (ms). Default 15000. */
  keepAliveMs?: number;
  /**
   * Answers a /healthz identity challenge (`?challenge=HEX`) with a proof (the pid file's HMAC,
   * see src/server/pid_file.ts); undefined when this server has nothing to prove.
   */
  healthProof?: (challenge: string) => string | undefined;
  /** Called with out-of-band errors (logged to stderr by the entry). */
  onError?: (err: Error) => void;
  /**
   * This instance's tag behind a balancer, 1 to 32 of [a-z0-9-]: legacy session ids become
   * `NAME.<uuid>` and every response carries `Wmcp-Instance: NAME` (docs/decisions/0037).
   */
  instance?: string;
  /**
   * Whether the fast path (src/server/fast_path.ts) answers the common modern requests it can
   * prove the SDK path would answer the same way (default true). False sends every request
   * through the SDK; the differential tests compare the two. Internal, not a stable surface.
   * @ignore
   */
  fastPath?: boolean;
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
   * How many requests the fast path has answered (for the differential tests).
   * @ignore
   */
  fastPathTaken: () => number;
  /**
   * Announces list and resource changes: to the modern subscriptions/listen streams that asked
   * for them and to every legacy session (for the lists whose listChanged the definition declares).
   * @ignore
   */
  notify: ServerNotifier;
}

/**
 * Creates the guarded Streamable HTTP handler for a workspace (or any server definition).
 *
 * @example Serve a workspace on a free loopback port (run with --unstable-no-legacy-abort)
 * ```ts
 * import { createHttpHandler, Workspace } from "@wmcp/wmcp";
 *
 * const workspace = await Workspace.open({ root: "." });
 * const handler = createHttpHandler({ workspace });
 * const server = Deno.serve({ hostname: "127.0.0.1", port: 0 }, handler.fetch);
 * // ... clients use http://127.0.0.1:${server.addr.port}/mcp ...
 * await handler.close();
 * await server.shutdown();
 * ```
 */
export function createHttpHandler(options: HttpHandlerOptions): HttpHandler {
  const settings = settingsOf(options);
  const factory = createServerFactory({
    workspace: options.workspace,
    definition: options.definition,
    pageSize: options.pageSize,
    requestStateKey: options.requestStateKey,
    confirmationTtlSeconds: options.confirmationTtlSeconds,
    authenticated: settings.tokens.length + settings.readTokens.length > 0,
  });
  const mcp = new McpEndpoint(options, settings, factory);
  const app = guardedApp(options, settings, mcp);
  const instance = settings.instance;
  return {
    fetch: instance === undefined
      ? (request: Request) => Promise.resolve(app.fetch(request))
      : async (request: Request) => withInstanceHeader(await app.fetch(request), instance),
    close: () => mcp.close(),
    closeIdleStreams: () => mcp.legacy.closeIdleStreams(),
    sessionCount: () => mcp.legacy.size(),
    fastPathTaken: () => mcp.taken,
    notify: notifierOf(mcp, factory),
  };
}

/** What the handler derives from its options, each checked (RangeError) in this order. */
interface HandlerSettings {
  endpoint: string;
  maxBody: number;
  maxBuffered: number;
  keepAliveMs: number;
  instance: string | undefined;
  /** The read-write bearer tokens (`token` and `tokens`). */
  tokens: string[];
  readTokens: string[];
}

function settingsOf(options: HttpHandlerOptions): HandlerSettings {
  const endpoint = options.endpoint ?? "/mcp";
  const maxBody = options.maxBodyBytes ??
    (options.workspace ? requestCapFor(options.workspace.limits) : DEFAULT_MAX_BODY_BYTES);
  const maxBuffered = options.maxBufferedBodyBytes ?? BUFFERED_BODIES_PER_CAP * maxBody;
  if (!Number.isSafeInteger(maxBuffered) || maxBuffered < maxBody) {
    throw new RangeError(
      `maxBufferedBodyBytes must be an integer of at least maxBodyBytes (${maxBody})`,
    );
  }
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const instance = options.instance;
  const instanceProblem = instance === undefined ? undefined : instanceNameProblem(instance);
  if (instanceProblem !== undefined) throw new RangeError(`instance must be ${instanceProblem}`);
  const tokens = [
    ...(options.token === undefined ? [] : [options.token]),
    ...(options.tokens ?? []),
  ];
  const readTokens = [...(options.readTokens ?? [])];
  const shared = tokens.filter((t) => readTokens.includes(t));
  if (shared.length > 0) {
    throw new RangeError("a bearer token cannot be both read-write and read-only");
  }
  return { endpoint, maxBody, maxBuffered, keepAliveMs, instance, tokens, readTokens };
}

/**
 * The MCP endpoint behind the guards: the fast path of the common modern requests, the SDK's
 * stateless modern handler for the rest, and the legacy session table.
 */
class McpEndpoint {
  readonly modern: ReturnType<typeof createMcpHandler>;
  readonly legacy: LegacySessions;
  /** How many requests the fast path has answered. */
  taken = 0;
  readonly #factory: ServerFactory;
  readonly #maxBody: number;
  readonly #keepAliveMs: number;
  readonly #fast: FastPath | undefined;
  readonly #fastInflight = new Set<AbortController>();
  /** The fast tool calls' keep-alive deadlines, on one timer (timer_list.ts). */
  readonly #firstFrame: TimerList;
  readonly #bodyText = new TextDecoder();
  #closed = false;

  constructor(options: HttpHandlerOptions, settings: HandlerSettings, factory: ServerFactory) {
    const { maxBody, keepAliveMs, tokens, readTokens } = settings;
    const onError = options.onError ?? (() => {});
    this.#factory = factory;
    this.#maxBody = maxBody;
    this.#keepAliveMs = keepAliveMs;
    this.#firstFrame = new TimerList(keepAliveMs);
    this.modern = createMcpHandler(factory, {
      legacy: "reject",
      responseMode: "sse",
      keepAliveMs,
      maxRequestBodySize: maxBody,
      onerror: onError,
    });
    this.legacy = createLegacySessions({
      factory,
      maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
      clients: Math.max(1, new Set([...tokens, ...readTokens]).size),
      sessionIdleMs: options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS,
      unusedSessionMs: options.unusedSessionMs ?? DEFAULT_UNUSED_SESSION_MS,
      maxBodyBytes: maxBody,
      keepAliveMs,
      now: options.now ?? Date.now,
      onError,
      instance: settings.instance,
    });
    // The fast path of the common modern requests; everything it does not take goes to `modern`.
    this.#fast = options.fastPath === false ? undefined : createFastPath(factory.fast);
  }

  /** Serves one request that passed every guard (its body already read). */
  async serve(c: Context<HttpEnv>): Promise<Response> {
    const raw = c.req.raw;
    // Protocol headers are checked by the SDK before it dispatches (modern: version,
    // Mcp-Method, Mcp-Name, Mcp-Param-*; legacy: MCP-Protocol-Version, session).
    // authInfo (what the token grants) picks the factory's tool view for this request, or for
    // the legacy session an initialize opens (a session is bound to the token that opened it).
    const authInfo = c.get("authInfo");
    const body = c.get("body");
    const fast = this.#fast;
    if (fast !== undefined && body !== undefined && !this.#closed && !raw.signal.aborted) {
      const call = fast.take(this.#bodyText.decode(body), { headers: raw.headers, authInfo });
      if (call !== undefined) {
        this.taken++;
        return await fastResponse(call, raw.signal, {
          keepAliveMs: this.#keepAliveMs,
          firstFrame: this.#firstFrame,
          inflight: this.#fastInflight,
        });
      }
    }
    const req = bodyRequest(raw, body);
    if (await isLegacyRequest(req, undefined, { maxRequestBodySize: this.#maxBody })) {
      return await this.legacy.serve(req, c.get("client"), authInfo);
    }
    return await commitAtFirstFrame(
      await this.modern.fetch(req, authInfo === undefined ? undefined : { authInfo }),
    );
  }

  /** Aborts the fast calls and modern exchanges, closes the sessions, lets calls unwind. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const call of this.#fastInflight) call.abort();
    this.#fastInflight.clear();
    await this.modern.close();
    await this.legacy.close();
    // Cancelled operations stop within 100 ms; let them finish unwinding (and log) first.
    await this.#factory.settled(2000);
  }
}

/** The hono app: the guards in order, /healthz, the MCP endpoint, JSON-RPC 404 and 500. */
function guardedApp(
  options: HttpHandlerOptions,
  settings: HandlerSettings,
  mcp: McpEndpoint,
): Hono<HttpEnv> {
  const { endpoint, maxBody } = settings;
  const app = new Hono<HttpEnv>();
  // The guards, in order, on every request (never per connection). Nothing reads a byte of the
  // body before every check that needs none has passed: Host and Origin on every route, then
  // on the MCP endpoint the token, the method and content type, and last the body itself.
  app.use(
    "*",
    hostGuard({ allowedHosts: options.allowedHosts }),
    originGuard(options),
    corsGuard(), // an allowed Origin's preflight is answered here, before the token is asked
  );
  app.use(
    endpoint,
    bearerAuth({ tokens: settings.tokens, readTokens: settings.readTokens }),
    methodGuard(),
    bodyLimit({
      maxBytes: maxBody,
      timeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
      budget: createBodyBudget(settings.maxBuffered),
    }),
  );
  app.get("/healthz", (c) => {
    const challenge = c.req.query("challenge");
    const proof = challenge !== undefined && CHALLENGE.test(challenge)
      ? options.healthProof?.(challenge)
      : undefined;
    return c.json({ status: "ok", pid: process.pid, ...(proof === undefined ? {} : { proof }) });
  });
  app.all(endpoint, (c) => mcp.serve(c));
  app.notFound(() => jsonRpcError(404, { code: -32601, message: "Not found" }));
  const onError = options.onError ?? (() => {});
  app.onError((err) => {
    onError(err);
    return jsonRpcError(500, { code: -32603, message: "Internal error" });
  });
  return app;
}

/**
 * The change announcer: the SDK's modern notifier for subscriptions/listen streams, and every
 * legacy session for the lists whose listChanged the definition declares (a resource's update
 * to the sessions that subscribed to it).
 */
function notifierOf(mcp: McpEndpoint, factory: ServerFactory): ServerNotifier {
  const { modern, legacy } = mcp;
  const listChanged = factory.compiled.definition.listChanged;
  return {
    toolsChanged: () => {
      modern.notify.toolsChanged();
      if (!listChanged?.tools) return;
      for (const s of legacy.servers()) s.server.sendToolListChanged().catch(() => {});
    },
    promptsChanged: () => {
      modern.notify.promptsChanged();
      if (!listChanged?.prompts) return;
      for (const s of legacy.servers()) s.server.sendPromptListChanged().catch(() => {});
    },
    resourcesChanged: () => {
      modern.notify.resourcesChanged();
      if (!listChanged?.resources) return;
      for (const s of legacy.servers()) {
        s.server.sendResourceListChanged().catch(() => {});
      }
    },
    resourceUpdated: (uri: string) => {
      modern.notify.resourceUpdated(uri);
      for (const s of legacy.servers()) {
        if (factory.isSubscribed(s, uri)) {
          s.server.sendResourceUpdated({ uri }).catch(() => {});
        }
      }
    },
  };
}
