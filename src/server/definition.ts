/**
 * What one MCP server serves, independent of the transport and of the workspace: tools,
 * resources, resource templates, prompts, completions, logging and resource subscriptions.
 * A definition is compiled once (`compileDefinition`): wire lists are precomputed and
 * frozen, look-ups are maps and URI templates are parsed, so the per-request factory
 * (factory.ts) builds nothing but the McpServer and its handler closures.
 */
import {
  type CacheHint,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type GetPromptResult,
  type InputRequiredResult,
  type McpServer,
  type PromptArgument,
  type ReadResourceResult,
  type RequestStateCodec,
  type ServerContext,
  type StandardSchemaV1,
  type ToolAnnotations,
  UriTemplate,
  type Variables,
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

/** Completion values for one argument or template variable. */
export type Completer = (
  value: string,
  context: { arguments?: Record<string, string> } | undefined,
) => string[] | Promise<string[]>;

/** One direct resource. */
export interface ResourceSpec {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  /** Cache hint for its resources/read results on the modern era. */
  cacheHint?: CacheHint;
  read: (
    uri: URL,
    call: CallContext,
  ) => ReadResourceResult | InputRequiredResult | Promise<ReadResourceResult | InputRequiredResult>;
}

/** One resource template (RFC 6570 level 1-4 as the SDK's UriTemplate parses it). */
export interface ResourceTemplateSpec {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  cacheHint?: CacheHint;
  /** Completion of template variables, by variable name. */
  complete?: Record<string, Completer>;
  read: (
    uri: URL,
    variables: Variables,
    call: CallContext,
  ) => ReadResourceResult | InputRequiredResult | Promise<ReadResourceResult | InputRequiredResult>;
}

/** One prompt. */
export interface PromptSpec {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
  /** Completion of arguments, by argument name. */
  complete?: Record<string, Completer>;
  get: (
    args: Record<string, string>,
    call: CallContext,
  ) => GetPromptResult | InputRequiredResult | Promise<GetPromptResult | InputRequiredResult>;
}

/** Everything one server serves. Omitted families are not declared as capabilities. */
export interface ServerDefinition {
  name: string;
  version: string;
  instructions?: string;
  /** Instructions for a read-only caller (the read view); default `instructions`. */
  readOnlyInstructions?: string;
  tools: readonly ToolSpec[];
  /** Declares `resources` (an empty list still declares it). */
  resources?: readonly ResourceSpec[];
  resourceTemplates?: readonly ResourceTemplateSpec[];
  /** Declares `prompts` (an empty list still declares it). */
  prompts?: readonly PromptSpec[];
  /** Declares `completions`: answers from the prompts' and templates' `complete` callbacks. */
  completions?: boolean;
  /** Declares `logging`: logging/setLevel (initialization era) and `ctx.mcpReq.log`. */
  logging?: boolean;
  /** Declares `resources.subscribe`: resources/subscribe and /unsubscribe of known URIs. */
  resourceSubscriptions?: boolean;
  /**
   * Declares `listChanged` for these lists; the serving entry then announces changes
   * (HttpHandler.notify: subscriptions/listen streams and legacy sessions).
   */
  listChanged?: { tools?: boolean; prompts?: boolean; resources?: boolean };
}

/** A resource template with its parsed URI template. */
export interface CompiledTemplate {
  spec: ResourceTemplateSpec;
  template: UriTemplate;
}

/** A definition with its wire lists and look-ups computed once. */
export interface CompiledDefinition {
  definition: ServerDefinition;
  tools: readonly ToolSpec[];
  toolList: readonly Readonly<Record<string, unknown>>[];
  resourceList: readonly Readonly<Record<string, unknown>>[] | undefined;
  templateList: readonly Readonly<Record<string, unknown>>[] | undefined;
  promptList: readonly Readonly<Record<string, unknown>>[] | undefined;
  resourceByUri: ReadonlyMap<string, ResourceSpec>;
  templates: readonly CompiledTemplate[];
  templateByPattern: ReadonlyMap<string, CompiledTemplate>;
  promptByName: ReadonlyMap<string, PromptSpec>;
}

function defined(entries: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));
}

/** The canonical form of a resource URI (as `new URL(...).href` spells it), or null. */
export function canonicalUri(uri: string): string | null {
  try {
    return new URL(uri).href;
  } catch {
    return null;
  }
}

/** Compiles a definition once; throws on duplicate names or malformed URIs. */
export function compileDefinition(definition: ServerDefinition): CompiledDefinition {
  const unique = (kind: string, names: string[]) => {
    const seen = new Set<string>();
    for (const n of names) {
      if (seen.has(n)) throw new Error(`duplicate ${kind} ${JSON.stringify(n)}`);
      seen.add(n);
    }
  };
  unique("tool", definition.tools.map((t) => t.name));
  unique("prompt", (definition.prompts ?? []).map((p) => p.name));
  unique("resource template", (definition.resourceTemplates ?? []).map((t) => t.name));

  const toolList = definition.tools.map((t) =>
    deepFreeze(defined({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: structuredClone(t.inputSchema["~standard"].jsonSchema.input()),
      outputSchema: t.outputSchema
        ? structuredClone(t.outputSchema["~standard"].jsonSchema.output())
        : undefined,
      annotations: t.annotations ? structuredClone(t.annotations) : undefined,
      _meta: t._meta ? structuredClone(t._meta) : undefined,
    }))
  );

  const resourceByUri = new Map<string, ResourceSpec>();
  for (const r of definition.resources ?? []) {
    const key = canonicalUri(r.uri);
    if (key === null) throw new Error(`resource URI ${JSON.stringify(r.uri)} is not a URI`);
    if (resourceByUri.has(key)) throw new Error(`duplicate resource ${JSON.stringify(r.uri)}`);
    resourceByUri.set(key, r);
  }
  const templates = (definition.resourceTemplates ?? []).map((spec) => ({
    spec,
    template: new UriTemplate(spec.uriTemplate),
  }));
  const hasResources = definition.resources !== undefined ||
    definition.resourceTemplates !== undefined || definition.resourceSubscriptions === true;

  return Object.freeze({
    definition,
    tools: Object.freeze([...definition.tools]),
    toolList: Object.freeze(toolList),
    resourceList: hasResources
      ? Object.freeze((definition.resources ?? []).map((r) =>
        deepFreeze(defined({
          uri: r.uri,
          name: r.name,
          title: r.title,
          description: r.description,
          mimeType: r.mimeType,
          size: r.size,
        }))
      ))
      : undefined,
    templateList: hasResources
      ? Object.freeze(templates.map(({ spec }) =>
        deepFreeze(defined({
          uriTemplate: spec.uriTemplate,
          name: spec.name,
          title: spec.title,
          description: spec.description,
          mimeType: spec.mimeType,
        }))
      ))
      : undefined,
    promptList: definition.prompts === undefined
      ? undefined
      : Object.freeze(definition.prompts.map((p) =>
        deepFreeze(defined({
          name: p.name,
          title: p.title,
          description: p.description,
          arguments: p.arguments ? structuredClone(p.arguments) : undefined,
        }))
      )),
    resourceByUri,
    templates: Object.freeze(templates),
    templateByPattern: new Map(templates.map((t) => [t.spec.uriTemplate, t])),
    promptByName: new Map((definition.prompts ?? []).map((p) => [p.name, p])),
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
