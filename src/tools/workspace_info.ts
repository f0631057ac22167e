/** workspace_info: the workspace's root, mode, limits, permissions, engine and containment. */
import { z } from "zod";
import { defineOperation, defineTool, type ToolResult, type ToolUnit } from "./unit.ts";
import { READ } from "./args.ts";
import { keyValues, shown } from "./text.ts";
import { dimKeys } from "./styled.ts";
import { workspaceInfo } from "../workspace/info.ts";

const permission = z.enum(["granted", "prompt", "denied"]);

const operation = defineOperation({
  name: "workspace_info",
  title: "Workspace information",
  description:
    "Describe this workspace: its root directory name (and every root when it has several, with their modes), whether writing is enabled (read-only or read-write), every configured limit (read, media, write, list, result and match caps), the Deno permissions this process actually holds, and which containment layers are active (in-process checks, a bubblewrap kernel sandbox, scoped Deno permissions). Call it first to learn the bounds the other tools enforce.",
  inputSchema: z.strictObject({}),
  outputSchema: z.object({
    root: z.string(),
    mode: z.enum(["read-only", "read-write"]),
    roots: z.array(z.object({
      name: z.string(),
      path: z.string().describe(
        'How paths address this root: "." for the first root (relative paths address it), its absolute path for the others.',
      ),
      mode: z.enum(["read-only", "read-write"]),
    })).describe(
      "Every root, in order. A relative path addresses the first; an absolute path the root it lies under. Results show the first root's paths relative, the others' absolute.",
    ),
    rootsFrom: z.enum(["configured", "start-directory", "client"]).describe(
      "Where the roots came from: configured (--root, --read-only-root, or the library's caller), start-directory (no root flag: the directory the server was started in) or client (the roots the client declared).",
    ),
    limits: z.object({
      maxReadBytes: z.int(),
      maxMediaBytes: z.int(),
      maxWriteBytes: z.int(),
      maxListEntries: z.int(),
      maxResults: z.int(),
      maxMatches: z.int(),
      maxSearchFileBytes: z.int(),
      maxVisited: z.int(),
      maxDepth: z.int(),
      maxResultBytes: z.int(),
      maxOperationMs: z.int(),
      maxHashBytes: z.int(),
    }),
    permissions: z.object({
      readWorkspace: permission,
      writeWorkspace: permission,
      readAnywhere: permission,
      writeAnywhere: permission,
      net: permission,
      env: permission,
      run: permission,
      ffi: permission,
      sys: permission,
    }),
    engine: z.object({
      mode: z.enum(["workers", "inline"]).describe(
        "Where walks and matching run: a worker pool, or inline on the serving thread (no read permission on the engine's modules).",
      ),
      workers: z.int().describe("Size of the worker pool (0 inline)."),
      search: z.enum(["native", "builtin"]).describe(
        "What finds search_text's candidate files: the native engine (ripgrep in its own sandbox, started by the server launcher) or the built-in one, which reads every file.",
      ),
      native: z.string().optional().describe("The native engine and its version, when in use."),
      reason: z.string().optional().describe(
        "Why the native engine is not in use, when it was asked for.",
      ),
    }),
    containment: z.object({
      inProcess: z.literal(true),
      sandbox: z.enum(["bubblewrap", "none"]),
      denoPermissions: z.enum(["scoped", "broad"]),
      root: z.enum(["mount", "identity"]).describe(
        "How the root is held: the kernel sandbox's mount point (it cannot be replaced there, so it is not re-checked), or its identity pinned at open and re-checked on every request.",
      ),
    }),
  }),
  annotations: READ,
  needsWrite: false,
  roots: "own",
  run: (ctx) => workspaceInfo(ctx.workspace),
});

/** `k=v, k=v` of an object's fields. */
const pairs = (o: unknown) =>
  Object.entries(o as Record<string, unknown>).map(([k, v]) => `${k}=${v}`).join(", ");

type RootRow = { name: string; path: string; mode: string };

/** `key: value` lines: root, mode, the roots when there are several, then each group as `k=v` pairs. */
function text(r: ToolResult): string {
  const roots = r.roots as RootRow[] | undefined;
  const several: [string, string][] = roots !== undefined && roots.length > 1
    ? [["roots", roots.map((x) => `${shown(x.path)} (${x.mode})`).join(", ")]]
    : [];
  return keyValues([
    ["root", shown(r.root)],
    ["mode", r.mode],
    ...several,
    ...(r.rootsFrom === "configured" ? [] : [["roots from", r.rootsFrom] as [string, string]]),
    ["limits", pairs(r.limits)],
    ["permissions", pairs(r.permissions)],
    ["containment", pairs(r.containment)],
    ["engine", pairs(r.engine)],
  ]);
}

/** workspace_info as one unit. */
export const workspaceInfoTool: ToolUnit = defineTool({
  operation,
  text,
  pretty: (t, _r, { palette }) => dimKeys(t, palette),
  examples: [""],
});
