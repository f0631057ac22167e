/**
 * Runs an operation on the root its path arguments address (decision 0064). With one root this is
 * the operation's own run; with several, the root is picked by src/workspace/roots.ts's rule, the
 * operation runs on that root's Workspace exactly as it would on a workspace of its own, and the
 * paths of its result are shown absolute when that root is not the first. Only the root's own
 * containment admits a path: routing picks which check runs.
 *
 * @module
 */
import type { OperationContext, OperationDefinition } from "./types.ts";
import type { Workspace } from "../workspace/workspace.ts";
import { toWorkspaceError, WorkspaceError } from "../workspace/errors.ts";
import { runOnEveryRoot, spansRoots } from "./span_roots.ts";
import { namingRoots, rebased, rootFor, shownPrefix } from "../workspace/roots.ts";

/**
 * Runs `op` on validated `input` on the root(s) it addresses. Errors leave as typed errors; with
 * several roots an address outside every root names the roots, and the paths in an error's details
 * are shown as the result's would be.
 */
export async function runOnRoots(
  op: OperationDefinition,
  ctx: OperationContext,
  input: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const ws = ctx.workspace;
  if (spansRoots(op, input)) {
    try {
      return await runOnEveryRoot(op, ctx, input);
    } catch (err) {
      throw namingRoots(ws, toWorkspaceError(err));
    }
  }
  const by = op.roots ?? "path";
  if (ws.roots.length === 1 || by === "own") {
    return await runMapped(op, ctx, input, ws.roots[0]);
  }
  const ends = by === "ends" || by === "same-root-ends";
  const source = rootFor(ws, ends ? input.source : input.path ?? ".");
  const dest = ends ? rootFor(ws, input.destination) : source;
  const prefix = shownPrefix(ws, source);
  const destPrefix = shownPrefix(ws, dest);
  try {
    if (by === "same-root-ends" && dest !== source) {
      throw new WorkspaceError(
        "CROSS_DEVICE",
        `${op.name} cannot move between roots (${source.policy.rootGiven} and ` +
          `${dest.policy.rootGiven}): copy_path the entry, then delete_path the source`,
        { argument: "destination", details: { roots: ws.roots.map((r) => r.policy.rootGiven) } },
      );
    }
    // Each write operation refuses a read-only root itself (assertWritable on the root it writes).
    const run = { ...ctx, workspace: source, destination: dest };
    const result = await runMapped(op, run, input, source);
    return rebased(result, prefix, destPrefix);
  } catch (err) {
    throw shownError(ws, err, prefix, destPrefix);
  }
}

/** Runs the operation, an IO_ERROR's spelling of the root's real path made root-relative. */
async function runMapped(
  op: OperationDefinition,
  ctx: OperationContext,
  input: Record<string, unknown>,
  root: Workspace,
): Promise<Record<string, unknown>> {
  try {
    return (await op.run(ctx, input)) as Record<string, unknown>;
  } catch (err) {
    // File-system errors that escape an operation still reach the caller as a typed error,
    // with the host's absolute spelling of the workspace replaced by workspace-relative text.
    const e = toWorkspaceError(err);
    const real = root.policy.rootReal;
    if (e.code === "IO_ERROR" && real !== "/" && e.message.includes(real)) {
      throw new WorkspaceError(e.code, e.message.replaceAll(real + "/", "").replaceAll(real, "."), {
        argument: e.argument,
        details: e.details,
        cause: err,
      });
    }
    throw e;
  }
}

/** An error of a routed run: an address outside every root names them; details' paths shown. */
function shownError(
  ws: Workspace,
  err: unknown,
  prefix: string | undefined,
  destPrefix: string | undefined,
): WorkspaceError {
  const e = toWorkspaceError(err);
  const shown = e.details === undefined ? e : new WorkspaceError(e.code, e.message, {
    argument: e.argument,
    details: rebased(e.details, prefix, destPrefix),
    cause: e.cause ?? err,
  });
  return namingRoots(ws, shown);
}
