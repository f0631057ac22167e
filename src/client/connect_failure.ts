/**
 * Why a connect failed, in words that name the cause: the message cap, the authorization flow, a
 * timer, a stdio server's exit and last stderr lines, an unreachable address, an endpoint that
 * speaks the older HTTP+SSE transport.
 */
import {
  SdkError,
  SdkErrorCode,
  type SSEClientTransport,
  type StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { classify, ClientError, unreachableError } from "./errors.ts";
import { timeoutError } from "./deadline.ts";
import { ChildTransport, diedMessage } from "./child_transport.ts";
import type { Target } from "./config_file.ts";
import type { WmcpAuthProvider } from "./auth/provider.ts";
import { shownUrl } from "./shown_url.ts";
import { closedDuringDiscoverProbe } from "../workarounds/sdk_error_text.ts";

/** Whether connecting failed because the stdio server ended on the server/discover probe. */
export function closedOnProbe(err: unknown, t: ChildTransport): boolean {
  return SdkError.isInstance(err) && err.code === SdkErrorCode.EraNegotiationFailed &&
    t.exit !== null && closedDuringDiscoverProbe(err);
}

/**
 * How a stdio server that ended on its own ended, as the transport failure to report: its exit
 * code or signal and the last lines of its stderr (`during` says when: "before the connection was
 * set up", "before it answered tools/call"). Undefined when it has not ended, or the client ended
 * it.
 */
export async function serverEnded(
  t: ChildTransport,
  during: string,
  cause: unknown,
): Promise<ClientError | undefined> {
  if (t.exit === null) return undefined;
  // Its last stderr bytes may still be on their way through the pipe.
  await t.stderrSettled();
  return new ClientError("transport", diedMessage(t, during), {
    cause,
    details: { exitCode: t.exit.code, signal: t.exit.signal, stderrTail: t.stderrTail() },
  });
}

/**
 * Whether a request failed because the connection was gone: closed under it (the SDK's
 * CONNECTION_CLOSED) or before it was sent (NOT_CONNECTED).
 */
export function connectionGone(err: unknown): boolean {
  return SdkError.isInstance(err) &&
    (err.code === SdkErrorCode.ConnectionClosed || err.code === SdkErrorCode.NotConnected);
}

/**
 * The classified error of a failed connect, naming the cause: a stdio server's exit and last
 * stderr lines, an unreachable address and the OS reason, an endpoint that speaks the older
 * HTTP+SSE transport.
 */
export async function describeFailure(
  err: unknown,
  t: ChildTransport | StreamableHTTPClientTransport | SSEClientTransport,
  options: { target: Target; connectTimeoutMs: number; authProvider?: WmcpAuthProvider },
  capFailure?: ClientError,
): Promise<ClientError> {
  // A response over the message cap ended the connection below the SDK: that is the cause.
  if (capFailure !== undefined) return capFailure;
  // What failed in the authorization flow reaches us reworded (a failed negotiation probe, an
  // UnauthorizedError): the provider's own record of it is the cause to report.
  const authFailure = options.authProvider?.lastFailure;
  const e = classify(authFailure !== undefined ? authFailure : err);
  // One timeout message whichever timer fired (the SDK's connect or probe timer here). A sign-in
  // that ran out of its own time, or was interrupted, says so as `auth login` does.
  if (e.failure === "timeout" && authFailure === undefined) {
    return timeoutError({ connectTimeoutMs: options.connectTimeoutMs }, {
      timer: "connect",
      cause: err,
    });
  }
  if (err instanceof ClientError || e.failure === "auth" || authFailure !== undefined) return e;
  const target = options.target;
  if (t instanceof ChildTransport) {
    return await serverEnded(t, "before the connection was set up", err) ?? e;
  }
  if (target.kind === "stdio") return e;
  const unreachable = unreachableError(target.url, err, undefined, target.shown?.url);
  if (unreachable !== undefined) return unreachable;
  if (target.kind === "http" && await speaksSse(target)) {
    return new ClientError(
      "transport",
      `${
        target.shown?.url ?? shownUrl(target.url)
      } speaks the older HTTP+SSE transport (MCP 2024-11-05), not Streamable ` +
        `HTTP: give the config entry "type": "sse", or use --transport sse with --endpoint`,
      { cause: err },
    );
  }
  return e;
}

/**
 * Whether the endpoint speaks the older HTTP+SSE transport: a GET answers with an event
 * stream whose first event is `endpoint`. Bounded in time and bytes; any other answer is no.
 */
async function speaksSse(target: { url: URL; headers: Record<string, string> }): Promise<boolean> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 3000);
  try {
    const res = await fetch(target.url, {
      headers: { ...target.headers, accept: "text/event-stream" },
      signal: abort.signal,
    });
    if (!res.ok || !String(res.headers.get("content-type")).includes("text/event-stream")) {
      await res.body?.cancel();
      return false;
    }
    const reader = res.body!.getReader();
    let text = "";
    const decoder = new TextDecoder();
    while (text.length < 4096) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (/\n\r?\n/.test(text)) break; // the first event is complete
    }
    await reader.cancel().catch(() => {});
    return /^event:\s*endpoint\s*$/m.test(text);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}
