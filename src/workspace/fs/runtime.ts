/**
 * The few runtime facts the workspace layer needs beyond its file system: which WorkspaceFs a
 * runtime gets by default, Deno's permission answers (every permission is held where there is
 * no permission layer), unref'ing a timer (and ref'ing it again), and the process's CPU time.
 */
import { cpuUsage } from "node:process";
import { denoFs } from "./deno.ts";
import { nodeFs } from "./node.ts";
import type { FsKind, WorkspaceFs } from "./types.ts";

/** State of one Deno permission ("granted" on runtimes without a permission layer). */
export type PermissionState = "granted" | "prompt" | "denied";

/** A Deno permission descriptor (kept loose so this module type-checks without Deno). */
export type PermissionQuery = { name: string; [key: string]: unknown };

interface DenoLike {
  permissions: {
    query(d: PermissionQuery): Promise<{ state: PermissionState }>;
    querySync(d: PermissionQuery): { state: PermissionState };
  };
  unrefTimer(id: number): void;
  refTimer(id: number): void;
}

function deno(): DenoLike | undefined {
  return (globalThis as { Deno?: DenoLike }).Deno;
}

/** True on Deno (which has a permission layer), false on Node and Bun. */
export function isDeno(): boolean {
  return deno() !== undefined;
}

/** The default WorkspaceFs of this runtime: Deno's API on Deno, node:fs elsewhere. */
export function defaultFs(): WorkspaceFs {
  return isDeno() ? denoFs : nodeFs;
}

/** The WorkspaceFs of a kind (engine workers receive the kind, not the object). */
export function fsOfKind(kind: FsKind): WorkspaceFs {
  return kind === "deno" ? denoFs : nodeFs;
}

/** Deno's answer for a permission; "granted" where there is no permission layer. */
export async function queryPermission(d: PermissionQuery): Promise<PermissionState> {
  const D = deno();
  return D === undefined ? "granted" : (await D.permissions.query(d)).state;
}

/** Synchronous queryPermission. */
export function queryPermissionSync(d: PermissionQuery): PermissionState {
  const D = deno();
  return D === undefined ? "granted" : D.permissions.querySync(d).state;
}

/** Lets the process exit while this timer is pending (Deno.unrefTimer or Node's timer.unref()). */
export function unrefTimer(timer: ReturnType<typeof setTimeout>): void {
  const D = deno();
  if (D !== undefined) D.unrefTimer(timer as unknown as number);
  else (timer as unknown as { unref?: () => void }).unref?.();
}

/** Undoes unrefTimer: the pending timer holds the process open again. */
export function refTimer(timer: ReturnType<typeof setTimeout>): void {
  const D = deno();
  if (D !== undefined) D.refTimer(timer as unknown as number);
  else (timer as unknown as { ref?: () => void }).ref?.();
}

/**
 * CPU time (ms, user + system) used so far by every thread of this process: getrusage, which
 * needs no permission and no /proc, on Deno, Node and Bun.
 */
export function processCpuMs(): number {
  const { user, system } = cpuUsage();
  return (user + system) / 1000;
}
