/** The zod pieces several tools' schemas share: path arguments, globs, hashes, hints. */
import { z } from "zod";
import type { OperationAnnotations } from "../operations/types.ts";

/** The hints of every read tool. */
export const READ: OperationAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

const PATH_HELP =
  'Workspace-relative path with forward slashes ("." is the workspace root); an absolute path is accepted only inside the workspace.';

/** A workspace-relative path argument. */
export const pathArg = (help: string = PATH_HELP): z.ZodString => z.string().min(1).describe(help);

/** A directory argument that defaults to the workspace root. */
export const dirArg = z.string().min(1).default(".").describe(
  `Directory to start from. ${PATH_HELP}`,
);

/** Marks a path argument as mirrored into the Mcp-Param-Path HTTP header (SEP-2243), for gateways. */
export const PATH_HEADER = { "x-mcp-header": "Path" } as const;

/** The type of an entry in a result. */
export const entryType = z.enum(["file", "directory", "symlink", "other"]);

/** A bounded list of globs. */
export const globList = (what: string): z.ZodArray<z.ZodString> =>
  z.array(z.string().min(1)).max(100).describe(what);

/** A sha256 argument: 64 hex digits. */
export const sha256Arg = z.string().regex(/^[0-9a-fA-F]{64}$/, "must be 64 hex digits");

/** Why a hash was not computed (read_file, write_file). */
export const hashSkipped = z.object({
  reason: z.literal("maxHashBytes"),
  limit: z.int().describe("The workspace's maxHashBytes."),
  size: z.int().describe("The file's size."),
});

/** Positive integer bounded by the workspace's configured limit (checked at run time). */
export const bound = (help: string): z.ZodInt => z.int().min(1).describe(help);
