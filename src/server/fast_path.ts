/**
 * The fast path of the common modern-era (2026-07-28) requests: `tools/call` of a tool that needs
 * no input from the client (ToolSpec.fastPath: the read tools), `tools/list` and
 * `server/discover`, answered without a per-request McpServer, transport or wire codec. It only
 * takes a request it can prove the SDK path would serve (every ladder rung passes: envelope,
 * standard headers, Mcp-Param headers, known tool of the caller's view, no progressToken, no
 * requestState or inputResponses, no `__proto__` key) and answers it with the result the SDK
 * path would send. Anything else is "not mine" (undefined) and goes to the SDK path unchanged,
 * which owns every error answer. Used by the HTTP handler (http.ts) and the stdio server
 * (stdio_fast.ts); proven the same by tests/server/fast_path_test.ts. See docs/decisions/0034.
 */
import {
  type AuthInfo,
  classifyInboundRequest,
  type McpRequestContext,
  SERVER_INFO_META_KEY,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { CallContext, ToolSpec } from "./definition.ts";
import { type FastInternals, isReadOnlyCaller } from "./factory.ts";
import { page } from "./paging.ts";
import { mayHoldProtoKey } from "../workarounds/proto_key.ts";
import {
  CAPABILITIES_KEY,
  CLIENT_INFO_KEY,
  FAST_PATH_REVISION,
  isEchoableId,
  PROTOCOL_KEY,
} from "./envelope.ts";

export { FAST_PATH_REVISION };
/** The only `_meta` keys a fast request may carry (anything else, a progressToken included, is the SDK's). */
const ENVELOPE_KEYS = new Set([PROTOCOL_KEY, CLIENT_INFO_KEY, CAPABILITIES_KEY]);
const BASE64_SENTINEL = "=?base64?";
/** Most distinct envelopes whose validity is remembered (then the memo starts over). */
const MAX_ENVELOPES = 256;

/** What a fast request is sent with besides its body. */
export interface FastRequestContext {
  /** The HTTP request headers; absent on stdio (no header layer there). */
  headers?: Headers;
  /** What the bearer token grants; absent without tokens and on stdio. */
  authInfo?: AuthInfo;
}

/** A request the fast path took: run it to get the JSON-RPC response message. */
export interface FastCall {
  /** The JSON-RPC id of the request. */
  id: string | number;
  /** Whether this is a tools/call (it runs a tool; the others answer at once). */
  toolCall: boolean;
  /**
   * Serves the request. Resolves with the response message, or null when the signal aborted
   * first (cancelled or closed: the SDK path sends nothing for such a request either).
   */
  run(signal: AbortSignal): Promise<Record<string, unknown> | null>;
}

/** The fast path of one handler or stdio connection. */
export interface FastPath {
  /**
   * The request (one JSON-RPC message as text: an HTTP body or a stdio line) as a fast call, or
   * undefined when the SDK path must serve it ("not mine").
   */
  take(text: string, context: FastRequestContext): FastCall | undefined;
}

/** One `x-mcp-header` declaration of a tool's input schema: a top-level argument. */
interface ParamHeader {
  /** The header to compare, lower case (`mcp-param-<name>`). */
  header: string;
  /** The argument it mirrors. */
  argument: string;
}

/** A tool the fast path may call, with its Mcp-Param declarations. */
interface FastTool {
  spec: ToolSpec;
  params: readonly ParamHeader[];
}

type Plain = Record<string, unknown>;

function isPlain(value: unknown): value is Plain {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * The Mcp-Param declarations of an input schema, or null when it declares one the fast path does
 * not read (anywhere but on a top-level string property).
 */
function paramHeadersOf(schema: Plain): ParamHeader[] | null {
  const text = JSON.stringify(schema);
  const total = text.split('"x-mcp-header"').length - 1;
  const out: ParamHeader[] = [];
  const properties = isPlain(schema.properties) ? schema.properties : {};
  for (const [argument, property] of Object.entries(properties)) {
    if (!isPlain(property) || !("x-mcp-header" in property)) continue;
    const name = property["x-mcp-header"];
    if (typeof name !== "string" || property.type !== "string") return null;
    out.push({ header: `mcp-param-${name.toLowerCase()}`, argument });
  }
  return out.length === total ? out : null;
}

/**
 * The result stamps of the modern wire encoding: resultType and `_meta` serverInfo. `_meta` leads
 * when the result has one, as after the SDK's result-schema parse (same bytes on the wire).
 */
function stamped(result: Plain, serverInfo: Plain, extra: Plain = {}): Plain {
  const ordered = "_meta" in result ? { _meta: result._meta, ...result } : result;
  const out: Plain = "resultType" in ordered
    ? { ...ordered, ...extra }
    : { ...ordered, resultType: "complete", ...extra };
  const meta = out._meta;
  if (meta === undefined) out._meta = { [SERVER_INFO_META_KEY]: serverInfo };
  else if (isPlain(meta) && meta[SERVER_INFO_META_KEY] === undefined) {
    out._meta = { ...meta, [SERVER_INFO_META_KEY]: serverInfo };
  }
  return out;
}

function toolError(message: string): Plain {
  return { content: [{ type: "text", text: message }], isError: true };
}

function issueText(issue: { message: string; path?: readonly unknown[] }): string {
  if (!issue.path?.length) return issue.message;
  return `${
    issue.path.map((p) => String(typeof p === "object" && p !== null ? (p as Plain).key : p))
      .join(".")
  }: ${issue.message}`;
}

/**
 * What McpServer's tools/call does with a handler's result: output validation (a failure is a
 * tool error naming it), else the result as it is (fast tools have object output schemas and
 * text content, so the wire projection leaves it unchanged).
 */
async function checkedOutput(tool: ToolSpec, result: Plain): Promise<Plain> {
  if (tool.outputSchema === undefined || result.isError) return result;
  if (result.structuredContent === undefined) {
    return toolError(
      `Output validation error: Tool ${tool.name} has an output schema but no structured content was provided`,
    );
  }
  const checked = await tool.outputSchema["~standard"].validate(result.structuredContent);
  if (checked.issues && checked.issues.length > 0) {
    return toolError(
      `Output validation error: Invalid structured content for tool ${tool.name}: ${
        checked.issues.map(issueText).join(", ")
      }`,
    );
  }
  return result;
}

/** The SDK's handler context, as much of it as a fast tool reads (see ToolSpec.fastPath). */
function fastContext(
  id: string | number,
  meta: Plain,
  signal: AbortSignal,
  authInfo: AuthInfo | undefined,
): ServerContext {
  return {
    mcpReq: {
      id,
      method: "tools/call",
      _meta: meta,
      envelope: meta,
      signal,
      requestState: () => undefined,
      inputResponses: undefined,
      notify: () => Promise.reject(new Error("the fast path sends no notifications")),
    },
    ...(authInfo === undefined ? {} : { http: { authInfo } }),
  } as unknown as ServerContext;
}

/** A JSON-RPC request the fast path may take, after the checks every method shares. */
interface FastRequest {
  id: string | number;
  method: unknown;
  params: Plain;
  /** The request's `_meta`: the modern envelope and nothing else. */
  meta: Plain;
  /** The HTTP request headers; absent on stdio. */
  headers: Headers | undefined;
  authInfo: AuthInfo | undefined;
  /** Whether the caller gets the read view. */
  readOnly: boolean;
}

/**
 * The request in a message's text, when it is one JSON-RPC request of the fast path's revision
 * with only the standard members and an id the SDK path would echo as it is; else undefined.
 */
function parseRequest(
  text: string,
): { id: string | number; method: unknown; params: Plain } | undefined {
  // Legacy traffic and the `__proto__` workaround's cases (proto_key.ts) are the SDK's.
  if (!text.includes(FAST_PATH_REVISION) || mayHoldProtoKey(text)) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlain(message)) return undefined;
  for (const key in message) {
    if (key !== "jsonrpc" && key !== "id" && key !== "method" && key !== "params") {
      return undefined;
    }
  }
  const { id, method, params } = message;
  if (message.jsonrpc !== "2.0" || !isPlain(params)) return undefined;
  if (!isEchoableId(id)) return undefined;
  return { id, method, params };
}

/** The fast tools of a view: fast-path tools with object output and Mcp-Param headers it reads. */
function fastToolsOf(internals: FastInternals, readOnly: boolean): Map<string, FastTool> {
  const out = new Map<string, FastTool>();
  for (const spec of internals.view(readOnly).tools.values()) {
    if (spec.fastPath !== true) continue;
    const output = spec.outputSchema?.["~standard"].jsonSchema.output();
    if (output !== undefined && output.type !== "object") continue;
    const params = paramHeadersOf(spec.inputSchema["~standard"].jsonSchema.input());
    if (params !== null) out.set(spec.name, { spec, params });
  }
  return out;
}

/** Whether the headers of a tools/call carry what the SDK path checks them against. */
function callHeadersMatch(headers: Headers, name: string, tool: FastTool, args?: Plain): boolean {
  if (headers.get("mcp-name") !== name || name.startsWith(BASE64_SENTINEL)) return false;
  for (const p of tool.params) {
    const value = args?.[p.argument];
    if (value === undefined || value === null) continue;
    if (
      typeof value !== "string" || value.startsWith(BASE64_SENTINEL) ||
      headers.get(p.header) !== value
    ) return false;
  }
  return true;
}

/** The JSON-RPC response message of a result. */
function answer(id: string | number, result: Plain): Plain {
  return { result, jsonrpc: "2.0", id };
}

/** A fast call whose answer is ready at once (nothing runs). */
function readyCall(id: string | number, message: Plain): FastCall {
  return {
    id,
    toolCall: false,
    run: (signal) => Promise.resolve(signal.aborted ? null : message),
  };
}

/** The fast path over a server factory's shared parts (see the module doc). */
class FastPathTaker implements FastPath {
  readonly #internals: FastInternals;
  readonly #toolsOf: { all: Map<string, FastTool>; read: Map<string, FastTool> };
  /** Envelope validity by its JSON text, decided once by the SDK's own classifier. */
  readonly #envelopes = new Map<string, boolean>();

  constructor(internals: FastInternals) {
    this.#internals = internals;
    this.#toolsOf = { all: fastToolsOf(internals, false), read: fastToolsOf(internals, true) };
  }

  take(text: string, context: FastRequestContext): FastCall | undefined {
    const request = this.#request(text, context);
    if (request === undefined) return undefined;
    switch (request.method) {
      case "tools/call":
        return this.#toolCall(request);
      case "tools/list":
        return this.#toolsList(request);
      case "server/discover":
        return this.#discover(request);
      default:
        return undefined;
    }
  }

  /** The request with its envelope and standard headers checked, or undefined. */
  #request(text: string, context: FastRequestContext): FastRequest | undefined {
    const parsed = parseRequest(text);
    if (parsed === undefined) return undefined;
    const meta = parsed.params._meta;
    if (!isPlain(meta) || meta[PROTOCOL_KEY] !== FAST_PATH_REVISION) return undefined;
    for (const key in meta) if (!ENVELOPE_KEYS.has(key)) return undefined;
    const { headers, authInfo } = context;
    if (headers !== undefined) {
      if (
        headers.get("mcp-protocol-version") !== FAST_PATH_REVISION ||
        headers.get("mcp-method") !== parsed.method
      ) return undefined;
    }
    const readOnly = isReadOnlyCaller(
      authInfo === undefined ? undefined : { era: "modern", authInfo } as McpRequestContext,
    );
    return { ...parsed, meta, headers, authInfo, readOnly };
  }

  #validEnvelope(meta: Plain): boolean {
    const key = JSON.stringify(meta);
    let ok = this.#envelopes.get(key);
    if (ok === undefined) {
      const outcome = classifyInboundRequest({
        httpMethod: "POST",
        protocolVersionHeader: FAST_PATH_REVISION,
        mcpMethodHeader: "tools/list",
        body: { jsonrpc: "2.0", id: 0, method: "tools/list", params: { _meta: meta } },
      } as never) as { kind: string };
      ok = outcome.kind === "modern";
      if (this.#envelopes.size >= MAX_ENVELOPES) this.#envelopes.clear();
      this.#envelopes.set(key, ok);
    }
    return ok;
  }

  #toolCall(request: FastRequest): FastCall | undefined {
    const { id, params, headers, meta } = request;
    const { name, arguments: args } = params;
    for (const key in params) {
      if (key !== "name" && key !== "arguments" && key !== "_meta") return undefined;
    }
    if (typeof name !== "string" || (args !== undefined && !isPlain(args))) return undefined;
    const tool = (request.readOnly ? this.#toolsOf.read : this.#toolsOf.all).get(name);
    if (tool === undefined) return undefined;
    if (headers !== undefined && !callHeadersMatch(headers, name, tool, args)) return undefined;
    if (!this.#validEnvelope(meta)) return undefined;
    return {
      id,
      toolCall: true,
      run: (signal) => this.#runTool(tool.spec, args ?? {}, request, signal),
    };
  }

  /** Runs a fast tool as McpServer's tools/call would; null when the signal aborted first. */
  async #runTool(
    spec: ToolSpec,
    args: Plain,
    request: FastRequest,
    signal: AbortSignal,
  ): Promise<Plain | null> {
    const { id, meta } = request;
    const call: CallContext = {
      ctx: fastContext(id, meta, signal, request.authInfo),
      requestState: this.#internals.requestState,
      clientCapabilities: meta[CAPABILITIES_KEY] as CallContext["clientCapabilities"],
      readOnly: request.readOnly,
      protocolVersion: FAST_PATH_REVISION,
    };
    let result: Plain;
    try {
      result = await this.#internals.track(
        (async () => await spec.handler(args, call) as Plain)(),
      );
      result = await checkedOutput(spec, result);
    } catch (err) {
      result = toolError(err instanceof Error ? err.message : String(err));
    }
    return signal.aborted ? null : answer(id, stamped(result, this.#internals.serverInfo));
  }

  #toolsList(request: FastRequest): FastCall | undefined {
    const { id, params, headers, meta } = request;
    for (const key in params) if (key !== "cursor" && key !== "_meta") return undefined;
    const cursor = params.cursor;
    if (cursor !== undefined && typeof cursor !== "string") return undefined;
    if (headers?.has("mcp-name")) return undefined;
    if (!this.#validEnvelope(meta)) return undefined;
    const { pageSize, listHint, serverInfo } = this.#internals;
    const { toolList } = this.#internals.view(request.readOnly);
    let listed: Plain;
    try {
      listed = page("tools", "tools", toolList, cursor, pageSize);
    } catch {
      return undefined; // an invalid cursor: the SDK path answers -32602
    }
    const hint = { ttlMs: listHint.ttlMs, cacheScope: listHint.cacheScope };
    return readyCall(id, answer(id, stamped(listed, serverInfo, hint)));
  }

  #discover(request: FastRequest): FastCall | undefined {
    const { id, params, headers, meta } = request;
    for (const key in params) if (key !== "_meta") return undefined;
    if (headers?.has("mcp-name")) return undefined;
    const own = this.#internals.view(request.readOnly).discover();
    if (own === undefined || !this.#validEnvelope(meta)) return undefined;
    // The SDK's modern entry adds the revisions it serves to the instance's list before
    // it answers (installDiscoverHandler); the fast path serves exactly this one.
    const discovered = { ...own, supportedVersions: [FAST_PATH_REVISION] };
    const hint = { ttlMs: 0, cacheScope: "private" };
    return readyCall(id, answer(id, stamped(discovered, this.#internals.serverInfo, hint)));
  }
}

/** Creates the fast path over a server factory's shared parts. */
export function createFastPath(internals: FastInternals): FastPath {
  return new FastPathTaker(internals);
}
