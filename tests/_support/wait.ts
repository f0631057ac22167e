/**
 * Waiting for events, not for time: a file's appearance (a watcher on its directory), a change
 * announced by whoever makes it, and text that grows as a stream is read (each append wakes its
 * waiters). The time limit of each wait only bounds a failure; a wait that succeeds ends on the
 * event itself, however loaded the machine is.
 */

/** The timer of a bounded wait, cleared when the wait ends. */
function deadline(ms: number): { expired: Promise<false>; clear(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return { expired, clear: () => clearTimeout(timer) };
}

async function present(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/**
 * Resolves true once `path` exists (created or renamed into its directory), false if it did not
 * within `ms`. The directory is watched before the first look, so a file made between the look
 * and the watch is not missed.
 */
export async function waitForFile(path: string, ms = 30_000): Promise<boolean> {
  const dir = path.slice(0, path.lastIndexOf("/")) || "/";
  let watcher: Deno.FsWatcher;
  try {
    watcher = Deno.watchFs(dir, { recursive: false });
  } catch {
    // No watcher to be had (the machine's inotify instances are shared and capped): look every
    // 25 ms instead, within the same limit.
    const end = Date.now() + ms;
    while (!(await present(path))) {
      if (Date.now() > end) return false;
      await new Promise((r) => setTimeout(r, 25));
    }
    return true;
  }
  const timer = deadline(ms);
  try {
    if (await present(path)) return true;
    const seen = (async () => {
      for await (const _ of watcher) if (await present(path)) return true;
      return await present(path);
    })().catch(() => false);
    return await Promise.race([seen, timer.expired]);
  } finally {
    timer.clear();
    watcher.close();
  }
}

/**
 * Something that changes (requests seen, lines read): `notify()` after each change wakes every
 * `until` to look again.
 */
export class Changes {
  #waiters = new Set<() => void>();

  /** Wakes every waiter to look at the new state. */
  notify(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  /** Resolves true once `holds()` is true (looked at after each change), false after `ms`. */
  async until(holds: () => boolean, ms = 10_000): Promise<boolean> {
    if (holds()) return true;
    const timer = deadline(ms);
    let wake = () => {};
    const seen = new Promise<true>((resolve) => {
      wake = () => {
        if (holds()) resolve(true);
      };
      this.#waiters.add(wake);
    });
    try {
      return await Promise.race([seen, timer.expired]);
    } finally {
      this.#waiters.delete(wake);
      timer.clear();
    }
  }
}

/** Text read from a stream as it arrives, with waits on what it holds. */
export class GrowingText {
  #text = "";
  #changes = new Changes();

  /** Everything read so far. */
  get text(): string {
    return this.#text;
  }

  /** Adds what was read and wakes every waiter to look at it. */
  append(chunk: string): void {
    this.#text += chunk;
    this.#changes.notify();
  }

  /** Resolves true once `holds(text)` is true, false if it was not within `ms`. */
  waitFor(holds: (text: string) => boolean, ms = 10_000): Promise<boolean> {
    return this.#changes.until(() => holds(this.#text), ms);
  }

  /** Reads `stream` to its end into this text (never rejects). */
  async drain(stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): Promise<void> {
    const dec = new TextDecoder();
    try {
      for await (const chunk of stream) this.append(dec.decode(chunk, { stream: true }));
    } catch { /* the stream was closed or cancelled */ }
  }
}
