/**
 * The server's instructions for a workspace (what `initialize` and `server/discover` say): in a
 * module of its own, with no imports, so the stdio entry's first answers (stdio_early.ts) say
 * exactly what the server says without loading it. The root's name is rootNameOf's
 * (src/workspace/root_name.ts), as Workspace.rootName gives it.
 */

/**
 * The instructions for a workspace whose (first) root directory is named `rootName`; with several
 * roots (`roots` > 1, decision 0064) they say how paths address them.
 */
export function instructionsFor(rootName: string, writable: boolean, roots = 1): string {
  const mode = writable ? "read-write" : "read-only";
  if (roots > 1) {
    return `Workspace tools for ${roots} directories (${mode}). Relative paths are in the first, "${rootName}"; absolute paths address the others. Call workspace_info for the roots, their modes and the limits.`;
  }
  return `Workspace tools for the directory "${rootName}" (${mode}). Paths are workspace-relative. Call workspace_info for the limits.`;
}
