/**
 * classify(): the SDK's errors by SdkErrorCode, SdkHttpError status and class, JSON-RPC errors
 * by code, with real SDK error instances (the table in src/client/errors.ts).
 */
import assert from "node:assert/strict";
import {
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { classify, ClientError } from "../../src/client/errors.ts";
import { isSdkTimeout } from "../../src/client/deadline.ts";

Deno.test("classify maps each SdkErrorCode to its failure class", () => {
  const expected: Record<SdkErrorCode, string> = {
    [SdkErrorCode.NotConnected]: "transport",
    [SdkErrorCode.AlreadyConnected]: "transport",
    [SdkErrorCode.NotInitialized]: "protocol",
    [SdkErrorCode.CapabilityNotSupported]: "protocol",
    [SdkErrorCode.RequestTimeout]: "timeout",
    [SdkErrorCode.ConnectionClosed]: "transport",
    [SdkErrorCode.SendFailed]: "protocol",
    [SdkErrorCode.InvalidResult]: "protocol",
    [SdkErrorCode.UnsupportedResultType]: "protocol",
    [SdkErrorCode.InputRequiredRoundsExceeded]: "input-required",
    [SdkErrorCode.ListPaginationExceeded]: "protocol",
    [SdkErrorCode.MethodNotSupportedByProtocolVersion]: "protocol",
    [SdkErrorCode.EraNegotiationFailed]: "protocol",
    [SdkErrorCode.ClientHttpNotImplemented]: "protocol",
    [SdkErrorCode.ClientHttpAuthentication]: "transport",
    [SdkErrorCode.ClientHttpForbidden]: "transport",
    [SdkErrorCode.ClientHttpUnexpectedContent]: "protocol",
    [SdkErrorCode.ClientHttpFailedToOpenStream]: "protocol",
    [SdkErrorCode.ClientHttpFailedToTerminateSession]: "protocol",
  };
  for (const [code, failure] of Object.entries(expected)) {
    const e = classify(new SdkError(code as SdkErrorCode, "neutral words"));
    assert.equal(e.failure, failure, code);
  }
  assert.equal(classify(new SdkError(SdkErrorCode.RequestTimeout, "x")).exitCode, 7);
});

Deno.test("classify: HTTP 401/403, negotiation causes, JSON-RPC codes, OAuth and plain errors", () => {
  const refused = new SdkHttpError(SdkErrorCode.ClientHttpFailedToOpenStream, "stream refused", {
    status: 403,
  });
  assert.equal(classify(refused).failure, "transport", "any 401/403 is a transport failure");
  const neverReached = new SdkError(SdkErrorCode.EraNegotiationFailed, "probe failed", undefined, {
    cause: new TypeError("fetch failed"),
  });
  assert.equal(classify(neverReached).failure, "transport", "a probe that never reached");
  const rpc = classify(new ProtocolError(ProtocolErrorCode.InvalidParams, "bad", { x: 1 }));
  assert.deepEqual([rpc.failure, rpc.rpcCode, rpc.details], ["protocol", -32602, { x: 1 }]);
  assert.equal(classify({ code: -32001, message: "Request timed out" }).failure, "timeout");
  assert.equal(classify({ code: -32001, message: "Session not found" }).failure, "protocol");
  assert.equal(classify(new UnauthorizedError("no")).failure, "auth");
  const after = new SdkHttpError(
    SdkErrorCode.ClientHttpAuthentication,
    "Server returned 401 after re-authentication",
    { status: 401 },
  );
  assert.equal(classify(after).failure, "auth");
  assert.equal(classify(new TypeError("fetch failed")).failure, "transport");
  assert.equal(classify(new Error("write EPIPE")).failure, "transport");
  assert.equal(classify(new Error("structuredContent mismatch")).failure, "invalid-result");
  assert.equal(classify(new Error("something odd")).failure, "protocol");
  assert.equal(classify(new Error("x"), true).failure, "timeout", "aborted");
  const own = new ClientError("usage", "u");
  assert.equal(classify(own), own);
});

Deno.test("isSdkTimeout: SdkErrorCode.RequestTimeout or a relayed -32001 timeout only", () => {
  assert.ok(isSdkTimeout(new SdkError(SdkErrorCode.RequestTimeout, "Request timed out")));
  assert.ok(!isSdkTimeout(new SdkError(SdkErrorCode.ConnectionClosed, "timed out")));
  assert.ok(isSdkTimeout({ code: -32001, message: "Request timed out" }));
  assert.ok(!isSdkTimeout({ code: -32001, message: "Session not found" }));
  assert.ok(!isSdkTimeout(new Error("timed out")));
});
