/** edit_file: exact text replacements applied in order, all or nothing, with a unified diff. */
import { z } from "zod";
import { defineOperation, defineTool, type ToolResult, type ToolUnit } from "./unit.ts";
import { pathArg, sha256Arg } from "./args.ts";
import { plural, shown } from "./text.ts";
import { diffLine } from "./styled.ts";
import { editFile } from "../workspace/edit.ts";

const operation = defineOperation({
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

/** A sentence (edited, dry run or unchanged, replacements, hashes), then the diff. */
function text(r: ToolResult): string {
  const head = !r.changed
    ? `${shown(r.path)} is unchanged (${plural(r.replacements as number, "replacement")}).`
    : `${r.dryRun ? "Dry run, nothing written: would edit" : "Edited"} ${shown(r.path)}: ${
      plural(r.replacements as number, "replacement")
    }, sha256 ${r.sha256Before} -> ${r.sha256After}${
      r.truncated === true ? "; the diff was cut at maxResultBytes" : ""
    }.`;
  return r.diff ? `${head}\n${r.diff}` : head;
}

/** edit_file as one unit (for people, the sentence as is and the diff coloured). */
export const editFileTool: ToolUnit = defineTool({
  operation,
  text,
  pretty: (t, _r, { palette }) =>
    t.split("\n").map((l, i) => i === 0 ? l : diffLine(l, palette)).join("\n"),
  examples: [`--write path=a.txt edits:='[{"oldText":"old","newText":"new"}]'`],
});
