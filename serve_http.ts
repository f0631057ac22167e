/**
 * Streamable HTTP MCP server on one workspace. Binds createHttpHandler with Deno.serve
 * and owns the lifecycle: ready line, pid file, graceful shutdown on SIGINT/SIGTERM.
 * See RUNTIME.md for flags, permissions and exit codes.
 */
import { settledWithin } from "./src/async.ts";
import { EXIT_USAGE, resolveFromInvocation, UsageError } from "./src/config.ts";
import { openWorkspaceFromFlags } from "./src/open_workspace.ts";
import { createHttpHandler, LOOPBACK_HOSTS } from "./src/server/http.ts";
import { requestCapFor } from "./src/workspace/message_limits.ts";
import { servedRoots } from "./src/workspace/roots.ts";
import { answerInfoFlags, parseServerFlags } from "./src/cli/server_flags.ts";
import { isLoopbackHost, urlHost, wildcardLoopback } from "./src/cli/server_hosts.ts";
import { loadServerSecrets, SECRET_ENV } from "./src/cli/server_secrets.ts";
import {
  checkPidFile,
  newPidSecret,
  pidFileProof,
  type PidRecord,
  placePidFile,
  readPidFile,
  removePidFile,
  writePidFile,
} from "./src/server/pid_file.ts";

/** Exit codes of serve_http.ts. */
export const EXIT_HTTP = { ok: 0, usage: EXIT_USAGE, portInUse: 3, alreadyRunning: 4 } as const;

const TOKEN_ENV = SECRET_ENV.token;
const READ_TOKEN_ENV = SECRET_ENV.readToken;

function log(message: string): void {
  console.error(`wmcp: ${message}`);
}

