/** The engine's job table: one chunked function per operation, run in a worker or inline. */
import { searchJob } from "../search.ts";
import { findJob } from "../find.ts";
import { listJob } from "../list.ts";
import type { Checkpoint, JobOp, JobSpec } from "./protocol.ts";

const JOBS: Readonly<Record<JobOp, (spec: JobSpec, cp: Checkpoint) => Promise<unknown>>> = Object
  .freeze({
    search: searchJob,
    find: findJob,
    list: listJob,
  });

/** Runs one job to its result; throws WorkspaceError (stop errors included). */
export function runJob(spec: JobSpec, checkpoint: Checkpoint): Promise<unknown> {
  const job = JOBS[spec.op];
  if (job === undefined) throw new TypeError(`unknown engine job ${spec.op}`);
  return job(spec, checkpoint);
}
