/**
 * What serve_stdio.ts runs once its first answers are out of the way (stdio_early.ts): the flags
 * checked against the one table, the workspace opened, the stdio server started on stdin (from
 * its first byte, when the entry read some already) and stdout.
 */
import { EXIT_USAGE, UsageError } from "../config.ts";
import { openWorkspaceFromFlags } from "../open_workspace.ts";
import { answerInfoFlags, parseServerFlags } from "../cli/server_flags.ts";
import { startStdioServer } from "./stdio_server.ts";
import type { EarlyStdio } from "./stdio_early.ts";
import { servedRoots } from "../workspace/roots.ts";

/** Serves stdio on the process's flags; the exit code (0 once serving). */
export async function main(args: string[], early?: EarlyStdio): Promise<number> {
  const info = await answerInfoFlags("stdio", args);
  if (info !== undefined) return info;
  try {
    // Every flag checked against the one table (src/cli/server_flags.ts).
    const flags = await parseServerFlags("stdio", args);
    const { pageSize } = flags;
    const workspace = await openWorkspaceFromFlags(flags, { refuseBroadDefaultRoot: true });
    // Without a root flag the client's roots, when it declares them, replace the start
    // directory (decision 0065).
    const clientRoots = workspace.rootsFrom === "start-directory";
    startStdioServer({ workspace, pageSize, clientRoots, early: early?.handover() });
    // Every root; read-write when some root takes writes (a --read-only-root never does).
    console.error(
      `wmcp: serving ${servedRoots(workspace)} over stdio (${
        workspace.writable ? "read-write" : "read-only"
      })`,
    );
    return 0;
  } catch (err) {
    console.error(
      `wmcp: ${err instanceof UsageError ? "" : "cannot start: "}${(err as Error).message}`,
    );
    return EXIT_USAGE;
  }
}
