/** An opened workspace: its containment policy, limits and mode. */
import { PathPolicy } from "./path_policy.ts";
import { type Limits, resolveLimits } from "./limits.ts";
import { WorkspaceError } from "./errors.ts";
import { ReadersWriterLock } from "./lock.ts";
import { Engine, type EngineMode } from "./engine/pool.ts";
import { JOBS } from "./engine/jobs.ts";
import type { WorkspaceFs } from "./fs/types.ts";
import type { SearchPrefilter } from "./native/prefilter.ts";
import { rootNameOf } from "./root_name.ts";

/** How to open a workspace. */
export interface WorkspaceOptions {
  /** Root directory (absolute, or relative to the process's cwd). */
  root: string;
  /** Whether write operations are enabled. Default false. */
  writable?: boolean;
  /** Overrides of the default limits. */
  limits?: Partial<Limits>;
  /**
   * Where walks and matching run: "workers" (a pool off the calling thread; needs read
   * permission on the engine's modules) or "inline". Default: workers when permitted.
   */
  engine?: EngineMode;
  /**
   * The file system every check goes through. Default: Deno's API on Deno, node:fs elsewhere
   * (Node, Bun). The containment checks are the same on both.
   */
  fs?: WorkspaceFs;
  /**
   * URL of the engine worker module. Default: engine/worker.ts beside this module; a bundle
   * (adapters/) passes its separately bundled worker.
   */
  engineWorker?: URL;
  /**
   * Workers in the engine's pool (and shards of a search). Default: the cores, clamped to
   * 1..4.
   */
  engineSize?: number;
  /**
   * A native engine's search prefilter (decision 0054): search_text reads only the files it
   * names. The server's is the engine broker's client (src/workspace/native/client.ts). Default:
   * none, every file is read.
   */
  prefilter?: SearchPrefilter;
  /**
   * The root is the mount point of the kernel sandbox this process runs in (the server launcher's
   * bubblewrap): its identity is not re-checked on every request (decision 0059). Set only by the
   * server entries when the sandbox is detected; a root reached through a link is checked anyway.
   * @ignore
   */
  rootMounted?: boolean;
}

/**
 * One workspace directory, opened. Immutable after open.
 *
 * @example
 * ```ts
 * import { Workspace } from "@wmcp/wmcp";
 *
 * const workspace = await Workspace.open({ root: ".", writable: false });
 * console.log(workspace.rootName, workspace.limits.maxResults);
 * ```
 */
export class Workspace {
  /**
   * The containment policy: every path argument goes through it.
   * @ignore
   */
  readonly policy: PathPolicy;
  /** The enforced bounds. */
  readonly limits: Readonly<Limits>;
  /** Whether write operations are enabled. */
  readonly writable: boolean;
  /**
   * Readers/writer discipline: reads share it, writes hold it alone (taken by runOperation).
   * @ignore
   */
  readonly lock: ReadersWriterLock = new ReadersWriterLock();
  #engine?: Engine;
  readonly #engineMode?: EngineMode;
  readonly #engineWorker?: URL;
  readonly #engineSize?: number;
  /**
   * The native engine's search prefilter, when one serves this workspace.
   * @ignore
   */
  readonly prefilter?: SearchPrefilter;

  private constructor(
    policy: PathPolicy,
    limits: Limits,
    options: {
      writable: boolean;
      engine?: EngineMode;
      engineWorker?: URL;
      engineSize?: number;
      prefilter?: SearchPrefilter;
    },
  ) {
    this.policy = policy;
    this.limits = Object.freeze(limits);
    this.writable = options.writable;
    this.#engineMode = options.engine;
    this.#engineWorker = options.engineWorker;
    this.#engineSize = options.engineSize;
    this.prefilter = options.prefilter;
  }

  /** Opens a workspace; the root must be an existing directory. */
  static async open(options: WorkspaceOptions): Promise<Workspace> {
    let limits: Limits;
    try {
      limits = resolveLimits(options.limits);
    } catch (err) {
      throw new WorkspaceError("INVALID_ARGUMENT", (err as Error).message, { argument: "limits" });
    }
    const policy = await PathPolicy.open(options.root, {
      fs: options.fs,
      rootMounted: options.rootMounted,
    });
    return new Workspace(policy, limits, {
      writable: options.writable === true,
      engine: options.engine,
      engineWorker: options.engineWorker,
      engineSize: options.engineSize,
      prefilter: options.prefilter,
    });
  }

  /**
   * The engine that runs walks and matching (worker pool or inline), created on first use.
   * @ignore
   */
  get engine(): Engine {
    return this.#engine ??= new Engine({
      mode: this.#engineMode,
      worker: this.#engineWorker,
      size: this.#engineSize,
      jobs: JOBS,
    });
  }

  /** The root directory's name (its last path component). */
  get rootName(): string {
    return rootNameOf(this.policy.rootReal);
  }

  /** Throws READ_ONLY unless writing is enabled. */
  assertWritable(operation: string): void {
    if (!this.writable) throw new WorkspaceError("READ_ONLY", readOnlyMessage(operation));
  }
}

/**
 * Why a write operation does not run on a read-only workspace, and what to pass: the one wording
 * of `op NAME` without --write (READ_ONLY) and of `tools call NAME` to the bundled read-only server.
 */
export function readOnlyMessage(operation: string): string {
  return `${operation} needs writing, which is disabled for this workspace (start with --write)`;
}
