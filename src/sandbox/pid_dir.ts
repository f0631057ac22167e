/**
 * The pid file's directory is mounted read-write inside the sandbox (the server writes the file
 * through a temporary beside it and renames it). So it must hold nothing else: any other entry
 * would be writable by the sandboxed server and reachable through a link in the workspace. The
 * launcher (which holds no read permission) asks a child (its own fixed probe module, with read
 * permission) for that directory's real path and its entries. The real path is what gets mounted and what the
 * server signs in its /healthz proofs, so `serve stop`, which checks the real path, agrees even
 * when the spelled path goes through a link (`/var/run -> /run`).
 */

import { askProbe } from "../launch/probe.ts";

/** What the launcher learns of a pid file's directory. */
export type PidDirInfo =
  | { ok: true; real: string; others: string[] }
  | { ok: false; reason: string };

const PROBE = new URL("./pid_dir_probe.ts", import.meta.url);

/** Inspects the directory that will hold pid file `name` (and `name.tmp`). */
export async function inspectPidDir(
  dir: string,
  name: string,
  options: { deno: string },
): Promise<PidDirInfo> {
  // Read anywhere: resolving the directory's links needs it on every target. The probe is this
  // project's own fixed module and prints only that directory's path and names.
  const r = await askProbe<{ real?: string; entries?: string[]; error?: string }>({
    module: PROBE,
    args: [dir],
    read: "all",
    deno: options.deno,
  });
  if (r?.real === undefined || r.entries === undefined) {
    return { ok: false, reason: `cannot read ${dir}: ${r?.error ?? "the probe did not answer"}` };
  }
  const mine = new Set([name, `${name}.tmp`]);
  return { ok: true, real: r.real, others: r.entries.filter((e) => !mine.has(e)) };
}
