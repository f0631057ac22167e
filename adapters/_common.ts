/**
 * What the Node and Bun adapters share: their few flags (or environment variables), the
 * loopback-without-token refusal, opening the workspace on node:fs, the guarded handler, and
 * the ready line (the same JSON serve_http.ts prints). Runtime-neutral: node: modules only.
 */
import { existsSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createHttpHandler, type HttpHandler } from "../src/server/http.ts";
import { Workspace } from "../src/workspace/workspace.ts";
import { nodeFs } from "../src/workspace/fs/node.ts";

/** Exit code of a usage error (as serve_http.ts). */
export const EXIT_USAGE = 2;
/** Exit code when the port is taken (as serve_http.ts). */
export const EXIT_PORT_IN_USE = 3;

const USAGE = `usage: <runtime> <adapter> --root DIR [--write] [--host 127.0.0.1] [--port 8080]
  [--token TOKEN] [--allowed-host NAME]... [--limit KEY=N]...
Environment: WMCP_ROOT, WMCP_HOST, WMCP_PORT, WMCP_TOKEN (flags win).
A non-loopback --host needs a token.`;

/** The adapter's settings after parsing. */
export interface AdapterSettings {
  root: string;
  write: boolean;
  host: string;
  port: number;
  token?: string;
  allowedHosts: string[];
  limits: Record<string, number>;
}

/** A usage mistake: printed with the usage text, exit 2. */
export class AdapterUsageError extends Error {
  override name = "AdapterUsageError";
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A host as a URL spells it (IPv6 in brackets). */
export function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** Parses the adapter's flags (environment variables as defaults); throws AdapterUsageError. */
export function parseSettings(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): AdapterSettings {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: {
        root: { type: "string" },
        write: { type: "boolean", default: false },
        host: { type: "string" },
        port: { type: "string" },
        token: { type: "string" },
        "allowed-host": { type: "string", multiple: true },
        limit: { type: "string", multiple: true },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (err) {
    throw new AdapterUsageError((err as Error).message);
  }
  if (values.help) throw new AdapterUsageError("help");
  const root = values.root ?? env.WMCP_ROOT;
  if (root === undefined || root === "") throw new AdapterUsageError("--root is required");
  const host = values.host ?? env.WMCP_HOST ?? "127.0.0.1";
  const portText = values.port ?? env.WMCP_PORT ?? "8080";
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || !Number.isSafeInteger(port) || port > 65535) {
    throw new AdapterUsageError(`--port must be an integer from 0 to 65535, got ${portText}`);
  }
  const token = values.token ?? (env.WMCP_TOKEN || undefined);
  if (!isLoopback(host) && token === undefined) {
    throw new AdapterUsageError(
      `refusing to listen on non-loopback ${host} without a bearer token (--token or WMCP_TOKEN)`,
    );
  }
  const limits: Record<string, number> = {};
  for (const kv of values.limit ?? []) {
    const m = /^([A-Za-z]+)=(\d+)$/.exec(kv);
    if (m === null) throw new AdapterUsageError(`--limit takes KEY=N, got ${kv}`);
    limits[m[1]] = Number(m[2]);
  }
  return {
    root,
    limits,
    write: values.write === true,
    host,
    port,
    token,
    allowedHosts: values["allowed-host"] ?? [],
  };
}

/** The engine worker bundled beside the adapter bundle (dist/), when there is one. */
function bundledWorker(base: string): URL | undefined {
  const url = new URL("./engine_worker.js", base);
  return url.protocol === "file:" && existsSync(fileURLToPath(url)) ? url : undefined;
}

/** Opens the workspace on node:fs and builds the guarded handler for it. */
export async function openHandler(
  settings: AdapterSettings,
  options: { moduleUrl: string; onError: (err: Error) => void },
): Promise<{ workspace: Workspace; handler: HttpHandler }> {
  const workspace = await Workspace.open({
    root: settings.root,
    writable: settings.write,
    limits: settings.limits,
    fs: nodeFs,
    engineWorker: bundledWorker(options.moduleUrl),
  });
  const extraHosts = [...settings.allowedHosts];
  if (settings.host !== "localhost" && !isLoopback(settings.host)) {
    extraHosts.push(urlHost(settings.host));
  }
  const handler = createHttpHandler({
    workspace,
    allowedHosts: extraHosts,
    token: settings.token,
    onError: options.onError,
  });
  return { workspace, handler };
}

/** Writes the ready line serve_http.ts writes: {"event":"ready","url","pid","bind"}. */
export function printReady(host: string, port: number): void {
  const bind = `${urlHost(host)}:${port}`;
  const url = `http://${bind}/mcp`;
  process.stdout.write(JSON.stringify({ event: "ready", url, pid: process.pid, bind }) + "\n");
}

/** Logs one line to stderr, prefixed like the Deno servers. */
export function log(message: string): void {
  process.stderr.write(`wmcp: ${message}\n`);
}

/** Prints a usage error and returns its exit code. */
export function usageExit(err: AdapterUsageError): number {
  if (err.message === "help") {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  log(`${err.message}\n${USAGE}`);
  return EXIT_USAGE;
}

/** The exit code for a failed start: usage 2, port in use 3, anything else 1 (logged). */
export function startFailure(err: unknown): number {
  if (err instanceof AdapterUsageError) return usageExit(err);
  if ((err as { code?: string } | null)?.code === "EADDRINUSE") {
    log(`the port is already in use; choose another with --port (0 picks a free one)`);
    return EXIT_PORT_IN_USE;
  }
  log(`error: ${(err as Error).message}`);
  return 1;
}
