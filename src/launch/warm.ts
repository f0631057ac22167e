/**
 * Deno's cache filled with this project's transpiled modules, ahead of the starts that need them.
 * Inside the launcher's sandbox Deno's cache is mounted read-only (a sandboxed server that could
 * write it could plant code every later Deno run would load), so a server module transpiled there
 * is transpiled again on every start: measured, 311 ms instead of 101 for an uncached graph. The
 * installer and `config print` (the steps before a host starts the server) run this.
 *
 * @module
 */
import { spawnDeno } from "./child.ts";
import { projectConfigFlag } from "./deno.ts";
import { projectFile, projectPath } from "./project.ts";

/** How long `deno cache` may take (ms): its first run may fetch npm packages. */
const CACHE_MS = 180_000;

/**
 * The entry modules whose graphs a start loads: the CLI and its scoped child, the serve launcher
 * (the host entry), both servers (loaded inside the sandbox; the stdio server's own module too)
 * and the engine broker.
 */
export const ENTRY_MODULES: readonly string[] = [
  "cli.ts",
  "src/cli/scoped_main.ts",
  "serve.ts",
  "serve_stdio.ts",
  // What the launcher starts for stdio, and the module it loads through a variable (so in no
  // graph `deno cache` follows).
  "src/server/stdio_launched.ts",
  "src/server/stdio_entry.ts",
  "serve_http.ts",
  "src/launch/broker/main.ts",
];

/**
 * Runs `deno cache` (the given binary, default this one) over ENTRY_MODULES; true when it
 * succeeded. Nothing is run, and false returned, when the project is not on a local file system.
 */
export async function cacheEntryModules(
  o: { deno?: string; stderr?: "inherit" | "null" | "piped" } = {},
): Promise<boolean> {
  const config = projectConfigFlag();
  const paths = ENTRY_MODULES.slice(1).map((m) => projectPath(m));
  if (config === undefined || paths.some((p) => p === undefined)) return false;
  try {
    const child = spawnDeno({
      deno: o.deno,
      subcommand: "cache",
      flags: ["--quiet", config],
      module: projectFile(ENTRY_MODULES[0]),
      args: paths as string[],
      cwd: projectPath(".")!,
      stdin: "null",
      stdout: "null",
      stderr: o.stderr ?? "null",
    });
    // Bounded: a cache that must fetch npm packages from an unreachable registry gives up.
    const timer = setTimeout(() => child.kill("SIGKILL"), CACHE_MS);
    try {
      return (await child.status).success;
    } finally {
      clearTimeout(timer);
    }
  } catch {
    return false;
  }
}
