/**
 * Workaround: the MCP SDK's StdioClientTransport does not tell how its child ended. Its public
 * surface has `pid`, `stderr` and `onclose`, but no exit code or signal, and it forgets the
 * ChildProcess (`_process = undefined`) as soon as it closes; a failure message ("the server
 * exited with code 1 before the connection was set up") needs both. This reads the SDK's
 * private `_process` field once, right after start(), and listens for its `exit` event.
 *
 * Upstream: no typescript-sdk issue asks for the exit status itself; the nearest is
 * modelcontextprotocol/typescript-sdk#684 "Access to stderr stream in StdioClientTransport"
 * (open: expose the ChildProcess). Minimal reproduction: a stdio server that runs `exit 3`
 * before answering; `client.connect()` rejects with an SdkError (CONNECTION_CLOSED or
 * ERA_NEGOTIATION_FAILED) and nothing public reveals the 3.
 * Checked: @modelcontextprotocol/client 2.4.0 (dist/stdio.mjs), Deno 2.9.6.
 * Delete when: the transport exposes the exit (an `exitCode`/`signalCode` or an `onexit`);
 * tests/workarounds/sdk_stdio_exit_test.ts fails when the private field disappears or is
 * renamed, which is the other reason to revisit this module.
 */

/** How a child ended: its exit code, or the signal that ended it. */
export interface ChildExit {
  code: number | null;
  signal: string | null;
}

interface NodeLikeChild {
  once(event: "exit", cb: (code: number | null, signal: string | null) => void): void;
}

/**
 * Calls onExit once when the started transport's child exits. Returns false when the SDK's
 * private child handle is not there (not started, or the SDK changed): nothing is reported then.
 */
export function onStdioChildExit(transport: object, onExit: (exit: ChildExit) => void): boolean {
  const proc = (transport as { _process?: NodeLikeChild })._process;
  if (proc === undefined || typeof proc.once !== "function") return false;
  proc.once("exit", (code, signal) => onExit({ code, signal }));
  return true;
}
