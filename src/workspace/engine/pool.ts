/**
 * The engine: runs walks and matching (list_directory, find_files, search_text) off the
 * calling thread in a small pool of workers sized to the cores, or inline (cooperative,
 * sliced) when the process may not read the engine's modules. A call ends promptly when
 * it is cancelled or its time budget (maxOperationMs) runs out, whatever its worker is
 * doing: the shared flag tells the worker to stop at its next checkpoint, and a worker
 * that does not acknowledge within its window (ACK_MS of wall time and of the process's CPU
 * time, at most ACK_MAX_MS) is abandoned (terminated and replaced). An
 * abandoned worker still burns a core until its synchronous call returns, so at most
 * `size` of them are counted alive (until their exit event); at that cap no thread is
 * spawned and jobs wait in the queue. The time budget runs from run(), queue included.
 * Idle workers are unref'd and closed after IDLE_MS, so the pool never keeps a process alive.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { WorkspaceError } from "../errors.ts";
import {
  Checkpoint,
  errorFromWire,
  FLAG_CANCELLED,
  FLAG_RUN,
  FLAG_TIME_BUDGET,
  type InputMessage,
  type JobMessage,
  type JobProgress,
  type JobSpec,
  stopError,
  type WorkerMessage,
} from "./protocol.ts";
import { type JobRunner, type JobTable, runJobFrom, type RunOptions } from "./runner.ts";
import { ENGINE_READ_PATH } from "./read_path.ts";
import { isDeno, processCpuMs, queryPermissionSync, unrefTimer } from "../fs/runtime.ts";

type Timer = ReturnType<typeof setTimeout>;

/**
 * How long a stopped worker has to acknowledge before it is abandoned (ms): this much wall time
 * and this much of the process's CPU time since the stop, so that a worker starved of a core on
 * a busy machine is not taken for a stuck one. A stuck worker burns CPU, so it is abandoned after
 * about this much of its own time.
 */
export const ACK_MS = 100;
/** The window's wall-clock ceiling (ms): a stopped worker is abandoned by then whatever the CPU. */
export const ACK_MAX_MS = 5000;
/** How long an idle worker is kept before it is closed (ms). */
export const IDLE_MS = 5000;
/** Most workers in one pool. */
export const MAX_WORKERS = 4;
/**
 * A worker's young generation (MB). A search allocates one short-lived string or object per
 * entry and per chunk; V8's default lets each worker's young space grow to tens of MB before
 * it is collected, which an idle server keeps as resident memory (decision 0035, measured).
 */
export const WORKER_YOUNG_GENERATION_MB = 8;

/** Where the engine runs its jobs. */
export type EngineMode = "workers" | "inline";

/** How an engine is built (defaults: sized to the cores, mode from the read permission). */
export interface EngineOptions {
  /** Force a mode (tests); default: "workers" when ENGINE_READ_PATH is readable. */
  mode?: EngineMode;
  /** Pool size; default navigator.hardwareConcurrency clamped to 1..MAX_WORKERS. */
  size?: number;
  /** The worker module; default ./worker.ts beside this module (a bundle passes its own). */
  worker?: URL;
  /**
   * The job functions for inline runs (engine/jobs.ts's JOBS); a worker module has its own. Given,
   * not imported, so the pool depends on no operation.
   */
  jobs: JobTable;
}

/** One call: its flag, its promise's settle functions and its timers. */
class Call {
  readonly id: number;
  readonly spec: JobSpec;
  readonly flagBuffer = new SharedArrayBuffer(4);
  readonly flag = new Int32Array(this.flagBuffer);
  readonly promise: Promise<unknown>;
  settled = false;
  onStop: () => void = () => {};
  #resolve!: (v: unknown) => void;
  #reject!: (e: unknown) => void;
  #timer: Timer | undefined;
  #signal?: AbortSignal;
  #onAbort = () => this.stop(FLAG_CANCELLED);
  readonly #onProgress?: (p: JobProgress) => void;
  /** The value the job may wait for (RunOptions.input). */
  readonly input?: Promise<unknown>;
  /** The input, once it has come (an inline job peeks at it). */
  came?: { value: unknown };

