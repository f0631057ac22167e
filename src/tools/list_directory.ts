/** list_directory: the entries below a directory, paged, in a deterministic order. */
import { z } from "zod";
import { defineOperation, defineTool, type ToolResult, type ToolUnit } from "./unit.ts";
import { bound, dirArg, entryType, PATH_HEADER, READ } from "./args.ts";
import { entryLine, shown } from "./text.ts";
import { styledEntries } from "./styled.ts";
import { listDirectory } from "../workspace/list.ts";

const operation = defineOperation({
  name: "list_directory",
  title: "List a directory",
  description:
    "List the entries below a directory, up to `depth` levels (1 = direct children), in a deterministic order (names sorted, parents before children). Each entry has its workspace-relative path, type (file, directory, symlink, other), size and mtime. Symbolic links are listed, never followed. Results are paged: pass the returned `nextCursor` as `cursor` to get the next page. Hidden names (starting with '.') are left out unless includeHidden is true.",
  inputSchema: z.strictObject({
    path: dirArg.meta(PATH_HEADER),
    depth: z.int().min(1).max(10).default(1).describe("How many levels to descend (1..10)."),
    includeHidden: z.boolean().default(false).describe("Include names starting with '.'."),
    limit: bound("Entries per page (default and maximum: the workspace's maxListEntries).")
      .optional(),
    cursor: z.string().min(1).optional().describe(
      "Opaque cursor from a previous page's nextCursor.",
    ),
  }),
  outputSchema: z.object({
    path: z.string(),
    entries: z.array(z.object({
      path: z.string(),
      type: entryType,
      size: z.int().nullable(),
      mtime: z.string().nullable(),
    })),
    total: z.int().describe("Entries in the whole listing (all pages)."),
    nextCursor: z.string().optional(),
    truncated: z.boolean().describe(
      "True when the visited-entries cap stopped the walk or the result byte budget cut the page (nextCursor continues it).",
    ),
    truncatedReason: z.enum(["maxVisited", "maxResultBytes"]).optional(),
  }),
  annotations: READ,
  needsWrite: false,
  run: (ctx, input) => listDirectory(ctx.workspace, input, ctx.signal),
});

/** One entry per line, then a trailer with the count and the next page's cursor when paged. */
function text(r: ToolResult): string {
  const entries = r.entries as { path: string; type: string; size: number | null }[];
  const out = entries.map(entryLine);
  if (entries.length === 0) out.push(`(${shown(r.path)} has no entries)`);
  if (typeof r.nextCursor === "string" || r.truncated === true) {
    let trailer = `${entries.length} of ${r.total} entries`;
    if (r.truncated === true) trailer += `, truncated (${r.truncatedReason})`;
    if (typeof r.nextCursor === "string") {
      trailer += `; for the next page call list_directory again with cursor: ${r.nextCursor}`;
    }
    out.push(`[${trailer}]`);
  }
  return out.join("\n");
}

/** list_directory as one unit. */
export const listDirectoryTool: ToolUnit = defineTool({
  operation,
  text,
  pretty: (t, _r, { palette }) => styledEntries(t, palette),
  examples: ["path=src depth:=2"],
});
