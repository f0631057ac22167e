/**
 * The running Deno binary, named once. A child Deno is started by the name run permission is
 * granted on (`/proc/self/exe` on Linux, which the tasks and host entries allow; the binary's
 * path elsewhere), and its real path is what a sandbox binds and a host entry names. No module
 * outside src/launch/ asks the runtime for its path.
 */
import { projectPath } from "./project.ts";

/** The Deno binary's real path (what a sandbox binds and a host config names). */
export function denoPath(): string {
  return Deno.execPath();
}

/** The name a child Deno is started by: the one run permission is granted on. */
export function selfDeno(): string {
  return Deno.build.os === "linux" ? "/proc/self/exe" : Deno.execPath();
}

/** Every name this Deno can be started by (what a command's own children need run on). */
export function denoNames(): string[] {
  return Deno.build.os === "linux" ? ["/proc/self/exe", Deno.execPath()] : [Deno.execPath()];
}

/** Whether this process may run `command` (a child Deno by default). */
export function mayRun(command: string = selfDeno()): boolean {
  return Deno.permissions.querySync({ name: "run", command }).state === "granted";
}

/** A module URL as a child's argv names it: a file path for local modules, else the URL. */
export function moduleArg(url: URL): string {
  return url.protocol === "file:" ? decodeURIComponent(url.pathname) : url.href;
}

/**
 * `--config=` this project's deno.json, for a child Deno that runs one of its modules. Named
 * explicitly because Deno discovers no config for a module under a node_modules directory, which
 * is where the npm package (npm/wmcp.cjs) keeps this project. Undefined when the project is not
 * on a local file system.
 */
export function projectConfigFlag(): string | undefined {
  const config = projectPath("deno.json");
  return config === undefined ? undefined : `--config=${config}`;
}

/**
 * Why this Deno cannot start a child Deno, for a message: off Linux the tasks' `/proc/self/exe`
 * names nothing, and only the installed launchers (task -q install, the npm package) grant the
 * binary by its path. Undefined when it can.
 */
export function cannotRunSelf(): string | undefined {
  if (mayRun()) return undefined;
  return `this Deno may not start itself: its --allow-run does not name ${Deno.execPath()}` +
    (Deno.build.os === "linux" ? "" : ` (on ${Deno.build.os} /proc/self/exe does not exist)`) +
    "; run wmcp through the installed `wmcp` command (npx -y deno@2.9.6 task -q install) or " +
    "the npm package @wmcp/wmcp, whose launchers grant it by path";
}
