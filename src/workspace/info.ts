/** workspace_info: what this workspace is and what this process may do. */
import type { Workspace } from "./workspace.ts";
import type { Limits } from "./limits.ts";
import { assertFitsBudget } from "./text.ts";

/** State of one Deno permission. */
export type PermissionState = "granted" | "prompt" | "denied";

/** Result of workspaceInfo. */
export interface WorkspaceInfoResult {
  root: string;
  mode: "read-only" | "read-write";
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
  engine: { mode: "workers" | "inline"; workers: number };
}

/** Describes the workspace: root name, mode, limits, and the Deno permissions actually held. */
export async function workspaceInfo(ws: Workspace): Promise<WorkspaceInfoResult> {
  const q = async (d: Deno.PermissionDescriptor) => (await Deno.permissions.query(d)).state;
  const root = ws.policy.rootReal;
  const out: WorkspaceInfoResult = {
    root: ws.rootName,
    mode: ws.writable ? "read-write" : "read-only",
    limits: { ...ws.limits },
    permissions: {
      readWorkspace: await q({ name: "read", path: root }),
      writeWorkspace: await q({ name: "write", path: root }),
      readAnywhere: await q({ name: "read" }),
      writeAnywhere: await q({ name: "write" }),
      net: await q({ name: "net" }),
      env: await q({ name: "env" }),
      run: await q({ name: "run" }),
      ffi: await q({ name: "ffi" }),
      sys: await q({ name: "sys" }),
    },
    engine: { mode: ws.engine.mode, workers: ws.engine.size },
  };
  assertFitsBudget(out, { limit: ws.limits.maxResultBytes, what: "workspace_info" });
  return out;
}
