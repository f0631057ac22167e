/**
 * The pid-file suites' fixture: a real HTTP server writing its pid file outside its workspace,
 * and a directory whose `kill` records its arguments instead of signalling, to put first on PATH.
 */
import { type HttpServerProcess, makeWorkspace, startHttpServer } from "../server/_harness.ts";

/** A running server with a pid file. */
export interface Fixture {
  root: string;
  pidDir: string;
  pidFile: string;
  /** A directory whose `kill` records its arguments in kill.log instead of signalling. */
  fakeBin: string;
  server: HttpServerProcess;
  record: Record<string, unknown>;
}

/** Starts the server and the recording kill. */
export async function setUp(): Promise<Fixture> {
  const root = await makeWorkspace();
  const pidDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-pid-" }));
  const pidFile = `${pidDir}/server.pid`;
  const fakeBin = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-fakekill-" }));
  await Deno.writeTextFile(
    `${fakeBin}/kill`,
    `#!/bin/sh\necho "$@" >> "${fakeBin}/kill.log"\nexit 0\n`,
    { mode: 0o755 },
  );
  const pidPaths = `${pidFile},${pidFile}.tmp`;
  const server = await startHttpServer(root, {
    args: ["--pid-file", pidFile],
    extraFlags: [`--allow-read=${pidPaths}`, `--allow-write=${pidPaths}`, "--allow-sys=uid"],
  });
  const record = JSON.parse(await Deno.readTextFile(pidFile));
  return { root, pidDir, pidFile, fakeBin, server, record };
}

/** Stops the server and removes its directories. */
export async function tearDown(f: Fixture): Promise<void> {
  await f.server.stop();
  for (const d of [f.root, f.pidDir, f.fakeBin]) await Deno.remove(d, { recursive: true });
}
