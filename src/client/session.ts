/**
 * One client connection: transport, negotiation, and a tap below the SDK that keeps
 * every raw JSON-RPC response as received (the lossless output reads those, never the
 * SDK's reshaped objects).
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { MAX_MESSAGE_BYTES } from "../workspace/message_limits.ts";
import denoConfig from "../../deno.json" with { type: "json" };
import { classify, ClientError } from "./errors.ts";
import { timeoutError } from "./deadline.ts";
import { settledWithin } from "../async.ts";
import type { Target } from "./config_file.ts";
import type { Interaction } from "./interaction.ts";

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
   * Called when the client starts answering an elicitation (a person may be typing); the
   * returned function is called when the answer is done. Request timers hold meanwhile.
   */
  onElicitation: Set<() => () => void>;
  /** Closes the connection; a stdio child is stopped with escalation. */
  close(): Promise<void>;
}

function transportFor(target: Target, serverLogs: boolean) {
  if (target.kind === "http") {
    return new StreamableHTTPClientTransport(target.url, {
      requestInit: { headers: target.headers },
    });
  }
  return new StdioClientTransport({
    command: target.command,
    args: target.args,
    env: target.env === undefined ? undefined : { ...defaultEnv(), ...target.env },
    cwd: target.cwd,
    stderr: serverLogs ? "inherit" : "ignore",
    maxBufferSize: MAX_MESSAGE_BYTES, // the largest response of any wmcp configuration (0022)
  });
}

/**
 * Deno's `node:child_process` marks a child as signalled as soon as `kill()` is called, even
 * when the child ignores the signal. The SDK's reaper of the disposable `server/discover`
 * probe sibling (stdio, `auto` mode) sends SIGTERM, then skips its SIGKILL because the child
 * "has a signal code", and awaits an exit that never comes: a server that ignores SIGTERM
 * hangs the connect forever. Escalate to SIGKILL ourselves when the reaper has not finished
 * shortly after its own one-second grace (a child not yet exited has not been reaped, so its
 * pid cannot have been reused).
 */
const SIBLING_KILL_AFTER_MS = 1500;
{
  const proto = StdioClientTransport.prototype as unknown as {
    _dispose?: (this: StdioClientTransport) => Promise<void>;
  };
  const reap = proto._dispose;
  if (typeof reap === "function") {
    proto._dispose = async function (this: StdioClientTransport) {
      const pid = this.pid;
      let done = false;
      const timer = setTimeout(() => {
        if (done || !pid) return;
        try {
          Deno.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }, SIBLING_KILL_AFTER_MS);
      try {
        await reap.call(this);
      } finally {
        done = true;
        clearTimeout(timer);
      }
    };
  }
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
  const client = new Client({ name: "wmcp-client", version: denoConfig.version }, {
    capabilities: options.interaction.advertisesElicitation ? { elicitation: { form: {} } } : {},
    versionNegotiation: protocolVersion === "auto"
      ? { mode: "auto", probe: { timeoutMs: options.connectTimeoutMs } }
      : forcedLegacy
      ? { mode: "legacy" }
      : { mode: { pin: protocolVersion } },
    ...(forcedLegacy ? { supportedProtocolVersions: [protocolVersion] } : {}),
    inputRequired: {
      autoFulfill: options.interaction.advertisesElicitation,
      maxRounds: options.maxInputRounds,
    },
    listMaxPages: 0,
  });
  const onElicitation = new Set<() => () => void>();
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
  const transport = transportFor(target, options.serverLogs);
  // Remember a stdio child's pid as soon as it exists: the SDK forgets it when connecting fails.
  let childPid: number | null = null;
  if (transport instanceof StdioClientTransport) {
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      childPid = transport.pid;
    };
  }
  const killChild = () => {
    if (childPid === null) return;
    try {
      Deno.kill(childPid, "SIGKILL");
    } catch {
      // already exited
    }
  };
  try {
    await client.connect(transport, { timeout: options.connectTimeoutMs });
  } catch (err) {
    await client.close().catch(() => {});
    killChild();
    const e = classify(err);
    // One timeout message whichever timer fired (the SDK's connect or probe timer here).
    throw e.failure === "timeout"
      ? timeoutError({ connectTimeoutMs: options.connectTimeoutMs }, {
        timer: "connect",
        cause: err,
      })
      : e;
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
  transport.onmessage = ((message: RawMessage, extra?: unknown) => {
    if ("id" in message && ("result" in message || "error" in message)) {
      responses.set(message.id as string | number, structuredClone(message));
    }
    (inner as (m: unknown, e?: unknown) => void)(message, extra);
  }) as typeof transport.onmessage;
  const send = transport.send.bind(transport);
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
    onElicitation,
    close: async () => {
      await settledWithin(Promise.allSettled([...inFlight]), 1000);
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
        // A legacy HTTP session is ended explicitly (DELETE), not left to expire.
        await transport.terminateSession().catch(() => {});
      }
      await client.close().catch(() => {});
      // The SDK's close ends stdin, waits, SIGTERMs, waits, then SIGKILLs; under Deno the
      // last step does nothing, so make sure the child is gone.
      killChild();
    },
  };
}
