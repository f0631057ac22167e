/** Bounded concurrency for tests: run many children or cases, a few at a time, results in order. */

/** Runs fn over items with at most `limit` in flight; results keep the items' order. */
export async function pool<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Runs thunks with at most `limit` (default 3) in flight; results keep the thunks' order. */
export function runTasks<T>(tasks: (() => Promise<T>)[], limit = 3): Promise<T[]> {
  return pool(tasks, limit, (task) => task());
}
