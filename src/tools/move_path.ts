/** move_path: a file, directory or symbolic link moved or renamed inside the workspace. */
import { z } from "zod";
import { defineOperation, defineTool, type ToolResult, type ToolUnit } from "./unit.ts";
import { entryType, pathArg } from "./args.ts";
import { shown } from "./text.ts";
import { movePath } from "../workspace/move.ts";

const operation = defineOperation({
  name: "move_path",
  title: "Move or rename",
  description:
    "Move or rename a file, directory or symbolic link (the link itself, not its target) inside the workspace. `destination` is the new path, not a directory to move into; its parent must exist. An existing destination is refused unless overwrite is true (a directory can only replace an empty directory); replacing an existing file or link also needs confirmation (confirm: true, or the user accepts when the client supports elicitation). A directory cannot be moved into itself.",
  inputSchema: z.strictObject({
    source: pathArg("Path to move (workspace-relative)."),
    destination: pathArg("New path (workspace-relative); its parent directory must exist."),
    overwrite: z.boolean().default(false).describe("Replace an existing destination."),
    confirm: z.boolean().optional().describe(
      "Confirms replacing an existing file or link (needed when overwrite replaces one).",
    ),
  }),
  outputSchema: z.object({
    source: z.string(),
    destination: z.string(),
    type: entryType,
    overwritten: z.boolean(),
  }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false,
  },
  needsWrite: true,
  // A rename cannot cross mounts, and a copy then delete is not atomic (decision 0064).
  roots: "same-root-ends",
  run: (ctx, input) => movePath(ctx.workspace, input, { signal: ctx.signal }),
});

/** One sentence: what moved where, and whether it replaced something. */
function text(r: ToolResult): string {
  return `Moved ${r.type} ${shown(r.source)} to ${shown(r.destination)}${
    r.overwritten ? " (replacing what was there)" : ""
  }.`;
}

/** move_path as one unit. */
export const movePathTool: ToolUnit = defineTool({
  operation,
  text,
  examples: [
    "--write source=a.txt destination=b.txt",
    "--write source=new.txt destination=old.txt overwrite:=true confirm:=true",
  ],
});
