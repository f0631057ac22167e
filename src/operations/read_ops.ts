/** Definitions of the read operations (always present). Schemas are built once, here. */
import { z } from "zod";
import { defineOperation } from "./types.ts";
import { workspaceInfo } from "../workspace/info.ts";
import { listDirectory } from "../workspace/list.ts";
import { getFileInfo, readFile, readMedia } from "../workspace/read.ts";
import { findFiles } from "../workspace/find.ts";
import { searchText } from "../workspace/search.ts";

const READ = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

const PATH_HELP =
  'Workspace-relative path with forward slashes ("." is the workspace root); an absolute path is accepted only inside the workspace.';

/** A workspace-relative path argument. */
export const pathArg = (help = PATH_HELP) => z.string().min(1).describe(help);
const dirArg = z.string().min(1).default(".").describe(`Directory to start from. ${PATH_HELP}`);
/** Marks a path argument as mirrored into the Mcp-Param-Path HTTP header (SEP-2243), for gateways. */
const PATH_HEADER = { "x-mcp-header": "Path" } as const;
const entryType = z.enum(["file", "directory", "symlink", "other"]);
const globList = (what: string) => z.array(z.string().min(1)).max(100).describe(what);
const sha256 = z.string().regex(/^[0-9a-fA-F]{64}$/, "must be 64 hex digits");
const permission = z.enum(["granted", "prompt", "denied"]);
/** Why a hash was not computed (read_file, write_file). */
export const hashSkipped = z.object({
  reason: z.literal("maxHashBytes"),
  limit: z.int().describe("The workspace's maxHashBytes."),
  size: z.int().describe("The file's size."),
});

/** Positive integer bounded by the workspace's configured limit (checked at run time). */
const bound = (help: string) => z.int().min(1).describe(help);

export const workspaceInfoOp = defineOperation({
  name: "workspace_info",
  title: "Workspace information",
  description:
    "Describe this workspace: its root directory name, whether writing is enabled (read-only or read-write), every configured limit (read, media, write, list, result and match caps), the Deno permissions this process actually holds, and which containment layers are active (in-process checks, a bubblewrap kernel sandbox, scoped Deno permissions). Call it first to learn the bounds the other tools enforce.",
  inputSchema: z.strictObject({}),
  outputSchema: z.object({
    root: z.string(),
    mode: z.enum(["read-only", "read-write"]),
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
    }),
    containment: z.object({
      inProcess: z.literal(true),
      sandbox: z.enum(["bubblewrap", "none"]),
      denoPermissions: z.enum(["scoped", "broad"]),
    }),
  }),
  annotations: READ,
  needsWrite: false,
  run: (ctx) => workspaceInfo(ctx.workspace),
});

