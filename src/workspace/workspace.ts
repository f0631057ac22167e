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
import { assertDisjoint, rootsList, type RootSpec } from "./roots.ts";

export type { RootSpec };

/** How to open a workspace. */
export interface WorkspaceOptions {
  /**
   * Root directory (absolute, or relative to the process's cwd). Exactly one of root and roots.
   */
  root?: string;
  /**
   * Several roots, in order (decision 0064): a relative path addresses the first, an absolute
   * path the root it lies under; a root with readOnly refuses writes even when writable is set.
   * Roots that overlap are refused. Exactly one of root and roots.
   */
  roots?: readonly RootSpec[];
  /** Whether write operations are enabled (on every root not marked readOnly). Default false. */
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
  /**
   * Share this workspace's lock and engine (a server that replaces its roots while it runs: the
   * client's roots, decision 0065), so a write under the old roots and a call under the new ones
   * never run at once, and no second worker pool is started. Its engine options win.
   * @ignore
   */
  sharedWith?: Workspace;
  /**
   * Where the roots came from, as workspace_info says: `configured` (the default: flags or the
   * caller), `start-directory` (no root flag: the directory the server was started in) or
   * `client` (the client's roots, decision 0065).
   */
  rootsFrom?: RootsFrom;
}

/** Where a workspace's roots came from (WorkspaceOptions.rootsFrom). */
export type RootsFrom = "configured" | "start-directory" | "client";

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
  /**
   * Whether write operations are enabled: on the workspace, whether write tools are served (some
   * root takes writes); on one of its roots, whether that root takes them.
   */
  readonly writable: boolean;
  /** This root refuses writes whatever the mode (`--read-only-root`). */
  readonly readOnlyRoot: boolean;
  /** Where the roots came from (WorkspaceOptions.rootsFrom). */
  readonly rootsFrom: RootsFrom;
  /**
   * Every root, in order, each a Workspace of its own sharing this one's limits, lock and engine
   * (decision 0064). With one root it is `[this]`; with several, the operations run on the root
   * their path arguments address (runOperation routes them), and `policy` is the first root's.
   */
  readonly roots: readonly Workspace[];
  readonly #shared: Shared;
  /**
   * The native engine's search prefilter, when one serves this workspace (the first root only).
   * @ignore
   */
  readonly prefilter?: SearchPrefilter;

  private constructor(
    policy: PathPolicy,
    shared: Shared,
    options: {
      writable: boolean;
      readOnlyRoot?: boolean;
      prefilter?: SearchPrefilter;
      roots?: readonly Workspace[];
      rootsFrom?: RootsFrom;
    },
  ) {
    this.rootsFrom = options.rootsFrom ?? "configured";
    this.policy = policy;
    this.#shared = shared;
    this.limits = shared.limits;
    this.lock = shared.lock;
    this.writable = options.writable;
    this.readOnlyRoot = options.readOnlyRoot === true;
    this.prefilter = options.prefilter;
    this.roots = options.roots ?? [this];
  }

  /**
   * Readers/writer discipline: reads share it, writes hold it alone (taken by runOperation). One
   * lock for all roots, so an operation that spans two (a copy) is alone too.
   * @ignore
   */
  readonly lock: ReadersWriterLock;

  /** Opens a workspace; the root must be an existing directory. */
  static async open(options: WorkspaceOptions): Promise<Workspace> {
    let limits: Limits;
    try {
      limits = resolveLimits(options.limits);
    } catch (err) {
      throw new WorkspaceError("INVALID_ARGUMENT", (err as Error).message, { argument: "limits" });
    }
    const specs = rootSpecs(options);
    const policies: PathPolicy[] = [];
    for (const spec of specs) {
      policies.push(
        await PathPolicy.open(spec.path, { fs: options.fs, rootMounted: options.rootMounted }),
      );
    }
    assertDisjoint(policies);
    const from = options.sharedWith === undefined ? undefined : options.sharedWith.#shared;
    const shared: Shared = {
      limits: Object.freeze(limits),
      lock: from?.lock ?? new ReadersWriterLock(),
      engineOptions: from?.engineOptions ?? {
        mode: options.engine,
        worker: options.engineWorker,
        size: options.engineSize,
        jobs: JOBS,
      },
      engine: from?.engine ?? {},
    };
    const writable = options.writable === true;
    if (specs.length === 1) {
      return new Workspace(policies[0], shared, {
        writable: writable && specs[0].readOnly !== true,
        readOnlyRoot: specs[0].readOnly,
        prefilter: options.prefilter,
        rootsFrom: options.rootsFrom,
      });
    }
    const roots = specs.map((spec, i) =>
      new Workspace(policies[i], shared, {
        writable: writable && spec.readOnly !== true,
        readOnlyRoot: spec.readOnly,
        prefilter: i === 0 ? options.prefilter : undefined,
      })
    );
    return new Workspace(policies[0], shared, {
      writable: roots.some((r) => r.writable),
      prefilter: options.prefilter,
      roots: Object.freeze(roots),
      rootsFrom: options.rootsFrom,
    });
  }

  /**
   * The engine that runs walks and matching (worker pool or inline), created on first use and
   * shared by every root.
   * @ignore
   */
  get engine(): Engine {
    const box = this.#shared.engine;
    return box.engine ??= new Engine(this.#shared.engineOptions);
  }

  /** The root directory's name (its last path component). */
  get rootName(): string {
    return rootNameOf(this.policy.rootReal);
  }

  /** Throws READ_ONLY unless writing is enabled (on this root). */
  assertWritable(operation: string): void {
    if (this.writable) return;
    if (this.readOnlyRoot) {
      throw new WorkspaceError(
        "READ_ONLY",
        `${operation} needs writing, which the read-only root ${this.policy.rootGiven} refuses ` +
          "(--read-only-root)",
        { details: { root: this.policy.rootGiven } },
      );
    }
    throw new WorkspaceError("READ_ONLY", readOnlyMessage(operation));
  }

  /**
   * This root with tighter limits, sharing its lock and engine: what is left of a call's budgets
   * when a walk spans several roots (decision 0064). Only lowers limits.
   * @ignore
   */
  withLimits(limits: Partial<Limits>): Workspace {
    const merged = { ...this.limits };
    for (const [k, v] of Object.entries(limits) as [keyof Limits, number][]) {
      merged[k] = Math.min(merged[k], v);
    }
    return new Workspace(this.policy, { ...this.#shared, limits: Object.freeze(merged) }, {
      writable: this.writable,
      readOnlyRoot: this.readOnlyRoot,
      prefilter: this.prefilter,
    });
  }

  /** `/a, /b (read-only)`: the roots, as errors name them. */
  get rootsText(): string {
    return rootsList(this.roots);
  }
}

/** What the roots of one workspace share: limits, the lock and the engine. */
interface Shared {
  readonly limits: Readonly<Limits>;
  readonly lock: ReadersWriterLock;
  readonly engineOptions: ConstructorParameters<typeof Engine>[0];
  /** The engine, created on first use (a box, so a view with other limits shares it). */
  readonly engine: { engine?: Engine };
}

/** The roots an open asks for: `root`, or `roots` (at least one), never both. */
function rootSpecs(options: WorkspaceOptions): readonly RootSpec[] {
  const { root, roots } = options;
  if ((root === undefined) === (roots === undefined) || (roots !== undefined && roots.length < 1)) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      "give the workspace exactly one of root and roots (a non-empty list)",
      { argument: "root" },
    );
  }
  return roots ?? [{ path: root! }];
}

/**
 * Why a write operation does not run on a read-only workspace, and what to pass: the one wording
 * of `op NAME` without --write (READ_ONLY) and of `tools call NAME` to the bundled read-only server.
 */
export function readOnlyMessage(operation: string): string {
  return `${operation} needs writing, which is disabled for this workspace (start with --write)`;
}
