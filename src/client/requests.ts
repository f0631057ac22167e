/**
 * Beyond tools: resources, resource templates, prompts and ping, returning data (never printing).
 * The lists are commands.ts's listPages with their kinds; a read, a get and a ping are one request
 * each, sent under the client's own timers, judged in a fixed order, and enveloped with the raw
 * response the tap captured below the SDK (as a tools/call is).
 */
import { z } from "zod";
import { ClientError } from "./errors.ts";
import type { RawMessage, Session } from "./session.ts";
import { startDeadline } from "./deadline.ts";
import {
  CONTRACT_VERSION,
  failureOf,
  type ListKind,
  metadataOf,
  missingResultType,
  resultTypeVerdict,
  rpcError,
} from "./commands.ts";

/** resources/list. */
export const RESOURCES_LIST: ListKind = { method: "resources/list", key: "resources" };
/** resources/templates/list. */
export const RESOURCE_TEMPLATES_LIST: ListKind = {
  method: "resources/templates/list",
  key: "resourceTemplates",
};
/** prompts/list. */
export const PROMPTS_LIST: ListKind = { method: "prompts/list", key: "prompts" };

/** Options of one request (a read, a get, a ping). */
export interface RequestOptions {
  /** Inactivity timeout (ms). */
  timeoutMs: number;
  /** Total cap (ms). */
  maxTimeoutMs?: number;
  signal: AbortSignal;
  /** Return an input_required result as is (the run cannot answer it) instead of fulfilling it. */
  returnInputRequired: boolean;
  onWarning: (message: string) => void;
}

/** The outcome of one request: its envelope, exit code, and the client error when it failed. */
export interface RequestOutcome {
  envelope: Record<string, unknown>;
  exitCode: number;
  error?: ClientError;
}

/** What a result must have beyond being complete: a complaint, or undefined when it passes. */
type ResultCheck = (result: Record<string, unknown>) => string | undefined;

/** One request: its method and params. */
interface OneRequest {
  method: string;
  params?: Record<string, unknown>;
}

/** resources/read of one URI: its contents as received. */
export function readResource(
  s: Session,
  uri: string,
  o: RequestOptions,
): Promise<RequestOutcome> {
  return request(s, { method: "resources/read", params: { uri } }, o, {
    rounds: true,
    check: (r) =>
      Array.isArray(r.contents) ? undefined : "the resources/read result has no contents array",
  });
}

/** prompts/get of one prompt with its arguments (none sent when there are none). */
export function getPrompt(
  s: Session,
  name: string,
  args: Record<string, unknown>,
  o: RequestOptions,
): Promise<RequestOutcome> {
  const params = Object.keys(args).length > 0 ? { name, arguments: args } : { name };
  return request(s, { method: "prompts/get", params }, o, {
    rounds: true,
    check: (r) =>
      Array.isArray(r.messages) ? undefined : "the prompts/get result has no messages array",
  });
}

/**
 * One ping: its result (empty, as a rule) and the round trip in `metadata.roundTripMs`. The
 * 2026-07-28 revision removed `ping`; there the liveness round trip is `server/discover`, which
 * every server of that era answers and which changes nothing (`metadata.method` says which was
 * sent).
 */
export async function ping(s: Session, o: RequestOptions): Promise<RequestOutcome> {
  const method = s.era === "modern" ? "server/discover" : "ping";
  const started = performance.now();
  const outcome = await request(s, { method }, o, {
    operation: "ping",
    rounds: false,
    check: () => undefined,
  });
  const metadata = outcome.envelope.metadata as Record<string, unknown>;
  metadata.method = method;
  if ("mcpResult" in outcome.envelope) {
    metadata.roundTripMs = Math.round((performance.now() - started) * 10) / 10;
  }
  return outcome;
}

const anyResult = z.unknown();

/** What sending one request left: its last raw response, the rounds, the SDK's error. */
interface Sent {
  last: RawMessage | undefined;
  rounds: number;
  sdkError: unknown;
  failure: (err: unknown) => ClientError;
}

/**
 * Sends one request through the SDK (cancellation, input rounds) under the client's own timers
 * (an elicitation holds them) and reads back what the tap captured of it.
 */
