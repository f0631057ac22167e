/** Test helper: runs the bundled MCP tool client (`cli.ts server-info|tools ...`) as a real child. */
import assert from "node:assert/strict";
import { cliArgv, type CliResult, spawnCli, type SpawnedCli } from "../_support/cli.ts";
import { Changes } from "../_support/wait.ts";

/** Parsed JSON read from the client's output (shape asserted by the tests). */
// deno-lint-ignore no-explicit-any
export type Json = any;

/** What one client run produced. */
export type ClientResult = CliResult;

/** How to run the client. */
export interface ClientOptions {
  /** Directories and files the client may read (its --allow-read list; at least one). */
  read: string[];
  /** Extra environment variables for the client. */
  env?: Record<string, string>;
  /** Text fed to the client's stdin (else stdin is closed). */
  stdin?: string;
  /** The run is killed (and the test fails) after this long; default 60 s. */
  timeoutMs?: number;
  /** The client's working directory (default: the test's). */
  cwd?: string;
}

/**
 * The config directory (stored credentials) of every client run of this test process: never the
 * user's, and created only if a run signs in.
 */
export const TEST_CONFIG_DIR = `${Deno.env.get("TMPDIR") ?? "/tmp"}/wmcp-test-config-${Deno.pid}`;

/** The Deno flags of one client run. */
function clientFlags(read: string[]): string[] {
  assert.ok(read.length > 0, "the client needs at least one readable directory");
  return [
    "--quiet",
    "--no-prompt",
    `--allow-read=${[...read, TEST_CONFIG_DIR].join(",")}`,
    // The credentials store of these runs (never the user's): reachable, so no re-launch.
    `--allow-write=${TEST_CONFIG_DIR}`,
    "--allow-env",
    "--allow-net=127.0.0.1",
    "--allow-run",
  ];
}

/** The `deno` argv of one client run. */
export function clientArgv(read: string[], args: string[]): string[] {
  return cliArgv(clientFlags(read), args);
}

/** The environment of the client child: ours without INIT_CWD (no relative-path surprises) or a token. */
function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = Deno.env.toObject();
  delete env.INIT_CWD;
  delete env.WMCP_TOKEN;
  return { ...env, WMCP_CONFIG_DIR: TEST_CONFIG_DIR, ...extra };
}

/** A running client child. */
export type SpawnedClient = SpawnedCli;

/** Starts the client; the caller awaits `done` (a watchdog kills it after timeoutMs). */
export function spawnClient(args: string[], options: ClientOptions): SpawnedClient {
  return spawnCli(clientFlags(options.read), args, {
    stdin: options.stdin,
    clearEnv: true,
    env: childEnv(options.env),
    cwd: options.cwd,
    timeoutMs: options.timeoutMs,
  });
}

/** Runs the client to completion. */
export function runClient(args: string[], options: ClientOptions): Promise<ClientResult> {
  return spawnClient(args, options).done;
}

/** Describes a run for assertion messages. */
export function describe(r: ClientResult): string {
  return `exit ${r.code}${r.signal ? ` (${r.signal})` : ""}\nstdout: ${
    r.stdout.slice(0, 2000)
  }\nstderr: ${r.stderr.slice(0, 2000)}`;
}

/** Asserts the exit code, showing the output when it differs. */
export function assertExit(r: ClientResult, code: number): void {
  assert.equal(r.code, code, `expected exit ${code}, got ${describe(r)}`);
}

/** stdout as exactly one JSON line (nothing else on stdout). */
export function stdoutJson(r: ClientResult): Json {
  assert.ok(r.stdout.endsWith("\n"), `stdout is not one terminated line: ${describe(r)}`);
  const lines = r.stdout.slice(0, -1).split("\n");
  assert.equal(lines.length, 1, `stdout has ${lines.length} lines: ${describe(r)}`);
  return JSON.parse(lines[0]);
}

/** stdout as JSON lines (each line one JSON value; no stray text). */
export function stdoutLines(r: ClientResult): Json[] {
  if (r.stdout === "") return [];
  assert.ok(r.stdout.endsWith("\n"), `stdout does not end with a newline: ${describe(r)}`);
  return r.stdout.slice(0, -1).split("\n").map((l) => JSON.parse(l));
}

