/** read_file: a UTF-8 text file, whole or a line range, with its size, line count and sha256. */
import { z } from "zod";
import {
  defineOperation,
  defineTool,
  type PrettyContext,
  type ToolResult,
  type ToolUnit,
} from "./unit.ts";
import { bound, hashSkipped, PATH_HEADER, pathArg, READ } from "./args.ts";
import { shown } from "./text.ts";
import { readFile } from "../workspace/read.ts";

const operation = defineOperation({
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

/** How to get the rest of a truncated read: the next startLine, or a larger maxBytes. */
function truncatedPart(r: ToolResult): string {
  const next = typeof r.nextStartLine === "number"
    ? `continue with startLine ${r.nextStartLine}`
    : undefined;
  const raise = r.truncatedReason === "maxBytes"
    ? "raise maxBytes (up to the workspace's maxReadBytes, see workspace_info)"
    : undefined;
  return `truncated (${r.truncatedReason})` +
    (next || raise ? `: ${[next, raise].filter(Boolean).join(", or ")}` : "");
}

/** A header line `[path, lines A-B of N, S bytes, sha256 H, ...]`, then the raw text. */
function text(r: ToolResult): string {
  const start = r.startLine as number;
  const end = r.endLine as number;
  const parts = [shown(r.path)];
  const range = end < start ? "no lines" : `lines ${start}-${end}`;
  parts.push(typeof r.totalLines === "number" ? `${range} of ${r.totalLines}` : range);
  parts.push(`${r.size} bytes`);
  if (typeof r.sha256 === "string") parts.push(`sha256 ${r.sha256}`);
  else parts.push("sha256 and total lines not computed (file over maxHashBytes)");
  if (r.truncated === true) parts.push(truncatedPart(r));
  if (r.lineTruncated === true) {
    parts.push(
      `the last line was cut (${
        r.truncatedReason === "maxBytes" ? "raise maxBytes to see more of it, or " : ""
      }use read_media for the file's raw bytes)`,
    );
  }
  return `[${parts.join(", ")}]\n${r.content}`;
}

/** The header line dim, the file's text as it is. */
function pretty(t: string, _r: ToolResult, { palette }: PrettyContext): string {
  const cut = t.indexOf("\n");
  return palette.dim(t.slice(0, cut)) + "\n" + t.slice(cut + 1);
}

/** read_file as one unit. */
export const readFileTool: ToolUnit = defineTool({
  operation,
  text,
  pretty,
  examples: ["path=README.md", "path=README.md startLine:=10 endLine:=20"],
});
