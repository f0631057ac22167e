/** The pid file of an HTTP server: who is running, where, and whether it is stale. */

/** What a pid file records. */
export interface PidRecord {
  pid: number;
  url: string;
  startedAt: string;
}

/** Reads a pid file; null when it is absent or unreadable as a record. */
export async function readPidFile(path: string): Promise<PidRecord | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
  try {
    const r = JSON.parse(text) as PidRecord;
    if (Number.isSafeInteger(r.pid) && typeof r.url === "string") return r;
  } catch {
    // A damaged pid file is stale.
  }
  return null;
}

/** Writes a pid file (one small write; needs write permission on that path only). */
export async function writePidFile(path: string, record: PidRecord): Promise<void> {
  await Deno.writeTextFile(path, JSON.stringify(record) + "\n", { mode: 0o600 });
}

/** Removes a pid file if it still names this process. */
export async function removePidFile(path: string, pid: number): Promise<void> {
  const r = await readPidFile(path).catch(() => null);
  if (r?.pid === pid) await Deno.remove(path).catch(() => {});
}

/** True when the server a record names still answers /healthz with the same pid. */
export async function isLive(record: PidRecord, timeoutMs = 1500): Promise<boolean> {
  try {
    const health = new URL("/healthz", record.url);
    const res = await fetch(health, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) {
      await res.body?.cancel();
      return false;
    }
    const body = await res.json() as { pid?: unknown };
    return body.pid === record.pid;
  } catch {
    return false;
  }
}
