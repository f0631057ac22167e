/** read_files: several text files in one call, each as read_file reads it, under one budget. */
import { z } from "zod";
import {
  defineOperation,
  defineTool,
  type PrettyContext,
  type ToolResult,
  type ToolUnit,
} from "./unit.ts";
import { bound, pathArg, READ } from "./args.ts";
import { shown } from "./text.ts";
import { rangeChecks, readFileOutput, readFileText } from "./read_file.ts";
import { MAX_READ_FILES, readFiles } from "../workspace/read_many.ts";

const operation = defineOperation({
  name: "read_files",
  title: "Read several text files",
  description:
    `Read up to ${MAX_READ_FILES} UTF-8 text files in one call, each as read_file reads it: whole, the same line range (startLine/endLine) or the same last lines (tailLines) of every file. files[] has one entry per path, in the order given: read_file's result, or {path, error} when that path failed (not found, binary, outside the workspace, ...), which never stops the others. All the files share one result byte budget (maxResultBytes) and one time budget; a path the budget left no room for has error TOO_LARGE with details.reason maxResultBytes, and truncated is true.`,
  inputSchema: z.strictObject({
    paths: z.array(pathArg()).min(1).max(MAX_READ_FILES).describe(
      `Paths to read (1..${MAX_READ_FILES}), each workspace-relative; read in this order.`,
    ),
    startLine: z.int().min(1).optional().describe("First line to return of each file (1-based)."),
    endLine: z.int().min(1).optional().describe("Last line to return of each file (inclusive)."),
    tailLines: z.int().min(1).optional().describe(
      "Return the last N lines of each file instead of a range (not with startLine or endLine).",
    ),
    maxBytes: bound(
      "Most bytes of text to return per file (default and maximum: the workspace's maxReadBytes).",
    ).optional(),
  }).check(rangeChecks),
  outputSchema: z.object({
    files: z.array(z.union([
      readFileOutput,
      z.object({
        path: z.string(),
        error: z.object({
          code: z.string(),
          message: z.string(),
          argument: z.string().optional(),
          details: z.record(z.string(), z.unknown()).optional(),
        }),
      }),
    ])),
    truncated: z.boolean().describe(
      "True when the shared result budget cut a file's content or left paths unread.",
    ),
    truncatedReason: z.enum(["maxResultBytes"]).optional(),
  }),
  annotations: READ,
  needsWrite: false,
  // Each path is read on the root it addresses (src/workspace/read_many.ts).
  roots: "own",
  run: (ctx, input) => readFiles(ctx.workspace, input, { signal: ctx.signal }),
});

/**
 * Each file as read_file shows it, or `[path: CODE message]`, after a boundary line
 * `=== TAG k/N ===` whose TAG is random per call: a file's text cannot fake where another's
 * begins (as a multipart boundary). Then `[N of M files read]`.
 */
function text(r: ToolResult): string {
  const files = r.files as ToolResult[];
  const tag = Array.from(
    crypto.getRandomValues(new Uint8Array(4)),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
  const parts = files.map((f, i) => {
    const error = f.error as { code: string; message: string } | undefined;
    const body = error
      ? `[${shown(f.path)}: ${error.code} ${shown(error.message)}]`
      : readFileText(f);
    return `=== ${tag} ${i + 1}/${files.length} ===\n${body}`;
  });
  const ok = files.filter((f) => f.error === undefined).length;
  const trailer =
    `[${ok} of ${files.length} files read, each after its line \`=== ${tag} k/${files.length} ===\`${
      r.truncated === true ? "; truncated (maxResultBytes): ask for fewer files or fewer lines" : ""
    }]`;
  return [...parts, trailer].join("\n");
}

/** Boundary lines, headers and notes dim, the files' text as it is. */
function pretty(t: string, _r: ToolResult, { palette }: PrettyContext): string {
  const lines = t.split("\n");
  const boundary = /^=== [0-9a-f]{8} \d+\/\d+ ===$/;
  return lines.map((line, i) =>
    boundary.test(line) || (i > 0 && boundary.test(lines[i - 1]) && line.startsWith("[")) ||
      i === lines.length - 1
      ? palette.dim(line)
      : line
  ).join("\n");
}

/** read_files as one unit. */
export const readFilesTool: ToolUnit = defineTool({
  operation,
  text,
  pretty,
  examples: [
    'paths:=\'["README.md","deno.json"]\'',
    'paths:=\'["a.log","b.log"]\' tailLines:=20',
  ],
});
