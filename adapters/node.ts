/**
 * The HTTP handler on Node (22 and later; older Node gets a warning): node:http through
 * @hono/node-server, the workspace on node:fs. Build with `deno task build:adapters`, run
 * `node dist/node.js --root DIR`.
 */
import process from "node:process";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import {
  announce,
  answerInfo,
  loadSettings,
  log,
  onShutdown,
  openHandler,
  startFailure,
} from "./_common.ts";

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const info = answerInfo(args, "node");
  if (info !== undefined) return info;
  const major = Number(/^v(\d+)/.exec(process.version)?.[1]);
  if (major < 22) {
    log(`warning: Node ${process.version} is older than the supported Node 22; it may fail`);
  }
  const settings = await loadSettings(args, process.env);
  const { flags } = settings;
  const { workspace, handler } = await openHandler(settings, {
    moduleUrl: import.meta.url,
    onError: (err) => log(`error: ${err.message}`),
  });
  const server = serve({ fetch: handler.fetch, hostname: flags.host, port: flags.port });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", () => resolve());
    server.once("error", reject);
  });
  const addr = server.address() as AddressInfo;
  onShutdown(
    { handler, workspace, shutdownMs: flags.shutdownMs },
    () => new Promise<void>((resolve) => server.close(() => resolve())),
  );
  announce(settings, {
    host: addr.address,
    port: addr.port,
    rootReal: workspace.policy.rootReal,
    runtime: `Node ${process.version}`,
  });
  return -1;
}

main().then((code) => {
  if (code >= 0) process.exit(code);
}, (err) => process.exit(startFailure(err)));
