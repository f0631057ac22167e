/**
 * The HTTP handler on Bun: Bun.serve, the workspace on node:fs (which Bun provides). Build with
 * `deno task build:adapters`, run `bun dist/bun.js --root DIR`.
 */
import process from "node:process";
import { log, openHandler, parseSettings, printReady, startFailure } from "./_common.ts";

/** The part of Bun's API this adapter uses. */
interface BunServe {
  serve(options: {
    hostname: string;
    port: number;
    fetch: (request: Request) => Promise<Response>;
    idleTimeout?: number;
  }): { hostname: string; port: number; stop(force?: boolean): Promise<void> | void };
}

async function main(): Promise<number> {
  const bun = (globalThis as { Bun?: BunServe }).Bun;
  if (bun === undefined) throw new Error("adapters/bun.ts runs on Bun only");
  const settings = parseSettings(process.argv.slice(2), process.env);
  const { workspace, handler } = await openHandler(settings, {
    moduleUrl: import.meta.url,
    onError: (err) => log(`error: ${err.message}`),
  });
  // idleTimeout 0: SSE streams stay open (the handler sends its own keep-alives).
  const server = bun.serve({
    hostname: settings.host,
    port: settings.port,
    fetch: handler.fetch,
    idleTimeout: 0,
  });
  printReady(server.hostname, server.port);
  log(
    `serving ${workspace.policy.rootReal} (${settings.write ? "read-write" : "read-only"}) on Bun`,
  );
  const shutdown = async (signal: string) => {
    log(`${signal}: stopping`);
    handler.closeIdleStreams();
    await handler.close();
    await server.stop(true);
    workspace.engine.close();
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  return -1;
}

main().then((code) => {
  if (code >= 0) process.exit(code);
}, (err) => process.exit(startFailure(err)));
