/**
 * What the Node and Bun adapters share: the server flags of serve_http.ts (the one table in
 * src/cli/server_flags.ts, its checks, messages and exit codes), the secrets from WMCP_TOKEN or
 * --token-file, the broad-root refusal, opening the workspace on node:fs, the ready line, the
 * graceful shutdown and the exit codes. Runtime-neutral: node: modules only, no Deno global.
 */
import { existsSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { flagTokens } from "../src/cli/declare.ts";
import { createHttpHandler, type HttpHandler } from "../src/server/http.ts";
import { Workspace } from "../src/workspace/workspace.ts";
import { nodeFs } from "../src/workspace/fs/node.ts";
import { requestCapFor } from "../src/workspace/message_limits.ts";
import { toWorkspaceError } from "../src/workspace/errors.ts";
import { EXIT_USAGE, refuseBroadRoot, rootFlag, UsageError } from "../src/config.ts";
import type { RootSpec } from "../src/workspace/roots.ts";
import {
  flagsOf,
  infoRequest,
  parseServerFlags,
  serverDecl,
  type ServerFlags,
  VERSION,
} from "../src/cli/server_flags.ts";
import { bindHost, isLoopbackHost, urlHost, wildcardLoopback } from "../src/cli/server_hosts.ts";
import { loadServerSecrets, SECRET_ENV } from "../src/cli/server_secrets.ts";

export { EXIT_USAGE };
/** Exit code when the port is taken (as serve_http.ts). */
export const EXIT_PORT_IN_USE = 3;

/** Flags of serve_http.ts the adapters do not take, and why (a usage error, exit 2). */
const REFUSED: Record<string, string> = {
  token: `--token is not taken: a token on the command line is visible to every user in ps. ` +
    `Set ${SECRET_ENV.token} or pass --token-file F (one token a line)`,
  "pid-file": "--pid-file is a flag of the Deno server (serve_http.ts); the Node and Bun " +
    "adapters write no pid file (use your service manager's)",
  sandbox: "--sandbox is a flag of the Deno launcher (wmcp serve http); the Node and Bun " +
    "adapters run without the kernel sandbox (RUNTIME.md, Node and Bun)",
};

/** The adapter's settings after parsing and checking. */
export interface AdapterSettings {
  flags: ServerFlags;
  /**
   * The roots as given (`--root`, `--read-only-root`, in order; the working directory without
   * either), made absolute against the working directory (decision 0064).
   */
  roots: RootSpec[];
  tokens: string[];
  readTokens: string[];
  stateKey?: string;
}

/** The adapter's --help, from the server flags table minus the flags it refuses. */
export function adapterHelp(runtime: "node" | "bun"): string {
  const rows: [string, string][] = [];
  for (const f of flagsOf("http")) {
    if (Object.hasOwn(REFUSED, f.name)) continue;
    const def = f.default === undefined ? "" : ` (default ${f.default})`;
    rows.push([`--${f.name}${f.meta ? ` ${f.meta}` : ""}`, `${f.help}${def}`]);
  }
  rows.push(["-h, --help", "show this help and exit"], [
    "-V, --version",
    "print the version and exit",
  ]);
  const width = Math.max(...rows.map(([l]) => l.length)) + 2;
  return [
    `dist/${runtime}.js ${VERSION}: Streamable HTTP MCP server on one workspace directory, on ` +
    (runtime === "node" ? "Node 22 or later" : "Bun"),
    "",
    "Usage:",
    `  ${runtime} dist/${runtime}.js [flags]`,
    "",
    "Flags:",
    ...rows.map(([l, r]) => `  ${l.padEnd(width)}${r}`),
    "",
    `Secrets come from ${SECRET_ENV.token}/${SECRET_ENV.readToken}/${SECRET_ENV.stateKey} or ` +
    "the *-file flags, never from the command line. No kernel sandbox on this runtime.",
    "Exit codes: 0 stopped by a signal, 1 failed to start, 2 usage, 3 port in use. Details: " +
    "RUNTIME.md.",
    "",
  ].join("\n");
}

/** Answers -h/--help and -V/--version (nothing else checked, nothing started): exit 0, or undefined. */
export function answerInfo(args: string[], runtime: "node" | "bun"): number | undefined {
  const asked = infoRequest("http", args);
  if (asked === undefined) return undefined;
  process.stdout.write(asked === "help" ? adapterHelp(runtime) : `${VERSION}\n`);
  return 0;
}

/** Refuses the serve_http.ts flags that do not apply here (and --token), with the reason. */
function refuseNotTaken(args: string[]): void {
  const http = serverDecl("http");
  // --token too: refused with its reason, its value read as the flag's (not as a word).
  const decl = { ...http, flags: { ...http.flags, token: { kind: "string", help: "" } } } as const;
  for (const t of flagTokens(decl, args)) {
    if (t.kind === "option" && Object.hasOwn(REFUSED, t.name)) {
      throw new UsageError(REFUSED[t.name]);
    }
  }
}

/**
 * Parses and checks the adapter's arguments exactly as serve_http.ts does (the one flags table;
 * secrets from the environment or files; no unauthenticated non-loopback bind or remote
 * --allowed-host; no broad root unless named literally). Every failure is a UsageError (exit 2).
 */
export async function loadSettings(
  args: string[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<AdapterSettings> {
  refuseNotTaken(args);
  const flags = await parseServerFlags("http", args);
  const secrets = await loadServerSecrets(flags, {
    env: (name) => env[name],
    resolve: (path) => resolve(path),
  });
  const authenticated = secrets.tokens.length + secrets.readTokens.length > 0;
  if (!isLoopbackHost(flags.host) && !authenticated) {
    throw new UsageError(
      `refusing to listen on ${flags.host} without authentication: anyone who can reach it ` +
        `could use the workspace. Set ${SECRET_ENV.token} or --token-file (read-write), ` +
        `${SECRET_ENV.readToken} or --read-token-file (read-only), or bind to 127.0.0.1`,
    );
  }
  const remote = flags.allowedHosts.filter((h) => !isLoopbackHost(bindHost(h)));
  if (remote.length > 0 && !authenticated) {
    throw new UsageError(
      `refusing --allowed-host ${remote.join(", ")} without authentication: a name other than ` +
        "loopback means clients from elsewhere (a LAN, a reverse proxy). " +
        `Set ${SECRET_ENV.token} or --token-file, or ${SECRET_ENV.readToken} or --read-token-file`,
    );
  }
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return undefined;
    }
  };
  const home = env.HOME || undefined;
  const asked: { path?: string; readOnly?: boolean }[] = flags.roots.length > 0
    ? flags.roots
    : [{ path: undefined }];
  const roots = asked.map((r) => {
    const given = rootFlag(r.path);
    const root = resolve(given ?? ".");
    refuseBroadRoot({
      given,
      root,
      rootReal: real(root),
      home,
      homeReal: home === undefined ? undefined : real(home),
    });
    return { path: root, readOnly: r.readOnly };
  });
  return { flags, roots, ...secrets };
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
  const { flags } = settings;
  let workspace: Workspace;
  try {
    workspace = await Workspace.open({
      roots: settings.roots,
      writable: flags.write,
      limits: flags.limits,
      fs: nodeFs,
      engineWorker: bundledWorker(options.moduleUrl),
    });
  } catch (err) {
    throw new UsageError(`cannot open the workspace: ${toWorkspaceError(err).message}`);
  }
  const requestCap = requestCapFor(workspace.limits);
  if (flags.maxBufferedBodyBytes !== undefined && flags.maxBufferedBodyBytes < requestCap) {
    workspace.engine.close();
    throw new UsageError(`--max-buffered-body must be bytes >= ${requestCap}, the request cap`);
  }
  // Loopback names, --allowed-host, and a concrete bind address; a wildcard bind has no one name.
  const extraHosts = [...flags.allowedHosts];
  if (wildcardLoopback(flags.host) === undefined && flags.host !== "localhost") {
    extraHosts.push(urlHost(flags.host));
  }
  const handler = createHttpHandler({
    workspace,
    endpoint: flags.endpoint,
    allowedHosts: extraHosts,
    allowedOrigins: flags.allowedOrigins,
    tokens: settings.tokens,
    readTokens: settings.readTokens,
    pageSize: flags.pageSize,
    bodyTimeoutMs: flags.bodyTimeoutMs,
    unusedSessionMs: flags.unusedSessionMs,
    maxBufferedBodyBytes: flags.maxBufferedBodyBytes,
    requestStateKey: settings.stateKey,
    instance: flags.instance,
    onError: options.onError,
  });
  return { workspace, handler };
}

/**
 * Writes the ready line serve_http.ts writes, {"event":"ready","url","pid","bind"} (a wildcard
 * bind announced by the loopback URL that reaches it), and the serving line and wildcard note.
 */
export function announce(
  settings: AdapterSettings,
  options: { host: string; port: number; rootReal: string; runtime: string },
): void {
  const { flags } = settings;
  const host = bindHost(options.host);
  const wildcard = wildcardLoopback(host);
  const bind = `${urlHost(host)}:${options.port}`;
  const url = `http://${wildcard ?? urlHost(host)}:${options.port}${flags.endpoint}`;
  process.stdout.write(JSON.stringify({ event: "ready", url, pid: process.pid, bind }) + "\n");
  log(
    `serving ${options.rootReal} (${flags.write ? "read-write" : "read-only"}) on ${url}` +
      (wildcard === undefined ? "" : ` (bound to ${bind}, every interface)`) +
      ` on ${options.runtime}`,
  );
  if (wildcard !== undefined && flags.allowedHosts.length === 0) {
    log(
      "note: a wildcard bind accepts only loopback Host names unless --allowed-host names the " +
        "ones clients on other machines use (the LAN address or name, the proxy's name)",
    );
  }
}

/** Logs one line to stderr, prefixed like the Deno servers. */
export function log(message: string): void {
  process.stderr.write(`wmcp: ${message}\n`);
}

/**
 * Stops gracefully on SIGINT/SIGTERM: idle streams closed, in-flight requests get
 * --shutdown-timeout, then the handler and the engine's workers close and the process exits 0.
 */
export function onShutdown(
  parts: { handler: HttpHandler; workspace: Workspace; shutdownMs: number },
  stopServer: () => Promise<void>,
): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping; in-flight requests get ${parts.shutdownMs / 1000}s`);
    parts.handler.closeIdleStreams();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<boolean>((
      r,
    ) => (timer = setTimeout(() => r(true), parts.shutdownMs)));
    const graceful = stopServer().then(() => false, () => false);
    if (await Promise.race([graceful, timedOut])) {
      log("shutdown timeout: cancelling the remaining requests");
    }
    clearTimeout(timer);
    await parts.handler.close();
    parts.workspace.engine.close();
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
}

/** The exit code for a failed start: usage 2, port in use 3, anything else 1 (logged). */
export function startFailure(err: unknown): number {
  if (err instanceof UsageError) {
    log(err.message);
    return err.exitCode;
  }
  if ((err as { code?: string } | null)?.code === "EADDRINUSE") {
    log("the port is already in use; choose another with --port (0 picks a free one)");
    return EXIT_PORT_IN_USE;
  }
  log(`cannot start: ${(err as Error).message}`);
  return 1;
}
