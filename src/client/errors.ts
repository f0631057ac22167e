/** Failure classes of the MCP tool client, one exit code each. */
import {
  InsufficientScopeError,
  IssuerMismatchError,
  OAuthClientFlowError,
  OAuthError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { AuthFlowError } from "./auth/loopback.ts";
import { CredentialStoreError } from "./auth/store.ts";
import {
  networkFailureWords,
  outputSchemaRefusal,
  protectedResourceMismatch,
  refusedAfterAuthorization,
  relayedRequestTimeout,
} from "../workarounds/sdk_error_text.ts";
import { networkReason } from "../workarounds/deno_fetch_error.ts";
import { shownUrl } from "./shown_url.ts";
import { redacted, redactedDeep } from "./redaction.ts";

/** Exit codes of the client commands (INTERFACES.md, "Bundled ad hoc MCP tool client"). */
export const CLIENT_EXIT = {
  ok: 0,
  toolError: 1,
  usage: 2,
  transport: 3,
  protocol: 4,
  invalidResult: 5,
  inputRequired: 6,
  timeout: 7,
  auth: 8,
} as const;

/** A failure class. */
export type FailureClass =
  | "usage"
  | "transport"
  | "protocol"
  | "invalid-result"
  | "input-required"
  | "timeout"
  | "auth";

const EXIT_OF: Record<FailureClass, number> = {
  usage: CLIENT_EXIT.usage,
  transport: CLIENT_EXIT.transport,
  protocol: CLIENT_EXIT.protocol,
  "invalid-result": CLIENT_EXIT.invalidResult,
  "input-required": CLIENT_EXIT.inputRequired,
  timeout: CLIENT_EXIT.timeout,
  auth: CLIENT_EXIT.auth,
};

/** A classified client failure. */
export class ClientError extends Error {
  /** What failed: the class that decides the exit code. */
  readonly failure: FailureClass;
  /** JSON-RPC error code, for protocol errors. */
  readonly rpcCode?: number;
  /** Extra structured detail (the JSON-RPC error data, the invalid result, ...). */
  readonly details?: unknown;

  /** A failure of a class, with a message and optional JSON-RPC code, details and cause. */
  constructor(
    failure: FailureClass,
    message: string,
    options: { rpcCode?: number; details?: unknown; cause?: unknown } = {},
  ) {
    // No expanded config value is ever quoted (redaction.ts): whoever wrote the message.
    super(redacted(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ClientError";
    this.failure = failure;
    this.rpcCode = options.rpcCode;
    this.details = options.details;
  }

  /** The exit code of this class. */
  get exitCode(): number {
    return EXIT_OF[this.failure];
  }

  /** The JSON error object printed on stderr. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = {
      class: this.failure,
      exitCode: this.exitCode,
      message: this.message,
    };
    if (this.rpcCode !== undefined) out.code = this.rpcCode;
    if (this.details !== undefined) out.details = redactedDeep(this.details);
    return out;
  }
}

/**
 * The failure class of each SDK error code the client tells apart (SdkErrorCode of
 * @modelcontextprotocol/client 2.4.0); a code not listed falls through to the rules below.
 */
const SDK_FAILURE: Partial<Record<SdkErrorCode, FailureClass>> = {
  [SdkErrorCode.RequestTimeout]: "timeout",
  [SdkErrorCode.InputRequiredRoundsExceeded]: "input-required",
  // An HTTP-level refusal (no or wrong credentials) never reached JSON-RPC: a transport
  // failure, not a protocol one.
  [SdkErrorCode.ClientHttpAuthentication]: "transport",
  [SdkErrorCode.ClientHttpForbidden]: "transport",
  [SdkErrorCode.EraNegotiationFailed]: "protocol",
  [SdkErrorCode.UnsupportedResultType]: "protocol",
  [SdkErrorCode.ListPaginationExceeded]: "protocol",
  [SdkErrorCode.NotConnected]: "transport",
  [SdkErrorCode.AlreadyConnected]: "transport",
  [SdkErrorCode.ConnectionClosed]: "transport",
};

/** Codes of a failed negotiation: a transport failure when their cause is one. */
const NEGOTIATION_CODES: ReadonlySet<SdkErrorCode> = new Set([
  SdkErrorCode.EraNegotiationFailed,
  SdkErrorCode.UnsupportedResultType,
]);

/** The class of an SDK error by its code and HTTP status, if the client tells it apart. */
function sdkFailure(err: SdkError): FailureClass | undefined {
  const failure = SDK_FAILURE[err.code];
  if (failure === "timeout" || failure === "input-required") return failure;
  // Any other HTTP 401/403 (a refused stream, say) is a transport failure too.
  const status = SdkHttpError.isInstance(err) ? err.status : undefined;
  if (status === 401 || status === 403) return "transport";
  if (NEGOTIATION_CODES.has(err.code)) {
    // A probe that never reached the server (connection refused, reset) fails negotiation
    // with the network error as its cause: that is a transport failure.
    const cause = err.cause;
    if (cause !== undefined && cause !== err && classify(cause).failure === "transport") {
      return "transport";
    }
  }
  return failure;
}

/**
 * The transport failure of an address that could not be reached, `cannot reach URL: REASON`
 * (REASON the operating system's, URL redacted: shownUrl), when err is a network failure with an
 * OS-level reason anywhere in its cause chain; undefined otherwise. The one wording of every
 * client command that connects (tools, server-info, auth login).
 */
export function unreachableError(
  url: URL,
  err: unknown,
  details?: unknown,
  shown?: string,
): ClientError | undefined {
  const reason = networkReason(err);
  if (reason === undefined) return undefined;
  return new ClientError("transport", `cannot reach ${shown ?? shownUrl(url)}: ${reason}`, {
    cause: err,
    details,
  });
}

/**
 * The class of a sign-in's own failure, the same in `auth login` and in a sign-in a client command
 * starts: no answer in time or an interrupted wait is `timeout` (7), a loopback port that cannot be
 * listened on is `transport` (3), anything else (nobody here to sign in, a state mismatch, a denied
 * or unsafe request) is `auth` (8).
 */
export function authFlowFailure(err: AuthFlowError, cause: unknown = err): ClientError {
  const cls: FailureClass = err.failure === "timeout" || err.failure === "cancelled"
    ? "timeout"
    : err.failure === "listen"
    ? "transport"
    : "auth";
  return new ClientError(cls, err.message, { details: { auth: err.failure }, cause });
}

/** Classifies anything the SDK or the transport threw. */
export function classify(err: unknown, aborted = false): ClientError {
  if (err instanceof ClientError) return err;
  const e = err as { code?: unknown; message?: string; data?: unknown };
  const message = e?.message ?? String(err);
  if (aborted) return new ClientError("timeout", `cancelled: ${message}`, { cause: err });
  const authFailure = oauthFailure(err);
  if (authFailure) return authFailure;
  // SDK errors carry SdkErrorCode strings; JSON-RPC errors (ProtocolError) numeric codes.
  if (SdkError.isInstance(err)) {
    const failure = sdkFailure(err);
    if (failure !== undefined) return new ClientError(failure, message, { cause: err });
  }
  if (typeof e?.code === "number") {
    if (relayedRequestTimeout(e.code, message)) {
      return new ClientError("timeout", message, { cause: err });
    }
    return new ClientError("protocol", message, { rpcCode: e.code, details: e.data, cause: err });
  }
  if (outputSchemaRefusal(message)) {
    return new ClientError("invalid-result", message, { cause: err });
  }
  if (err instanceof TypeError || networkFailureWords(message)) {
    return new ClientError("transport", message, { cause: err });
  }
  return new ClientError("protocol", message, { cause: err });
}

/**
 * An MCP authorization (OAuth) failure anywhere in err's cause chain, as class `auth`: the
 * SDK's OAuth errors, a refused token after (re-)authorization, a resource or issuer mismatch.
 * An `iss` mismatch on the authorization response is reported without the received value
 * (attacker-controlled in a mix-up attack).
 */
function oauthFailure(err: unknown): ClientError | undefined {
  const seen = new Set<unknown>();
  for (let c: unknown = err; c && !seen.has(c); c = (c as { cause?: unknown }).cause) {
    seen.add(c);
    if (c instanceof ClientError) return c.failure === "auth" ? c : undefined;
    if (c instanceof AuthFlowError) return authFlowFailure(c, err);
    if (IssuerMismatchError.isInstance(c) && c.kind === "authorization_response") {
      return new ClientError(
        "auth",
        "authorization failed: the authorization response's issuer (iss) is missing or is not " +
          `the authorization server's (${JSON.stringify(c.expected ?? "")}); refused (RFC 9207)`,
        { cause: err },
      );
    }
    // Not here: InsufficientScopeError and the negotiation probe's 401/403 SdkHttpError, which
    // the SDK raises without any OAuth flow too (a static token refused: class transport).
    const flow = (OAuthClientFlowError.isInstance(c) && !InsufficientScopeError.isInstance(c)) ||
      OAuthError.isInstance(c) || UnauthorizedError.isInstance(c) ||
      c instanceof AuthFlowError || c instanceof CredentialStoreError ||
      (SdkError.isInstance(c) && c.code === SdkErrorCode.ClientHttpAuthentication &&
        refusedAfterAuthorization(c, 401)) ||
      (SdkError.isInstance(c) && c.code === SdkErrorCode.ClientHttpForbidden &&
        refusedAfterAuthorization(c, 403)) ||
      protectedResourceMismatch(c);
    if (flow) {
      const message = String((c as { message?: unknown }).message ?? "");
      return new ClientError("auth", `authorization failed: ${message}`, { cause: err });
    }
  }
  return undefined;
}
