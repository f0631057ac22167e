/**
 * The MCP server factory: a fresh McpServer per serving unit (one HTTP request, one legacy
 * HTTP session, one stdio connection) from a ServerDefinition compiled once. stdio and
 * HTTP use exactly this; nothing here knows the transport or the workspace. Lists are
 * served from precomputed frozen arrays with paging; look-ups are maps. Two tool tables are
 * precomputed: every tool, and the read view (tools annotated `readOnlyHint: true`) served to a
 * caller whose authInfo lacks the wmcp:write scope (a read-only bearer token).
 */
import {
  type CacheHint,
  type CacheScope,
  type CompleteResult,
  createRequestStateCodec,
  type McpRequestContext,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  type RequestStateCodec,
  ResourceNotFoundError,
  type ServerCapabilities,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { Workspace } from "../workspace/workspace.ts";
import {
  type CallContext,
  canonicalUri,
  clientCapabilitiesOf,
  type CompiledDefinition,
  compileDefinition,
  type Completer,
  deepFreeze,
  type ServerDefinition,
  type ToolSpec,
} from "./definition.ts";
import { workspaceServerDefinition } from "./workspace_server.ts";
import { settledWithin } from "../async.ts";

/** Default page size of tools/list (and of the other lists). */
export const DEFAULT_PAGE_SIZE = 50;
/** How long a requestState (a confirmation request) stays valid (seconds). */
export const CONFIRMATION_TTL_SECONDS = 600;
/** Default cache hint ttl of the list results on the modern era (ms). */
export const DEFAULT_LIST_TTL_MS = 60_000;
/** The scope every bearer token grants: the read tools. */
export const READ_SCOPE = "wmcp:read";
/** The scope of a read-write bearer token: every tool the server serves. */
export const WRITE_SCOPE = "wmcp:write";

/**
 * Whether a request gets the read view: it was authenticated (authInfo) without the write
 * scope. Unauthenticated requests (stdio, an HTTP server without tokens) get every tool.
 */
export function isReadOnlyCaller(ctx: McpRequestContext | undefined): boolean {
  return ctx?.authInfo !== undefined && !ctx.authInfo.scopes.includes(WRITE_SCOPE);
}

/** Options of the server factory: a workspace (the workspace server) or any definition. */
export interface ServerFactoryOptions {
  /** Serve the workspace tools on this workspace. Exactly one of workspace and definition. */
  workspace?: Workspace;
  /**
   * Serve this definition (any tools, resources, prompts; internal, not a stable surface).
   * @ignore
   */
  definition?: ServerDefinition;
  /** Page size of tools/list, prompts/list, resources/list and resources/templates/list. */
  pageSize?: number;
  /** HMAC key (at least 32 bytes) for requestState; random per process if absent. */
  requestStateKey?: Uint8Array | string;
  /** How long a minted requestState stays valid (seconds). Default CONFIRMATION_TTL_SECONDS. */
  confirmationTtlSeconds?: number;
  /** Whether callers authenticate (cache scope is then always private). */
  authenticated?: boolean;
  /** Cache hint ttl of the list results on the modern era (ms). Default DEFAULT_LIST_TTL_MS. */
  listTtlMs?: number;
}

/**
 * The factory: called (with the SDK's request context, or nothing) it returns a fresh
 * `McpServer` of `@modelcontextprotocol/server`, ready for `serveStdio`, `createMcpHandler` or
 * `server.connect(transport)`; plus a way to wait for running tool calls.
 */
export interface ServerFactory {
  /**
   * A fresh McpServer serving the workspace tools.
   * @ignore
   */
  (ctx?: McpRequestContext): McpServer;
  /** Resolves once every running tool call has finished (or after timeoutMs). */
  settled(timeoutMs: number): Promise<void>;
  /**
   * The compiled definition this factory serves.
   * @ignore
   */
  readonly compiled: CompiledDefinition;
  /**
   * Whether an initialization-era instance from this factory subscribed to a resource URI.
   * @ignore
   */
  isSubscribed(server: McpServer, uri: string): boolean;
  /**
   * What the fast path (fast_path.ts) serves from, computed once with this factory.
   * @ignore
   */
  readonly fast: FastInternals;
}

/** One tool view (every tool, or the read view of a read-only caller) as the fast path sees it. */
export interface ToolView {
  /** The view's tools by name. */
  tools: ReadonlyMap<string, ToolSpec>;
  /** The view's wire tool list (what tools/list pages). */
  toolList: readonly unknown[];
  /** The server/discover result of the view (before the SDK's result stamps); undefined if unknown. */
  discover: () => Record<string, unknown> | undefined;
}

/** The factory's shared parts the fast path serves from (internal). */
export interface FastInternals {
  /** The view of a caller: the read view for a read-only caller, else every tool. */
  view(readOnly: boolean): ToolView;
  /** Page size of tools/list. */
  pageSize: number;
  /** The cache hint of tools/list results. */
  listHint: CacheHint;
  /** The serverInfo every modern result carries. */
  serverInfo: { name: string; version: string };
  /** Counts a running tool call for settled(). */
  track: <T>(work: Promise<T>) => Promise<T>;
  /** The requestState codec (the fast path never sees a requestState; handlers get it anyway). */
  requestState: RequestStateCodec<unknown>;
}

type ListKind = "tools" | "prompts" | "resources" | "templates";

function encodeCursor(kind: ListKind, offset: number, total: number): string {
  return btoa(JSON.stringify({ k: kind, o: offset, t: total })).replaceAll("=", "");
}

function decodeCursor(kind: ListKind, cursor: string, total: number): number {
  try {
    const c = JSON.parse(atob(cursor)) as { k?: unknown; o?: unknown; t?: unknown };
    if (
      c.k === kind && Number.isSafeInteger(c.o) && c.t === total && (c.o as number) > 0 &&
      (c.o as number) < total
    ) {
      return c.o as number;
    }
  } catch {
    // fall through
  }
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid cursor");
}

/** One page of a precomputed list; an invalid cursor is -32602 "Invalid cursor". */
export function page<K extends string>(
  key: K,
  kind: ListKind,
  items: readonly unknown[],
  cursor: string | undefined,
  pageSize: number,
): Record<string, unknown> {
  const start = cursor === undefined ? 0 : decodeCursor(kind, cursor, items.length);
  const end = Math.min(start + pageSize, items.length);
  const out: Record<string, unknown> = { [key]: items.slice(start, end) };
  if (end < items.length) out.nextCursor = encodeCursor(kind, end, items.length);
  return out;
}

const MAX_COMPLETIONS = 100;

async function completion(
  completer: Completer | undefined,
  value: string,
  context: { arguments?: Record<string, string> } | undefined,
): Promise<CompleteResult> {
  if (!completer) return { completion: { values: [], total: 0, hasMore: false } };
  const values = await completer(value, context);
  return {
    completion: {
      values: values.slice(0, MAX_COMPLETIONS),
      total: values.length,
      hasMore: values.length > MAX_COMPLETIONS,
    },
  };
}

/** Adds a resource's own cache hint to a modern resources/read result that has none. */
function withCacheHint(
  result: ReadResourceResult,
  hint: CacheHint | undefined,
  modern: boolean,
): ReadResourceResult {
  if (!modern || hint === undefined || "resultType" in result) return result;
  const r = result as Record<string, unknown>;
  return {
    ...result,
    ...(r.ttlMs === undefined && hint.ttlMs !== undefined ? { ttlMs: hint.ttlMs } : {}),
    ...(r.cacheScope === undefined && hint.cacheScope !== undefined
      ? { cacheScope: hint.cacheScope }
      : {}),
  } as ReadResourceResult;
}

/**
 * Builds the per-request/per-connection factory for a workspace or a definition.
 *
 * @example Serve over the SDK's stdio entry with your own transport
 * ```ts
 * import { serveStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio";
 * import { createServerFactory, Workspace } from "@wmcp/wmcp";
 *
 * const workspace = await Workspace.open({ root: "." });
 * serveStdio(createServerFactory({ workspace }), { transport: new StdioServerTransport() });
 * ```
 */
export function createServerFactory(options: ServerFactoryOptions): ServerFactory {
  if ((options.workspace === undefined) === (options.definition === undefined)) {
    throw new TypeError("createServerFactory needs exactly one of workspace and definition");
  }
  const definition = options.definition ?? workspaceServerDefinition(options.workspace!);
  const compiled = compileDefinition(definition);
  // The read view: the tools that do not modify their environment, and their wire list.
  const readIndexes = compiled.tools.flatMap((t, i) =>
    t.annotations?.readOnlyHint === true ? [i] : []
  );
  const readTools = Object.freeze(readIndexes.map((i) => compiled.tools[i]));
  const readToolList = Object.freeze(readIndexes.map((i) => compiled.toolList[i]));
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
    throw new RangeError("pageSize must be a positive integer");
  }
  const key = options.requestStateKey ?? crypto.getRandomValues(new Uint8Array(32));
  const codec: RequestStateCodec<unknown> = createRequestStateCodec<unknown>({
    key,
    ttlSeconds: options.confirmationTtlSeconds ?? CONFIRMATION_TTL_SECONDS,
    bind: (ctx) => `${ctx.mcpReq.method}\0${ctx.http?.authInfo?.clientId ?? ""}`,
  });
  const cacheScope: CacheScope = options.authenticated ? "private" : "public";
  const listHint: CacheHint = { ttlMs: options.listTtlMs ?? DEFAULT_LIST_TTL_MS, cacheScope };
  const cacheHints = {
    "tools/list": listHint,
    ...(compiled.promptList ? { "prompts/list": listHint } : {}),
    ...(compiled.resourceList
      ? { "resources/list": listHint, "resources/templates/list": listHint }
      : {}),
  };
  // Declared after construction, so McpServer does not install (and we do not replace)
  // its own resource and prompt handlers on every request.
  const extraCapabilities: ServerCapabilities = {
    ...(compiled.resourceList
      ? {
        resources: {
          listChanged: definition.listChanged?.resources === true,
          ...(definition.resourceSubscriptions ? { subscribe: true } : {}),
        },
      }
      : {}),
    ...(compiled.promptList
      ? { prompts: { listChanged: definition.listChanged?.prompts === true } }
      : {}),
    ...(definition.completions ? { completions: {} } : {}),
    ...(definition.logging ? { logging: {} } : {}),
  };

  /** URIs each initialization-era instance subscribed to (resources/subscribe). */
  const subscriptions = new WeakMap<McpServer, Set<string>>();
  const running = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T> => {
    running.add(work);
    return work.finally(() => running.delete(work));
  };

  const factory = (rctx?: McpRequestContext) => {
    const modern = rctx?.era === "modern";
    const readOnly = isReadOnlyCaller(rctx);
    const tools = readOnly ? readTools : compiled.tools;
    const toolList = readOnly ? readToolList : compiled.toolList;
    const instructions = readOnly
      ? definition.readOnlyInstructions ?? definition.instructions
      : definition.instructions;
    const server = new McpServer(
      { name: definition.name, version: definition.version },
      {
        capabilities: { tools: { listChanged: definition.listChanged?.tools === true } },
        ...(instructions === undefined ? {} : { instructions }),
        cacheHints,
        requestState: { verify: (state, ctx) => codec.verify(state, ctx) },
      },
    );
    if (Object.keys(extraCapabilities).length > 0) {
      server.server.registerCapabilities(extraCapabilities);
    }
    const callOf = (ctx: ServerContext): CallContext => ({
      ctx,
      server,
      requestState: codec,
      clientCapabilities: clientCapabilitiesOf(server, ctx),
      readOnly,
      // Deprecated accessor, still the one that knows an initialization-era connection's
      // revision; modern requests report 2026-07-28.
      protocolVersion: server.server.getNegotiatedProtocolVersion(),
    });
    // A read-only caller's server has no write tool at all: calling one is an unknown tool.
    for (const tool of tools) registerTool(server, tool, callOf, track);

    const s = server.server;
    s.setRequestHandler(
      "tools/list",
      (request) => page("tools", "tools", toolList, request.params?.cursor, pageSize) as never,
    );
    if (compiled.promptList) {
      const list = compiled.promptList;
      s.setRequestHandler(
        "prompts/list",
        (request) => page("prompts", "prompts", list, request.params?.cursor, pageSize) as never,
      );
      s.setRequestHandler("prompts/get", async (request, ctx) => {
        const { name } = request.params;
        const prompt = compiled.promptByName.get(name);
        if (!prompt) {
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt ${name} not found`);
        }
        const args = (request.params.arguments ?? {}) as Record<string, string>;
        for (const a of prompt.arguments ?? []) {
          if (a.required && typeof args[a.name] !== "string") {
            throw new ProtocolError(
              ProtocolErrorCode.InvalidParams,
              `Prompt ${name} needs the argument ${a.name}`,
              { argument: a.name },
            );
          }
        }
        return await prompt.get(args, callOf(ctx)) as never;
      });
    }
    if (compiled.resourceList && compiled.templateList) {
      const resources = compiled.resourceList;
      const templates = compiled.templateList;
      s.setRequestHandler(
        "resources/list",
        (request) =>
          page("resources", "resources", resources, request.params?.cursor, pageSize) as never,
      );
      s.setRequestHandler(
        "resources/templates/list",
        (request) =>
          page(
            "resourceTemplates",
            "templates",
            templates,
            request.params?.cursor,
            pageSize,
          ) as never,
      );
      s.setRequestHandler("resources/read", async (request, ctx) => {
        const raw = request.params.uri;
        const href = canonicalUri(raw);
        if (href === null) {
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `Resource URI ${raw} is invalid`,
            { uri: raw, reason: "invalid_uri" },
          );
        }
        const resource = compiled.resourceByUri.get(href);
        if (resource) {
          const result = await resource.read(new URL(href), callOf(ctx));
          return withCacheHint(result as ReadResourceResult, resource.cacheHint, modern) as never;
        }
        for (const t of compiled.templates) {
          const variables = t.template.match(href);
          if (variables) {
            const result = await t.spec.read(new URL(href), variables, callOf(ctx));
            return withCacheHint(result as ReadResourceResult, t.spec.cacheHint, modern) as never;
          }
        }
        throw new ResourceNotFoundError(raw);
      });
      if (definition.resourceSubscriptions && !modern) {
        // Initialization era only: 2026-07-28 subscribes through subscriptions/listen.
        const subscribed = new Set<string>();
        subscriptions.set(server, subscribed);
        const known = (uri: string): string => {
          const href = canonicalUri(uri);
          if (
            href === null ||
            (!compiled.resourceByUri.has(href) &&
              !compiled.templates.some((t) => t.template.match(href)))
          ) {
            throw new ResourceNotFoundError(uri);
          }
          return href;
        };
        s.setRequestHandler("resources/subscribe", (request) => {
          subscribed.add(known(request.params.uri));
          return {};
        });
        s.setRequestHandler("resources/unsubscribe", (request) => {
          subscribed.delete(known(request.params.uri));
          return {};
        });
      }
    }
    if (definition.completions) {
      s.setRequestHandler("completion/complete", async (request) => {
        const { ref, argument, context } = request.params;
        if (ref.type === "ref/prompt") {
          const prompt = compiled.promptByName.get(ref.name);
          if (!prompt) {
            throw new ProtocolError(
              ProtocolErrorCode.InvalidParams,
              `Prompt ${ref.name} not found`,
            );
          }
          return await completion(prompt.complete?.[argument.name], argument.value, context);
        }
        if (ref.type === "ref/resource") {
          const template = compiled.templateByPattern.get(ref.uri);
          if (template) {
            return await completion(
              template.spec.complete?.[argument.name],
              argument.value,
              context,
            );
          }
          const href = canonicalUri(ref.uri);
          if (href !== null && compiled.resourceByUri.has(href)) {
            return await completion(undefined, argument.value, context);
          }
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `Resource template ${ref.uri} not found`,
          );
        }
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid completion reference");
      });
    }
    return server;
  };
  // The fast path's views, each with its server/discover result computed once from an instance
  // of this factory (the SDK's own answer, read through its internal _ondiscover).
  const viewOf = (readOnly: boolean): ToolView => {
    const tools = readOnly ? readTools : compiled.tools;
    let discover: Record<string, unknown> | undefined | null = null;
    return Object.freeze({
      tools: new Map(tools.map((t) => [t.name, t])),
      toolList: readOnly ? readToolList : compiled.toolList,
      discover: () => {
        if (discover === null) {
          const probe = factory({
            era: "modern",
            ...(readOnly ? { authInfo: { token: "", clientId: "", scopes: [READ_SCOPE] } } : {}),
          } as McpRequestContext).server as unknown as { _ondiscover?: () => unknown };
          const result = typeof probe._ondiscover === "function" ? probe._ondiscover() : undefined;
          discover = result !== null && typeof result === "object"
            ? deepFreeze(structuredClone(result as Record<string, unknown>))
            : undefined;
        }
        return discover;
      },
    });
  };
  const views = { all: viewOf(false), read: viewOf(true) };
  const fast: FastInternals = Object.freeze({
    view: (readOnly: boolean) => readOnly ? views.read : views.all,
    pageSize,
    listHint,
    serverInfo: Object.freeze({ name: definition.name, version: definition.version }),
    track,
    requestState: codec,
  });
  return Object.assign(factory, {
    fast,
    compiled,
    settled: async (timeoutMs: number) => {
      await settledWithin(Promise.allSettled([...running]), timeoutMs);
    },
    isSubscribed: (server: McpServer, uri: string) => {
      const href = canonicalUri(uri);
      return href !== null && subscriptions.get(server)?.has(href) === true;
    },
  });
}

function registerTool(
  server: McpServer,
  tool: ToolSpec,
  callOf: (ctx: ServerContext) => CallContext,
  track: <T>(work: Promise<T>) => Promise<T>,
): void {
  server.registerTool(
    tool.name,
    {
      ...(tool.title === undefined ? {} : { title: tool.title }),
      ...(tool.description === undefined ? {} : { description: tool.description }),
      inputSchema: tool.inputSchema as never,
      ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema as never }),
      ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
      ...(tool._meta === undefined ? {} : { _meta: tool._meta }),
    },
    ((args: Record<string, unknown>, ctx: ServerContext) =>
      track((async () => await tool.handler(args ?? {}, callOf(ctx)))())) as never,
  );
}
