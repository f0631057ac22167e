/**
 * The HTTP handler on Bun: Bun.serve, the workspace on node:fs (which Bun provides). Build with
 * `deno task build:adapters`, run `bun dist/bun.js --root DIR`.
 */
import process from "node:process";
import {
  announce,
  answerInfo,
  loadSettings,
  log,
  onShutdown,
  openHandler,
  startFailure,
} from "./_common.ts";

/** The part of Bun's API this adapter uses. */
interface BunServe {
  version: string;
  serve(options: {
    hostname: string;
    port: number;
    fetch: (request: Request) => Promise<Response>;
    idleTimeout?: number;
  }): { hostname: string; port: number; stop(force?: boolean): Promise<void> | void };
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const info = answerInfo(args, "bun");
  if (info !== undefined) return info;
  const bun = (globalThis as { Bun?: BunServe }).Bun;
  if (bun === undefined) {
    log("dist/bun.js runs on Bun only; on Node run dist/node.js (see --help)");
    return 1;
  }
  const settings = await loadSettings(args, process.env);
  const { flags } = settings;
  const { workspace, handler } = await openHandler(settings, {
    moduleUrl: import.meta.url,
    onError: (err) => log(`error: ${err.message}`),
  });
  // idleTimeout 0: SSE streams stay open (the handler sends its own keep-alives).
  const server = bun.serve({
    hostname: flags.host,
    port: flags.port,
    fetch: handler.fetch,
    idleTimeout: 0,
  });
  onShutdown(
    { handler, workspace, shutdownMs: flags.shutdownMs },
    async () => await server.stop(false),
  );
  announce(settings, {
    host: server.hostname,
    port: server.port,
    rootReal: workspace.policy.rootReal,
    runtime: `Bun ${bun.version}`,
  });
  return -1;
}

main().then((code) => {
  if (code >= 0) process.exit(code);
}, (err) => process.exit(startFailure(err)));
