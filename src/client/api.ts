/**
 * The MCP tool client as a library: `connect()` to a stdio command or a Streamable HTTP
 * endpoint (or an in-process handler's fetch), then list and call tools. A thin facade over the
 * session and commands the `tools` CLI uses (same negotiation, validation and timeouts).
 */
import type { Target } from "./config_file.ts";
import type { Session } from "./session.ts";
import { ClientError } from "./errors.ts";

/** Where to connect: a stdio server to start, or a Streamable HTTP endpoint. */
export type ConnectTarget =
  | {
    /** The command that starts a stdio MCP server (as a child process). */
    command: string;
    /** Its arguments. */
    args?: string[];
    /** Extra environment (on top of a short allow-list: PATH, HOME, ...). */
    env?: Record<string, string>;
    /** Its working directory. */
    cwd?: string;
  }
  | {
    /** The Streamable HTTP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
    url: string | URL;
    /** Headers sent with every request (e.g. `Authorization`). */
    headers?: Record<string, string>;
    /** Sends the requests instead of the global fetch, e.g. an in-process handler's fetch. */
    fetch?: (request: Request) => Promise<Response>;
  };

/** Options of {@linkcode connect}. */
export interface ConnectOptions {
  /** "auto" (default), "2026-07-28", or one initialization-era revision such as "2025-11-25". */
  protocolVersion?: string;
  /** Connect (and negotiation) timeout in ms. Default 10000. */
  connectTimeoutMs?: number;
  /** Show a stdio server's stderr on ours. Default false. */
  serverLogs?: boolean;
}

/** A tool as the server lists it (the MCP `Tool` object, as received). */
export interface ListedTool {
  /** The tool's name. */
  name: string;
  /** What it does. */
  description?: string;
  /** JSON Schema of its arguments. */
  inputSchema: Record<string, unknown>;
  /** JSON Schema of its structuredContent, when declared. */
  outputSchema?: Record<string, unknown>;
  /** Behaviour hints (readOnlyHint, destructiveHint, ...). */
  annotations?: Record<string, unknown>;
  /** Any other member the server sent. */
  [key: string]: unknown;
}

/** A tools/call result as received (an MCP `CallToolResult`). */
export interface ToolResult {
  /** Content blocks (text, image, audio, resource, ...). */
  content: Record<string, unknown>[];
  /** The typed result, when the tool declares an outputSchema. */
  structuredContent?: Record<string, unknown>;
  /** True when the tool failed; the content says why. */
  isError?: boolean;
  /** Any other member the server sent (`_meta`, ...). */
  [key: string]: unknown;
}

