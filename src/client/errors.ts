/** Failure classes of the MCP tool client, one exit code each. */
import {
  InsufficientScopeError,
  IssuerMismatchError,
  OAuthClientFlowError,
  OAuthError,
  UnauthorizedError,
} from "@modelcontextprotocol/client";

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
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
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
    if (this.details !== undefined) out.details = this.details;
    return out;
  }
}

/** Classifies anything the SDK or the transport threw. */
export function classify(err: unknown, aborted = false): ClientError {
  if (err instanceof ClientError) return err;
  const e = err as { name?: string; code?: unknown; message?: string; data?: unknown };
  const message = e?.message ?? String(err);
  if (aborted) return new ClientError("timeout", `cancelled: ${message}`, { cause: err });
  const authFailure = oauthFailure(err);
  if (authFailure) return authFailure;
  // SDK errors carry string codes; JSON-RPC errors numeric ones.
  if (typeof e?.code === "string") {
    const code = e.code.toUpperCase();
    if (code.includes("TIMEOUT")) return new ClientError("timeout", message, { cause: err });
    if (code.includes("INPUT_REQUIRED")) {
      return new ClientError("input-required", message, { cause: err });
    }
    // An HTTP-level refusal (SdkHttpError 401/403: no or wrong credentials) never reached
    // JSON-RPC: the SDK reports it as a transport (HTTP) error, not a protocol error.
    const status = (err as { status?: unknown }).status;
    if (
      code.startsWith("CLIENT_HTTP_AUTH") || code === "CLIENT_HTTP_FORBIDDEN" || status === 401 ||
      status === 403
    ) {
      return new ClientError("transport", message, { cause: err });
    }
    if (code.includes("ERA_NEGOTIATION") || code.includes("UNSUPPORTED")) {
      // A probe that never reached the server (connection refused, reset) fails negotiation
      // with the network error as its cause: that is a transport failure.
      const cause = (err as { cause?: unknown }).cause;
      if (cause !== undefined && cause !== err && classify(cause).failure === "transport") {
        return new ClientError("transport", message, { cause: err });
      }
      return new ClientError("protocol", message, { cause: err });
    }
    if (code.includes("PAGINATION")) return new ClientError("protocol", message, { cause: err });
    if (
      code.includes("CONNECT") || code.includes("CLOSED") || code.includes("TRANSPORT") ||
      code.includes("NOT_CONNECTED")
    ) {
      return new ClientError("transport", message, { cause: err });
    }
  }
  if (typeof e?.code === "number") {
    if (e.code === -32001 && /timed out/i.test(message)) {
      return new ClientError("timeout", message, { cause: err });
    }
    return new ClientError("protocol", message, { rpcCode: e.code, details: e.data, cause: err });
  }
  if (/output schema|structured content|structuredContent/i.test(message)) {
    return new ClientError("invalid-result", message, { cause: err });
  }
  if (
    err instanceof TypeError ||
    /ECONNREFUSED|fetch|connect|spawn|ENOENT|closed|EPIPE|network/i.test(message)
  ) {
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
    const message = String((c as { message?: unknown }).message ?? "");
    if (IssuerMismatchError.isInstance(c) && c.kind === "authorization_response") {
      return new ClientError(
        "auth",
        "authorization failed: the authorization response's issuer (iss) is missing or is not " +
          `the authorization server's (${JSON.stringify(c.expected ?? "")}); refused (RFC 9207)`,
        { cause: err },
      );
    }
    const code = String((c as { code?: unknown }).code ?? "").toUpperCase();
    const name = String((c as { name?: unknown }).name ?? "");
    // Not here: InsufficientScopeError and the negotiation probe's 401/403 SdkHttpError, which
    // the SDK raises without any OAuth flow too (a static token refused: class transport).
    const flow = (OAuthClientFlowError.isInstance(c) && !InsufficientScopeError.isInstance(c)) ||
      OAuthError.isInstance(c) || UnauthorizedError.isInstance(c) ||
      name === "AuthFlowError" || name === "CredentialStoreError" ||
      (code === "CLIENT_HTTP_AUTHENTICATION" && /after re-authentication/.test(message)) ||
      (code === "CLIENT_HTTP_FORBIDDEN" && /after step-up/.test(message)) ||
      /^Protected resource .* does not match expected/.test(message);
    if (flow) {
      return new ClientError("auth", `authorization failed: ${message}`, { cause: err });
    }
  }
  return undefined;
}
