/**
 * The HTTP handler on Node (22 and later): node:http through @hono/node-server, the workspace on
 * node:fs. Build with `deno task build:adapters`, run `node dist/node.js --root DIR`.
 */
import process from "node:process";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { log, openHandler, parseSettings, printReady, startFailure } from "./_common.ts";

async function main(): Promise<number> {
  const settings = parseSettings(process.argv.slice(2), process.env);
  const { workspace, handler } = await openHandler(settings, {
    moduleUrl: import.meta.url,
    onError: (err) => log(`error: ${err.message}`),
  });
  const server = serve({ fetch: handler.fetch, hostname: settings.host, port: settings.port });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", () => resolve());
    server.once("error", reject);
  });
  const addr = server.address() as AddressInfo;
  printReady(addr.address, addr.port);
  log(
    `serving ${workspace.policy.rootReal} (${
      settings.write ? "read-write" : "read-only"
    }) on Node ${process.version}`,
  );
  const shutdown = async (signal: string) => {
    log(`${signal}: stopping`);
    handler.closeIdleStreams();
    server.close();
    await handler.close();
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
