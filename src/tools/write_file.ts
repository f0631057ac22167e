/** write_file: a whole UTF-8 text file written atomically, replacing only when confirmed. */
import { z } from "zod";
import { defineOperation, defineTool, type ToolResult, type ToolUnit } from "./unit.ts";
import { hashSkipped, pathArg, sha256Arg } from "./args.ts";
import { shown } from "./text.ts";
import { writeFile } from "../workspace/write.ts";

const operation = defineOperation({
  name: "write_file",
  title: "Write a file",
  description:
    'Write a whole UTF-8 text file atomically (temporary file in the same directory, flushed, then renamed): readers see the old or the new content, never a mix. An existing file is refused unless ifExists is "overwrite" and the replacement is confirmed (confirm: true, or the user accepts when the client supports elicitation); pass expectedSha256 (from read_file) to refuse with CONFLICT if the file changed since you read it (a file over maxHashBytes cannot be checked: TOO_LARGE). A replaced file keeps its permission mode. Files with more than one hard link are never written through. createParents creates missing parent directories. For small changes prefer edit_file.',
  inputSchema: z.strictObject({
    path: pathArg(),
    content: z.string().describe("The complete new content (UTF-8)."),
    ifExists: z.enum(["error", "overwrite"]).default("error").describe(
      "What to do if the file exists.",
    ),
    expectedSha256: sha256Arg.optional().describe("sha256 the existing file must still have."),
    createParents: z.boolean().default(false).describe("Create missing parent directories."),
    confirm: z.boolean().optional().describe(
      "Must be true to replace an existing file (clients with elicitation are asked instead).",
    ),
  }),
  outputSchema: z.object({
    path: z.string(),
    created: z.boolean(),
    size: z.int(),
    sha256: z.string(),
    previousSha256: z.string().optional(),
    previousSha256Skipped: hashSkipped.optional().describe(
      "The replaced file was larger than maxHashBytes, so its sha256 was not computed.",
    ),
  }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  needsWrite: true,
  run: (ctx, input) => writeFile(ctx.workspace, input, { signal: ctx.signal }),
});

/** One sentence: created or replaced, size, sha256, and the previous file's hash or why none. */
function text(r: ToolResult): string {
  const skipped = r.previousSha256Skipped as { limit: number } | undefined;
  return `${r.created ? "Created" : "Replaced"} ${
    shown(r.path)
  } (${r.size} bytes, sha256 ${r.sha256})${
    typeof r.previousSha256 === "string" ? `; the previous sha256 was ${r.previousSha256}` : ""
  }${skipped ? `; the previous file was over maxHashBytes and not hashed` : ""}.`;
}

/** write_file as one unit. */
export const writeFileTool: ToolUnit = defineTool({
  operation,
  text,
  examples: ["--write path=notes.txt content='hello'"],
});
