/**
 * The stdio server as the serve launcher starts it (src/cli/serve_launch.ts; decision 0063): the
 * same start as serve_stdio.ts (stdio_start.ts), but the server's module is named through a
 * variable. Deno loads every dynamic import named by a literal, its whole graph read and
 * transpiled, before an entry runs at all, which held the first answers back by about that long;
 * named so, the graph loads after them. A module loaded that way needs read permission on every
 * local file of its graph, which the launcher grants (module_read.ts); without it this entry says
 * so and exits 2 before answering anything.
 *
 * @module
 */
import { runStdioEntry, type StdioServerModule } from "./stdio_start.ts";
import { SERVER_MODULE_READ_PATHS } from "./module_read.ts";

/** The server's module, through a variable (see above). */
const SERVER_MODULE = "./stdio_entry.ts";

/** Why the server's modules cannot be loaded (read permission on them is missing), or undefined. */
function unreadableModules(): string | undefined {
  const missing = (SERVER_MODULE_READ_PATHS ?? []).filter((path) =>
    Deno.permissions.querySync({ name: "read", path }).state !== "granted"
  );
  if (missing.length === 0) return undefined;
  return "the stdio server loads its modules after its first answers and needs read permission " +
    `on them: add --allow-read=${missing.join(",")} (the launcher, \`serve.ts stdio\`, grants it)`;
}

if (import.meta.main) {
  const why = unreadableModules();
  if (why !== undefined) {
    console.error(`wmcp: ${why}`);
    Deno.exit(2);
  }
  await runStdioEntry(() => import(SERVER_MODULE) as Promise<StdioServerModule>);
}
