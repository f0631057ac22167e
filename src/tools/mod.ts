/**
 * The tools, one unit each (src/tools/<name>.ts: schema, run, text for models, text for
 * people, examples), in the order every adapter lists them. The registry, the content
 * renderer, the pretty output and `op NAME --help` all read this one table.
 */
import type { ToolUnit } from "./unit.ts";
import { workspaceInfoTool } from "./workspace_info.ts";
import { listDirectoryTool } from "./list_directory.ts";
import { readFileTool } from "./read_file.ts";
import { readFilesTool } from "./read_files.ts";
import { readMediaTool } from "./read_media.ts";
import { getFileInfoTool } from "./get_file_info.ts";
import { findFilesTool } from "./find_files.ts";
import { searchTextTool } from "./search_text.ts";
import { writeFileTool } from "./write_file.ts";
import { editFileTool } from "./edit_file.ts";
import { createDirectoryTool } from "./create_directory.ts";
import { movePathTool } from "./move_path.ts";
import { copyPathTool } from "./copy_path.ts";
import { deletePathTool } from "./delete_path.ts";

export type { ToolUnit } from "./unit.ts";

/** Every tool, in the deterministic order adapters list them (read tools, then write tools). */
export const TOOLS: readonly ToolUnit[] = Object.freeze([
  workspaceInfoTool,
  listDirectoryTool,
  readFileTool,
  readFilesTool,
  readMediaTool,
  getFileInfoTool,
  findFilesTool,
  searchTextTool,
  writeFileTool,
  editFileTool,
  createDirectoryTool,
  movePathTool,
  copyPathTool,
  deletePathTool,
]);

const BY_NAME = new Map(TOOLS.map((t) => [t.operation.name, t]));

/** Looks a tool up by its exact (case-sensitive) name. */
export function toolUnit(name: string): ToolUnit | undefined {
  return BY_NAME.get(name);
}

/**
 * The example command lines of `op NAME --help` under the program name the user typed, or
 * undefined for an unknown operation.
 */
export function operationExamples(name: string, prog: string): string[] | undefined {
  const p = `${prog} op ${name}`;
  return toolUnit(name)?.examples.map((words) => words === "" ? p : `${p} ${words}`);
}
