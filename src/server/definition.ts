/**
 * What one MCP server serves, independent of the transport and of the workspace: its tools, and
 * what an extension adds to every McpServer (the workspace server's empty resource and prompt
 * lists, empty_lists.ts). A definition is compiled once (`compileDefinition`): the wire tool list
 * is precomputed and frozen, so the per-request factory (factory.ts) builds nothing but the
 * McpServer and its handler closures.
 */
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type InputRequiredResult,
  type McpServer,
  type RequestStateCodec,
  type ServerCapabilities,
  type ServerContext,
  type StandardSchemaV1,
  type ToolAnnotations,
} from "@modelcontextprotocol/server";

/** The validate function of a Standard Schema. */
export type StandardValidate = StandardSchemaV1["~standard"]["validate"];

/** A Standard Schema whose JSON Schema is computed once, frozen, and handed out as is. */
export interface CachedSchema {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: StandardValidate;
    readonly jsonSchema: {
      readonly input: () => Record<string, unknown>;
      readonly output: () => Record<string, unknown>;
    };
  };
}

/** Freezes a value and everything it holds. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Lets any value through (the handler validates, so errors are typed its way). */
export const passThrough: StandardValidate = (value) => ({ value });

/** Wraps a JSON Schema (and an optional validator) as a schema the SDK accepts, computed once. */
export function cachedSchema(
  json: Record<string, unknown>,
  validate: StandardValidate = passThrough,
  vendor = "wmcp",
): CachedSchema {
  const frozen = deepFreeze(structuredClone(json));
  return Object.freeze({
    "~standard": Object.freeze({
      version: 1 as const,
      vendor,
      validate,
      jsonSchema: Object.freeze({ input: () => frozen, output: () => frozen }),
    }),
  });
}

/** The input schema of a tool without arguments. */
export const NO_ARGUMENTS: CachedSchema = cachedSchema({ type: "object", properties: {} });

/** What every handler of a definition receives besides its arguments. */
export interface CallContext {
  /** The SDK's request context: progress token, signal, inputResponses, requestState, log. */
  ctx: ServerContext;
  /** The McpServer serving this request; absent when the fast path (fast_path.ts) serves it. */
  server?: McpServer;
  /** The protocol revision of this request (the modern era's, or what initialize negotiated). */
  protocolVersion: string | undefined;
  /**
   * Seals `requestState` for an input_required result. The factory verifies every echoed
   * state with the same key before a handler runs (tampered or expired: -32602), and
   * `ctx.mcpReq.requestState()` then returns the payload.
   */
  requestState: RequestStateCodec<unknown>;
  /** The capabilities the client declared for this request (envelope, or initialize). */
  clientCapabilities: ClientCapabilities | undefined;
  /** True when the caller may use only the read tools (a read-only bearer token). */
  readOnly: boolean;
}

/** What a tool handler returns. */
export type ToolOutcome = CallToolResult | InputRequiredResult;

/** One tool. */
export interface ToolSpec {
  name: string;
  title?: string;
  description?: string;
  /** Validation (by the SDK, before the handler) and the advertised JSON Schema. */
  inputSchema: CachedSchema;
  /** Validates structuredContent; advertised as outputSchema. */
  outputSchema?: CachedSchema;
  annotations?: ToolAnnotations;
  _meta?: Record<string, unknown>;
  handler: (args: Record<string, unknown>, call: CallContext) => ToolOutcome | Promise<ToolOutcome>;
  /**
   * The fast path (fast_path.ts) may serve this tool without an McpServer: its handler reads only
   * its arguments, `ctx.mcpReq.signal`, `ctx.mcpReq.requestState()` (always undefined there),
   * `readOnly` and `protocolVersion`; never asks the client for input (no input_required) and
   * never throws. Default false: the SDK path serves it.
   */
  fastPath?: boolean;
}

/** One serving unit's McpServer, as a definition's extension installs its handlers on it. */
export interface ServingUnit {
  /** The McpServer of one HTTP request, legacy HTTP session or stdio connection. */
  server: McpServer;
  /** Whether it serves one modern-era (2026-07-28) request. */
  modern: boolean;
  /** Page size of the lists. */
  pageSize: number;
  /** The CallContext a handler of this server receives with a request's SDK context. */
  callOf(ctx: ServerContext): CallContext;
}

/**
 * What a definition serves besides its tools (internal, not a stable surface): the workspace
 * server's empty resource and prompt lists (empty_lists.ts), or a test fixture's resources and
 * prompts. Its capabilities are declared after construction, so McpServer installs (and the
 * extension replaces) none of its own resource and prompt handlers.
 */
export interface ServerExtension {
  /** The capabilities declared besides `tools`. */
  capabilities: ServerCapabilities;
  /** The list methods besides tools/list whose modern-era results carry the list cache hint. */
  cachedLists: readonly string[];
  /** Installs the extension's request handlers on one serving unit's McpServer. */
  install(unit: ServingUnit): void;
  /** Whether an initialization-era server subscribed to a resource URI (resources/updated). */
  isSubscribed?(server: McpServer, uri: string): boolean;
}

/** Everything one server serves. */
export interface ServerDefinition {
  name: string;
  version: string;
  instructions?: string;
  /** Instructions for a read-only caller (the read view); default `instructions`. */
  readOnlyInstructions?: string;
  tools: readonly ToolSpec[];
  /** What it serves besides tools (capabilities and their request handlers). */
  extension?: ServerExtension;
  /**
   * Declares `listChanged` for these lists; the serving entry then announces changes
   * (HttpHandler.notify: subscriptions/listen streams and legacy sessions).
   */
  listChanged?: { tools?: boolean; prompts?: boolean; resources?: boolean };
}

/** A definition with its wire tool list computed once. */
export interface CompiledDefinition {
  definition: ServerDefinition;
  tools: readonly ToolSpec[];
  toolList: readonly Readonly<Record<string, unknown>>[];
}

/** The entries of a record whose value is defined. */
export function defined(entries: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));
}

/** One tool as tools/list shows it, frozen. */
function wireTool(t: ToolSpec): Readonly<Record<string, unknown>> {
  return deepFreeze(defined({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: structuredClone(t.inputSchema["~standard"].jsonSchema.input()),
    outputSchema: t.outputSchema
      ? structuredClone(t.outputSchema["~standard"].jsonSchema.output())
      : undefined,
    annotations: t.annotations ? structuredClone(t.annotations) : undefined,
    _meta: t._meta ? structuredClone(t._meta) : undefined,
  }));
}

/** Compiles a definition once; throws on duplicate tool names. */
export function compileDefinition(definition: ServerDefinition): CompiledDefinition {
  const seen = new Set<string>();
  for (const { name } of definition.tools) {
    if (seen.has(name)) throw new Error(`duplicate tool ${JSON.stringify(name)}`);
    seen.add(name);
  }
  return Object.freeze({
    definition,
    tools: Object.freeze([...definition.tools]),
    toolList: Object.freeze(definition.tools.map(wireTool)),
  });
}

/** The client capabilities that apply to a request: its envelope (modern) or initialize (legacy). */
export function clientCapabilitiesOf(
  server: McpServer,
  ctx: ServerContext,
): ClientCapabilities | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return (envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined) ??
    server.server.getClientCapabilities();
}
