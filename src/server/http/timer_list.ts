/**
 * Many deadlines of one duration on one runtime timer. The HTTP handler gives every request a
 * body deadline and every fast tool call a keep-alive deadline; a timer of its own for each cost
 * about 2 µs with its clearTimeout (Deno 2.9's setTimeout builds a Node-style Timeout object),
 * a few percent of a request the fast path answers. Deadlines of one duration expire in the order
 * they start, so they are kept in a list in that order: a cancelled one leaves it at once, and the
 * one timer is armed for the list's head, again when it fires while deadlines remain. A list
 * emptied by cancels keeps its timer until it fires once more, finding nothing (that is what saves
 * a timer per request), but unref'd meanwhile (Deno, Node and Bun alike): like the timers it
 * replaces, it holds the process open exactly while a deadline waits.
 */
import { refTimer, unrefTimer } from "../../workspace/fs/runtime.ts";

interface Entry {
  /** When it expires (performance.now() clock). */
  due: number;
  /** Called when it expires; null once it left the list (expired or cancelled). */
  onExpire: (() => void) | null;
  prev: Entry | null;
  next: Entry | null;
}

/** Deadlines of one duration (ms), each calling its function once it passes, unless cancelled. */
export class TimerList {
  readonly #ms: number;
  #head: Entry | null = null;
  #tail: Entry | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(ms: number) {
    this.#ms = ms;
  }

  /** Calls onExpire once the list's duration has passed, unless the returned cancel runs first. */
  start(onExpire: () => void): () => void {
    const entry: Entry = {
      due: performance.now() + this.#ms,
      onExpire,
      prev: this.#tail,
      next: null,
    };
    if (this.#tail === null) {
      this.#head = entry;
      if (this.#timer !== undefined) refTimer(this.#timer); // waits for a deadline again
    } else {
      this.#tail.next = entry;
    }
    this.#tail = entry;
    if (this.#timer === undefined) this.#arm(entry.due);
    return () => this.#unlink(entry);
  }

  /** Deadlines waiting (for the tests). */
  size(): number {
    let n = 0;
    for (let e = this.#head; e !== null; e = e.next) n++;
    return n;
  }

  #unlink(entry: Entry): void {
    if (entry.onExpire === null) return;
    entry.onExpire = null;
    if (entry.prev === null) this.#head = entry.next;
    else entry.prev.next = entry.next;
    if (entry.next === null) this.#tail = entry.prev;
    else entry.next.prev = entry.prev;
    entry.prev = entry.next = null;
    if (this.#head === null && this.#timer !== undefined) unrefTimer(this.#timer);
  }

  #arm(due: number): void {
    this.#timer = setTimeout(this.#fire, Math.max(0, Math.ceil(due - performance.now())));
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    const now = performance.now();
    const due: (() => void)[] = [];
    while (this.#head !== null && this.#head.due <= now) {
      const entry = this.#head;
      due.push(entry.onExpire!);
      this.#unlink(entry);
    }
    // Armed again before the calls, so one that throws cannot strand the deadlines after it.
    if (this.#head !== null) this.#arm(this.#head.due);
    let failure: { error: unknown } | undefined;
    for (const onExpire of due) {
      try {
        onExpire();
      } catch (error) {
        failure ??= { error }; // the others still expire; the first error goes on as a timer's would
      }
    }
    if (failure !== undefined) throw failure.error;
  };
}
