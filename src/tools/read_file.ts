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

/** The range arguments read_file and read_files share. */
interface RangeArgs {
  startLine?: number;
  endLine?: number;
  tailLines?: number;
}

/**
 * The checks across read_file's range arguments, which read_files shares: endLine not before
 * startLine, and tailLines alone.
 */
export function rangeChecks(ctx: z.core.ParsePayload<RangeArgs>): void {
  const v = ctx.value;
  if (v.startLine !== undefined && v.endLine !== undefined && v.endLine < v.startLine) {
    ctx.issues.push({
      code: "custom",
      message: "endLine must not be less than startLine",
      path: ["endLine"],
      input: v,
    });
  }
  if (v.tailLines !== undefined && (v.startLine !== undefined || v.endLine !== undefined)) {
    ctx.issues.push({
      code: "custom",
      message: "tailLines cannot be combined with startLine or endLine",
      path: ["tailLines"],
      input: v,
    });
  }
}

/** read_file's result shape (read_files holds one per path). */
export const readFileOutput = z.object({
  path: z.string(),
  content: z.string(),
  size: z.int(),
  totalLines: z.int().optional().describe(
    "Lines in the whole file; absent when sha256Skipped is present.",
  ),
  startLine: z.int().optional().describe(
    "First line included; absent on a tailLines read that did not take the whole file.",
  ),
  endLine: z.int().optional().describe(
    "Last line included (0 when none); absent when startLine is.",
  ),
  linesFromEnd: z.int().optional().describe(
    "On a tailLines read: the lines content holds, the last of them the file's last line.",
  ),
  sha256: z.string().optional().describe(
    "sha256 of the whole file; absent when sha256Skipped is present.",
  ),
  sha256Skipped: z.union([
    hashSkipped,
    z.object({
      reason: z.literal("tailLines"),
      size: z.int().describe("The file's size."),
    }),
  ]).optional().describe(
    "Why sha256 and totalLines were not computed: the file is larger than maxHashBytes (only the range was read), or a tailLines read did not read it whole.",
  ),
  truncated: z.boolean(),
  truncatedReason: z.enum(["maxBytes", "maxResultBytes"]).optional(),
  nextStartLine: z.int().optional(),
  lineTruncated: z.boolean().optional().describe(
    "The last line returned was cut at maxBytes because it alone is longer; its rest is not returned (on a tailLines read: only its end is returned).",
  ),
});

const operation = defineOperation({
  name: "read_file",
  title: "Read a text file",
  description:
    "Read a UTF-8 text file, whole, a line range (startLine/endLine, 1-based, inclusive) or its last lines (tailLines: read from the end, so a long log is never read whole). Returns the text with size, and for files up to the workspace's maxHashBytes the file's totalLines and sha256 (pass it as expectedSha256 to write_file or edit_file to avoid overwriting concurrent changes); for larger files only the range is read and sha256Skipped says why sha256 and totalLines are absent. truncated=true with truncatedReason and nextStartLine when maxBytes or the result byte budget cut the range. A tailLines read returns linesFromEnd (the lines it holds, the last being the file's last); older lines that do not fit maxBytes are left out (truncated); unless it took the whole file it has no line numbers, totalLines or sha256 (sha256Skipped reason tailLines). A binary or non-UTF-8 file is an error: use read_media for those.",
  inputSchema: z.strictObject({
    path: pathArg().meta(PATH_HEADER),
    startLine: z.int().min(1).optional().describe("First line to return (1-based)."),
    endLine: z.int().min(1).optional().describe("Last line to return (inclusive)."),
    tailLines: z.int().min(1).optional().describe(
      "Return the last N lines instead of a range (read from the end; not with startLine or endLine).",
    ),
    maxBytes: bound(
      "Most bytes of text to return (default and maximum: the workspace's maxReadBytes).",
    )
      .optional(),
  }).check(rangeChecks),
  outputSchema: readFileOutput,
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
  const older = typeof r.linesFromEnd === "number" ? "older lines were left out" : undefined;
  const how = [older, [next, raise].filter(Boolean).join(", or ")].filter(Boolean).join("; ");
  return `truncated (${r.truncatedReason})` + (how ? `: ${how}` : "");
}

/** `lines A-B of N`, `no lines`, or for a tail read without line numbers `the last K lines`. */
function rangePart(r: ToolResult): string {
  if (typeof r.startLine !== "number" || typeof r.endLine !== "number") {
    const k = r.linesFromEnd as number;
    return k === 1 ? "the last line" : `the last ${k} lines`;
  }
  const range = r.endLine < r.startLine ? "no lines" : `lines ${r.startLine}-${r.endLine}`;
  return typeof r.totalLines === "number" ? `${range} of ${r.totalLines}` : range;
}

/** A header line `[path, lines A-B of N, S bytes, sha256 H, ...]`, then the raw text. */
export function readFileText(r: ToolResult): string {
  const parts = [shown(r.path), rangePart(r), `${r.size} bytes`];
  if (typeof r.sha256 === "string") parts.push(`sha256 ${r.sha256}`);
  else if ((r.sha256Skipped as { reason?: string } | undefined)?.reason === "tailLines") {
    parts.push("sha256 and total lines not computed (the file was read from its end only)");
  } else parts.push("sha256 and total lines not computed (file over maxHashBytes)");
  if (r.truncated === true) parts.push(truncatedPart(r));
  if (r.lineTruncated === true) {
    const which = typeof r.linesFromEnd === "number"
      ? "the line was cut, only its end is shown"
      : "the last line was cut";
    parts.push(
      `${which} (${
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
  text: readFileText,
  pretty,
  examples: [
    "path=README.md",
    "path=README.md startLine:=10 endLine:=20",
    "path=server.log tailLines:=50",
  ],
});