export const listDirectoryOp = defineOperation({
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

export const readFileOp = defineOperation({
  name: "read_file",
  title: "Read a text file",
  description:
    "Read a UTF-8 text file, whole or a line range (startLine/endLine, 1-based, inclusive). Returns the text with size, and for files up to the workspace's maxHashBytes the file's totalLines and sha256 (pass it as expectedSha256 to write_file or edit_file to avoid overwriting concurrent changes); for larger files only the range is read and sha256Skipped says why sha256 and totalLines are absent. truncated=true with truncatedReason and nextStartLine when maxBytes or the result byte budget cut the range. A binary or non-UTF-8 file is an error: use read_media for those.",
  inputSchema: z.strictObject({
    path: pathArg().meta(PATH_HEADER),
    startLine: z.int().min(1).optional().describe("First line to return (1-based)."),
    endLine: z.int().min(1).optional().describe("Last line to return (inclusive)."),
    maxBytes: bound(
      "Most bytes of text to return (default and maximum: the workspace's maxReadBytes).",
    )
      .optional(),
  }).refine(
    (v) => v.startLine === undefined || v.endLine === undefined || v.endLine >= v.startLine,
    {
      message: "endLine must not be less than startLine",
      path: ["endLine"],
    },
  ),
  outputSchema: z.object({
    path: z.string(),
    content: z.string(),
    size: z.int(),
    totalLines: z.int().optional().describe(
      "Lines in the whole file; absent when sha256Skipped is present.",
    ),
    startLine: z.int(),
    endLine: z.int().describe("Last line included (0 when none)."),
    sha256: z.string().optional().describe(
      "sha256 of the whole file; absent when sha256Skipped is present.",
    ),
    sha256Skipped: hashSkipped.optional().describe(
      "The file is larger than maxHashBytes: only the range was read, sha256 and totalLines were not computed.",
    ),
    truncated: z.boolean(),
    truncatedReason: z.enum(["maxBytes", "maxResultBytes"]).optional(),
    nextStartLine: z.int().optional(),
    lineTruncated: z.boolean().optional().describe(
      "The last line returned was cut at maxBytes because it alone is longer; its rest is not returned.",
    ),
  }),
  annotations: READ,
  needsWrite: false,
  run: (ctx, input) => readFile(ctx.workspace, input, { signal: ctx.signal }),
});

export const readMediaOp = defineOperation({
  name: "read_media",
  title: "Read a binary or media file",
  description:
    "Read any file (images, audio, archives, other binary data) as base64 with its MIME type (from the file extension), size and sha256. Files over the workspace's maxMediaBytes (whose base64 always fits the result budget maxResultBytes) are refused with TOO_LARGE.",
  inputSchema: z.strictObject({ path: pathArg() }),
  outputSchema: z.object({
    path: z.string(),
    mimeType: z.string(),
    size: z.int(),
    sha256: z.string(),
    data: z.string().describe("Base64 of the file's bytes."),
  }),
  annotations: READ,
  needsWrite: false,
  run: (ctx, input) => readMedia(ctx.workspace, input, { signal: ctx.signal }),
});

export const getFileInfoOp = defineOperation({
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

export const findFilesOp = defineOperation({
  name: "find_files",
  title: "Find files by name",
  description:
    "Find files and directories whose path matches a glob (names, not content; use search_text for content). The pattern is matched against paths relative to `path`: `src/**/*.ts` matches at any depth under src, and a pattern without '/' (e.g. `*.ts`) matches the base name at any depth. Honors .gitignore files and skips .git unless respectGitignore is false; hidden names are skipped unless includeHidden. Symbolic links are reported, never followed. Returns matching paths, how many entries were visited, and truncated=true with the reason when a cap stopped it.",
  inputSchema: z.strictObject({
    pattern: z.string().min(1).describe("Glob, e.g. `src/**/*.ts` or `*.md`."),
    path: dirArg,
    exclude: globList("Globs of paths to leave out (directories matched are not entered).").default(
      [],
    ),
    respectGitignore: z.boolean().default(true).describe("Apply .gitignore files and skip .git."),
    includeHidden: z.boolean().default(false).describe("Include names starting with '.'."),
    maxResults: bound("Most matches to return (default and maximum: the workspace's maxResults).")
      .optional(),
  }),
  outputSchema: z.object({
    path: z.string(),
    matches: z.array(z.object({ path: z.string(), type: entryType })),
    visited: z.int(),
    truncated: z.boolean(),
    truncatedReason: z.enum(["maxResults", "maxVisited", "maxDepth", "maxResultBytes"]).optional(),
  }),
  annotations: READ,
  needsWrite: false,
  run: (ctx, input) => findFiles(ctx.workspace, input, ctx.signal),
});

export const searchTextOp = defineOperation({
  name: "search_text",
  title: "Search file contents",
  description:
    "Search the contents of text files below a directory for a literal string (default) or an RE2-syntax regular expression (regex: true; linear time, no lookarounds or backreferences), line by line. Returns one match per matching line with path, line, column (1-based, UTF-16 units), the line's text (long lines clipped around the match) and optional context lines; plus filesSearched, filesMatched, skipped-file counts (binary, too large, unreadable) and truncated=true with the reason when maxMatches or the visited cap stopped it. include/exclude are globs on paths relative to `path` (no '/' = base name). Honors .gitignore unless respectGitignore is false. Binary files are skipped.",
  inputSchema: z.strictObject({
    query: z.string().min(1).describe("Text to find, or a regular expression when regex is true."),
    regex: z.boolean().default(false),
    caseSensitive: z.boolean().default(true),
    wholeWord: z.boolean().default(false).describe(
      "Match only where the query is not part of a longer word.",
    ),
    path: dirArg,
    include: globList("Only search files matching one of these globs.").default([]),
    exclude: globList("Skip files and directories matching these globs.").default([]),
    respectGitignore: z.boolean().default(true),
    includeHidden: z.boolean().default(false),
    contextLines: z.int().min(0).max(10).default(0).describe(
      "Lines of context before and after each match.",
    ),
    maxMatches: bound(
      "Most matching lines to return (default and maximum: the workspace's maxMatches).",
    )
      .optional(),
    maxFileBytes: bound(
      "Skip files larger than this (default and maximum: the workspace's maxSearchFileBytes).",
    )
      .optional(),
  }),
  outputSchema: z.object({
    matches: z.array(z.object({
      path: z.string(),
      line: z.int(),
      column: z.int(),
      text: z.string(),
      textStartColumn: z.int().optional(),
      before: z.array(z.string()).optional(),
      after: z.array(z.string()).optional(),
      clippedLines: z.array(z.int()).optional().describe(
        "Line numbers (the match's or its context's) whose text was cut before the line's end.",
      ),
    })),
    filesSearched: z.int(),
    filesMatched: z.int(),
    filesSkipped: z.object({ binary: z.int(), tooLarge: z.int(), unreadable: z.int() }),
    visited: z.int(),
    truncated: z.boolean(),
    truncatedReason: z.enum(["maxMatches", "maxVisited", "maxDepth", "maxResultBytes"]).optional(),
  }),
  annotations: READ,
  needsWrite: false,
  run: (ctx, input) =>
    searchText(ctx.workspace, input, {
      signal: ctx.signal,
      onProgress: ctx.onProgress &&
        ((p) =>
          ctx.onProgress!({
            progress: p.filesSearched,
            message: `${p.filesSearched} files searched, ${p.matches} matches`,
          })),
    }),
});

export { sha256 as sha256Arg };