async function main(): Promise<number> {
  const info = await answerInfoFlags("http", Deno.args);
  if (info !== undefined) return info;
  let handlerClose: (() => Promise<void>) | undefined;
  try {
    // Every flag checked against the one table (src/cli/server_flags.ts), numbers included.
    const flags = await parseServerFlags("http", Deno.args);
    const { port, pageSize, shutdownMs, bodyTimeoutMs, unusedSessionMs } = flags;
    const { maxBufferedBodyBytes } = flags;
    // Read-write tokens (every tool) and read-only tokens (the read tools); a file replaces the
    // environment variable of its kind. Lengths and kinds are checked there.
    const { tokens, readTokens, stateKey } = await loadServerSecrets(flags);
    // The bind address as Deno takes it: IPv6 without brackets, normalised like a URL's host
    // (`0` is 0.0.0.0, `::0` is ::), the form the launcher grants net permission for.
    const host = flags.host;
    const wildcard = wildcardLoopback(host);
    const allowedHosts = flags.allowedHosts;
    const remoteNames = allowedHosts.filter((h) => !isLoopbackHost(h.replace(/^\[(.*)\]$/, "$1")));
    const authenticated = tokens.length + readTokens.length > 0;
    if (!isLoopbackHost(host) && !authenticated) {
      throw new UsageError(
        `refusing to listen on ${host} without authentication: anyone who can reach it could use the workspace. ` +
          `Set ${TOKEN_ENV} or --token-file (read-write), ${READ_TOKEN_ENV} or --read-token-file ` +
          "(read-only), or bind to 127.0.0.1",
      );
    }
    if (remoteNames.length > 0 && !authenticated) {
      throw new UsageError(
        `refusing --allowed-host ${remoteNames.join(", ")} without authentication: a name other ` +
          "than loopback means clients from elsewhere (a LAN, a reverse proxy). " +
          `Set ${TOKEN_ENV} or --token-file, or ${READ_TOKEN_ENV} or --read-token-file`,
      );
    }
    if (flags.pidFile !== undefined && !isLoopbackHost(host) && wildcard === undefined) {
      throw new UsageError(
        `--pid-file needs a loopback or wildcard --host (127.0.0.1, ::1, 0.0.0.0, ::): the pid ` +
          `file records a loopback URL, which a server bound to ${host} alone cannot answer`,
      );
    }
    const workspace = await openWorkspaceFromFlags(flags, { refuseBroadDefaultRoot: true });
    // The request cap follows the limits (6 x maxWriteBytes + 64 KiB); the budget must hold one.
    const requestCap = requestCapFor(workspace.limits);
    if (maxBufferedBodyBytes !== undefined && maxBufferedBodyBytes < requestCap) {
      throw new UsageError(`--max-buffered-body must be bytes >= ${requestCap}, the request cap`);
    }
    const pidFile = flags.pidFile === undefined ? undefined : resolveFromInvocation(flags.pidFile);
    // Every root's real path: the pid file lies inside none, and its record names them all.
    const rootsReal = workspace.roots.map((r) => r.policy.rootReal);
    let pidFilePlace: string | undefined;
    if (pidFile !== undefined) {
      let existing;
      try {
        existing = await readPidFile(pidFile);
      } catch (err) {
        throw new UsageError(`cannot use --pid-file: ${(err as Error).message}`);
      }
      const check = existing ? await checkPidFile(pidFile, existing) : undefined;
      if (existing && check?.status === "proven") {
        log(
          `a wmcp server (pid ${existing.pid}, ${existing.url}) is already running for pid file ${pidFile}`,
        );
        return EXIT_HTTP.alreadyRunning;
      }
      if (
        check?.status === "refused" &&
        (check.reason === "owner-unknown" || check.reason === "no-net-permission")
      ) {
        throw new UsageError(`cannot use --pid-file: ${check.message}`);
      }
      if (check?.status === "refused" && check.reason === "not-owned") {
        // Another user's file: never adopt, replace or remove it.
        throw new UsageError(`cannot use --pid-file: ${check.message}`);
      }
      if (existing) {
        log(`replacing stale pid file ${pidFile} (pid ${existing.pid} does not prove it serves)`);
      }
      try {
        pidFilePlace = await placePidFile(pidFile, rootsReal);
      } catch (err) {
        throw new UsageError(`cannot use --pid-file: ${(err as Error).message}`);
      }
    }
    // The pid file's secret and record: /healthz proves this server wrote that file.
    const pidSecret = newPidSecret();
    let pidRecord: PidRecord | undefined;
    // Host names accepted: the loopback names, --allowed-host, and a concrete bind address
    // (the ready line names it). A wildcard bind has no one name: loopback and --allowed-host only.
    const extraHosts = [...allowedHosts];
    if (wildcard === undefined && host !== "localhost") extraHosts.push(urlHost(host));
    const handler = createHttpHandler({
      workspace,
      endpoint: flags.endpoint,
      allowedHosts: extraHosts,
      allowedOrigins: flags.allowedOrigins,
      tokens,
      readTokens,
      pageSize,
      bodyTimeoutMs,
      unusedSessionMs,
      maxBufferedBodyBytes,
      requestStateKey: stateKey,
      instance: flags.instance,
      healthProof: (challenge) =>
        pidRecord === undefined || pidFilePlace === undefined ? undefined : pidFileProof(
          pidSecret,
          { challenge, ...pidRecord, path: pidFilePlace },
        ),
      onError: (err) => log(`error: ${err.message}`),
    });
    handlerClose = handler.close;

    let server: Deno.HttpServer<Deno.NetAddr>;
    let url = "";
    try {
      server = Deno.serve({
        hostname: host,
        port,
        onListen: () => {},
      }, handler.fetch);
    } catch (err) {
      if (err instanceof Deno.errors.AddrInUse) {
        log(
          `port ${port} on ${host} is already in use; choose another with --port (0 picks a free one)`,
        );
        return EXIT_HTTP.portInUse;
      }
      if (err instanceof Deno.errors.NotCapable) {
        throw new UsageError(
          `no permission to listen on ${host}:${port}; run with --allow-net=${host}`,
        );
      }
      throw err;
    }
    const addr = server.addr;
    // A wildcard bind is announced by the loopback URL that reaches it (its Host is accepted, so
    // /healthz, the pid file check and serve stop work); `bind` states the address itself.
    const bind = `${urlHost(addr.hostname)}:${addr.port}`;
    url = `http://${wildcard ?? urlHost(addr.hostname)}:${addr.port}${flags.endpoint}`;
    // Handlers first: a signal right after the ready line must already shut down gracefully.
    let stopping = false;
    let stopped!: () => void;
    const done = new Promise<void>((r) => (stopped = r));
    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      log(`${signal}: stopping; in-flight requests get ${shutdownMs / 1000}s`);
      const graceful = server.shutdown();
      handler.closeIdleStreams();
      if (!(await settledWithin(graceful, shutdownMs))) {
        log("shutdown timeout: cancelling the remaining requests");
        await handler.close();
        await settledWithin(server.finished, 2000);
      } else {
        await handler.close();
      }
      workspace.engine.close(); // stops the walk/match workers, stuck ones included
      if (pidFile !== undefined) await removePidFile(pidFile, Deno.pid);
      stopped();
    };
    for (const sig of ["SIGINT", "SIGTERM"] as const) {
      Deno.addSignalListener(sig, () => void shutdown(sig));
    }
    if (pidFile !== undefined) {
      const record: PidRecord = {
        pid: Deno.pid,
        url,
        startedAt: new Date().toISOString(),
        root: workspace.policy.rootReal,
        ...(rootsReal.length > 1 ? { roots: rootsReal } : {}),
        secret: pidSecret,
      };
      await writePidFile(pidFile, record);
      pidRecord = record;
    }
    await Deno.stdout.write(
      new TextEncoder().encode(JSON.stringify({ event: "ready", url, pid: Deno.pid, bind }) + "\n"),
    );
    log(
      `serving ${servedRoots(workspace)} (${
        workspace.writable ? "read-write" : "read-only"
      }) on ${url}` +
        (wildcard === undefined ? "" : ` (bound to ${bind}, every interface)`) +
        (flags.instance === undefined ? "" : ` as instance ${flags.instance}`),
    );
    if (wildcard !== undefined && allowedHosts.length === 0) {
      log(
        "note: a wildcard bind accepts only loopback Host names unless --allowed-host names the " +
          "ones clients on other machines use (the LAN address or name, the proxy's name)",
      );
    }

    await done;
    return EXIT_HTTP.ok;
  } catch (err) {
    await handlerClose?.();
    log(err instanceof UsageError ? err.message : `cannot start: ${(err as Error).message}`);
    return EXIT_HTTP.usage;
  }
}

if (import.meta.main) {
  Deno.exit(await main());
}

export { LOOPBACK_HOSTS };
