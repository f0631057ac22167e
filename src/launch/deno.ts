/**
 * The running Deno binary, named once. A child Deno is started by the name run permission is
 * granted on (`/proc/self/exe` on Linux, which the tasks and host entries allow; the binary's
 * path elsewhere), and its real path is what a sandbox binds and a host entry names. No module
 * outside src/launch/ asks the runtime for its path.
 */

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
