/**
 * The SDK texts src/workarounds/sdk_error_text.ts still has to match (the SDK gives these
 * cases no code or data of their own): one reproduced for real (a stdio server that ends on
 * the server/discover probe), the others read from the SDK's shipped code, so a reworded SDK
 * fails here before the client misclassifies anything. When the SDK gives them codes, match
 * those instead and delete the module's matching functions.
 */
import assert from "node:assert/strict";
import { Client, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { ErrorCode as V1ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import {
  closedDuringDiscoverProbe,
  protectedResourceMismatch,
  refusedAfterAuthorization,
  relayedRequestTimeout,
} from "../../src/workarounds/sdk_error_text.ts";

/** The SDK client's shipped JavaScript, all of it. */
function sdkClientSource(): string {
  const dir = new URL("../../node_modules/@modelcontextprotocol/client/dist/", import.meta.url);
  return [...Deno.readDirSync(dir)]
    .filter((e) => e.isFile && e.name.endsWith(".mjs"))
    .map((e) => Deno.readTextFileSync(new URL(e.name, dir)))
    .join("\n");
}

/** A subclass, as the client's ChildTransport is: the SDK then probes in place. */
class InPlaceStdio extends StdioClientTransport {}

Deno.test("upstream: a stdio server that ends on the probe is ERA_NEGOTIATION_FAILED told apart only by words", async () => {
  // Reads one line (the server/discover probe) and exits, as SDKs that end on any request
  // before initialize do.
  const transport = new InPlaceStdio({ command: "sh", args: ["-c", "read line; exit 0"] });
  const client = new Client({ name: "probe-test", version: "0" }, {
    versionNegotiation: { mode: "auto", probe: { timeoutMs: 10_000 } },
  });
  const err = await client.connect(transport, { timeout: 10_000 }).then(
    () => assert.fail("the server ended"),
    (e) => e,
  );
  await client.close().catch(() => {});
  assert.ok(SdkError.isInstance(err), String(err));
  assert.equal(err.code, SdkErrorCode.EraNegotiationFailed);
  assert.equal(err.data, undefined, "no structured detail says why");
  assert.ok(closedDuringDiscoverProbe(err), `reworded? ${err.message}`);
});

Deno.test("upstream: the SDK's texts for a refusal after authorization and a resource mismatch", () => {
  const source = sdkClientSource();
  const after401 = source.match(/"(Server returned 401 after re-authentication)"/)?.[1];
  assert.ok(after401 !== undefined, "reworded 401 text: update sdk_error_text.ts");
  assert.ok(refusedAfterAuthorization(new Error(after401), 401));
  const after403 = source.match(/`(Server returned 403 insufficient_scope after step-up[^`$]*)/)
    ?.[1];
  assert.ok(after403 !== undefined, "reworded 403 text: update sdk_error_text.ts");
  assert.ok(refusedAfterAuthorization(new Error(after403), 403));
  // The probe's own 401/403 (no authorization attempted) must not match.
  assert.ok(source.includes("the server requires authorization (HTTP 401)"));
  assert.ok(
    !refusedAfterAuthorization(
      new Error("Version negotiation failed: the server requires authorization (HTTP 401)"),
      401,
    ),
  );
  assert.ok(
    /`Protected resource \$\{[^}]+\} does not match expected \$\{/.test(source),
    "reworded resource mismatch: update sdk_error_text.ts",
  );
  assert.ok(
    protectedResourceMismatch(
      new Error("Protected resource https://a/ does not match expected https://b/ (or origin)"),
    ),
  );
});

Deno.test("-32001 is the v1 SDK's RequestTimeout; only a 'timed out' text makes it one", () => {
  assert.equal(V1ErrorCode.RequestTimeout, -32001);
  assert.ok(relayedRequestTimeout(V1ErrorCode.RequestTimeout, "Request timed out"));
  assert.ok(!relayedRequestTimeout(V1ErrorCode.RequestTimeout, "Session not found"));
  assert.ok(!relayedRequestTimeout(-32603, "Request timed out"));
});
