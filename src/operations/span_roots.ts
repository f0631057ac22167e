/**
 * A walk over every root (decision 0064): find_files and search_text with `allRoots: true` run on
 * each root in order, from its top, and their results are joined into one. The call's caps are
 * the call's, not each root's: maxResults or maxMatches, maxVisited and maxOperationMs are what
 * the earlier roots left, and the joined result is cut to maxResultBytes. A later root's paths are
 * shown absolute, as for any call on it.
 *
 * @module
 */
import type { OperationContext, OperationDefinition, OperationProgress } from "./types.ts";
import type { Workspace } from "../workspace/workspace.ts";
import { WorkspaceError } from "../workspace/errors.ts";
import { rebased, shownPrefix } from "../workspace/roots.ts";
import { jsonBytes } from "../workspace/budget.ts";

/** Whether a call asks to walk every root (an operation that takes allRoots, set true). */
export function spansRoots(op: OperationDefinition, input: Record<string, unknown>): boolean {
  return op.spansRoots !== undefined && input.allRoots === true;
}

type Result = Record<string, unknown> & { matches: unknown[]; truncated: boolean };

/** Counters that add up across roots (search_text's skipped files by reason included). */
function added(into: Result, more: Result): void {
  for (const [k, v] of Object.entries(more)) {
    if (k === "matches" || k === "truncated" || k === "truncatedReason") continue;
    if (typeof v === "number" && typeof into[k] === "number") {
      into[k] = (into[k] as number) + v;
    } else if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const sub = into[k] as Record<string, number>;
      for (const [sk, sv] of Object.entries(v)) {
        if (typeof sv === "number") sub[sk] = (sub[sk] ?? 0) + sv;
      }
    }
  }
  into.matches.push(...more.matches);
}

/** Marks the joined result cut, for `reason`. */
function cut(out: Result, reason: string): void {
  out.truncated = true;
  out.truncatedReason = reason;
}

/** Progress that keeps increasing across roots: each root's count on top of the roots before. */
function progressAcross(ctx: OperationContext) {
  let base = 0;
  let last = 0;
  const report = ctx.onProgress &&
    ((p: OperationProgress) => {
      last = base + p.progress;
      ctx.onProgress!({ ...p, progress: last, total: undefined });
    });
  return { report, next: () => (base = last) };
}

/** Runs `op` on every root of `ctx.workspace` and joins the results (see the module's words). */
export async function runOnEveryRoot(
  op: OperationDefinition,
  ctx: OperationContext,
  input: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const ws = ctx.workspace;
  if (input.path !== undefined && input.path !== ".") {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      "allRoots walks every root from its top: leave path out (or pass a root's path without allRoots)",
      { argument: "path" },
    );
  }
  const capKey = op.spansRoots!;
  const limits = ws.limits;
  const cap = (input[capKey] as number | undefined) ?? limits[capKey];
  const started = performance.now();
  const progress = progressAcross(ctx);
  let out: Result | undefined;
  for (const root of ws.roots) {
    let view: Workspace = root;
    if (out !== undefined) {
      const visitedLeft = limits.maxVisited - (out.visited as number);
      if (out.matches.length >= cap) {
        cut(out, capKey);
        break;
      }
      if (visitedLeft <= 0) {
        cut(out, "maxVisited");
        break;
      }
      const msLeft = Math.max(1, Math.floor(limits.maxOperationMs - (performance.now() - started)));
      view = root.withLimits({ maxVisited: visitedLeft, maxOperationMs: msLeft });
    }
    const args = { ...input, path: ".", [capKey]: cap - (out?.matches.length ?? 0) };
    const run = { ...ctx, workspace: view, onProgress: progress.report };
    const prefix = shownPrefix(ws, root);
    const r = rebased((await op.run(run, args)) as Result, prefix, prefix);
    progress.next();
    if (out === undefined) out = r;
    else added(out, r);
    if (r.truncated) {
      cut(out, r.truncatedReason as string);
      break;
    }
  }
  return fitted(out!, limits.maxResultBytes);
}

/** The joined result cut to the result byte budget: its last matches dropped until it fits. */
function fitted(out: Result, maxResultBytes: number): Result {
  if (jsonBytes(out) <= maxResultBytes) return out;
  const withReason = { ...out, truncated: true, truncatedReason: "maxResultBytes" };
  let size = jsonBytes(withReason);
  const matches = [...out.matches];
  while (matches.length > 0 && size > maxResultBytes) {
    size -= jsonBytes(matches.pop()) + 1;
  }
  return { ...withReason, matches };
}
