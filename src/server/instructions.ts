/**
 * The server's instructions for a workspace (what `initialize` and `server/discover` say): in a
 * module of its own, with no imports, so the stdio entry's first answers (stdio_early.ts) say
 * exactly what the server says without loading it. The root's name is rootNameOf's
 * (src/workspace/root_name.ts), as Workspace.rootName gives it.
 */

/** The instructions for a workspace whose root directory is named `rootName`. */
export function instructionsFor(rootName: string, writable: boolean): string {
  return `Workspace tools for the directory "${rootName}" (${
    writable ? "read-write" : "read-only"
  }). Paths are workspace-relative. Call workspace_info for the limits.`;
}