async function send(s: Session, req: OneRequest, o: RequestOptions): Promise<Sent> {
  const before = s.sent.length;
  const limits = { timeoutMs: o.timeoutMs, maxTimeoutMs: o.maxTimeoutMs };
  const deadline = startDeadline(limits, o.signal);
  const hold = () => deadline.hold();
  s.onElicitation.add(hold);
  let sdkError: unknown;
  try {
    await s.client.request(
      (req.params === undefined ? { method: req.method } : req) as never,
      anyResult as never,
      {
        ...deadline.sdkOptions,
        signal: deadline.signal,
        allowInputRequired: o.returnInputRequired,
      } as never,
    );
  } catch (err) {
    sdkError = err;
  } finally {
    s.onElicitation.delete(hold);
    deadline.dispose();
  }
  // A response over the message cap ended the connection: that is the failure, and nothing
  // (no envelope) is printed.
  const capped = s.failure();
  if (capped) throw capped;
  const mine = s.sent.slice(before).filter((r) => r.method === req.method && r.id !== undefined);
  const ended = sdkError === undefined ? undefined : await s.ended(sdkError, req.method);
  return {
    last: mine.length ? s.responses.get(mine[mine.length - 1].id!) : undefined,
    rounds: mine.length,
    sdkError,
    failure: (err) => failureOf(err, { deadline, signal: o.signal, limits, ended }),
  };
}

/**
 * One request and its verdict, in this order: a JSON-RPC error (protocol, exit 4), no response
 * (the timer, transport or SDK failure), input required (exit 6), an unknown resultType or a
 * result failing `check` (invalid result, exit 5), then whatever else the SDK refused. The
 * envelope keeps the raw result (`mcpResult`) or error (`mcpError`) with client metadata beside.
 */
async function request(
  s: Session,
  req: OneRequest,
  o: RequestOptions,
  how: { operation?: string; rounds: boolean; check: ResultCheck },
): Promise<RequestOutcome> {
  const sent = await send(s, req, o);
  const { last, sdkError } = sent;
  const envelope: Record<string, unknown> = {
    contractVersion: CONTRACT_VERSION,
    operation: how.operation ?? req.method,
  };
  const metadata = { ...metadataOf(s), ...(how.rounds ? { rounds: sent.rounds } : {}) };
  if (last && "error" in last) {
    return failed({ ...envelope, mcpError: last.error, metadata }, rpcError(last));
  }
  if (!last || !("result" in last)) {
    return failed({ ...envelope, metadata }, sent.failure(sdkError ?? new Error("no response")));
  }
  const result = last.result as Record<string, unknown>;
  const whole = { ...envelope, mcpResult: result, metadata };
  const verdict = resultVerdict(req.method, result, how.check);
  if (verdict !== undefined) return failed(whole, verdict);
  if (sdkError !== undefined) {
    // Every check of ours passed; an absent resultType means complete (the spec tells clients
    // to assume so), so the SDK's stricter refusal is a warning.
    if (result.resultType === undefined && missingResultType(sdkError)) {
      o.onWarning(`the result has no resultType; treated as complete`);
      return { envelope: whole, exitCode: 0 };
    }
    return failed(whole, sent.failure(sdkError));
  }
  return { envelope: whole, exitCode: 0 };
}

/** The outcome of a request that failed with `error`. */
function failed(envelope: Record<string, unknown>, error: ClientError): RequestOutcome {
  return { envelope, exitCode: error.exitCode, error };
}

/** input_required, an unknown resultType, or what `check` finds; undefined when it passed. */
function resultVerdict(
  method: string,
  result: Record<string, unknown>,
  check: ResultCheck,
): ClientError | undefined {
  if (typeof result !== "object" || result === null || Array.isArray(result)) {
    return new ClientError("invalid-result", `the ${method} result is not an object`);
  }
  const incomplete = resultTypeVerdict(result);
  if (incomplete !== undefined) return incomplete;
  const complaint = check(result);
  return complaint === undefined ? undefined : new ClientError("invalid-result", complaint);
}
