/** find_files: paths that match a glob, .gitignore honoured, links reported and never followed. */
import { z } from "zod";
import { defineOperation, defineTool, type ToolResult, type ToolUnit } from "./unit.ts";
import { bound, dirArg, entryType, globList, READ } from "./args.ts";
import { entryLine, plural, str, truncationHint } from "./text.ts";
import { styledEntries } from "./styled.ts";
import { findFiles } from "../workspace/find.ts";

const operation = defineOperation({
  name: "find_files",
  title: "Find files by name",
  description:
    "Find files and directories whose path matches a glob (names, not content; use search_text for content). The pattern is matched against paths relative to `path`: `src/**/*.ts` matches at any depth under src, and a pattern without '/' (e.g. `*.ts`) matches the base name at any depth. Honors .gitignore files and skips .git unless respectGitignore is false; hidden names are skipped unless includeHidden. Symbolic links are reported, never followed. Returns matching paths, how many entries were visited, and truncated=true with the reason when a cap stopped it.",
  inputSchema: z.strictObject({
    pattern: z.string().min(1).describe("Glob, e.g. `src/**/*.ts` or `*.md`."),
    path: dirArg,
    allRoots: z.boolean().default(false).describe(
      "Walk every root (workspace_info lists them) in order, each from its top; leave path out. The maxResults cap, the visited count and the time budget are the whole call's. Paths in roots after the first are shown absolute.",
    ),
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
  spansRoots: "maxResults",
  run: (ctx, input) => findFiles(ctx.workspace, input, ctx.signal),
});

/** One match per line; no matches says how many entries were visited; a truncation hint. */
function text(r: ToolResult): string {
  const matches = r.matches as { path: string; type: string }[];
  const out = matches.map(entryLine);
  if (matches.length === 0) {
    out.push(`No matches (${plural(r.visited as number, "entry", "entries")} visited).`);
  }
  if (r.truncated === true) {
    out.push(
      `[${plural(matches.length, "match", "matches")}; ${
        truncationHint(str(r.truncatedReason), "find")
      }]`,
    );
  }
  return out.join("\n");
}

/** find_files as one unit. */
export const findFilesTool: ToolUnit = defineTool({
  operation,
  text,
  pretty: (t, _r, { palette }) => styledEntries(t, palette),
  examples: [`pattern='**/*.ts' exclude:='["node_modules/**"]'`],
});
