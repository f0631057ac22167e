/**
 * The workspace server as a ServerDefinition: the operation registry's tools (module-scope
 * table in tools.ts) with progress, cancellation and confirmation, and empty prompt and
 * resource lists (so every cacheable list of the 2026-07-28 revision exists and carries
 * its cache hints; an unknown resource URI is -32602 with data.uri). Results are shaped
 * by content.ts: typed structuredContent plus blocks for a model; errors without
 * structuredContent, the typed error in `_meta["wmcp/error"]`.
 */
import { Buffer } from "node:buffer";
import { inputRequired, inputResponse, type ServerContext } from "@modelcontextprotocol/server";
import denoConfig from "../../deno.json" with { type: "json" };
import type { Workspace } from "../workspace/workspace.ts";
import { toWorkspaceError, WorkspaceError } from "../workspace/errors.ts";
import { runOperation } from "../operations/registry.ts";
import { sha256Hex } from "../workspace/text.ts";
import { jsonBytesAtMost } from "../workspace/budget.ts";
import { instructionsFor } from "./instructions.ts";
import type {
  CallContext,
  ServerDefinition,
  ServerExtension,
  ServingUnit,
  ToolOutcome,
  ToolSpec,
} from "./definition.ts";
import type { ClientRoots } from "./client_roots.ts";
import { type ToolEntry, toolsFor } from "./tools.ts";
import { startProgressCadence } from "./progress.ts";
import { errorResult, renderContent, type RenderOptions, structuredFor } from "./content.ts";
import { assertServable, responseCapFor } from "../workspace/message_limits.ts";
import { EMPTY_LISTS } from "./empty_lists.ts";

/** Server name reported in serverInfo. */
export const SERVER_NAME = "wmcp";

/** Writes one JSON event line to stderr (never stdout, which belongs to the protocol). */
export function logEvent(event: Record<string, unknown>): void {
  console.error(JSON.stringify({ source: "wmcp", ...event }));
}

/** A tools/call result as the SDK expects it. */
export type ToolResult = ToolOutcome;

/** Revisions without audio content blocks (read_media sends audio as a resource blob there). */
const NO_AUDIO_REVISIONS = new Set(["2024-11-05", "2024-10-07"]);

/** Wraps an operation result: typed structuredContent plus content blocks for a model. */
export function toolSuccess(
  tool: string,
  result: Record<string, unknown>,
  options: RenderOptions = {},
): ToolResult {
  return {
    content: renderContent(tool, result, options),
    structuredContent: structuredFor(tool, result),
  };
}

/**
 * Wraps any failure as a tool error: one text block `"<CODE>: <sentence>"` and the typed
 * error object in `_meta["wmcp/error"]`; no structuredContent (v1-era clients validate it
 * against the tool's success outputSchema, even on errors).
 */
export function toolFailure(err: unknown): ToolResult {
  return errorResult(toWorkspaceError(err).toJSON());
}

/**
 * A read tool's result whose serialized form exceeds the response cap (decision 0022) becomes
 * TOO_LARGE instead, so no transport is handed a message it cannot carry. Write results are
 * bounded by their structured size and never replaced (the change is done).
 */
function withinResponseCap(result: ToolResult, cap: number): ToolResult {
  if (!("content" in result)) return result;
  // Almost every result is far under the cap: a bound that needs no serialization says so.
  if (jsonBytesAtMost(result) <= cap) return result;
  const size = Buffer.byteLength(JSON.stringify(result), "utf8");
  if (size <= cap) return result;
  return toolFailure(
    new WorkspaceError(
      "TOO_LARGE",
      `the result would be ${size} bytes on the wire, over the response cap of ${cap} (2 x maxResultBytes + 64 KiB); narrow the request`,
      { details: { size, limit: cap, reason: "responseCap" } },
    ),
  );
}

