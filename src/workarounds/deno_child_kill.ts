/**
 * Workaround: Deno's `node:child_process` sends a ChildProcess at most one signal. After a
 * first successful `kill()` (`killed` becomes true) every later `kill(signal)` returns false
 * without sending anything, so the MCP SDK's StdioClientTransport.close() escalation (end
 * stdin, wait, SIGTERM, wait, SIGKILL) never delivers its SIGKILL: a stdio server that ignores
 * SIGTERM outlives the client. The client therefore sends SIGKILL itself, by pid, through
 * Deno.kill (not through the ChildProcess object). The same bug makes the SDK's disposable
 * sibling probe (`_dispose`: SIGTERM, SIGKILL, then await exit) wait forever for such a
 * child; the client's ChildTransport subclasses the transport, which makes the SDK probe in
 * place instead (src/client/session.ts).
 *
 * Upstream: denoland/deno#36643 "node:child_process rejects repeated signals after
 * ChildProcess.killed becomes true" (closed upstream; the gate came with denoland/deno#33305).
 * Checked: Deno 2.9.6 still has it, with @modelcontextprotocol/client 2.4.0.
 * Delete when: tests/workarounds/deno_child_kill_test.ts fails (a second `kill()` of a
 * `node:child_process` child is delivered again); then ChildTransport.kill() and this module go.
 */

/**
 * Sends SIGKILL to a child by pid if it is still there (the escalation step the SDK's close
 * cannot deliver under Deno). Does nothing for a null pid or a child already gone.
 */
export function reapChild(pid: number | null): void {
  if (pid === null) return;
  try {
    Deno.kill(pid, "SIGKILL");
  } catch {
    // already exited
  }
}
