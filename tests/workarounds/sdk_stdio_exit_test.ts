/**
 * The upstream gap behind src/workarounds/sdk_stdio_exit.ts: the SDK's StdioClientTransport
 * has no public exit status of its child, so the client reads the private `_process` handle.
 * The first test fails when the SDK grows a public exit status (then use it) or drops the
 * private handle (then the workaround reports nothing: revisit it).
 */
import assert from "node:assert/strict";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { type ChildExit, onStdioChildExit } from "../../src/workarounds/sdk_stdio_exit.ts";

Deno.test("upstream: StdioClientTransport exposes no exit status; onStdioChildExit reads it (SDK 2.4.0)", async () => {
  const transport = new StdioClientTransport({
    command: "sh",
    args: ["-c", "exit 3"],
    stderr: "pipe",
  });
  assert.equal(onStdioChildExit(transport, () => {}), false, "nothing to read before start()");
  await transport.start();
  const exit = new Promise<ChildExit>((resolve) => {
    assert.ok(onStdioChildExit(transport, resolve), "the private child handle is there");
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const got = await Promise.race([
    exit,
    new Promise<"none">((r) => timer = setTimeout(() => r("none"), 5000)),
  ]).finally(() => clearTimeout(timer));
  assert.deepEqual(got, { code: 3, signal: null });
  for (const name of ["exitCode", "signalCode", "onexit", "exitStatus"]) {
    assert.ok(!(name in transport), `upstream has ${name}? use it and delete sdk_stdio_exit.ts`);
  }
  await transport.close();
});
