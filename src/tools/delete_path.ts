/** delete_path: a file, a symbolic link (never its target) or a directory, when confirmed. */
import { z } from "zod";
import { defineOperation, defineTool, type ToolResult, type ToolUnit } from "./unit.ts";
import { entryType, pathArg } from "./args.ts";
import { shown } from "./text.ts";
import { deletePath } from "../workspace/delete.ts";

const operation = defineOperation({
  name: "delete_path",
  title: "Delete a path",
  description:
    "Delete a file, a symbolic link (never its target) or a directory. Requires confirm: true. A non-empty directory also needs recursive: true. The workspace root cannot be deleted.",
  inputSchema: z.strictObject({
    path: pathArg(),
    recursive: z.boolean().default(false).describe(
      "Delete a non-empty directory with everything in it.",
    ),
    confirm: z.boolean().optional().describe("Must be true: confirms the deletion."),
  }),
  outputSchema: z.object({ path: z.string(), type: entryType, deleted: z.literal(true) }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false,
  },
  needsWrite: true,
  run: (ctx, input) => deletePath(ctx.workspace, input, { signal: ctx.signal }),
});

/** One sentence: what was deleted. */
function text(r: ToolResult): string {
  return `Deleted ${r.type} ${shown(r.path)}.`;
}

/** delete_path as one unit. */
export const deletePathTool: ToolUnit = defineTool({
  operation,
  text,
  examples: ["--write path=old.txt confirm:=true"],
});
