/**
 * The engine's wire protocol between the calling thread and a worker, and the checkpoint
 * that bounded chunks of work call between chunks (a shared flag, read with Atomics).
 */
import { type ErrorCode, type ErrorObject, WorkspaceError } from "../errors.ts";
import type { Limits } from "../limits.ts";
import type { FsKind } from "../fs/types.ts";

/** The operations the engine runs. */
export type JobOp = "search" | "find" | "list";

/** A directory with the identity (dev, ino) it was checked with. */
export interface PinnedDir {
  /** Workspace-relative path ("." for the root). */
  rel: string;
  /** Absolute real path. */
  abs: string;
  /** Device of the checked directory. */
  dev: number;
  /** Inode of the checked directory (null where the platform has none). */
  ino: number | null;
  /** The sandbox's mount point (the root under bubblewrap): never re-checked (ChainLink.mounted). */
  mounted?: boolean;
}

/** One unit of work: everything a worker needs, nothing it must look up. */
export interface JobSpec {
  /** Which operation. */
  op: JobOp;
  /** The operation's arguments, already validated on the calling thread. */
  args: Record<string, unknown>;
  /** The workspace root, with its identity pinned when the workspace was opened. */
  root: PinnedDir;
  /** The resolved base directory of the walk, with the identity it was resolved with. */
  base: PinnedDir;
  /** The workspace's limits. */
  limits: Limits;
  /** The workspace's file system (by kind: the worker picks the same implementation). */
  fs: FsKind;
  /**
   * One part of a job split across the pool (search_text): this job handles the files whose
   * path hashes to `index` of `count` (decision 0035). Absent: the whole job.
   */
  shard?: { index: number; count: number };
}

/** Progress counters a job reports. */
export interface JobProgress {
  /** Files read and scanned (search) or entries visited (find, list). */
  filesSearched: number;
  /** Results so far. */
  matches: number;
}

/** Calling thread -> worker. */
export interface JobMessage {
  type: "job";
  id: number;
  spec: JobSpec;
  /** Int32Array view target: [0] is the stop flag (FLAG_*). */
  flag: SharedArrayBuffer;
}

/** Calling thread -> worker: the value a running job looks for (Checkpoint.input). */
export interface InputMessage {
  type: "input";
  id: number;
  value: unknown;
}

/** Worker -> calling thread. */
export type WorkerMessage =
  | { type: "ready"; id: 0 }
  | { type: "progress"; id: number; progress: JobProgress }
  | { type: "result"; id: number; result: unknown }
  | { type: "error"; id: number; error: ErrorObject };

/** The flag's values. */
export const FLAG_RUN = 0;
/** Stop: the caller cancelled (or the engine closed). */
export const FLAG_CANCELLED = 1;
/** Stop: the call's time budget (maxOperationMs) ran out. */
export const FLAG_TIME_BUDGET = 2;

/** The typed error a stop flag stands for. */
export function stopError(flag: number, limits: { maxOperationMs: number }): WorkspaceError {
  if (flag === FLAG_TIME_BUDGET) {
    return new WorkspaceError(
      "TIME_BUDGET_EXCEEDED",
      `the operation ran longer than this workspace's limit of ${limits.maxOperationMs} ms and was stopped`,
      { details: { limit: limits.maxOperationMs } },
    );
  }
  return new WorkspaceError("CANCELLED", "the operation was cancelled");
}

/** Rebuilds a WorkspaceError from its wire form. */
export function errorFromWire(e: ErrorObject): WorkspaceError {
  return new WorkspaceError(e.code as ErrorCode, e.message, {
    argument: e.argument,
    details: e.details,
  });
}

/** Longest run of work between two yields to the event loop in inline mode (ms). */
export const SLICE_MS = 10;
/** tick() reads the clock once in this many calls (the stop flag is read on every call). */
export const TICK_CLOCK_EVERY = 16;
/** Progress is reported at most this often (ms). */
export const PROGRESS_INTERVAL_MS = 100;

/** How a job sees the value its caller sends while it runs (RunOptions.input). */
export interface JobInput {
  /** The value, once it has come. */
  peek(): { value: unknown } | undefined;
}

const NO_INPUT: JobInput = { peek: () => undefined };

/** One turn of the event loop: a worker's job lets the messages waiting for it in. */
export function yieldToEvents(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * What a chunked job calls between chunks: `check` throws the typed stop error when the
 * flag is set; `tick` also reports progress and, inline, yields to the event loop when
 * the current slice is used up.
 */
export class Checkpoint {
  readonly #flag: Int32Array;
  readonly #limits: { maxOperationMs: number };
  readonly #inline: boolean;
  readonly #onProgress: (p: JobProgress) => void;
  readonly #input: JobInput;
  #sliceStart = performance.now();
  #lastProgress = performance.now();
  #ticks = 0;
  /** Counters the job keeps current; sent with progress. */
  readonly counters: JobProgress = { filesSearched: 0, matches: 0 };

  /**
   * A checkpoint over a flag; `inline` makes `tick` yield to the event loop; `input` gives the
   * value the caller sends the job while it runs (RunOptions.input; undefined when none).
   */
  constructor(
    flag: Int32Array,
    options: {
      limits: { maxOperationMs: number };
      inline: boolean;
      onProgress: (p: JobProgress) => void;
      input?: JobInput;
    },
  ) {
    this.#flag = flag;
    this.#limits = options.limits;
    this.#inline = options.inline;
    this.#onProgress = options.onProgress;
    this.#input = options.input ?? NO_INPUT;
  }

  /**
   * The value the caller sent this job while it runs (RunOptions.input), when it has come: a
   * job looks without waiting, and lets messages in (yieldToEvents) while it has not come.
   */
  input(): { value: unknown } | undefined {
    return this.#input.peek();
  }

  /** Throws CANCELLED or TIME_BUDGET_EXCEEDED once the flag is set. */
  check(): void {
    const f = Atomics.load(this.#flag, 0);
    if (f !== FLAG_RUN) throw stopError(f, this.#limits);
  }

  /**
   * check(), progress at its cadence, and (inline) a yield when the slice is spent. The clock
   * is read every TICK_CLOCK_EVERY calls (a walk ticks once per entry).
   */
  tick(): Promise<void> | undefined {
    this.check();
    if (++this.#ticks % TICK_CLOCK_EVERY !== 0) return undefined;
    const now = performance.now();
    if (now - this.#lastProgress >= PROGRESS_INTERVAL_MS) {
      this.#lastProgress = now;
      this.#onProgress({ ...this.counters });
    }
    if (!this.#inline || now - this.#sliceStart < SLICE_MS) return undefined;
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        this.#sliceStart = performance.now();
        resolve();
      }, 0)
    ).then(() => this.check());
  }
}
