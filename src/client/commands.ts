/**
 * What the client does, returning data (never printing): server info, lossless tools/list
 * pages, one tool by name, one call, a sequence of calls. Each is built on the raw
 * responses the session taps below the SDK.
 */
import { z } from "zod";
import { SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { classify, ClientError } from "./errors.ts";
import type { RawMessage, Session } from "./session.ts";
import { validate } from "./validate.ts";
import { didYouMean } from "../cli/suggest.ts";
import type { ProgressUpdate } from "./progress.ts";
import {
  type Deadline,
  isSdkTimeout,
  startDeadline,
  type TimeLimits,
  timeoutError,
} from "./deadline.ts";

/** Version of the lossless output contract. */
export const CONTRACT_VERSION = "1";

/** Metadata the client adds beside (never inside) a received result. */
export interface ClientMetadata {
  era: "modern" | "legacy";
  protocolVersion: string;
}

/** The client metadata of a session's envelopes: its era and protocol version. */
export function metadataOf(s: Session): ClientMetadata {
  return { era: s.era, protocolVersion: s.protocolVersion };
}

/** server-info: what the server said about itself, as received. */
export function serverInfo(s: Session): Record<string, unknown> {
  const c = s.client;
  const discover = c.getDiscoverResult?.() as Record<string, unknown> | undefined;
  const out: Record<string, unknown> = {
    era: s.era,
    protocolVersion: s.protocolVersion,
    serverInfo: c.getServerVersion() ?? null,
    capabilities: c.getServerCapabilities() ?? null,
    instructions: c.getInstructions() ?? null,
  };
  if (discover) out.supportedVersions = discover.supportedVersions ?? null;
  return out;
}

const anyResult = z.unknown();

/** Sends one raw request and returns the result exactly as received on the wire. */
async function rawRequest(
  s: Session,
  request: { method: string; params: Record<string, unknown> },
  o: { signal?: AbortSignal; timeoutMs?: number; maxTimeoutMs?: number },
): Promise<Record<string, unknown>> {
  const { method, params } = request;
  const { signal } = o;
  const before = s.sent.length;
  const limits = { timeoutMs: o.timeoutMs, maxTimeoutMs: o.maxTimeoutMs };
  const deadline = o.timeoutMs === undefined
    ? undefined
    : startDeadline({ ...limits, timeoutMs: o.timeoutMs }, signal);
  let failed: { err: unknown } | undefined;
  try {
    await s.client.request(
      { method, params } as never,
      anyResult as never,
      { signal: deadline?.signal ?? signal, ...deadline?.sdkOptions } as never,
    );
  } catch (err) {
    failed = { err };
  } finally {
    deadline?.dispose();
  }
  if (failed !== undefined) {
    const { err } = failed;
    throw failureOf(err, { deadline, signal, limits, ended: await s.ended(err, method) });
  }
  const mine = s.sent.slice(before).filter((r) => r.method === method && r.id !== undefined);
  const raw = mine.length ? s.responses.get(mine[mine.length - 1].id!) : undefined;
  if (!raw || !("result" in raw)) {
    throw new ClientError("protocol", `no raw ${method} result was captured`);
  }
  return raw.result as Record<string, unknown>;
}

/** What failureOf needs to name a failed request's cause. */
export interface FailureContext {
  deadline?: Deadline;
  signal?: AbortSignal;
  limits: TimeLimits;
  /** How a stdio server that ended under the request ended (Session.ended), if it did. */
  ended?: ClientError;
}

/**
 * Classifies a failed request: a fired client timer, the caller's cancellation, the SDK's own
 * timeout (mapped to the client's one timeout error), a stdio server that ended under it (its
 * exit and stderr), or whatever classify() makes of it.
 */
export function failureOf(err: unknown, o: FailureContext): ClientError {
  const expired = o.deadline?.expired();
  if (expired) return expired;
  if (o.signal?.aborted) return classify(err, true);
  if (isSdkTimeout(err)) return timeoutError(o.limits, { timer: "sdk", cause: err });
  return o.ended ?? classify(err);
}

/** One received page of a list (tools/list, resources/list, ...). */
export interface Page {
  requestCursor: string | null;
  mcpResult: Record<string, unknown>;
}

/** One received tools/list page. */
export type ToolsPage = Page;

/** A paged list request: its method and the result member holding the items. */
export interface ListKind {
  method: string;
  key: string;
}

/** tools/list. */
export const TOOLS_LIST: ListKind = { method: "tools/list", key: "tools" };

/** Options of listToolsPages and listPages. */
export interface ListOptions {
  singlePage?: boolean;
  cursor?: string;
  maxPages: number;
  signal?: AbortSignal;
  /** Inactivity timeout of each page request (ms). */
  timeoutMs?: number;
  /** Total cap of each page request (ms). */
  maxTimeoutMs?: number;
}

/**
 * Follows nextCursor until it is absent (an empty string is a cursor). A repeated cursor or
 * more than maxPages pages is a protocol error rather than a loop.
 */
export function listToolsPages(s: Session, o: ListOptions): Promise<ToolsPage[]> {
  return listPages(s, TOOLS_LIST, o);
}

/**
 * Every page of one list (`kind`), each as received: follows nextCursor until it is absent (an
 * empty string is a cursor). A repeated cursor or more than maxPages pages is a protocol error
 * rather than a loop; a page without its items array is an invalid result.
 */
export async function listPages(s: Session, kind: ListKind, o: ListOptions): Promise<Page[]> {
  const { method, key } = kind;
  const pages: Page[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined = o.cursor;
  while (true) {
    if (pages.length >= o.maxPages) {
      throw new ClientError(
        "protocol",
        `${method} did not end within --max-pages ${o.maxPages} pages`,
        {
          details: { pages: pages.length },
        },
      );
    }
    const result = await rawRequest(
      s,
      { method, params: cursor === undefined ? {} : { cursor } },
      o,
    );
    pages.push({ requestCursor: cursor ?? null, mcpResult: result });
    if (!Array.isArray(result[key])) {
      throw new ClientError("invalid-result", `a ${method} page has no ${key} array`, {
        details: result,
      });
    }
    const next = result.nextCursor;
    if (o.singlePage || next === undefined || next === null) return pages;
    if (typeof next !== "string") {
      throw new ClientError("invalid-result", "nextCursor is not a string");
    }
    if (seen.has(next) || next === o.cursor) {
      throw new ClientError(
        "protocol",
        `${method} repeated the cursor ${JSON.stringify(next)}; stopped`,
        {
          details: { pages: pages.length },
        },
      );
    }
    seen.add(next);
    cursor = next;
  }
}

/** A tool as listed, with the problems found in it (tools with problems stay in the pages). */
export interface ListedTool {
  tool: Record<string, unknown>;
  problems: string[];
}

/** An HTTP field name: an RFC 9110 token. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Every place below `node` (a schema) that declares x-mcp-header, as JSON-pointer-like paths. */
function headerDeclarations(node: unknown, path: string, out: string[]): void {
  if (Array.isArray(node)) {
    node.forEach((v, i) => headerDeclarations(v, `${path}/${i}`, out));
    return;
  }
  if (!node || typeof node !== "object") return;
  for (const [k, v] of Object.entries(node)) {
    if (k === "x-mcp-header") out.push(path);
    else headerDeclarations(v, `${path}/${k}`, out);
  }
}

/**
 * Checks a tool's x-mcp-header annotations (SEP-2243): only on top-level properties of
 * primitive type (string, integer, boolean), names that are HTTP tokens, no duplicates
 * (case-insensitive). A tool with any problem is left out of the flattened inventory and
 * never called. Only where the headers are sent (modern-era Streamable HTTP): elsewhere the
 * annotation is inert and not checked.
 */
function toolProblems(tool: Record<string, unknown>, headers: boolean): string[] {
  const problems: string[] = [];
  if (typeof tool.name !== "string") problems.push("name is not a string");
  if (!headers) return problems;
  const schema = tool.inputSchema as
    | { properties?: Record<string, Record<string, unknown>> }
    | undefined;
  const props = schema?.properties ?? {};
  const names = new Set<string>();
  for (const [prop, p] of Object.entries(props)) {
    const h = p?.["x-mcp-header"];
    if (h === undefined) continue;
    if (typeof h !== "string" || !HEADER_NAME.test(h)) {
      problems.push(`${prop}: invalid x-mcp-header ${JSON.stringify(h)}`);
    } else if (names.has(h.toLowerCase())) problems.push(`${prop}: duplicate x-mcp-header ${h}`);
    // Header values must be exact: floating-point numbers are not allowed.
    else if (!["string", "integer", "boolean"].includes(String(p.type))) {
      problems.push(
        `${prop}: x-mcp-header on a property of type ${JSON.stringify(p.type ?? null)}`,
      );
    }
    if (typeof h === "string") names.add(h.toLowerCase());
  }
  const found: string[] = [];
  headerDeclarations(schema, "", found);
  for (const at of found) {
    if (!/^\/properties\/[^/]+$/.test(at)) {
      problems.push(`x-mcp-header at ${at || "/"}: only top-level properties may declare one`);
    }
  }
  return problems;
}

/** Options of flatten. */
export interface FlattenOptions {
  /**
   * Whether tool-defined headers are sent on the connection (Session.sendsToolHeaders), so
   * that invalid x-mcp-header annotations are problems. Default true.
   */
  headers?: boolean;
}

/** The flattened inventory: every page's tools in order, with problems found. */
export function flatten(pages: ToolsPage[], options: FlattenOptions = {}): ListedTool[] {
  const headers = options.headers ?? true;
  return pages.flatMap((p) =>
    (p.mcpResult.tools as Record<string, unknown>[]).map((tool) => ({
      tool,
      problems: toolProblems(tool, headers),
    }))
  );
}

/** tools show: all pages, then NAME picked locally (case-sensitive). */
export async function showTool(
  s: Session,
  name: string,
  o: ListOptions,
): Promise<{ tool: Record<string, unknown>; pages: ToolsPage[] }> {
  const pages = await listToolsPages(s, o);
  const hit = flatten(pages, { headers: false }).find((t) => t.tool.name === name);
  if (!hit) {
    const names = flatten(pages, { headers: false }).map((t) => String(t.tool.name));
    throw new ClientError(
      "usage",
      `no tool named ${JSON.stringify(name)}${didYouMean(name, names)}`,
    );
  }
  return { tool: hit.tool, pages };
}

/** Options of one call. */
export interface CallOptions {
  timeoutMs: number;
  maxTimeoutMs?: number;
  signal: AbortSignal;
  skipLocalValidation: boolean;
  /**
   * Why the arguments' key names may not be shown (they were read through a symbolic link,
   * decision 0060): a local mismatch then says how many problems, not which keys.
   */
  argumentNamesWithheld?: string;
  /** Return an input_required result as is (the run cannot answer it) instead of fulfilling it. */
  returnInputRequired: boolean;
  /** The tool's definition, when known (for validation). */
  tool?: Record<string, unknown>;
  onWarning: (message: string) => void;
  /** Called with each progress notification of the call. */
  onProgress?: (p: ProgressUpdate) => void;
}

/** The outcome of one tools/call. */
export interface CallOutcome {
  envelope: Record<string, unknown>;
  exitCode: number;
  error?: ClientError;
}

/** Calls one tool; the envelope keeps the whole received result plus client metadata beside it. */
export async function callTool(
  s: Session,
  name: string,
  args: Record<string, unknown>,
  o: CallOptions,
): Promise<CallOutcome> {
  checkArguments(name, args, o);
  const sent = await sendCall(s, name, args, o);
  const { last, sdkError } = sent;
  const meta = { ...metadataOf(s), rounds: sent.rounds };
  if (last && "error" in last) return rpcErrorOutcome(meta, last);
  if (!last || (sdkError !== undefined && !("result" in last))) {
    const error = failureOf(sdkError ?? new Error("no response"), sent.context);
    return { envelope: errorEnvelope(meta, last), exitCode: error.exitCode, error };
  }
  const result = last.result as Record<string, unknown>;
  const envelope = {
    contractVersion: CONTRACT_VERSION,
    operation: "tools/call",
    mcpResult: result,
    metadata: meta,
  };
  const verdict = resultVerdict(name, result, o);
  if (verdict === "tool-error") return { envelope, exitCode: 1 };
  if (verdict !== undefined) return withError(envelope, verdict);
  if (sdkError !== undefined) {
    // The wire result passed every check of ours; an absent resultType means complete
    // (the spec tells clients to assume so), so the SDK's stricter refusal is a warning.
    if (result.resultType === undefined && missingResultType(sdkError)) {
      o.onWarning(`the result has no resultType; treated as complete`);
      return { envelope, exitCode: 0 };
    }
    return withError(envelope, failureOf(sdkError, sent.context));
  }
  return { envelope, exitCode: 0 };
}

/** Checks the arguments against the tool's inputSchema (unless skipped): a usage error if not. */
function checkArguments(name: string, args: Record<string, unknown>, o: CallOptions): void {
  if (!o.tool || o.skipLocalValidation) return;
  const v = validate(o.tool.inputSchema, args);
  if (v.ok === false && o.argumentNamesWithheld !== undefined) {
    const n = v.errors.length;
    throw new ClientError(
      "usage",
      `arguments do not match ${name}'s inputSchema: ${n} problem${
        n === 1 ? "" : "s"
      } (details withheld: ${o.argumentNamesWithheld})`,
      { details: { problems: n } },
    );
  }
  if (v.ok === false) {
    throw new ClientError(
      "usage",
      `arguments do not match ${name}'s inputSchema: ${v.errors.join("; ")}`,
      {
        details: { errors: v.errors },
      },
    );
  }
  if (v.ok === "skipped") o.onWarning(`not validating arguments locally: ${v.why}`);
}

/** What sending one call left: its last tools/call response, the rounds, the SDK's error. */
interface SentCall {
  /** The raw response to the last tools/call request sent (input rounds send several). */
  last: RawMessage | undefined;
  /** How many tools/call requests were sent. */
  rounds: number;
  /** What the SDK's callTool threw, if it did. */
  sdkError: unknown;
  /** What failureOf needs to name a failure (the call's timers and signal, the server's end). */
  context: FailureContext;
}

/**
 * Sends the call through the SDK (header mirroring, cancellation, input rounds) under the
 * client's own timers: progress resets the inactivity one, an elicitation holds them.
 */
async function sendCall(
  s: Session,
  name: string,
  args: Record<string, unknown>,
  o: CallOptions,
): Promise<SentCall> {
  const before = s.sent.length;
  let sdkError: unknown;
  // The client's own timers govern (progress resets the inactivity one; the total one holds
  // regardless); the SDK's timer is set beyond them and never decides the outcome.
  const limits = { timeoutMs: o.timeoutMs, maxTimeoutMs: o.maxTimeoutMs };
  const deadline = startDeadline(limits, o.signal);
  const holdForElicitation = () => deadline.hold();
  s.onElicitation.add(holdForElicitation);
  try {
    await s.client.callTool({ name, arguments: args }, {
      ...deadline.sdkOptions,
      onprogress: (p: ProgressUpdate) => {
        deadline.touch();
        o.onProgress?.(p);
      },
      signal: deadline.signal,
      allowInputRequired: o.returnInputRequired,
    } as never);
  } catch (err) {
    sdkError = err;
  } finally {
    s.onElicitation.delete(holdForElicitation);
    deadline.dispose();
  }
  const calls = s.sent.slice(before).filter((r) => r.method === "tools/call" && r.id !== undefined);
  const last = calls.length ? s.responses.get(calls[calls.length - 1].id!) : undefined;
  const ended = sdkError === undefined ? undefined : await s.ended(sdkError, "tools/call");
  return {
    last,
    rounds: calls.length,
    sdkError,
    context: { deadline, signal: o.signal, limits, ended },
  };
}

/** A JSON-RPC error response as the client's failure: a protocol error with its code and data. */
export function rpcError(last: RawMessage): ClientError {
  const e = last.error as { code?: number; message?: string; data?: unknown };
  return new ClientError("protocol", e.message ?? "JSON-RPC error", {
    rpcCode: e.code,
    details: e.data,
  });
}

/** A JSON-RPC error answered the call: a protocol error with its code and data. */
function rpcErrorOutcome(meta: Record<string, unknown>, last: RawMessage): CallOutcome {
  const error = rpcError(last);
  return { envelope: errorEnvelope(meta, last), exitCode: error.exitCode, error };
}

/** The outcome of a received result the client finds fault with. */
function withError(envelope: Record<string, unknown>, error: ClientError): CallOutcome {
  return { envelope, exitCode: error.exitCode, error };
}

/**
 * The client's verdict on a received result, checked in this order: input required, an unknown
 * resultType, no content array, the tool's own error (`tool-error`, exit 1), structuredContent
 * against the outputSchema. Undefined when it passed.
 */
function resultVerdict(
  name: string,
  result: Record<string, unknown>,
  o: CallOptions,
): ClientError | "tool-error" | undefined {
  const incomplete = resultTypeVerdict(result);
  if (incomplete !== undefined) return incomplete;
  if (!Array.isArray(result.content)) {
    return new ClientError("invalid-result", "the tools/call result has no content array");
  }
  if (result.isError === true) return "tool-error";
  return outputVerdict(name, result, o);
}

/**
 * What a result's resultType says of it: input required (this run could not answer it), an
 * unrecognized type, or undefined when it is complete (an absent resultType counts as complete).
 */
export function resultTypeVerdict(result: Record<string, unknown>): ClientError | undefined {
  const resultType = result.resultType;
  if (resultType === "input_required") {
    return new ClientError(
      "input-required",
      "the server needs input that this run did not provide",
      { details: { inputRequests: result.inputRequests ?? null } },
    );
  }
  if (resultType !== undefined && resultType !== "complete") {
    return new ClientError(
      "invalid-result",
      `unrecognized resultType ${JSON.stringify(resultType)}`,
    );
  }
  return undefined;
}

/** structuredContent against the tool's outputSchema, when it declares one. */
function outputVerdict(
  name: string,
  result: Record<string, unknown>,
  o: CallOptions,
): ClientError | undefined {
  const outputSchema = o.tool?.outputSchema;
  if (outputSchema === undefined) return undefined;
  if (!("structuredContent" in result)) {
    return new ClientError(
      "invalid-result",
      `${name} declares an outputSchema but sent no structuredContent`,
    );
  }
  const v = validate(outputSchema, result.structuredContent);
  if (v.ok === false) {
    return new ClientError(
      "invalid-result",
      `structuredContent does not match ${name}'s outputSchema`,
      {
        details: { errors: v.errors },
      },
    );
  }
  if (v.ok === "skipped") o.onWarning(`not validating structuredContent: ${v.why}`);
  return undefined;
}

/** Whether the SDK refused a modern result for lacking resultType (SdkErrorCode.InvalidResult). */
export function missingResultType(err: unknown): boolean {
  return SdkError.isInstance(err) && err.code === SdkErrorCode.InvalidResult &&
    (err.data as { violation?: unknown } | undefined)?.violation === "missing-resultType";
}

function errorEnvelope(
  meta: Record<string, unknown>,
  raw: RawMessage | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    contractVersion: CONTRACT_VERSION,
    operation: "tools/call",
    metadata: meta,
  };
  if (raw && "error" in raw) out.mcpError = raw.error;
  return out;
}
