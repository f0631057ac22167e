/**
 * The upstream behaviour behind src/workarounds/deno_fetch_error.ts (denoland/deno#20394):
 * Deno's fetch rejects a refused connection with a TypeError whose cause has neither a code nor
 * a Deno.errors class, only words. A real refused connection on 127.0.0.1. When the first test
 * fails, the cause is structured: read that and delete the workaround.
 */
import assert from "node:assert/strict";
import { networkReason, unreachableWords } from "../../src/workarounds/deno_fetch_error.ts";

/** A loopback port nothing listens on (bound, then closed). */
function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

Deno.test("upstream: a refused fetch carries its reason only in words (Deno 2.9.6)", async () => {
  const err = await fetch(`http://127.0.0.1:${closedPort()}/`).then(
    () => assert.fail("nothing listens there"),
    (e) => e,
  );
  assert.ok(err instanceof TypeError);
  const cause = err.cause as { code?: unknown } | undefined;
  assert.ok(cause !== undefined, "the OS reason is in the cause");
  assert.ok(
    cause.code === undefined && !(cause instanceof Deno.errors.ConnectionRefused),
    "upstream fixed? read the code and delete deno_fetch_error.ts",
  );
  assert.equal(networkReason(err), "Connection refused (os error 111)");
  assert.ok(unreachableWords(err.message));
});

Deno.test("networkReason: DNS words, Node-style codes, and nothing for other errors", () => {
  const dns = new TypeError("fetch failed", {
    cause: new Error("error sending request: client error (Connect): dns error: no such host"),
  });
  assert.equal(networkReason(dns), "the host name did not resolve (no such host)");
  assert.equal(
    networkReason(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })),
    "read ECONNRESET",
  );
  assert.equal(networkReason(Object.assign(new Error("spawn x"), { code: "ENOENT" })), undefined);
  assert.equal(networkReason(new Error("something else")), undefined);
});
