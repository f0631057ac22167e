/**
 * One client connection: the transport of the target, negotiation, the connect attempts (again
 * after an authorization; once more straight into initialize when a stdio server ended on the
 * discover probe), and the tap below the SDK (tap.ts) that keeps every raw JSON-RPC response as
 * received (the lossless output reads those, never the SDK's reshaped objects). The stdio child
 * is child_transport.ts; why a connect failed, in words, connect_failure.ts.
 */
import {
  Client,
  SSEClientTransport,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { MAX_MESSAGE_BYTES } from "../workspace/message_limits.ts";
import denoConfig from "../../deno.json" with { type: "json" };
import { ClientError } from "./errors.ts";
import { abortedBy, SDK_TIMEOUT_SLACK_MS, startConnectDeadline } from "./deadline.ts";
import { settledWithin } from "../async.ts";
import type { Target } from "./config_file.ts";
import type { Interaction } from "./interaction.ts";
import { authorizingTransport } from "./auth/transport.ts";
import type { WmcpAuthProvider } from "./auth/provider.ts";
import { cappedFetch, type ResponseCap } from "./response_cap.ts";
import { ChildTransport } from "./child_transport.ts";
import { closedOnProbe, connectionGone, describeFailure, serverEnded } from "./connect_failure.ts";
import { type RawMessage, type Tap, tapTransport } from "./tap.ts";

export type { RawMessage } from "./tap.ts";

/** The modern revision. */
export const MODERN_VERSION = "2026-07-28";
/** Initialization-era revisions the client can force. */
export const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/** How to connect. */
export interface SessionOptions {
  target: Target;
  /** "auto" or one exact revision (never falls back). */
  protocolVersion: string;
  /** How elicitations are answered (decides whether elicitation is advertised). */
  interaction: Interaction;
  /** Most input_required rounds per call. */
  maxInputRounds: number;
  /** Connect/probe timeout (ms). */
  connectTimeoutMs: number;
  /** Show a stdio server's stderr on ours. */
  serverLogs: boolean;
  /**
   * MCP authorization for an HTTP target (used only when the target carries no Authorization
   * header of its own: a static token wins).
   */
  authProvider?: WmcpAuthProvider;
  /**
   * Most bytes of one message from the server (stdio line, HTTP JSON body, SSE event); default
   * MAX_MESSAGE_BYTES (decision 0047).
   */
  maxMessageBytes?: number;
  /**
   * The run's interruption (Ctrl-C): it ends a connect that waits for a sign-in, which the
   * connect timer no longer bounds (class timeout).
   */
  signal?: AbortSignal;
}

/** An open connection. */
export interface Session {
  client: Client;
  era: "modern" | "legacy";
  protocolVersion: string;
  /** Raw responses by request id, as received. */
  responses: Map<string | number, RawMessage>;
  /** Requests sent, in order (method and id). */
  sent: { id?: string | number; method: string }[];
  /**
   * Whether tool-defined headers (`x-mcp-header` → `Mcp-Param-*`) are sent on this connection:
   * only Streamable HTTP in the modern era. Their validity is checked only then.
   */
  sendsToolHeaders: boolean;
  /**
   * Called when the client starts answering an elicitation (a person may be typing); the
   * returned function is called when the answer is done. Request timers hold meanwhile.
   */
  onElicitation: Set<() => () => void>;
  /** Closes the connection; a stdio child is stopped with escalation. */
  close(): Promise<void>;
  /**
   * What ended the connection below the SDK, if anything did (a response over the message cap):
   * the error to report instead of the SDK's "connection closed".
   */
  failure(): ClientError | undefined;
  /**
   * Why a request failed when `err` says the connection was gone and the server is a stdio child
   * that ended on its own (it exited, or was killed, while connected): its exit code or signal
   * and the last lines of its stderr, instead of the SDK's bare "Connection closed". Undefined
   * otherwise (the client closed it, an HTTP server, any other error).
   */
  ended(err: unknown, method: string): Promise<ClientError | undefined>;
}

/** Most connect attempts when each one completed an authorization. */
const MAX_AUTHORIZED_CONNECTS = 3;

/**
 * The SDK's connect and probe timers where the client's own connect timer governs: beyond the
 * connect timeout plus the longest the run's sign-ins may hold it, so that they never decide.
 */
function sdkConnectMs(connectTimeoutMs: number, provider: WmcpAuthProvider): number {
  return connectTimeoutMs + provider.signInBoundMs + SDK_TIMEOUT_SLACK_MS;
}

/**
 * The HTTP transport of target. Every request goes through one capped fetch (response_cap.ts):
 * MCP responses are bounded by `cap`; with an auth provider, the authorization flow's documents
 * by AUTH_RESPONSE_BYTES.
 */
function httpTransportFor(
  target: Extract<Target, { kind: "http" | "sse" }>,
  cap: ResponseCap,
  authProvider?: WmcpAuthProvider,
) {
  if (authProvider && !hasAuthorization(target.headers)) {
    return authorizingTransport(target, authProvider, cap);
  }
  if (target.kind === "sse") {
    const headers = target.headers;
    return new SSEClientTransport(target.url, {
      requestInit: { headers },
      // The stream's GET goes through fetch too: the same headers (a token) on it.
      fetch: cappedFetch(
        (url, init) =>
          fetch(url, { ...init, headers: { ...headersOf(init?.headers), ...headers } }),
        () => cap,
      ),
    });
  }
  const send = target.fetch;
  const base: typeof fetch = send ? (url, init) => send(new Request(url, init)) : fetch;
  return new StreamableHTTPClientTransport(target.url, {
    requestInit: { headers: target.headers },
    fetch: cappedFetch(base, () => cap),
  });
}

/** Whether static headers already authorize (a bearer token given by flag or config). */
function hasAuthorization(headers: Record<string, string>): boolean {
  return Object.keys(headers).some((k) => k.toLowerCase() === "authorization");
}

/** A HeadersInit as a plain record. */
function headersOf(h: HeadersInit | undefined): Record<string, string> {
  return Object.fromEntries(new Headers(h).entries());
}

/**
 * An SDK client for one connect attempt: its negotiation mode, capabilities, elicitation. The
 * SDK's probe timer is `probeTimeoutMs` (the connect timeout, or the SDK's backstop where the
 * client's own connect timer governs: sdkConnectMs).
 */
function newClient(
  options: SessionOptions,
  mode: string,
  onElicitation: Set<() => () => void>,
  probeTimeoutMs = options.connectTimeoutMs,
): Client {
  const forcedLegacy = LEGACY_VERSIONS.includes(mode);
  const client = new Client({ name: "wmcp-client", version: denoConfig.version }, {
    capabilities: options.interaction.advertisesElicitation ? { elicitation: { form: {} } } : {},
    versionNegotiation: mode === "auto"
      ? { mode: "auto", probe: { timeoutMs: probeTimeoutMs } }
      : forcedLegacy
      ? { mode: "legacy" }
      : { mode: { pin: mode } },
    ...(forcedLegacy ? { supportedProtocolVersions: [mode] } : {}),
    inputRequired: {
      autoFulfill: options.interaction.advertisesElicitation,
      maxRounds: options.maxInputRounds,
    },
    listMaxPages: 0,
  });
  if (options.interaction.advertisesElicitation) {
    client.setRequestHandler("elicitation/create", async (req) => {
      const done = [...onElicitation].map((start) => start());
      try {
        return await options.interaction.elicit(req.params as never) as never;
      } finally {
        for (const end of done) end();
      }
    });
  }
  return client;
}

/** The transport of target: a stdio child, or HTTP (Streamable or HTTP+SSE) through the cap. */
function newTransport(
  target: Target,
  serverLogs: boolean,
  cap: ResponseCap,
  authProvider?: WmcpAuthProvider,
) {
  return target.kind === "stdio"
    ? new ChildTransport(target, serverLogs, cap.maxBytes)
    : httpTransportFor(target, cap, authProvider);
}

/** Any transport the client builds. */
type AnyTransport = ReturnType<typeof newTransport>;

/** Connects and negotiates; failures are classified (transport 3, protocol 4, timeout 7). */
export async function openSession(options: SessionOptions): Promise<Session> {
  const { target, protocolVersion } = options;
  checkProtocolVersion(target, protocolVersion);
  // The HTTP+SSE transport predates server/discover: auto means the legacy handshake there.
  const mode = protocolVersion === "auto" && target.kind !== "sse" ? "auto" : protocolVersion;
  const connection = new Connection(options, mode);
  await connection.connect();
  const { client, transport } = connection;
  const era = client.getProtocolEra() === "modern" ? "modern" : "legacy";
  const version = client.getNegotiatedProtocolVersion() ?? "unknown";
  if (protocolVersion !== "auto" && version !== protocolVersion) {
    await client.close().catch(() => {});
    throw new ClientError(
      "protocol",
      `the server negotiated ${version}, not the forced ${protocolVersion}`,
    );
  }
  // The tap: raw responses below the SDK, and the requests we send.
  const tap = tapTransport(transport, options.interaction);
  return {
    client,
    era,
    protocolVersion: version,
    responses: tap.responses,
    sent: tap.sent,
    sendsToolHeaders: era === "modern" && target.kind === "http",
    onElicitation: connection.onElicitation,
    failure: () => connection.capFailure,
    ended: (err, method) =>
      transport instanceof ChildTransport && connectionGone(err)
        ? serverEnded(transport, `before it answered ${method}`, err)
        : Promise.resolve(undefined),
    close: () => closeSession(client, transport, tap),
  };
}

/** Refuses a --protocol-version the client cannot force, or one the transport cannot carry. */
function checkProtocolVersion(target: Target, protocolVersion: string): void {
  const forcedLegacy = LEGACY_VERSIONS.includes(protocolVersion);
  if (protocolVersion !== "auto" && protocolVersion !== MODERN_VERSION && !forcedLegacy) {
    throw new ClientError(
      "usage",
      `--protocol-version must be auto, ${MODERN_VERSION} or one of ${LEGACY_VERSIONS.join(", ")}`,
    );
  }
  if (target.kind === "sse" && protocolVersion === MODERN_VERSION) {
    throw new ClientError(
      "usage",
      `the HTTP+SSE transport carries only the initialization era; ${MODERN_VERSION} needs ` +
        "Streamable HTTP or stdio",
    );
  }
}

/**
 * The SDK client and transport being connected, replaced by fresh ones when a connect is tried
 * again (after an authorization; a stdio server that ended on the discover probe), and the
 * response cap they share.
 */
class Connection {
  client: Client;
  transport: AnyTransport;
  /** What ended the connection below the SDK (a response over the cap): the first such error. */
  capFailure: ClientError | undefined;
  /** Called when the client starts answering an elicitation (Session.onElicitation). */
  readonly onElicitation = new Set<() => () => void>();
  readonly #options: SessionOptions;
  readonly #mode: string;
  readonly #cap: ResponseCap;

  constructor(options: SessionOptions, mode: string) {
    this.#options = options;
    this.#mode = mode;
    this.client = this.#newClient();
    // A response over the cap ends the connection at once (pending requests fail); the cap's
    // error is what gets reported. During the server/discover probe the SDK client holds no
    // transport yet (its close would end nothing, and the probe, answered on an SSE stream,
    // would wait for the connect timer): the transport itself is closed then, which ends it.
    this.#cap = {
      maxBytes: options.maxMessageBytes ?? MAX_MESSAGE_BYTES,
      failure: "protocol",
      what: "response",
      onExceeded: (err) => {
        this.capFailure ??= err;
        if (this.client.transport !== undefined) this.client.close().catch(() => {});
        else this.transport.close().catch(() => {});
      },
    };
    this.transport = this.#newTransport(options.authProvider);
  }

  /** Connects, or throws the classified error of why it could not. */
  async connect(): Promise<void> {
    try {
      await this.#connectAuthorized();
    } catch (err) {
      const t = this.transport;
      if (!(t instanceof ChildTransport && this.#mode === "auto" && closedOnProbe(err, t))) {
        await this.#failed(err);
      }
      await this.#connectWithoutProbe();
    }
  }

  /**
   * A connect that ended with a completed authorization (the HTTP+SSE stream's first GET,
   * which the SDK does not retry itself) is tried again with the new token, a bounded number
   * of times; the provider bounds the authorizations themselves.
   */
  async #connectAuthorized(): Promise<void> {
    const { authProvider } = this.#options;
    for (let attempt = 1;; attempt++) {
      const before = authProvider?.completedAuthorizations ?? 0;
      try {
        return await this.#connectOnce();
      } catch (err) {
        const after = authProvider?.completedAuthorizations ?? 0;
        if (after === before || attempt >= MAX_AUTHORIZED_CONNECTS) throw err;
        await this.client.close().catch(() => {});
        this.client = this.#newClient();
        this.transport = this.#newTransport(authProvider);
      }
    }
  }

  /**
   * One connect under the connect timer. Where a sign-in may happen (an authorizing transport),
   * the timer is the client's own (startConnectDeadline): it holds while a sign-in waits for its
   * Redirector, a person at the browser, whose wait the sign-in timeout bounds; the SDK's
   * timers are set beyond both (sdkConnectMs) and never decide. Elsewhere it is the SDK's.
   */
  async #connectOnce(): Promise<void> {
    const { connectTimeoutMs } = this.#options;
    const provider = this.#signInProvider();
    if (provider === undefined) {
      return await this.client.connect(this.transport, { timeout: connectTimeoutMs });
    }
    const deadline = startConnectDeadline(connectTimeoutMs, this.#options.signal);
    const hold = () => deadline.hold();
    provider.onSignIn.add(hold);
    const connecting = this.client.connect(this.transport, {
      timeout: sdkConnectMs(connectTimeoutMs, provider),
    });
    try {
      await Promise.race([connecting, abortedBy(deadline.signal)]);
    } finally {
      // Past the connect timer, the attempt is abandoned (#failed closes it): its end is not news.
      connecting.catch(() => {});
      provider.onSignIn.delete(hold);
      deadline.dispose();
    }
  }

  /** The provider whose sign-ins this connection's transport may start, if any. */
  #signInProvider(): WmcpAuthProvider | undefined {
    const { authProvider, target } = this.#options;
    if (authProvider === undefined || target.kind === "stdio") return undefined;
    return hasAuthorization(target.headers) ? undefined : authProvider;
  }

  /** An SDK client for the next attempt (its probe timer: the connect timer's backstop). */
  #newClient(mode = this.#mode): Client {
    const provider = this.#signInProvider();
    const probeMs = provider === undefined
      ? this.#options.connectTimeoutMs
      : sdkConnectMs(this.#options.connectTimeoutMs, provider);
    return newClient(this.#options, mode, this.onElicitation, probeMs);
  }

  /**
   * The server ended when it received the server/discover probe (servers built on SDKs that
   * exit on any request before initialize): start it once more, straight into initialize.
   */
  async #connectWithoutProbe(): Promise<void> {
    await this.client.close().catch(() => {});
    this.client = this.#newClient("auto");
    this.transport = this.#newTransport(undefined);
    try {
      await this.client.connect(this.transport, {
        timeout: this.#options.connectTimeoutMs,
        prior: { kind: "legacy" },
      });
    } catch (again) {
      await this.#failed(again);
    }
  }

  /** A transport for the next attempt, sharing the connection's cap. */
  #newTransport(authProvider: WmcpAuthProvider | undefined): AnyTransport {
    const { target, serverLogs } = this.#options;
    return newTransport(target, serverLogs, this.#cap, authProvider);
  }

  /** Closes what a failed connect left and throws the error naming its cause. */
  async #failed(err: unknown): Promise<never> {
    const t = this.transport;
    // What ended the connection is read before our own close can change it; an interrupted
    // connect was ended by the person, whatever the attempt reports.
    const failure = this.#options.signal?.aborted
      ? new ClientError("timeout", "cancelled before the connection was set up", { cause: err })
      : await describeFailure(err, t, this.#options, this.capFailure);
    await this.client.close().catch(() => {});
    if (t instanceof ChildTransport) t.kill();
    throw failure;
  }
}

/** Closes an open session: notifications in flight first, a legacy HTTP session's DELETE, the child. */
async function closeSession(client: Client, transport: AnyTransport, tap: Tap): Promise<void> {
  await settledWithin(Promise.allSettled([...tap.inFlight]), 1000);
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
    // A legacy HTTP session is ended explicitly (DELETE), not left to expire.
    await transport.terminateSession().catch(() => {});
  }
  await client.close().catch(() => {});
  // The SDK's close ends stdin, waits, SIGTERMs, waits, then SIGKILLs; under Deno the
  // last step does nothing (src/workarounds/deno_child_kill.ts), so make sure it is gone.
  if (transport instanceof ChildTransport) transport.kill();
}
