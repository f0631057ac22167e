/**
 * What the operations need of the engine, and what the engine needs of the operations, as types
 * only: the operations see a JobRunner (run, runShards), the engine is given a JobTable (one
 * chunked function per job kind) by whoever builds it. So neither imports the other: the pool
 * knows no operation, and an operation knows no pool (decision 0041).
 */
import type { Checkpoint, JobOp, JobProgress, JobSpec } from "./protocol.ts";

/** What `run` takes besides the job. */
export interface RunOptions {
  /** Aborting it ends the call with CANCELLED. */
  signal?: AbortSignal;
  /** Receives the job's counters at a steady cadence while it runs. */
  onProgress?: (p: JobProgress) => void;
  /**
   * A value the job may look for while it runs (Checkpoint.input): sent to it once settled. A
   * rejection stops the call with that error (a WorkspaceError is kept as it is).
   */
  input?: Promise<unknown>;
}

/** Runs jobs to their results (the Engine, for the operations). */
export interface JobRunner {
  /** Runs one job; resolves with its result, rejects with a WorkspaceError. */
  run<T>(spec: JobSpec, options?: RunOptions): Promise<T>;
  /** Runs one job as one shard per worker; resolves with every shard's result, in shard order. */
  runShards<T>(spec: JobSpec, options?: RunOptions): Promise<T[]>;
}

/** One job kind's chunked function, run in a worker or inline. */
export type JobFn = (spec: JobSpec, checkpoint: Checkpoint) => Promise<unknown>;

/** The job functions, by kind. */
export type JobTable = Readonly<Record<JobOp, JobFn>>;

/** Runs one job from `table` to its result; throws WorkspaceError (stop errors included). */
export function runJobFrom(
  table: JobTable,
  spec: JobSpec,
  checkpoint: Checkpoint,
): Promise<unknown> {
  const job = table[spec.op];
  if (job === undefined) throw new TypeError(`unknown engine job ${spec.op}`);
  return job(spec, checkpoint);
}
