/**
 * The MCP server factory: a fresh McpServer per serving unit (one HTTP request, one
 * stdio connection), registered from the module-scope tool table. stdio and HTTP use
 * exactly this; nothing here knows the transport.
 */
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  type McpRequestContext,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type RequestStateCodec,
  type ServerContext,
} from "@modelcontextprotocol/server";
import denoConfig from "../../deno.json" with { type: "json" };
import type { Workspace } from "../workspace/workspace.ts";
import { toWorkspaceError, WorkspaceError } from "../workspace/errors.ts";
import { runOperation } from "../operations/registry.ts";
import { sha256Hex } from "../workspace/text.ts";
import { type ToolEntry, toolsFor } from "./tools.ts";

/** Writes one JSON event line to stderr (never stdout, which belongs to the protocol). */
export function logEvent(event: Record<string, unknown>): void {
  console.error(JSON.stringify({ source: "wmcp", ...event }));
}

/** Server name reported in serverInfo. */
export const SERVER_NAME = "wmcp";
/** Default tools/list page size. */
export const DEFAULT_PAGE_SIZE = 50;
/** How long a confirmation request stays valid (seconds). */
export const CONFIRMATION_TTL_SECONDS = 600;

/** Options of the server factory. */
export interface ServerFactoryOptions {
  /** The workspace every tool works on. */
  workspace: Workspace;
  /** tools/list page size. */
  pageSize?: number;
  /** HMAC key (at least 32 bytes) for confirmation requestState; random per process if absent. */
  requestStateKey?: Uint8Array | string;
  /** How long a confirmation request stays valid (seconds). Default CONFIRMATION_TTL_SECONDS. */
  confirmationTtlSeconds?: number;
  /** Whether callers authenticate (cache scope is then always private). */
  authenticated?: boolean;
  /** Cache hint ttl for tools/list on the modern era (ms). */
  toolsListTtlMs?: number;
}

/** A tools/call result as the SDK expects it. */
export type ToolResult = CallToolResult;

/** Wraps an operation result: structuredContent plus the same JSON as a text block. */
export function toolSuccess(result: Record<string, unknown>): ToolResult {
  return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
}

/** Wraps any failure as a tool error with the typed error object as structured detail. */
export function toolFailure(err: unknown): ToolResult {
  const error = toWorkspaceError(err).toJSON();
  return {
    content: [{ type: "text", text: JSON.stringify({ error }) }],
    structuredContent: { error },
    isError: true,
  };
}

interface ConfirmState {
  tool: string;
  args: string;
}

const CONFIRM_KEY = "confirm";

function argsDigest(args: unknown): string {
  const canonical = (v: unknown): unknown =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
        Object.keys(v as Record<string, unknown>).sort().filter((k) => k !== "confirm").map((
          k,
        ) => [k, canonical((v as Record<string, unknown>)[k])]),
      )
      : Array.isArray(v)
      ? v.map(canonical)
      : v;
  return sha256Hex(JSON.stringify(canonical(args ?? {})));
}

function encodeCursor(offset: number, total: number): string {
  return btoa(JSON.stringify({ o: offset, t: total })).replaceAll("=", "");
}

function decodeCursor(cursor: string, total: number): number {
  try {
    const c = JSON.parse(atob(cursor)) as { o?: unknown; t?: unknown };
    if (
      Number.isSafeInteger(c.o) && c.t === total && (c.o as number) > 0 && (c.o as number) < total
    ) {
      return c.o as number;
    }
  } catch {
    // fall through
  }
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid cursor");
}

/** Builds the per-request/per-connection factory for a workspace. */
/** The factory: a fresh McpServer per call, plus a way to wait for running tool calls. */
export type ServerFactory = ((ctx?: McpRequestContext) => McpServer) & {
  /** Resolves once every running tool call has finished (or after timeoutMs). */
  settled(timeoutMs: number): Promise<void>;
};

export function createServerFactory(
  options: ServerFactoryOptions,
): ServerFactory {
  const { workspace } = options;
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
    throw new RangeError("pageSize must be a positive integer");
  }
  const key = options.requestStateKey ?? crypto.getRandomValues(new Uint8Array(32));
  const codec: RequestStateCodec<ConfirmState> = createRequestStateCodec<ConfirmState>({
    key,
    ttlSeconds: options.confirmationTtlSeconds ?? CONFIRMATION_TTL_SECONDS,
    bind: (ctx) => `${ctx.mcpReq.method}\0${ctx.http?.authInfo?.clientId ?? ""}`,
  });
  const tools = toolsFor(workspace.writable);
  const definitions = tools.map((t) => t.definition);
  const cacheScope = options.authenticated ? "private" : "public";
  const ttlMs = options.toolsListTtlMs ?? 60_000;

  const running = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T> => {
    running.add(work);
    return work.finally(() => running.delete(work));
  };
  const factory = () => {
    const server = new McpServer(
      { name: SERVER_NAME, version: denoConfig.version },
      {
        capabilities: { tools: { listChanged: false } },
        instructions: `Workspace tools for the directory "${workspace.rootName}" (${
          workspace.writable ? "read-write" : "read-only"
        }). Paths are workspace-relative. Call workspace_info for the limits.`,
        cacheHints: { "tools/list": { ttlMs, cacheScope } },
        requestState: { verify: (state, ctx) => codec.verify(state, ctx) },
      },
    );
    for (const tool of tools) registerTool(server, tool, workspace, codec, track);
    server.server.setRequestHandler("tools/list", (request) => {
      const cursor = request.params?.cursor;
      const start = cursor === undefined ? 0 : decodeCursor(cursor, definitions.length);
      const end = Math.min(start + pageSize, definitions.length);
      const page: { tools: Record<string, unknown>[]; nextCursor?: string } = {
        tools: definitions.slice(start, end) as Record<string, unknown>[],
      };
      if (end < definitions.length) page.nextCursor = encodeCursor(end, definitions.length);
      return page as never;
    });
    return server;
  };
  return Object.assign(factory, {
    settled: async (timeoutMs: number) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled([...running]),
        new Promise((r) => (timer = setTimeout(r, timeoutMs))),
      ]);
      clearTimeout(timer);
    },
  });
}