/** The one `{"error":{...}}` object a non-pretty failure prints on stderr. */
export function stderrError(r: ClientResult): Json {
  const lines = r.stderr.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("wmcp: "));
  assert.equal(lines.length, 1, `stderr is not one JSON error line: ${describe(r)}`);
  const parsed = JSON.parse(lines[0]);
  assert.ok(parsed.error && typeof parsed.error === "object", describe(r));
  return parsed.error;
}

/** Asserts a classified failure: exit code, `{"error":{class,exitCode,message}}` on stderr. */
export function assertFailure(r: ClientResult, cls: string, code: number): Json {
  assertExit(r, code);
  const e = stderrError(r);
  assert.equal(e.class, cls, describe(r));
  assert.equal(e.exitCode, code, describe(r));
  assert.equal(typeof e.message, "string");
  return e;
}

/**
 * Command lines of live stdio servers serving root (bundled or configured servers): the entry run
 * directly (`serve_stdio.ts`) or the one the launcher starts (`src/server/stdio_launched.ts`).
 */
export async function stdioServersFor(root: string): Promise<string[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "args"], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) =>
    (l.includes("serve_stdio.ts") || l.includes("stdio_launched.ts")) && l.includes(root)
  );
}

/** Waits until no stdio server for root is left (returns what is still there after waitMs). */
export async function lingeringStdioServers(root: string, waitMs = 2000): Promise<string[]> {
  const deadline = Date.now() + waitMs;
  while (true) {
    const left = await stdioServersFor(root);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A 127.0.0.1 port that nothing listens on (bound, then released). */
export function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** One request a recording proxy forwarded. */
export interface ProxiedRequest {
  httpMethod: string;
  /** JSON-RPC method(s) of a POST body ("" for none). */
  rpc: string;
  sessionId: string | null;
}

/** A pass-through HTTP proxy on 127.0.0.1 that records what the client sent upstream. */
export interface RecordingProxy {
  url: string;
  requests: ProxiedRequest[];
  /** Resolves once a request with this JSON-RPC method went through. */
  seen(rpc: string, timeoutMs?: number): Promise<void>;
  /** Resolves once a notifications/progress came back through the proxy. */
  seenProgress(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts a recording proxy in front of an MCP endpoint (responses, SSE included, are streamed back). */
export function startRecordingProxy(upstream: string): RecordingProxy {
  const requests: ProxiedRequest[] = [];
  const progress = { count: 0 };
  // Each request and each progress notification wakes the waits below (no polling).
  const changes = new Changes();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const body = req.method === "POST" ? await req.text() : undefined;
      let rpc = "";
      try {
        const parsed = JSON.parse(body ?? "null");
        rpc = (Array.isArray(parsed) ? parsed : [parsed]).map((m) => m?.method ?? "").join(",");
      } catch { /* not JSON */ }
      requests.push({ httpMethod: req.method, rpc, sessionId: req.headers.get("mcp-session-id") });
      changes.notify();
      const headers = new Headers(req.headers);
      headers.delete("host");
      const res = await fetch(upstream, { method: req.method, headers, body });
      // Counts progress notifications as they stream back; cancelling this body (the client
      // went away) still cancels the upstream body (pipeThrough propagates the cancel).
      const decoder = new TextDecoder();
      const counted = res.body?.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, out) {
            progress.count +=
              decoder.decode(chunk, { stream: true }).split('"notifications/progress"').length -
              1;
            out.enqueue(chunk);
            changes.notify();
          },
        }),
      );
      return new Response(counted ?? null, { status: res.status, headers: res.headers });
    },
  );
  const url = `http://127.0.0.1:${server.addr.port}${new URL(upstream).pathname}`;
  return {
    url,
    requests,
    async seen(rpc, timeoutMs = 15_000) {
      if (!await changes.until(() => requests.some((r) => r.rpc === rpc), timeoutMs)) {
        throw new Error(`no ${rpc} request within ${timeoutMs} ms`);
      }
    },
    async seenProgress(timeoutMs = 15_000) {
      if (!await changes.until(() => progress.count > 0, timeoutMs)) {
        throw new Error(`no progress within ${timeoutMs} ms`);
      }
    },
    async close() {
      await server.shutdown();
    },
  };
}
