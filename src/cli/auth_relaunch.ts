/**
 * The re-launch of `auth` with exactly the credentials directory's permissions, for a process
 * that started without them (cli.ts run directly with narrower flags than the router's).
 */
import { ClientError } from "../client/errors.ts";
import { credentialsDir } from "../client/auth/store.ts";
import { browserCommand } from "../client/auth/loopback.ts";
import { commandPermissions, UngrantablePathError } from "./command_permissions.ts";
import { denoPath, mayRun } from "../launch/deno.ts";
import { spawnDeno } from "../launch/child.ts";

/** Set in a process re-launched with the credentials directory's permissions. */
export const RELAUNCHED = "WMCP_AUTH_RELAUNCHED";

/** Whether this process may read and write the credentials directory. */
export function holdsCredentialsDir(): boolean {
  const dir = credentialsDir().replace(/\/auth$/, "");
  const can = (name: "read" | "write") =>
    Deno.permissions.querySync({ name, path: dir }).state === "granted";
  return can("read") && can("write");
}

/**
 * Runs `cli.ts auth ARGS` again with exactly the permissions the router grants `auth`
 * (command_permissions.ts: the one definition) when this process lacks the credentials
 * directory (cli.ts started with narrower flags than the router's, so it ran auth in process).
 * Undefined when no re-launch is needed or possible (already re-launched, or no permission to
 * run Deno).
 */
export async function relaunchWithCredentials(authArgs: string[]): Promise<number | undefined> {
  if (Deno.env.get(RELAUNCHED) || holdsCredentialsDir()) return undefined;
  if (!mayRun(denoPath())) return undefined;
  const invocationDir = Deno.env.get("INIT_CWD") ?? Deno.cwd();
  const argv = ["auth", ...authArgs];
  let plan;
  try {
    plan = commandPermissions(argv, {
      invocationDir,
      configDir: credentialsDir().replace(/\/auth$/, ""),
      deno: [denoPath()],
      browser: browserCommand(),
    });
  } catch (err) {
    if (err instanceof UngrantablePathError) throw new ClientError("usage", err.message);
    throw err;
  }
  if (plan.kind !== "child") return undefined;
  const child = spawnDeno({
    deno: denoPath(),
    flags: plan.flags,
    module: new URL("../../cli.ts", import.meta.url),
    args: argv,
    env: { [RELAUNCHED]: "1", INIT_CWD: invocationDir },
  });
  return (await child.status).code;
}
