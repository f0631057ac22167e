/**
 * The workspace's readers/writer lock: read operations share it, write operations hold it
 * alone, so no mutation runs while another operation is between its check and its use.
 * Asynchronous, FIFO fair and writer-preferring (a reader that arrives while a writer waits
 * queues behind that writer), with cancellation and a bounded wait.
 */
import { WorkspaceError } from "./errors.ts";

/** How an operation holds the lock: shared (reads) or exclusive (writes). */
export type LockMode = "read" | "write";

/** Gives the lock back; calling it more than once does nothing. */
export type LockRelease = () => void;

/** Options of ReadersWriterLock.acquire. */
export interface AcquireOptions {
  /** Aborting it while queued leaves the queue with CANCELLED. */
  signal?: AbortSignal;
  /** Longest wait in the queue (ms) before TIME_BUDGET_EXCEEDED; none waits until granted or cancelled. */
  timeoutMs?: number;
}

interface Waiter {
  mode: LockMode;
  grant: () => void;
}

/** A readers/writer lock for one workspace (no module state: one instance per Workspace). */
export class ReadersWriterLock {
  #readers = 0;
  #writer = false;
  readonly #queue: Waiter[] = [];

  /** Readers holding the lock now. */
  get readers(): number {
    return this.#readers;
  }

  /** Whether a writer holds the lock now. */
  get writing(): boolean {
    return this.#writer;
  }

  /** Calls waiting in the queue. */
  get waiting(): number {
    return this.#queue.length;
  }

  /** Waits for the lock in the given mode; resolves with its release. */
  acquire(mode: LockMode, options: AcquireOptions = {}): Promise<LockRelease> {
    const { signal, timeoutMs } = options;
    if (signal?.aborted) {
      return Promise.reject(new WorkspaceError("CANCELLED", "the operation was cancelled"));
    }
    if (this.#queue.length === 0 && this.#free(mode)) {
      this.#take(mode);
      return Promise.resolve(this.#releaser(mode));
    }
    return new Promise<LockRelease>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const leave = (err: WorkspaceError) => {
        const i = this.#queue.indexOf(waiter);
        if (i === -1) return; // already granted
        this.#queue.splice(i, 1);
        cleanup();
        reject(err);
        this.#drain(); // a writer leaving the head may let readers behind it in
      };
      const onAbort = () =>
        leave(new WorkspaceError("CANCELLED", "the operation was cancelled while it waited"));
      const cleanup = () => {
        signal?.removeEventListener("abort", onAbort);
        if (timer !== undefined) clearTimeout(timer);
      };
      const waiter: Waiter = {
        mode,
        grant: () => {
          cleanup();
          resolve(this.#releaser(mode));
        },
      };
      this.#queue.push(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() =>
          leave(
            new WorkspaceError(
              "TIME_BUDGET_EXCEEDED",
              `waited ${timeoutMs} ms for other operations on the workspace to finish (maxOperationMs); nothing was done`,
              { details: { limit: "maxOperationMs", value: timeoutMs } },
            ),
          ), timeoutMs);
      }
    });
  }

  #free(mode: LockMode): boolean {
    return mode === "read" ? !this.#writer : !this.#writer && this.#readers === 0;
  }

  #take(mode: LockMode): void {
    if (mode === "read") this.#readers++;
    else this.#writer = true;
  }

  #releaser(mode: LockMode): LockRelease {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (mode === "read") this.#readers--;
      else this.#writer = false;
      this.#drain();
    };
  }

  /** Grants the head of the queue while it can run: a writer alone, or a run of readers. */
  #drain(): void {
    while (this.#queue.length > 0 && this.#free(this.#queue[0].mode)) {
      const w = this.#queue.shift()!;
      this.#take(w.mode);
      w.grant();
      if (w.mode === "write") return;
    }
  }
}