/** Options of one tool call. */
export interface ToolCallOptions {
  /** Inactivity timeout in ms (progress notifications reset it). Default 60000. */
  timeoutMs?: number;
  /** Cancels the call (a notifications/cancelled is sent). */
  signal?: AbortSignal;
  /** Receives the call's progress notifications. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/** An open connection to one MCP server. */
export interface McpClient {
  /** "modern" (2026-07-28, stateless) or "legacy" (initialization era). */
  readonly era: "modern" | "legacy";
  /** The negotiated protocol revision. */
  readonly protocolVersion: string;
  /** Every tool, all pages followed. */
  listTools(options?: { signal?: AbortSignal }): Promise<ListedTool[]>;
  /**
   * Calls a tool. Arguments are checked against its inputSchema when the tool was listed. A tool
   * failure is a result with `isError: true`; a transport, protocol or timeout failure throws a
   * ClientError.
   */
  callTool(
    name: string,
    args?: Record<string, unknown>,
    options?: ToolCallOptions,
  ): Promise<ToolResult>;
  /** Closes the connection (a stdio server is stopped). */
  close(): Promise<void>;
  /** Same as close(), for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Default connect timeout (ms). */
const CONNECT_TIMEOUT_MS = 10_000;
/** Default inactivity timeout of a call (ms). */
const CALL_TIMEOUT_MS = 60_000;
/** Most tools/list pages followed. */
const MAX_PAGES = 100;
/** Most input_required rounds per call. */
const MAX_INPUT_ROUNDS = 8;

/**
 * Connects to an MCP server and negotiates its revision. Failures throw a ClientError whose
 * `failure` says why (transport, protocol, timeout, usage).
 *
 * @example Call a tool of a wmcp stdio server
 * ```ts
 * import { connect } from "@wmcp/wmcp";
 *
 * const client = await connect({
 *   command: "deno",
 *   args: ["run", "-A", "serve_stdio.ts", "--root", "."],
 * });
 * try {
 *   const tools = await client.listTools();
 *   const info = await client.callTool("workspace_info", {});
 *   console.log(tools.length, info.structuredContent);
 * } finally {
 *   await client.close();
 * }
 * ```
 */
export async function connect(
  target: ConnectTarget,
  options: ConnectOptions = {},
): Promise<McpClient> {
  const modules = await loadModules();
  const session = await modules.session.openSession({
    target: toTarget(target),
    protocolVersion: options.protocolVersion ?? "auto",
    interaction: modules.interaction.nonInteractive(),
    maxInputRounds: MAX_INPUT_ROUNDS,
    connectTimeoutMs: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    serverLogs: options.serverLogs === true,
  });
  return clientOver(session, modules);
}

/** The client modules connect() uses, loaded on its first call. */
interface Modules {
  session: typeof import("./session.ts");
  commands: typeof import("./commands.ts");
  interaction: typeof import("./interaction.ts");
  warnings: typeof import("../workarounds/sdk_console_warn.ts");
}

/**
 * Loads the client modules. Loaded on first use: the SDK's stdio client reads the environment
 * as it loads (cross-spawn), which would make importing the library need env permission.
 */
async function loadModules(): Promise<Modules> {
  const [session, commands, interaction, warnings] = await Promise.all([
    import("./session.ts"),
    import("./commands.ts"),
    import("./interaction.ts"),
    import("../workarounds/sdk_console_warn.ts"),
  ]);
  return { session, commands, interaction, warnings };
}

/** The McpClient over an open session. */
function clientOver(session: Session, modules: Modules): McpClient {
  const { callTool: callOnSession, flatten, listToolsPages } = modules.commands;
  const known = new Map<string, Record<string, unknown>>();
  const warmHeaderMirroring = headerMirroring(session, modules);
  const listTools = async (o: { signal?: AbortSignal } = {}) => {
    const pages = await listToolsPages(session, { maxPages: MAX_PAGES, signal: o.signal });
    const tools = flatten(pages, { headers: false }).map((t) => t.tool as ListedTool);
    for (const tool of tools) known.set(tool.name, tool);
    await warmHeaderMirroring();
    return tools;
  };
  const callTool = async (
    name: string,
    args: Record<string, unknown> = {},
    o: ToolCallOptions = {},
  ): Promise<ToolResult> => {
    await warmHeaderMirroring();
    const outcome = await callOnSession(session, name, args, {
      timeoutMs: o.timeoutMs ?? CALL_TIMEOUT_MS,
      signal: o.signal ?? new AbortController().signal,
      skipLocalValidation: false,
      returnInputRequired: false,
      tool: known.get(name),
      onWarning: () => {},
      onProgress: o.onProgress,
    });
    if (outcome.error) throw outcome.error;
    return outcome.envelope.mcpResult as ToolResult;
  };
  return {
    era: session.era,
    protocolVersion: session.protocolVersion,
    listTools,
    callTool,
    close: () => session.close(),
    [Symbol.asyncDispose]: () => session.close(),
  };
}

/**
 * The SDK mirrors x-mcp-header arguments into Mcp-Param-* headers only for tools its own
 * client.listTools() has seen; without that a call with such an argument is refused (400)
 * and retried. Warmed once, as the tools CLI does (a failure only costs that retry).
 */
function headerMirroring(session: Session, modules: Modules): () => Promise<void> {
  let mirroring: Promise<void> | undefined;
  return () => {
    if (!session.sendsToolHeaders) return Promise.resolve();
    mirroring ??= modules.warnings.withoutSdkToolExclusionWarnings(async () => {
      await session.client.listTools().catch(() => {});
    });
    return mirroring;
  };
}

/** The session's Target of a ConnectTarget; a target that names neither is a usage error. */
function toTarget(t: ConnectTarget): Target {
  if ("command" in t) {
    if (typeof t.command !== "string" || t.command === "") {
      throw new ClientError("usage", "connect: command must be a non-empty string");
    }
    return {
      kind: "stdio",
      command: t.command,
      args: t.args ?? [],
      env: t.env,
      cwd: t.cwd,
      label: t.command,
    };
  }
  if (!("url" in t)) throw new ClientError("usage", "connect: give a command or a url");
  const url = URL.canParse(String(t.url)) ? new URL(t.url) : null;
  if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new ClientError(
      "usage",
      `connect: ${JSON.stringify(String(t.url))} is not an http(s) URL`,
    );
  }
  const send = t.fetch;
  return {
    kind: "http",
    url,
    headers: t.headers ?? {},
    label: url.href,
    fetch: send && ((request) => send(withHost(request))),
  };
}

/**
 * The request with a Host header (the URL's host) when it has none: a Request built in process
 * has none, and the HTTP handler's Host guard refuses a request without one.
 */
function withHost(request: Request): Request {
  if (request.headers.has("host")) return request;
  const headers = new Headers(request.headers);
  headers.set("host", new URL(request.url).host);
  return new Request(request, { headers });
}
