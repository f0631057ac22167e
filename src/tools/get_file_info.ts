/** get_file_info: one path's stat without following a final symbolic link. */
import { z } from "zod";
import { defineOperation, defineTool, type ToolResult, type ToolUnit } from "./unit.ts";
import { entryType, PATH_HEADER, pathArg, READ } from "./args.ts";
import { keyValues, shown } from "./text.ts";
import { dimKeys } from "./styled.ts";
import { getFileInfo } from "../workspace/read.ts";

const operation = defineOperation({
  name: "get_file_info",
  title: "File information",
  description:
    "Stat one path without following a final symbolic link: type, size, modification/access/birth/change times, permission mode (octal), hard-link count, and whether it is a symlink. For a symlink, `symlink.status` says whether its target is inside the workspace (then `target` is the target's workspace-relative path), outside (target not shown), dangling or a loop.",
  inputSchema: z.strictObject({ path: pathArg().meta(PATH_HEADER) }),
  outputSchema: z.object({
    path: z.string(),
    type: entryType,
    size: z.int(),
    mtime: z.string().nullable(),
    atime: z.string().nullable(),
    birthtime: z.string().nullable(),
    ctime: z.string().nullable(),
    mode: z.string().nullable(),
    nlink: z.int().nullable(),
    isSymlink: z.boolean(),
    symlink: z.object({
      status: z.enum(["inside", "outside", "dangling", "loop"]),
      target: z.string().optional(),
      targetType: entryType.optional(),
    }).optional(),
  }),
  annotations: READ,
  needsWrite: false,
  run: (ctx, input) => getFileInfo(ctx.workspace, input),
});

/** `key: value` lines; a symlink's status, target and target type on one line. */
function text(r: ToolResult): string {
  const link = r.symlink as { status: string; target?: string; targetType?: string } | undefined;
  return keyValues([
    ["path", shown(r.path)],
    ["type", r.type],
    ["size", `${r.size} bytes`],
    ["mode", r.mode],
    ["modified", r.mtime],
    ["accessed", r.atime],
    ["created", r.birthtime],
    ["changed", r.ctime],
    ["links", r.nlink],
    [
      "symlink",
      link &&
      `${link.status}${link.target === undefined ? "" : ` -> ${shown(link.target)}`}${
        link.targetType === undefined ? "" : ` (${link.targetType})`
      }`,
    ],
  ]);
}

/** get_file_info as one unit. */
export const getFileInfoTool: ToolUnit = defineTool({
  operation,
  text,
  pretty: (t, _r, { palette }) => dimKeys(t, palette),
  examples: ["path=deno.json"],
});
