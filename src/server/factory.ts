/**
 * The MCP server factory: a fresh McpServer per serving unit (one HTTP request, one legacy
 * HTTP session, one stdio connection) from a ServerDefinition compiled once. stdio and
 * HTTP use exactly this; nothing here knows the transport or the workspace. Lists are
 * served from precomputed frozen arrays with paging (paging.ts). Two tool tables are
 * precomputed: every tool, and the read view (tools annotated `readOnlyHint: true`) served to a
 * caller whose authInfo lacks the wmcp:write scope (a read-only bearer token). What a
 * definition serves besides tools is its extension's (the workspace server's: empty_lists.ts).
 * A ServerBuilder holds what the servers of one factory share; the factory is its build().
 */
import {
  type CacheHint,
  type CacheScope,
  createRequestStateCodec,
  type McpRequestContext,
  McpServer,
  type RequestStateCodec,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { Workspace } from "../workspace/workspace.ts";
import {
  type CallContext,
  clientCapabilitiesOf,
  type CompiledDefinition,
  compileDefinition,
  deepFreeze,
  type ServerDefinition,
  type ToolSpec,
} from "./definition.ts";
import { page } from "./paging.ts";
import { workspaceServerDefinition } from "./workspace_server.ts";
import type { ClientRoots } from "./client_roots.ts";
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
   * Serve this definition (any tools, and what its extension adds; internal, not a stable
   * surface).
   * @ignore
   */
  definition?: ServerDefinition;
  /**
   * Serve the client's roots once it names them (a stdio server started without a root flag,
   * decision 0065); `workspace` until then. Only with `workspace`.
   * @ignore
   */
  clientRoots?: ClientRoots;
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

/** One tool table: the tools of a view and their wire list, in the same order. */
interface ToolTable {
  tools: readonly ToolSpec[];
  toolList: readonly Readonly<Record<string, unknown>>[];
}

/** The read view of a compiled definition: the tools that do not modify their environment. */
function readTable(compiled: CompiledDefinition): ToolTable {
  const indexes = compiled.tools.flatMap((t, i) => t.annotations?.readOnlyHint === true ? [i] : []);
  return {
    tools: Object.freeze(indexes.map((i) => compiled.tools[i])),
    toolList: Object.freeze(indexes.map((i) => compiled.toolList[i])),
  };
}

/** The requestState codec of a factory: sealed with its key, bound to method and client. */
function requestStateCodec(options: ServerFactoryOptions): RequestStateCodec<unknown> {
  const key = options.requestStateKey ?? crypto.getRandomValues(new Uint8Array(32));
  return createRequestStateCodec<unknown>({
    key,
    ttlSeconds: options.confirmationTtlSeconds ?? CONFIRMATION_TTL_SECONDS,
    bind: (ctx) => `${ctx.mcpReq.method}\0${ctx.http?.authInfo?.clientId ?? ""}`,
  });
}

/**
 * What the servers of one factory share, computed once: the compiled definition, its two tool
 * tables, the requestState codec, the list cache hints, and the tool calls running.
 */
class ServerBuilder {
  readonly compiled: CompiledDefinition;
  readonly pageSize: number;
  readonly codec: RequestStateCodec<unknown>;
  readonly listHint: CacheHint;
  readonly #tables: { all: ToolTable; read: ToolTable };
  readonly #cacheHints: Record<string, CacheHint>;
  readonly #running = new Set<Promise<unknown>>();

  constructor(options: ServerFactoryOptions) {
    if ((options.workspace === undefined) === (options.definition === undefined)) {
      throw new TypeError("createServerFactory needs exactly one of workspace and definition");
    }
    const definition = options.definition ??
      workspaceServerDefinition(options.workspace!, { clientRoots: options.clientRoots });
    this.compiled = compileDefinition(definition);
    this.#tables = { all: this.compiled, read: readTable(this.compiled) };
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isSafeInteger(this.pageSize) || this.pageSize < 1) {
      throw new RangeError("pageSize must be a positive integer");
    }
    this.codec = requestStateCodec(options);
    const cacheScope: CacheScope = options.authenticated ? "private" : "public";
    this.listHint = { ttlMs: options.listTtlMs ?? DEFAULT_LIST_TTL_MS, cacheScope };
    const lists = definition.extension?.cachedLists ?? [];
    this.#cacheHints = Object.fromEntries(
      ["tools/list", ...lists].map((method) => [method, this.listHint]),
    );
  }

  /** Counts a running tool call for settled(). */
  readonly track = <T>(work: Promise<T>): Promise<T> => {
    this.#running.add(work);
    return work.finally(() => this.#running.delete(work));
  };

  /** Resolves once every running tool call has finished (or after timeoutMs). */
  async settled(timeoutMs: number): Promise<void> {
    await settledWithin(Promise.allSettled([...this.#running]), timeoutMs);
  }

  /** A fresh McpServer for one serving unit, for what the caller of `rctx` may see. */
  build(rctx?: McpRequestContext): McpServer {
    const definition = this.compiled.definition;
    const readOnly = isReadOnlyCaller(rctx);
    const { tools, toolList } = readOnly ? this.#tables.read : this.#tables.all;
    const instructions = readOnly
      ? definition.readOnlyInstructions ?? definition.instructions
      : definition.instructions;
    const server = new McpServer(
      { name: definition.name, version: definition.version },
      {
        capabilities: { tools: { listChanged: definition.listChanged?.tools === true } },
        ...(instructions === undefined ? {} : { instructions }),
        cacheHints: this.#cacheHints,
        requestState: { verify: (state, ctx) => this.codec.verify(state, ctx) },
      },
    );
    const extension = definition.extension;
    if (extension !== undefined && Object.keys(extension.capabilities).length > 0) {
      server.server.registerCapabilities(extension.capabilities);
    }
    const callOf = (ctx: ServerContext): CallContext => ({
      ctx,
      server,
      requestState: this.codec,
      clientCapabilities: clientCapabilitiesOf(server, ctx),
      readOnly,
      // Deprecated accessor, still the one that knows an initialization-era connection's
      // revision; modern requests report 2026-07-28.
      protocolVersion: server.server.getNegotiatedProtocolVersion(),
    });
    // A read-only caller's server has no write tool at all: calling one is an unknown tool.
    for (const tool of tools) registerTool(server, tool, callOf, this.track);
    const pageSize = this.pageSize;
    server.server.setRequestHandler(
      "tools/list",
      (request) => page("tools", "tools", toolList, request.params?.cursor, pageSize) as never,
    );
    extension?.install({ server, modern: rctx?.era === "modern", pageSize, callOf });
    return server;
  }

  /**
   * The fast path's view of a caller, with its server/discover result computed on first use from
   * an instance of this factory (the SDK's own answer, read through its internal _ondiscover).
   */
  view(readOnly: boolean): ToolView {
    const table = readOnly ? this.#tables.read : this.#tables.all;
    let discover: Record<string, unknown> | undefined | null = null;
    return Object.freeze({
      tools: new Map(table.tools.map((t) => [t.name, t])),
      toolList: table.toolList,
      discover: () => {
        if (discover === null) discover = this.#discover(readOnly);
        return discover;
      },
    });
  }

  /** The server/discover result of a modern instance for the caller, frozen; or undefined. */
  #discover(readOnly: boolean): Record<string, unknown> | undefined {
    const probe = this.build({
      era: "modern",
      ...(readOnly ? { authInfo: { token: "", clientId: "", scopes: [READ_SCOPE] } } : {}),
    } as McpRequestContext).server as unknown as { _ondiscover?: () => unknown };
    const result = typeof probe._ondiscover === "function" ? probe._ondiscover() : undefined;
    return result !== null && typeof result === "object"
      ? deepFreeze(structuredClone(result as Record<string, unknown>))
      : undefined;
  }
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
  const builder = new ServerBuilder(options);
  const views = { all: builder.view(false), read: builder.view(true) };
  const fast: FastInternals = Object.freeze({
    view: (readOnly: boolean) => readOnly ? views.read : views.all,
    pageSize: builder.pageSize,
    listHint: builder.listHint,
    serverInfo: Object.freeze({
      name: builder.compiled.definition.name,
      version: builder.compiled.definition.version,
    }),
    track: builder.track,
    requestState: builder.codec,
  });
  const extension = builder.compiled.definition.extension;
  return Object.assign((rctx?: McpRequestContext) => builder.build(rctx), {
    fast,
    compiled: builder.compiled,
    settled: (timeoutMs: number) => builder.settled(timeoutMs),
    isSubscribed: (server: McpServer, uri: string) =>
      extension?.isSubscribed?.(server, uri) === true,
  });
}

/** Registers one tool on a server: its handler's calls are tracked for settled(). */
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
