/** create_directory: a directory and, unless parents is false, its missing parents. */
import { z } from "zod";
import { defineOperation, defineTool, type ToolResult, type ToolUnit } from "./unit.ts";
import { pathArg } from "./args.ts";
import { shown } from "./text.ts";
import { createDirectory } from "../workspace/directories.ts";

const operation = defineOperation({
  name: "create_directory",
  title: "Create a directory",
  description:
    "Create a directory, and its missing parents unless parents is false. An existing directory is success (created: false); an existing file of that name is ALREADY_EXISTS.",
  inputSchema: z.strictObject({
    path: pathArg(),
    parents: z.boolean().default(true).describe("Create missing parent directories."),
  }),
  outputSchema: z.object({
    path: z.string(),
    created: z.boolean(),
    createdPaths: z.array(z.string()),
    truncated: z.boolean().optional().describe(
      "createdPaths was cut to fit the result byte budget.",
    ),
    truncatedReason: z.literal("maxResultBytes").optional(),
  }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  needsWrite: true,
  run: (ctx, input) => createDirectory(ctx.workspace, input, { signal: ctx.signal }),
});

/** One sentence: the directories created, or that it already existed. */
function text(r: ToolResult): string {
  const made = r.createdPaths as string[];
  if (!r.created) return `${shown(r.path)} already exists as a directory; nothing was created.`;
  return `Created ${made.map(shown).join(", ")}${
    r.truncated === true ? " (list cut at maxResultBytes)" : ""
  }.`;
}

/** create_directory as one unit. */
export const createDirectoryTool: ToolUnit = defineTool({
  operation,
  text,
  examples: ["--write path=build/out"],
});
