/** Builds an engine job from a workspace and a resolved base directory (calling thread). */
import type { WorkspaceContext } from "../context.ts";
import type { Resolved } from "../path_policy.ts";
import { WorkspaceError } from "../errors.ts";
import type { JobOp, JobSpec } from "./protocol.ts";

/** A job over `dir` (resolved, existing) with the root's pinned identity and the workspace's limits. */
export function jobSpec(
  ws: WorkspaceContext,
  job: { op: JobOp; dir: Resolved; args: Record<string, unknown> },
): JobSpec {
  const { op, dir, args } = job;
  if (dir.info === null) {
    throw new WorkspaceError("NOT_FOUND", `path ${dir.rel} does not exist`, { argument: "path" });
  }
  return {
    op,
    args,
    root: {
      rel: ".",
      abs: ws.policy.rootReal,
      dev: ws.policy.rootId.dev,
      ino: ws.policy.rootId.ino,
      ...(ws.policy.rootMounted ? { mounted: true } : {}),
    },
    base: { rel: dir.rel, abs: dir.abs, dev: dir.info.dev, ino: dir.info.ino },
    limits: { ...ws.limits },
    fs: ws.policy.fs.kind,
  };
}
