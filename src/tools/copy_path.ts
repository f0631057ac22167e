/** copy_path: a file, a symbolic link (the link itself) or a directory copied inside the workspace. */
import { z } from "zod";
import { defineOperation, defineTool, type ToolResult, type ToolUnit } from "./unit.ts";
import { entryType, pathArg } from "./args.ts";
import { plural, shown } from "./text.ts";
import { copyPath, type CopySkipped } from "../workspace/copy.ts";

const operation = defineOperation({
  name: "copy_path",
  title: "Copy a file or directory",
  description:
    "Copy a file, a directory (recursive: true) or a symbolic link (the link itself, its target text unchanged: pass the target's path to copy what it points to) inside the workspace. `destination` is the new path, not a directory to copy into; its parent must exist. Each file is written atomically and keeps its permission mode; links inside a copied directory are copied as links, never followed. Hard-linked files, FIFOs, sockets and devices inside a directory are not copied: the result lists them in `skipped` (as the source, they are refused). An existing destination is refused unless overwrite is true: then a file or link is replaced, and a directory is copied into the existing directory (files of the same name replaced, other files kept); replacing any existing file or link also needs confirmation (confirm: true, or the user accepts when the client supports elicitation). A directory cannot be copied into itself. A directory copy is bounded by maxVisited entries (refused before anything is copied) and maxOperationMs; one that stops (cancelled, out of time, a change under it) says in the error's details what it copied (`copiedCount`, `copied`), and every file it copied is whole.",
  inputSchema: z.strictObject({
    source: pathArg("Path to copy (workspace-relative)."),
    destination: pathArg(
      "Path of the copy (workspace-relative); its parent directory must exist.",
    ),
    overwrite: z.boolean().default(false).describe(
      "Replace an existing file or link; copy a directory into an existing directory.",
    ),
    recursive: z.boolean().default(false).describe(
      "Copy a directory and everything in it (needed for a directory).",
    ),
    confirm: z.boolean().optional().describe(
      "Confirms replacing existing files or links (needed when overwrite replaces any).",
    ),
  }),
  outputSchema: z.object({
    source: z.string(),
    destination: z.string(),
    type: entryType,
    overwritten: z.boolean().describe(
      "The destination existed: a file or link was replaced, or a directory copied into.",
    ),
    files: z.int().describe("Regular files copied."),
    directories: z.int().describe("Directories copied (created, or copied into)."),
    symlinks: z.int().describe("Symbolic links copied as links."),
    bytes: z.int().describe("Bytes of file content copied."),
    skipped: z.array(z.object({
      path: z.string(),
      reason: z.enum(["hard-linked", "special-file"]),
    })).describe("Entries of a copied directory that were not copied, and why."),
    truncated: z.boolean().optional().describe("skipped was cut to fit the result byte budget."),
    truncatedReason: z.literal("maxResultBytes").optional(),
  }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  needsWrite: true,
  // From any root into another writable one (decision 0064).
  roots: "ends",
  run: (ctx, input) =>
    copyPath(ctx.workspace, input, {
      signal: ctx.signal,
      onProgress: ctx.onProgress,
      destination: ctx.destination,
    }),
});

/** What a directory copy copied, in words: `3 files (120 bytes), 2 directories, 1 symlink`. */
function counts(r: ToolResult): string {
  const parts = [`${plural(r.files as number, "file")} (${r.bytes} bytes)`];
  parts.push(plural(r.directories as number, "directory", "directories"));
  if (r.symlinks !== 0) parts.push(plural(r.symlinks as number, "symlink"));
  return parts.join(", ");
}

/** The entries not copied, one clause: `skipped 2 entries: a/p (special file), a/h (hard-linked)`. */
function skippedClause(r: ToolResult): string {
  const skipped = r.skipped as CopySkipped[];
  if (skipped.length === 0) return "";
  const list = skipped.map((s) =>
    `${shown(s.path)} (${s.reason === "special-file" ? "special file" : "hard-linked"})`
  ).join(", ");
  return `; not copied: ${list}${r.truncated === true ? " (list cut at maxResultBytes)" : ""}`;
}

/** One sentence: what was copied where, how much, what it replaced and what it left out. */
function text(r: ToolResult): string {
  const what = r.type === "directory"
    ? `directory ${shown(r.source)} to ${shown(r.destination)}: ${counts(r)}`
    : r.type === "symlink"
    ? `symlink ${shown(r.source)} to ${shown(r.destination)} (the link itself)`
    : `file ${shown(r.source)} to ${shown(r.destination)} (${r.bytes} bytes)`;
  const over = !r.overwritten
    ? ""
    : r.type === "directory"
    ? " (into the existing directory)"
    : " (replacing what was there)";
  return `Copied ${what}${over}${skippedClause(r)}.`;
}

/** copy_path as one unit. */
export const copyPathTool: ToolUnit = defineTool({
  operation,
  text,
  examples: [
    "--write source=a.txt destination=b.txt",
    "--write source=src destination=src.bak recursive:=true",
  ],
});
