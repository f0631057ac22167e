/**
 * What an operation needs of an opened workspace: its containment policy, its limits and a way to
 * run engine jobs. Workspace satisfies it; the operations name this interface, not the class, so
 * the engine's job table (which imports the operations) never leads back to the Workspace.
 */
import type { PathPolicy } from "./path_policy.ts";
import type { Limits } from "./limits.ts";
import type { JobRunner } from "./engine/runner.ts";
import type { SearchPrefilter } from "./native/prefilter.ts";

/** The parts of a Workspace the read operations use. */
export interface WorkspaceContext {
  /** Every path argument goes through it. */
  readonly policy: PathPolicy;
  /** The enforced bounds. */
  readonly limits: Readonly<Limits>;
  /** Runs walks and matching (the worker pool, or inline). */
  readonly engine: JobRunner;
  /** The native engine's search prefilter, when one serves this workspace (decision 0054). */
  readonly prefilter?: SearchPrefilter;
}
