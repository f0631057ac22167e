/**
 * What the sandbox suites share: the launcher's exact permissions, and whether bubblewrap works
 * here (without it those tests are skipped loudly, except where WMCP_REQUIRE_SANDBOX_TESTS is set,
 * as .ci/run sets it: there they run and fail).
 */
import { serverPermissions } from "../../src/cli/server_permissions.ts";

/** The launcher's permissions, exactly as the server tasks in deno.json grant them. */
export const LAUNCHER_FLAGS: readonly string[] = [
  "run",
  ...serverPermissions("http", [], { via: "launcher" }),
];

/** Whether bwrap can create namespaces on this machine. */
export const HAVE_BWRAP: boolean = await new Deno.Command("bwrap", {
  args: ["--die-with-parent", "--unshare-user", "--ro-bind", "/", "/", "true"],
  stdout: "null",
  stderr: "null",
}).output().then((o) => o.success, () => false);

/** Skip the tests that need bwrap (said once on stderr by the suite that asks). */
export function skipWithoutBwrap(suite: string): boolean {
  const skip = !HAVE_BWRAP && !Deno.env.get("WMCP_REQUIRE_SANDBOX_TESTS");
  if (skip) {
    console.error(
      `!!! ${suite}: bwrap (Debian package bubblewrap) is missing or cannot create namespaces ` +
        "here: the kernel-sandbox tests are SKIPPED (CI runs them)",
    );
  }
  return skip;
}
