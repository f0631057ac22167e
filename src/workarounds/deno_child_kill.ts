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
  } catch (err) {
    // Deno.kill needs unscoped run permission; a client scoped to its server's command (and
    // `kill`, as the router grants) sends the signal through the kill binary instead.
    if (err instanceof Deno.errors.NotCapable) killByCommand(pid);
    // else: already exited
  }
}

/** SIGKILL through the `kill` binary, fire and forget (an exited pid is nothing to report). */
function killByCommand(pid: number): void {
  try {
    new Deno.Command("kill", { args: ["-KILL", String(pid)], stdout: "null", stderr: "null" })
      .spawn().status.catch(() => {});
  } catch {
    // no run permission for kill either: the SDK's own SIGTERM is all that was sent
  }
}
