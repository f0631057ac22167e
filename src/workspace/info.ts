/** workspace_info: what this workspace is and what this process may do. */
import type { Workspace } from "./workspace.ts";
import type { Limits } from "./limits.ts";
import { assertFitsBudget } from "./text.ts";
import { detectSandbox } from "../sandbox/report.ts";
import { type PermissionState, queryPermission } from "./fs/runtime.ts";

/** State of one Deno permission ("granted" on Node and Bun, which have no permission layer). */
export type { PermissionState };

/** Result of workspaceInfo. */
export interface WorkspaceInfoResult {
  root: string;
  mode: "read-only" | "read-write";
  /**
   * Every root, in order (decision 0064): its name, how paths address it ("." for the first, which
   * relative paths address; the configured absolute path for the others) and its mode.
   */
  roots: { name: string; path: string; mode: "read-only" | "read-write" }[];
  /** Where the roots came from: configured, the start directory, or the client (decision 0065). */
  rootsFrom: "configured" | "start-directory" | "client";
  limits: Limits;
  permissions: {
    readWorkspace: PermissionState;
    writeWorkspace: PermissionState;
    readAnywhere: PermissionState;
    writeAnywhere: PermissionState;
    net: PermissionState;
    env: PermissionState;
    run: PermissionState;
    ffi: PermissionState;
    sys: PermissionState;
  };
  /**
   * Where walks and matching run (a worker pool, or inline), and what serves search_text's content
   * matching: the native engine (ripgrep, named with its version) or the built-in one, and why
   * not native when the native engine was asked for (decision 0054).
   */
  engine: {
    mode: "workers" | "inline";
    workers: number;
    search: "native" | "builtin";
    native?: string;
    reason?: string;
  };
  /**
   * The containment layers in force: the in-process checks (always), the kernel sandbox
   * (bubblewrap, when the launcher started this process inside one), and whether Deno's
   * permissions are scoped (no read, write, net, env, run, ffi or sys granted everywhere).
   */
  containment: {
    inProcess: true;
    sandbox: "bubblewrap" | "none";
    denoPermissions: "scoped" | "broad";
    /**
     * How the root is held: `mount` (the sandbox's mount point: it cannot be replaced there, so
     * it is not re-checked) or `identity` (pinned at open, re-checked on every request).
     */
    root: "mount" | "identity";
  };
}

/** Describes the workspace: root name, mode, limits, and the Deno permissions actually held. */
export async function workspaceInfo(ws: Workspace): Promise<WorkspaceInfoResult> {
  const q = queryPermission;
  const root = ws.policy.rootReal;
  const permissions = {
    readWorkspace: await q({ name: "read", path: root }),
    writeWorkspace: await q({ name: "write", path: root }),
    readAnywhere: await q({ name: "read" }),
    writeAnywhere: await q({ name: "write" }),
    net: await q({ name: "net" }),
    env: await q({ name: "env" }),
    run: await q({ name: "run" }),
    ffi: await q({ name: "ffi" }),
    sys: await q({ name: "sys" }),
  };
  const { readWorkspace: _r, writeWorkspace: _w, ...anywhere } = permissions;
  const broad = Object.values(anywhere).some((s) => s === "granted");
  const out: WorkspaceInfoResult = {
    root: ws.rootName,
    mode: ws.writable ? "read-write" : "read-only",
    roots: ws.roots.map((r, i) => ({
      name: r.rootName,
      path: i === 0 ? "." : r.policy.rootGiven,
      mode: r.writable ? "read-write" : "read-only",
    })),
    rootsFrom: ws.rootsFrom,
    limits: { ...ws.limits },
    permissions,
    containment: {
      inProcess: true,
      sandbox: await detectSandbox(),
      denoPermissions: broad ? "broad" : "scoped",
      root: ws.policy.rootMounted ? "mount" : "identity",
    },
    engine: {
      mode: ws.engine.mode,
      workers: ws.engine.size,
      ...(await ws.prefilter?.report() ?? { search: "builtin" }),
    },
  };
  assertFitsBudget(out, { limit: ws.limits.maxResultBytes, what: "workspace_info" });
  return out;
}