function audioBlocks(call: CallContext): boolean {
  // The initialization era's negotiated revision, or 2026-07-28 on the modern era.
  const version = call.protocolVersion;
  return version === undefined || !NO_AUDIO_REVISIONS.has(version);
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

function canElicitForm(call: CallContext): boolean {
  const e = call.clientCapabilities?.elicitation as Record<string, unknown> | undefined;
  // An empty elicitation object means form mode (2025-06-18 and later).
  return e !== undefined && (Object.keys(e).length === 0 || "form" in e);
}

function isConfirmState(state: unknown): state is ConfirmState {
  return typeof state === "object" && state !== null &&
    typeof (state as ConfirmState).tool === "string" &&
    typeof (state as ConfirmState).args === "string";
}

/** Where a tool finds the workspace of a call: one fixed workspace, or the client's roots. */
type WorkspaceOf = () => Workspace | Promise<Workspace>;

function workspaceTool(entry: ToolEntry, workspaceOf: WorkspaceOf): ToolSpec {
  const { op } = entry;
  const run = (args: Record<string, unknown>, call: CallContext) => (workspace: Workspace) =>
    callTool(op.name, args, call, workspace).then((r) =>
      op.needsWrite ? r : withinResponseCap(r, responseCapFor(workspace.limits))
    );
  return Object.freeze({
    name: op.name,
    title: op.title,
    description: op.description,
    inputSchema: entry.inputSchema,
    outputSchema: entry.outputSchema,
    annotations: { title: op.title, ...op.annotations },
    // Read tools never ask for confirmation and never throw (failures are results).
    fastPath: op.annotations.readOnlyHint && !op.needsWrite,
    // Every failure, an unexpected one included, leaves as our error result (the SDK's own
    // wrapping would send a bare message without the code).
    handler: (args: Record<string, unknown>, call: CallContext) => {
      try {
        const workspace = workspaceOf();
        const ran = workspace instanceof Promise
          ? workspace.then(run(args, call))
          : run(args, call)(workspace);
        return ran.catch(toolFailure);
      } catch (err) {
        return toolFailure(err);
      }
    },
  });
}

/** The input of a retried call answering our confirmation request, or the failure it gets. */
function confirmedInput(
  name: string,
  args: Record<string, unknown>,
  state: unknown,
  ctx: ServerContext,
): { input: Record<string, unknown> } | { refused: ToolResult } {
  if (!isConfirmState(state) || state.tool !== name || state.args !== argsDigest(args)) {
    return {
      refused: toolFailure(
        new WorkspaceError("INVALID_ARGUMENT", "requestState does not belong to this tool call", {
          argument: "requestState",
        }),
      ),
    };
  }
  const answer = inputResponse(ctx.mcpReq.inputResponses, CONFIRM_KEY);
  if (answer.kind !== "elicit" || answer.action !== "accept" || answer.content?.confirm !== true) {
    const how = answer.kind === "elicit" ? answer.action : "not answered";
    return {
      refused: toolFailure(
        new WorkspaceError(
          "CONFIRMATION_REQUIRED",
          `${name} was not confirmed (${how}); nothing was changed`,
          { argument: "confirm", details: { action: how } },
        ),
      ),
    };
  }
  return { input: { ...args, confirm: true } };
}

/** When a call's signal aborted (cancellation), noted as it happens, for the server's log. */
class AbortWatch {
  /** performance.now() at the abort; undefined while not aborted. */
  at: number | undefined;
  readonly #signal: AbortSignal;
  readonly #onAbort = () => (this.at = performance.now());

  constructor(signal: AbortSignal) {
    this.#signal = signal;
    signal.addEventListener("abort", this.#onAbort, { once: true });
    // Cancelled before this handler ran (a loaded server can take the request and its
    // cancellation in one read): the abort event has already fired, so note it now.
    if (signal.aborted) this.#onAbort();
  }

  dispose(): void {
    this.#signal.removeEventListener("abort", this.#onAbort);
  }
}

/** A completed operation's result for the caller (and the log, when cancelled meanwhile). */
function completed(
  name: string,
  result: Record<string, unknown>,
  call: CallContext,
  workspace: Workspace,
  abortedAt: number | undefined,
): ToolResult {
  // A read-only caller of a write-enabled server may only read: its workspace_info says so.
  if (name === "workspace_info" && call.readOnly) result.mode = "read-only";
  if (abortedAt !== undefined) {
    // Cancelled after its commit point: the operation completed, but the SDK sends nothing
    // for a cancelled request, so the server's log is where this is said.
    const { diff: _diff, ...summary } = result; // edit_file's diff can be megabytes
    logEvent({ event: "completed-after-cancellation", tool: name, result: summary });
  }
  return toolSuccess(name, result, {
    audio: audioBlocks(call),
    maxTextBytes: workspace.limits.maxResultBytes,
  });
}

/** Logs a cancelled call: the SDK sends nothing more for it; say how fast it stopped. */
function logCancelled(name: string, err: unknown, abortedAt: number): void {
  const e = err instanceof WorkspaceError ? err : null;
  logEvent({
    event: "cancelled",
    tool: name,
    stopMs: Math.round(performance.now() - abortedAt),
    // What the caller will not be told: the error (a recursive delete_path's says what it
    // had removed, a directory's copy_path's what it had copied; every other write stopped
    // before its commit point changed nothing).
    ...(e ? { code: e.code, details: e.details } : {}),
  });
}

/**
 * A CONFIRMATION_REQUIRED from the domain: an elicitation (input_required with a sealed
 * requestState) when the client can answer one and this is not already its answer, else the
 * error saying to pass confirm: true.
 */
async function confirmationOutcome(
  err: WorkspaceError,
  name: string,
  args: Record<string, unknown>,
  state: unknown,
  call: CallContext,
): Promise<ToolResult> {
  const what = err.message.replace(/: pass confirm: true$/, "");
  if (state === undefined && canElicitForm(call)) {
    return inputRequired({
      inputRequests: {
        [CONFIRM_KEY]: inputRequired.elicit({
          message: `${what}. Confirm?`,
          requestedSchema: {
            type: "object",
            properties: {
              confirm: {
                type: "boolean",
                title: "Confirm",
                description: `Allow ${name}`,
                default: false,
              },
            },
            required: ["confirm"],
          },
        }),
      },
      requestState: await call.requestState.mint({ tool: name, args: argsDigest(args) }, call.ctx),
    });
  }
  return toolFailure(
    new WorkspaceError(
      "CONFIRMATION_REQUIRED",
      `${what}; this client did not declare the elicitation capability, so pass confirm: true to proceed`,
      { argument: "confirm" },
    ),
  );
}

/** Runs one tool call: confirmation answers, progress, cancellation logs, the result. */
async function callTool(
  name: string,
  args: Record<string, unknown>,
  call: CallContext,
  workspace: Workspace,
): Promise<ToolResult> {
  const { ctx } = call;
  const state = ctx.mcpReq.requestState<unknown>();
  let input = args;
  if (state !== undefined) {
    // A retried call answering our confirmation request.
    const confirmed = confirmedInput(name, args, state, ctx);
    if ("refused" in confirmed) return confirmed.refused;
    input = confirmed.input;
  }
  const signal = ctx.mcpReq.signal;
  const aborted = new AbortWatch(signal);
  // Progress at a steady cadence from here until the operation ends (stopped in finally, on
  // every exit path; cancellation and a closed transport stop it through the signal too).
  const cadence = startProgressCadence(ctx, { label: name, signal });
  try {
    const result = await runOperation(
      { workspace, signal, onProgress: cadence.report },
      name,
      input,
    );
    cadence.stop();
    return completed(name, result, call, workspace, aborted.at);
  } catch (err) {
    cadence.stop();
    if (aborted.at !== undefined) logCancelled(name, err, aborted.at);
    if (err instanceof WorkspaceError && err.code === "CONFIRMATION_REQUIRED") {
      return await confirmationOutcome(err, name, args, state, call);
    }
    return toolFailure(err);
  } finally {
    cadence.stop();
    aborted.dispose();
  }
}

/**
 * The workspace server: its tools for the mode, empty prompt and resource lists. With
 * `clientRoots` (a stdio server started without a root flag, decision 0065) the tools run on the
 * client's roots once it names them, `workspace` until then; its limits and mode are the same.
 */
export function workspaceServerDefinition(
  workspace: Workspace,
  options: { clientRoots?: ClientRoots } = {},
): ServerDefinition {
  assertServable(workspace.limits);
  const { clientRoots } = options;
  const workspaceOf: WorkspaceOf = clientRoots === undefined
    ? () => workspace
    : () => clientRoots.workspace();
  return Object.freeze({
    name: SERVER_NAME,
    version: denoConfig.version,
    instructions: instructionsFor(workspace.rootName, workspace.writable, workspace.roots.length),
    // A read-only bearer token on a write-enabled server sees the read tools only.
    readOnlyInstructions: instructionsFor(workspace.rootName, false, workspace.roots.length),
    tools: Object.freeze(toolsFor(workspace.writable).map((t) => workspaceTool(t, workspaceOf))),
    extension: clientRoots === undefined ? EMPTY_LISTS : askingRoots(EMPTY_LISTS, clientRoots),
  });
}

/** An extension that also asks each initialization-era client for its roots (ClientRoots). */
function askingRoots(extension: ServerExtension, roots: ClientRoots): ServerExtension {
  return Object.freeze({
    ...extension,
    install(unit: ServingUnit) {
      extension.install(unit);
      if (!unit.modern) roots.install(unit.server);
    },
  });
}