function clientCanElicit(server: McpServer, ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const caps = (envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined) ??
    server.server.getClientCapabilities();
  const e = caps?.elicitation as Record<string, unknown> | undefined;
  // An empty elicitation object means form mode (2025-06-18 and later).
  return e !== undefined && (Object.keys(e).length === 0 || "form" in e);
}

function registerTool(
  server: McpServer,
  tool: ToolEntry,
  workspace: Workspace,
  codec: RequestStateCodec<ConfirmState>,
  track: <T>(work: Promise<T>) => Promise<T>,
): void {
  const { op } = tool;
  server.registerTool(
    op.name,
    {
      title: op.title,
      description: op.description,
      inputSchema: tool.inputSchema as never,
      outputSchema: tool.outputSchema as never,
      annotations: { title: op.title, ...op.annotations },
    },
    ((args: Record<string, unknown>, ctx: ServerContext) => track(callTool(args, ctx))) as never,
  );

  async function callTool(args: Record<string, unknown>, ctx: ServerContext): Promise<unknown> {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    const onProgress = progressToken === undefined
      ? undefined
      : (p: { progress: number; total?: number; message?: string }) => {
        ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken, ...p } })
          .catch(() => {});
      };
    let input = args;
    const state = ctx.mcpReq.requestState<ConfirmState>();
    if (state !== undefined) {
      // A retried call answering our confirmation request.
      if (
        typeof state !== "object" || state.tool !== op.name || state.args !== argsDigest(args)
      ) {
        return toolFailure(
          new WorkspaceError(
            "INVALID_ARGUMENT",
            "requestState does not belong to this tool call",
            {
              argument: "requestState",
            },
          ),
        );
      }
      const answer = inputResponse(ctx.mcpReq.inputResponses, CONFIRM_KEY);
      if (
        answer.kind !== "elicit" || answer.action !== "accept" || answer.content?.confirm !== true
      ) {
        const how = answer.kind === "elicit" ? answer.action : "not answered";
        return toolFailure(
          new WorkspaceError(
            "CONFIRMATION_REQUIRED",
            `${op.name} was not confirmed (${how}); nothing was changed`,
            {
              argument: "confirm",
              details: { action: how },
            },
          ),
        );
      }
      input = { ...args, confirm: true };
    }
    const signal = ctx.mcpReq.signal;
    let abortedAt: number | undefined;
    const onAbort = () => (abortedAt = performance.now());
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const result = await runOperation({ workspace, signal, onProgress }, op.name, input);
      return toolSuccess(result);
    } catch (err) {
      if (abortedAt !== undefined) {
        // Cancelled: the SDK sends nothing more for this request; say how fast we stopped.
        logEvent({
          event: "cancelled",
          tool: op.name,
          stopMs: Math.round(performance.now() - abortedAt),
        });
      }
      if (
        err instanceof WorkspaceError && err.code === "CONFIRMATION_REQUIRED" &&
        state === undefined &&
        clientCanElicit(server, ctx)
      ) {
        return inputRequired({
          inputRequests: {
            [CONFIRM_KEY]: inputRequired.elicit({
              message: `${err.message.replace(/: pass confirm: true$/, "")}. Confirm?`,
              requestedSchema: {
                type: "object",
                properties: {
                  confirm: {
                    type: "boolean",
                    title: "Confirm",
                    description: `Allow ${op.name}`,
                    default: false,
                  },
                },
                required: ["confirm"],
              },
            }),
          },
          requestState: await codec.mint({ tool: op.name, args: argsDigest(args) }, ctx),
        }) as never;
      }
      if (err instanceof WorkspaceError && err.code === "CONFIRMATION_REQUIRED") {
        return toolFailure(
          new WorkspaceError(
            "CONFIRMATION_REQUIRED",
            `${err.message} (this client did not declare the elicitation capability, so it must pass confirm: true itself)`,
            { argument: "confirm" },
          ),
        );
      }
      return toolFailure(err);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }
}

/** A server for one workspace with default options (stdio and tests). */
export function createServer(workspace: Workspace): McpServer {
  return createServerFactory({ workspace })();
}
