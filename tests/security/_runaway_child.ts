/**
 * Child process of runaway_test.ts: runs one hostile operation through the library (the
 * registry path every adapter uses) with a signal aborted after a delay, then a harmless
 * call on the same workspace, and prints one JSON line. Run in its own process so a worker
 * stuck in a backtracking matcher ends with it.
 * Usage: _runaway_child.ts ROOT TOOL ARGS_JSON ABORT_AFTER_MS
 */
import { runOperation, Workspace, WorkspaceError } from "../../mod.ts";

const [root, tool, argsJson, abortAfter] = Deno.args;
const ws = await Workspace.open({ root });
const controller = new AbortController();
let settledBeforeAbort = false;
let abortedAt = 0;
const timer = setTimeout(() => {
  abortedAt = performance.now();
  controller.abort();
}, Number(abortAfter));
const outcome: Record<string, unknown> = { mode: ws.engine.mode };
try {
  const r = await runOperation(
    { workspace: ws, signal: controller.signal },
    tool,
    JSON.parse(argsJson),
  );
  settledBeforeAbort = abortedAt === 0;
  outcome.result = r;
} catch (err) {
  settledBeforeAbort = abortedAt === 0;
  outcome.code = err instanceof WorkspaceError ? err.code : String(err);
  if (abortedAt > 0) outcome.stopMs = Math.round(performance.now() - abortedAt);
}
clearTimeout(timer);
outcome.settledBeforeAbort = settledBeforeAbort;
const after = await runOperation({ workspace: ws }, "search_text", { query: "fine" }) as {
  matches: unknown[];
};
outcome.afterMatches = after.matches.length;
console.log(JSON.stringify(outcome));
Deno.exit(0);
