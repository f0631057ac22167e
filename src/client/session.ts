/**
 * One client connection: transport, negotiation, and a tap below the SDK that keeps
 * every raw JSON-RPC response as received (the lossless output reads those, never the
 * SDK's reshaped objects).
 */
import {
  Client,
  SdkError,
  SdkErrorCode,
  SSEClientTransport,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { MAX_MESSAGE_BYTES } from "../workspace/message_limits.ts";
import denoConfig from "../../deno.json" with { type: "json" };
import { classify, ClientError, unreachableError } from "./errors.ts";
import { timeoutError } from "./deadline.ts";
import { settledWithin } from "../async.ts";
import type { ShownFields, Target } from "./config_file.ts";
import type { Interaction } from "./interaction.ts";
import { authorizingTransport } from "./auth/transport.ts";
import type { WmcpAuthProvider } from "./auth/provider.ts";
import { reapChild } from "../workarounds/deno_child_kill.ts";
import { shownUrl } from "./shown_url.ts";
import { terminalSafe } from "./terminal_text.ts";
import { cappedFetch, type ResponseCap } from "./response_cap.ts";
import { closedDuringDiscoverProbe } from "../workarounds/sdk_error_text.ts";
import { type ChildExit, onStdioChildExit } from "../workarounds/sdk_stdio_exit.ts";

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
}

/** A JSON-RPC message as it crossed the wire. */
export type RawMessage = Record<string, unknown>;

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
}

/** Most connect attempts when each one completed an authorization. */
const MAX_AUTHORIZED_CONNECTS = 3;
/** How many bytes of a stdio server's stderr are kept for a failure message. */
const STDERR_TAIL_BYTES = 4096;
/** How many of its last stderr lines a failure message quotes. */
const STDERR_TAIL_LINES = 12;

/**
 * The SDK's stdio transport, subclassed (a subclass makes the SDK probe `server/discover` in
 * place, on the one process, instead of on a disposable sibling), with what a failure message
 * needs: the child's pid, its exit code or signal, and a bounded tail of its stderr (which is
 * also passed through to ours with --server-logs).
 */
export class ChildTransport extends StdioClientTransport {
  /** The child's pid once spawned (kept after the SDK forgets it). */
  childPid: number | null = null;
  /** How the child ended, once it did on its own (not after we closed the connection). */
  exit: ChildExit | null = null;
  #closing = false;
  #ended = false;
  #tail = "";
  readonly #command: string;
  readonly #cwd: string | undefined;
  readonly #shown: ShownFields;