  constructor(id: number, spec: JobSpec, options: RunOptions) {
    this.id = id;
    this.spec = spec;
    this.#onProgress = options.onProgress;
    this.promise = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // A rejected input stops the call with its error (the caller's own, not a stop error).
    this.input = options.input?.then((value) => {
      this.came = { value };
      return value;
    }, (err) => {
      this.fail(err);
      return undefined;
    });
    this.#signal = options.signal;
    this.#signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  /** Starts the time budget (at run(): a wait in the queue counts). */
  startClock(): void {
    if (this.settled || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => this.stop(FLAG_TIME_BUDGET), this.spec.limits.maxOperationMs);
  }

  get running(): boolean {
    return !this.settled && Atomics.load(this.flag, 0) === FLAG_RUN;
  }

  progress(p: JobProgress): void {
    if (this.running) this.#onProgress?.(p);
  }

  resolve(value: unknown): void {
    if (this.#settle()) this.#resolve(value);
  }

  reject(err: unknown): void {
    if (this.#settle()) this.#reject(err);
  }

  /** Sets the flag and rejects now; the worker learns it at its next checkpoint. */
  stop(code: number): void {
    this.fail(stopError(code, this.spec.limits), code);
  }

  /** Stops the call like `stop`, rejecting with `err` instead of the stop's own error. */
  fail(err: unknown, code = FLAG_CANCELLED): void {
    if (this.settled) return;
    Atomics.store(this.flag, 0, code);
    this.reject(err);
    this.onStop();
  }

  #settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    clearTimeout(this.#timer);
    this.#signal?.removeEventListener("abort", this.#onAbort);
    return true;
  }
}

/** One worker of the pool and the call it runs. */
interface Slot {
  worker: Worker;
  /** True once the worker loaded its modules and listens. */
  ready: boolean;
  call: Call | null;
  idleTimer?: Timer;
  ackTimer?: Timer;
  /** Arms the acknowledgement timer of a call stopped before the worker was ready. */
  onReady?: () => void;
  /** Set when given up on; its exit event then frees a place under the abandoned cap. */
  abandoned?: boolean;
}

/** A read-only snapshot of an engine's counters. */
export interface EngineStats {
  /** Workers in the pool (idle or busy). */
  live: number;
  /** Workers running a job. */
  busy: number;
  /** Jobs waiting for a worker. */
  queued: number;
  /** Workers abandoned since the engine started. */
  abandoned: number;
  /** Abandoned workers whose thread has not exited yet (at most `size`). */
  abandonedAlive: number;
}

function defaultMode(worker: URL | undefined): EngineMode {
  // Without Deno's permission layer a worker may load any module: nothing to ask.
  if (!isDeno()) return worker !== undefined || ENGINE_READ_PATH !== null ? "workers" : "inline";
  if (ENGINE_READ_PATH === null) return "inline";
  try {
    const state = queryPermissionSync({ name: "read", path: ENGINE_READ_PATH });
    return state === "granted" ? "workers" : "inline";
  } catch {
    return "inline";
  }
}

function defaultSize(): number {
  // navigator.hardwareConcurrency is missing on Node < 21; node:os answers on Deno, Node and Bun.
  const cores = Number(globalThis.navigator?.hardwareConcurrency) || availableParallelism() || 1;
  return Math.max(1, Math.min(MAX_WORKERS, Math.floor(cores)));
}

/** A workspace's engine: one pool of workers (or inline execution), created lazily. */
export class Engine implements JobRunner {
  /** Where jobs run. */
  readonly mode: EngineMode;
  /** Most workers at once (0 inline). */
  readonly size: number;
  #slots: Slot[] = [];
  #queue: Call[] = [];
  #nextId = 1;
  #closed = false;
  #abandoned = 0;
  #abandonedAlive = 0;
  readonly #worker: URL;
  readonly #jobs: JobTable;

  /** An engine; no worker starts before the first job. */
  constructor(options: EngineOptions) {
    this.#jobs = options.jobs;
    this.mode = options.mode ?? defaultMode(options.worker);
    this.#worker = options.worker ?? new URL("./worker.ts", import.meta.url);
    this.size = this.mode === "inline" ? 0 : Math.max(1, options.size ?? defaultSize());
  }

  /** Workers alive now (idle or busy). */
  get live(): number {
    return this.#slots.length;
  }

  /** Workers given up on because they did not stop when told (they end on their own). */
  get abandoned(): number {
    return this.#abandoned;
  }

  /** Abandoned workers whose thread is still running (at most `size`). */
  get abandonedAlive(): number {
    return this.#abandonedAlive;
  }

  /** A snapshot of the engine's counters. */
  get stats(): EngineStats {
    return {
      live: this.#slots.length,
      busy: this.#slots.filter((s) => s.call !== null).length,
      queued: this.#queue.length,
      abandoned: this.#abandoned,
      abandonedAlive: this.#abandonedAlive,
    };
  }

  /** Runs one job; rejects with the job's WorkspaceError, CANCELLED or TIME_BUDGET_EXCEEDED. */
  run<T>(spec: JobSpec, options: RunOptions = {}): Promise<T> {
    if (this.#closed) {
      return Promise.reject(new WorkspaceError("CANCELLED", "the workspace engine is closed"));
    }
    if (options.signal?.aborted) return Promise.reject(stopError(FLAG_CANCELLED, spec.limits));
    const call = new Call(this.#nextId++, spec, options);
    call.startClock();
    if (this.mode === "inline") this.#runInline(call);
    else this.#dispatch(call);
    return call.promise as Promise<T>;
  }

  /**
   * Runs a job split into one shard per worker (`spec.shard`; one shard inline), each a job
   * of its own with its own flag and time budget, and returns their results in shard order.
   * The first failure stops the others (their flags are set) and is the error; progress is
   * the sum of the shards' counters. Decision 0035.
   */
  async runShards<T>(spec: JobSpec, options: RunOptions = {}): Promise<T[]> {
    const count = this.mode === "inline" ? 1 : this.size;
    if (count === 1) return [await this.run<T>({ ...spec, shard: { index: 0, count } }, options)];
    if (options.signal?.aborted) throw stopError(FLAG_CANCELLED, spec.limits);
    const stopAll = new AbortController();
    const onAbort = () => stopAll.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const latest: JobProgress[] = [];
    const report = options.onProgress;
    try {
      return await Promise.all(Array.from({ length: count }, (_, index) => {
        latest.push({ filesSearched: 0, matches: 0 });
        return this.run<T>({ ...spec, shard: { index, count } }, {
          signal: stopAll.signal,
          input: options.input,
          onProgress: report && ((p) => {
            latest[index] = p;
            report({
              filesSearched: latest.reduce((n, q) => n + q.filesSearched, 0),
              matches: latest.reduce((n, q) => n + q.matches, 0),
            });
          }),
        }).catch((err) => {
          stopAll.abort();
          throw err;
        });
      }));
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Stops every call (CANCELLED) and terminates every worker; later runs are refused. */
  close(): void {
    this.#closed = true;
    for (const call of this.#queue.splice(0)) call.stop(FLAG_CANCELLED);
    for (const slot of this.#slots.splice(0)) {
      clearTimeout(slot.idleTimer);
      clearTimeout(slot.ackTimer);
      slot.call?.stop(FLAG_CANCELLED);
      void slot.worker.terminate();
      slot.worker.unref();
    }
  }

  #runInline(call: Call): void {
    const checkpoint = new Checkpoint(call.flag, {
      limits: call.spec.limits,
      inline: true,
      onProgress: (p) => call.progress(p),
      input: { peek: () => call.came },
    });
    // Starts after the caller got its promise; a slice at a time, checking the flag.
    setTimeout(() => {
      if (!call.running) return;
      runJobFrom(this.#jobs, call.spec, checkpoint).then(
        (r) => call.resolve(r),
        (e) => call.reject(e),
      );
    }, 0);
  }

  /** True when one more thread may start: a free place in the pool, abandoned ones under the cap. */
  #maySpawn(): boolean {
    return !this.#closed && this.#slots.length < this.size && this.#abandonedAlive < this.size;
  }

  #dispatch(call: Call): void {
    let slot = this.#slots.find((s) => s.call === null);
    if (slot === undefined && this.#maySpawn()) slot = this.#spawn();
    if (slot === undefined) {
      this.#queue.push(call);
      call.onStop = () => {
        const i = this.#queue.indexOf(call);
        if (i !== -1) this.#queue.splice(i, 1);
      };
      return;
    }
    this.#start(slot, call);
  }

  #start(slot: Slot, call: Call): void {
    clearTimeout(slot.idleTimer);
    slot.idleTimer = undefined;
    slot.call = call;
    slot.worker.ref();
    call.onStop = () => {
      // The caller already has its error; give the worker ACK_MS to reach a checkpoint. A
      // worker still loading its modules runs none of the job's code yet: its window starts
      // when it is ready (its first checkpoint then sees the flag). Abandoning it instead
      // would replace it with another loading worker, which on a loaded machine is abandoned
      // in turn by the next stopped call.
      const arm = () => this.#awaitAck(slot, call);
      if (slot.ready) arm();
      else slot.onReady = arm;
    };
    const message: JobMessage = {
      type: "job",
      id: call.id,
      spec: call.spec,
      flag: call.flagBuffer,
    };
    slot.worker.postMessage(message);
    call.input?.then((value) => {
      if (slot.call === call && call.running) {
        this.#post(slot, { type: "input", id: call.id, value });
      }
    });
  }

  #post(slot: Slot, message: InputMessage): void {
    try {
      slot.worker.postMessage(message);
    } catch { /* a terminated worker takes no messages; its call has its error */ }
  }

  /**
   * Abandons the slot's worker unless it acknowledges the stopped call within its window:
   * ACK_MS of wall time and ACK_MS of the process's CPU time, or ACK_MAX_MS of wall time.
   */
  #awaitAck(slot: Slot, call: Call): void {
    const wallStart = Date.now();
    const cpuStart = processCpuMs();
    const check = () => {
      if (slot.call !== call) return;
      const cpu = processCpuMs() - cpuStart;
      if (cpu >= ACK_MS || Date.now() - wallStart >= ACK_MAX_MS) this.#abandon(slot);
      else slot.ackTimer = setTimeout(check, Math.max(10, ACK_MS - cpu));
    };
    slot.ackTimer = setTimeout(check, ACK_MS);
  }

  #spawn(): Slot {
    const worker = new Worker(this.#worker, {
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    const slot: Slot = { worker, ready: false, call: null };
    worker.on("message", (m: WorkerMessage) => this.#onMessage(slot, m));
    worker.on("error", (err: Error) => this.#onFailure(slot, err));
    worker.on("exit", () => {
      if (slot.abandoned) {
        slot.abandoned = false;
        this.#abandonedAlive--;
        this.#pump();
        return;
      }
      this.#onFailure(slot, new Error("the worker exited"));
    });
    this.#slots.push(slot);
    return slot;
  }

  /** Starts a worker ahead of need (after one was abandoned), idle until a job comes. */
  #spawnIdle(): void {
    if (!this.#maySpawn()) return;
    const slot = this.#spawn();
    slot.worker.unref();
    this.#idle(slot);
  }

  #idle(slot: Slot): void {
    const idle = setTimeout(() => this.#remove(slot), IDLE_MS);
    unrefTimer(idle);
    slot.idleTimer = idle;
  }

  #onMessage(slot: Slot, m: WorkerMessage): void {
    if (m.type === "ready") {
      slot.ready = true;
      const arm = slot.onReady;
      slot.onReady = undefined;
      arm?.();
      return;
    }
    const call = slot.call;
    if (call === null || m.id !== call.id) return;
    if (m.type === "progress") {
      call.progress(m.progress);
      return;
    }
    if (m.type === "result") call.resolve(m.result);
    else call.reject(errorFromWire(m.error));
    this.#release(slot);
  }

  #release(slot: Slot): void {
    clearTimeout(slot.ackTimer);
    slot.ackTimer = undefined;
    slot.onReady = undefined;
    slot.call = null;
    slot.worker.unref();
    const next = this.#queue.shift();
    if (next !== undefined) {
      this.#start(slot, next);
      return;
    }
    this.#idle(slot);
  }

  /** A worker that did not stop when told: let it go and make room for a fresh one. */
  #abandon(slot: Slot): void {
    this.#abandoned++;
    this.#abandonedAlive++;
    slot.abandoned = true;
    this.#remove(slot);
    this.#spawnIdle();
  }

  #remove(slot: Slot): void {
    const i = this.#slots.indexOf(slot);
    if (i === -1) return;
    this.#slots.splice(i, 1);
    clearTimeout(slot.idleTimer);
    clearTimeout(slot.ackTimer);
    void slot.worker.terminate();
    slot.worker.unref();
    this.#pump();
  }

  #onFailure(slot: Slot, err: Error): void {
    if (!this.#slots.includes(slot)) return;
    slot.call?.reject(
      new WorkspaceError("IO_ERROR", `the engine worker failed: ${err.message}`),
    );
    this.#remove(slot);
  }

  #pump(): void {
    while (this.#queue.length > 0 && !this.#closed) {
      let slot = this.#slots.find((s) => s.call === null);
      if (slot === undefined && this.#maySpawn()) slot = this.#spawn();
      if (slot === undefined) return;
      this.#start(slot, this.#queue.shift()!);
    }
  }
}
