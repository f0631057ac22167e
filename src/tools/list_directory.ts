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
    "List the entries below a directory, up to `depth` levels (1 = direct children), in a deterministic order: siblings sorted by `sortBy` (name by default; size or mtime, ties by name), each directory followed by its contents. Each entry has its workspace-relative path, type (file, directory, symlink, other), size and mtime; with `sizes: true` each directory also has totalSize, the bytes of the files below it (like du). Symbolic links are listed, never followed. Results are paged: pass the returned `nextCursor` as `cursor` (with the same arguments) to get the next page. Hidden names (starting with '.') are left out unless includeHidden is true.",
  inputSchema: z.strictObject({
    path: dirArg.meta(PATH_HEADER),
    depth: z.int().min(1).max(10).default(1).describe("How many levels to descend (1..10)."),
    includeHidden: z.boolean().default(false).describe("Include names starting with '.'."),
    sortBy: z.enum(["name", "size", "mtime"]).default("name").describe(
      "Sort the entries of each directory by name, size or mtime; a directory's contents still follow it. size: files by their size, directories by totalSize with sizes: true, else after every entry with a size. Ties are broken by name (a to z).",
    ),
    order: z.enum(["asc", "desc"]).optional().describe(
      "asc or desc. Default: asc for name, desc for size and mtime (largest and newest first, as ls -S and ls -t). Entries without a size or mtime come last in both orders.",
    ),
    sizes: z.boolean().default(false).describe(
      "Report each listed directory's totalSize: the bytes of the regular files below it at any depth, hidden ones included, links not followed, a hard-linked file once. Bounded by the workspace's maxVisited, maxDepth and maxOperationMs; a total a bound cut says so (totalSizePartial).",
    ),
    limit: bound("Entries per page (default and maximum: the workspace's maxListEntries).")
      .optional(),
    cursor: z.string().min(1).optional().describe(
      "Opaque cursor from a previous page's nextCursor, valid only with that page's path, depth, includeHidden, sortBy and order (and sizes under sortBy size).",
    ),
  }),
  outputSchema: z.object({
    path: z.string(),
    entries: z.array(z.object({
      path: z.string(),
      type: entryType,
      size: z.int().nullable(),
      mtime: z.string().nullable(),
      totalSize: z.int().nullable().optional().describe(
        "With sizes, on directories: bytes of the regular files below; a lower bound when totalSizePartial is set, null when the sum never reached the directory.",
      ),
      totalSizePartial: z.enum(["maxVisited", "maxDepth", "unreadable", "changed"]).optional()
        .describe(
          "Why totalSize is not exact: the visited-entries cap, a directory below deeper than maxDepth, a directory below that could not be read, or one that changed while it was summed.",
        ),
    })),
    total: z.int().describe("Entries in the whole listing (all pages)."),
    nextCursor: z.string().optional(),
    truncated: z.boolean().describe(
      "True when the visited-entries cap stopped the walk or the result byte budget cut the page (nextCursor continues it).",
    ),
    truncatedReason: z.enum(["maxVisited", "maxResultBytes"]).optional(),
    sizesPartial: z.boolean().optional().describe(
      "With sizes: true when a directory total on this page is partial or unknown.",
    ),
  }),
  annotations: READ,
  needsWrite: false,
  run: (ctx, input) => listDirectory(ctx.workspace, input, ctx.signal),
});

/** One entry per line, then a trailer with the count and the next page's cursor when paged. */
function text(r: ToolResult): string {
  const entries = r.entries as Parameters<typeof entryLine>[0][];
  const out = entries.map(entryLine);
  if (entries.length === 0) out.push(`(${shown(r.path)} has no entries)`);
  if (r.sizesPartial === true) {
    out.push(
      "[directory totals marked partial or unknown were cut by a bound (maxVisited, maxDepth) or by a directory that could not be read or changed; list a narrower path for exact totals]",
    );
  }
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
  examples: ["path=src depth:=2", "sortBy=size sizes:=true"],
});
