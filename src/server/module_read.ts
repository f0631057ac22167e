/**
 * What the launcher's stdio entry (stdio_launched.ts) must be able to read to load the server's
 * modules after its first answers (decision 0063). It names the server's module through a variable,
 * so Deno does not load that graph before anything runs (it does load every dynamic import named by
 * a literal); a module loaded that way needs read permission on its own file and on every local
 * file it imports: src/, generated/ (the checks generated from the schemas) and deno.json (imported
 * as JSON). They are this program's own files, which the sandbox mounts read-only anyway; the
 * launcher grants them (server_permissions.ts). It imports only launch/project.ts (no imports of
 * its own): the entry reads this before anything loads.
 *
 * @module
 */

import { projectPath } from "../launch/project.ts";

/**
 * The absolute paths the stdio server's modules are read from (src, generated, deno.json), or null
 * when the modules were not loaded from local files.
 */
export const SERVER_MODULE_READ_PATHS: readonly string[] | null = (() => {
  const paths = ["src", "generated", "deno.json"].map(projectPath);
  return paths.every((p) => p !== undefined) ? paths as string[] : null;
})();