  constructor(
    target: Extract<Target, { kind: "stdio" }>,
    serverLogs: boolean,
    maxMessageBytes = MAX_MESSAGE_BYTES,
  ) {
    super({
      command: target.command,
      args: target.args,
      env: target.env === undefined ? undefined : { ...defaultEnv(), ...target.env },
      cwd: target.cwd,
      stderr: "pipe",
      // The largest response of any wmcp configuration (0022), or --max-message-bytes (0047).
      maxBufferSize: maxMessageBytes,
    });
    this.#command = target.command;
    this.#cwd = target.cwd;
    this.#shown = target.shown ?? {};
    const decoder = new TextDecoder();
    const logDecoder = new TextDecoder();
    this.stderr?.on("data", (chunk: Uint8Array | string) => {
      const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
      if (serverLogs) {
        try {
          // The server's words, shown as text: no terminal sequence of its gets through (0042).
          writeAll(
            new TextEncoder().encode(terminalSafe(logDecoder.decode(bytes, { stream: true }))),
          );
        } catch {
          // our stderr is gone: nothing to show it on
        }
      }
      this.#tail = (this.#tail + decoder.decode(bytes, { stream: true })).slice(
        -STDERR_TAIL_BYTES,
      );
    });
  }

  override async start(): Promise<void> {
    try {
      await super.start();
    } catch (err) {
      throw spawnError(err, this.#command, this.cwd, this.#shown);
    }
    this.childPid = this.pid;
    onStdioChildExit(this, (exit) => {
      this.#ended = true;
      if (!this.#closing) this.exit = exit;
    });
  }

  override close(): Promise<void> {
    this.#closing = true;
    return super.close();
  }

  /** The working directory the child was given. */
  get cwd(): string | undefined {
    return this.#cwd;
  }

  /** The last lines of the child's stderr (at most STDERR_TAIL_LINES, bounded in bytes). */
  stderrTail(): string[] {
    return this.#tail.split(/\r?\n/).filter((l) => l.trim() !== "").slice(-STDERR_TAIL_LINES);
  }

  /** Sends SIGKILL to the child if it is still there (deno_child_kill.ts). */
  kill(): void {
    if (this.childPid === null || this.#ended) return;
    this.#closing = true;
    reapChild(this.childPid);
  }
}

function writeAll(bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += Deno.stderr.writeSync(bytes.subarray(off));
}

/**
 * A spawn failure, in words: the command, and the OS reason (no such file, not executable). A
 * command or cwd that came from a `${VAR}` expansion is shown as its template and field name.
 */
function spawnError(
  err: unknown,
  command: string,
  cwd: string | undefined,
  shown: ShownFields,
): ClientError {
  const shownCommand = shown.command ?? JSON.stringify(command);
  const code = (err as { code?: unknown })?.code;
  let why = (err as Error)?.message ?? String(err);
  if (code === "ENOENT") {
    let cwdMissing = false;
    try {
      cwdMissing = cwd !== undefined && !Deno.statSync(cwd).isDirectory;
    } catch (e) {
      // Not readable here (our read permission) is not "missing": then the command is.
      cwdMissing = e instanceof Deno.errors.NotFound;
    }
    why = cwdMissing
      ? `its working directory ${shown.cwd ?? cwd} does not exist`
      : `${shownCommand} was not found (ENOENT)`;
  } else if (code === "EACCES") why = `${shownCommand} is not executable (EACCES)`;
  return new ClientError("transport", `cannot start the server: ${why}`, { cause: err });
}

/** How a stdio server that ended during connect ended, and what it last said on stderr. */
function diedMessage(t: ChildTransport, during: string): string {
  const how = t.exit?.signal
    ? `was killed by ${t.exit.signal}`
    : typeof t.exit?.code === "number"
    ? `exited with code ${t.exit.code}`
    : "closed the connection";
  const tail = t.stderrTail();
  return `the server ${how} ${during}` +
    (tail.length
      ? `; the last lines of its stderr:\n${tail.map((l) => `  ${l}`).join("\n")}`
      : "; it wrote nothing on stderr");
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

function headersOf(h: HeadersInit | undefined): Record<string, string> {
  return Object.fromEntries(new Headers(h).entries());
}

/** The environment a stdio child inherits: a short allow-list, never our secrets. */
function defaultEnv(): Record<string, string> {
  const keep = [
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "TMPDIR",
    "DENO_DIR",
    "XDG_CACHE_HOME",
  ];
  const out: Record<string, string> = {};
  for (const k of keep) {
    const v = Deno.env.get(k);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

function newClient(
  options: SessionOptions,
  mode: string,
  onElicitation: Set<() => () => void>,
): Client {
  const forcedLegacy = LEGACY_VERSIONS.includes(mode);
  const client = new Client({ name: "wmcp-client", version: denoConfig.version }, {
    capabilities: options.interaction.advertisesElicitation ? { elicitation: { form: {} } } : {},
    versionNegotiation: mode === "auto"
      ? { mode: "auto", probe: { timeoutMs: options.connectTimeoutMs } }
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

/** Whether connecting failed because the stdio server ended on the server/discover probe. */
function closedOnProbe(err: unknown, t: ChildTransport): boolean {
  return SdkError.isInstance(err) && err.code === SdkErrorCode.EraNegotiationFailed &&
    t.exit !== null && closedDuringDiscoverProbe(err);
}

/**
 * The classified error of a failed connect, naming the cause: a stdio server's exit and last
 * stderr lines, an unreachable address and the OS reason, an endpoint that speaks the older
 * HTTP+SSE transport.
 */
async function describeFailure(
  err: unknown,
  t: ChildTransport | StreamableHTTPClientTransport | SSEClientTransport,
  options: SessionOptions,
  capFailure?: ClientError,
): Promise<ClientError> {
  // A response over the message cap ended the connection below the SDK: that is the cause.
  if (capFailure !== undefined) return capFailure;
  // What failed in the authorization flow reaches us reworded (a failed negotiation probe, an
  // UnauthorizedError): the provider's own record of it is the cause to report.
  const authFailure = options.authProvider?.lastFailure;
  const e = classify(authFailure !== undefined ? authFailure : err);
  // One timeout message whichever timer fired (the SDK's connect or probe timer here).
  if (e.failure === "timeout") {
    return timeoutError({ connectTimeoutMs: options.connectTimeoutMs }, {
      timer: "connect",
      cause: err,
    });
  }
  if (err instanceof ClientError || e.failure === "auth") return e;
  const target = options.target;
  if (t instanceof ChildTransport) {
    if (t.exit === null) return e;
    // Its last stderr bytes may still be on their way through the pipe.
    await new Promise((r) => setTimeout(r, 50));
    return new ClientError("transport", diedMessage(t, "before the connection was set up"), {
      cause: err,
      details: { exitCode: t.exit.code, signal: t.exit.signal, stderrTail: t.stderrTail() },
    });
  }
  if (target.kind === "stdio") return e;
  const unreachable = unreachableError(target.url, err, undefined, target.shown?.url);
  if (unreachable !== undefined) return unreachable;
  if (target.kind === "http" && await speaksSse(target)) {
    return new ClientError(
      "transport",
      `${
        target.shown?.url ?? shownUrl(target.url)
      } speaks the older HTTP+SSE transport (MCP 2024-11-05), not Streamable ` +
        `HTTP: give the config entry "type": "sse", or use --transport sse with --endpoint`,
      { cause: err },
    );
  }
  return e;
}

/**
 * Whether the endpoint speaks the older HTTP+SSE transport: a GET answers with an event
 * stream whose first event is `endpoint`. Bounded in time and bytes; any other answer is no.
 */
async function speaksSse(target: { url: URL; headers: Record<string, string> }): Promise<boolean> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 3000);
  try {
    const res = await fetch(target.url, {
      headers: { ...target.headers, accept: "text/event-stream" },
      signal: abort.signal,
    });
    if (!res.ok || !String(res.headers.get("content-type")).includes("text/event-stream")) {
      await res.body?.cancel();
      return false;
    }
    const reader = res.body!.getReader();
    let text = "";
    const decoder = new TextDecoder();
    while (text.length < 4096) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (/\n\r?\n/.test(text)) break; // the first event is complete
    }
    await reader.cancel().catch(() => {});
    return /^event:\s*endpoint\s*$/m.test(text);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

/**
 * Answers an `elicitation/create` request that arrived although the client did not declare
 * elicitation (non-interactive): with the interaction's answer (a decline), below the SDK.
 */
function declineStray(
  message: RawMessage,
  interaction: Interaction,
  send: (m: RawMessage) => Promise<void>,
): void {
  interaction.elicit((message.params ?? {}) as never)
    .then((result) => send({ jsonrpc: "2.0", id: message.id, result }))
    .catch(() => {});
}

/** Connects and negotiates; failures are classified (transport 3, protocol 4, timeout 7). */
export async function openSession(options: SessionOptions): Promise<Session> {
  const { target, protocolVersion } = options;
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
  const onElicitation = new Set<() => () => void>();
  // The HTTP+SSE transport predates server/discover: auto means the legacy handshake there.
  const mode = protocolVersion === "auto" && target.kind !== "sse" ? "auto" : protocolVersion;
  let client = newClient(options, mode, onElicitation);
  // A response over the cap ends the connection at once (pending requests fail); the cap's
  // error is what gets reported.
  let capFailure: ClientError | undefined;
  const cap: ResponseCap = {
    maxBytes: options.maxMessageBytes ?? MAX_MESSAGE_BYTES,
    failure: "protocol",
    what: "response",
    onExceeded: (err) => {
      capFailure ??= err;
      client.close().catch(() => {});
    },
  };
  let transport = newTransport(target, options.serverLogs, cap, options.authProvider);
  // A connect that ended with a completed authorization (the HTTP+SSE stream's first GET,
  // which the SDK does not retry itself) is tried again with the new token, a bounded number
  // of times; the provider bounds the authorizations themselves.
  const connectAuthorized = async () => {
    for (let attempt = 1;; attempt++) {
      const before = options.authProvider?.completedAuthorizations ?? 0;
      try {
        return await client.connect(transport, { timeout: options.connectTimeoutMs });
      } catch (err) {
        const after = options.authProvider?.completedAuthorizations ?? 0;
        if (after === before || attempt >= MAX_AUTHORIZED_CONNECTS) throw err;
        await client.close().catch(() => {});
        client = newClient(options, mode, onElicitation);
        transport = newTransport(target, options.serverLogs, cap, options.authProvider);
      }
    }
  };
  const connectFailed = async (err: unknown, t: typeof transport): Promise<never> => {
    // What ended the connection is read before our own close can change it.
    const failure = await describeFailure(err, t, options, capFailure);
    await client.close().catch(() => {});
    if (t instanceof ChildTransport) t.kill();
    throw failure;
  };
  try {
    await connectAuthorized();
  } catch (err) {
    if (
      !(transport instanceof ChildTransport && mode === "auto" && closedOnProbe(err, transport))
    ) {
      await connectFailed(err, transport);
    }
    // The server ended when it received the server/discover probe (servers built on SDKs that
    // exit on any request before initialize): start it once more, straight into initialize.
    await client.close().catch(() => {});
    client = newClient(options, "auto", onElicitation);
    transport = newTransport(target, options.serverLogs, cap);
    try {
      await client.connect(transport, {
        timeout: options.connectTimeoutMs,
        prior: { kind: "legacy" },
      });
    } catch (again) {
      await connectFailed(again, transport);
    }
  }
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
  const responses = new Map<string | number, RawMessage>();
  const sent: Session["sent"] = [];
  const inner = transport.onmessage!;
  const send = transport.send.bind(transport);
  transport.onmessage = ((message: RawMessage, extra?: unknown) => {
    if ("id" in message && ("result" in message || "error" in message)) {
      responses.set(message.id as string | number, structuredClone(message));
    }
    if (
      message.method === "elicitation/create" && "id" in message &&
      !options.interaction.advertisesElicitation
    ) {
      // The SDK refuses a handler for a capability we did not declare and would answer -32601;
      // a server that asks anyway gets what --non-interactive promises: a decline.
      declineStray(message, options.interaction, send as (m: RawMessage) => Promise<void>);
      return;
    }
    (inner as (m: unknown, e?: unknown) => void)(message, extra);
  }) as typeof transport.onmessage;
  // Notifications (notifications/cancelled above all) are sent without being awaited by the
  // SDK; closing must not abort them in flight.
  const inFlight = new Set<Promise<void>>();
  transport.send = ((message: RawMessage, opts?: unknown) => {
    if (typeof message.method === "string") {
      sent.push({ id: message.id as string | number | undefined, method: message.method });
    }
    const p = (send as (m: unknown, o?: unknown) => Promise<void>)(message, opts);
    if (!("id" in message)) {
      const tracked = p.catch(() => {}).finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
    }
    return p;
  }) as typeof transport.send;

  return {
    client,
    era,
    protocolVersion: version,
    responses,
    sent,
    sendsToolHeaders: era === "modern" && target.kind === "http",
    onElicitation,
    failure: () => capFailure,
    close: async () => {
      await settledWithin(Promise.allSettled([...inFlight]), 1000);
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
        // A legacy HTTP session is ended explicitly (DELETE), not left to expire.
        await transport.terminateSession().catch(() => {});
      }
      await client.close().catch(() => {});
      // The SDK's close ends stdin, waits, SIGTERMs, waits, then SIGKILLs; under Deno the
      // last step does nothing (src/workarounds/deno_child_kill.ts), so make sure it is gone.
      if (transport instanceof ChildTransport) transport.kill();
    },
  };
}
