/** Definitions of the write operations (present only when writing is enabled). */
import { z } from "zod";
import { defineOperation } from "./types.ts";
import { hashSkipped, pathArg, sha256Arg } from "./read_ops.ts";
import { writeFile } from "../workspace/write.ts";
import { createDirectory } from "../workspace/directories.ts";
import { movePath } from "../workspace/move.ts";
import { deletePath } from "../workspace/delete.ts";
import { editFile } from "../workspace/edit.ts";

const entryType = z.enum(["file", "directory", "symlink", "other"]);

export const writeFileOp = defineOperation({
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

export const editFileOp = defineOperation({
  name: "edit_file",
  title: "Edit a file",
  description:
    "Apply exact text replacements to a UTF-8 file, in order, all or nothing. Each oldText must occur exactly once (copy it verbatim from read_file, with enough surrounding lines to be unique) unless replaceAll is true; no match is NO_MATCH and several matches are AMBIGUOUS_MATCH, both naming candidate line numbers. CRLF line endings and the presence or absence of a final newline are kept. Returns a unified diff (cut at a line boundary with truncated=true when it would not fit the result byte budget) and the sha256 before and after; dryRun returns the diff without writing. The write is atomic.",
  inputSchema: z.strictObject({
    path: pathArg(),
    edits: z.array(z.strictObject({
      oldText: z.string().min(1).describe("Exact text to replace."),
      newText: z.string().describe("Replacement text."),
      replaceAll: z.boolean().default(false).describe(
        "Replace every occurrence instead of requiring one.",
      ),
    })).min(1).max(100),
    dryRun: z.boolean().default(false).describe("Compute the diff without writing."),
    expectedSha256: sha256Arg.optional().describe("sha256 the file must still have."),
  }),
  outputSchema: z.object({
    path: z.string(),
    dryRun: z.boolean(),
    changed: z.boolean(),
    replacements: z.int(),
    lineEnding: z.enum(["lf", "crlf"]),
    diff: z.string(),
    sha256Before: z.string(),
    sha256After: z.string(),
    truncated: z.boolean().optional().describe(
      "The diff was cut (at a line boundary) to fit the result byte budget; the edit itself is whole.",
    ),
    truncatedReason: z.literal("maxResultBytes").optional(),
  }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false,
  },
  needsWrite: true,
  run: (ctx, input) => editFile(ctx.workspace, input, { signal: ctx.signal }),
});

export const createDirectoryOp = defineOperation({
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

export const movePathOp = defineOperation({
  name: "move_path",
  title: "Move or rename",
  description:
    "Move or rename a file, directory or symbolic link (the link itself, not its target) inside the workspace. `destination` is the new path, not a directory to move into; its parent must exist. An existing destination is refused unless overwrite is true (a directory can only replace an empty directory). A directory cannot be moved into itself.",
  inputSchema: z.strictObject({
    source: pathArg("Path to move (workspace-relative)."),
    destination: pathArg("New path (workspace-relative); its parent directory must exist."),
    overwrite: z.boolean().default(false).describe("Replace an existing destination."),
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
  run: (ctx, input) => movePath(ctx.workspace, input, { signal: ctx.signal }),
});

export const deletePathOp = defineOperation({
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
