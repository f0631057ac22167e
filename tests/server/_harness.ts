/** Test harness: real server processes on 127.0.0.1 and stdio, with scoped permissions. */
import { serverPermissions } from "../../src/cli/server_permissions.ts";
import { cliArgv } from "../_support/cli.ts";
import { GrowingText } from "../_support/wait.ts";

export const SERVE_HTTP = new URL("../../serve_http.ts", import.meta.url).pathname;
export const SERVE_STDIO = new URL("../../serve_stdio.ts", import.meta.url).pathname;
export { CLI } from "../_support/cli.ts";

/** The ready line a server (or a task or launcher running one) prints first on stdout. */
export interface ReadyLine {
  event: string;
  url: string;
  pid: number;
}

/**
 * Reads stdout up to the first line and parses it as the ready line (at most 30 s). Returns it
 * with the reader, positioned after that line, for the caller to drain or cancel.
 */
export async function readReadyLine(
  stdout: ReadableStream<Uint8Array>,
  what = "server",
): Promise<{ ready: ReadyLine; reader: ReadableStreamDefaultReader<string> }> {
  const reader = stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, rej) => {
    timer = setTimeout(() => rej(new Error(`no ready line from the ${what} in 30 s`)), 30_000);
  });
  try {
    while (!buf.includes("\n")) {
      const { done, value } = await Promise.race([reader.read(), timeout]);
      if (done) throw new Error(`the ${what} exited before its ready line`);
      buf += value;
    }
  } finally {
    clearTimeout(timer);
  }
  const ready = JSON.parse(buf.slice(0, buf.indexOf("\n"))) as ReadyLine;
  if (ready.event !== "ready") throw new Error(`unexpected first line: ${buf}`);
  return { ready, reader };
}

/** A running HTTP server child. */
export interface HttpServerProcess {
  url: string;
  pid: number;
  child: Deno.ChildProcess;
  stderr: () => string;
  /** Resolves true once `holds(stderr so far)` is true (woken by each chunk read), false after ms. */
  waitStderr: (holds: (stderr: string) => boolean, ms?: number) => Promise<boolean>;
  /** Sends SIGTERM and waits for the exit status. */
  stop: () => Promise<Deno.CommandStatus>;
  status: Promise<Deno.CommandStatus>;
}

/** The read flag a server on root needs: the workspace and the engine's modules (its worker pool). */
export function readFlag(root: string): string {
  return serverPermissions("stdio", ["--root", root]).find((f) => f.startsWith("--allow-read="))!;
}

/** Permission flags for serving root over stdio (read, and write with write: true). */
export function permissionFlags(root: string, write = false): string[] {
  return serverPermissions("stdio", ["--root", root, ...(write ? ["--write"] : [])]);
}

/** Starts serve_http.ts on a free port and resolves once it printed its ready line. */
export async function startHttpServer(
  root: string,
  options: {
    write?: boolean;
    args?: string[];
    env?: Record<string, string>;
    extraFlags?: string[];
  } = {},
): Promise<HttpServerProcess> {
  const serverArgs = [
    "--root",
    root,
    "--port",
    "0",
    ...(options.write ? ["--write"] : []),
    ...(options.args ?? []),
  ];
  const args = [
    "run",
    ...serverPermissions("http", serverArgs),
    ...(options.extraFlags ?? []),
    SERVE_HTTP,
    ...serverArgs,
  ];
  const child = new Deno.Command(Deno.execPath(), {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: options.env,
  }).spawn();
  const err = new GrowingText();
  const errDone = err.drain(child.stderr);
  let ready: ReadyLine;
  let reader: ReadableStreamDefaultReader<string>;
  try {
    ({ ready, reader } = await readReadyLine(child.stdout));
  } catch (e) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await errDone;
    throw new Error(`${(e as Error).message}: ${err.text}`);
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  (async () => {
    try {
      while (!(await reader.read()).done) { /* drain */ }
    } catch { /* closed */ }
  })();
  const status = child.status.then(async (s) => {
    await errDone;
    return s;
  });
  return {
    url: ready.url,
    pid: ready.pid,
    child,
    stderr: () => err.text,
    waitStderr: (holds, ms) => err.waitFor(holds, ms),
    status,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      return await status;
    },
  };
}

/** Makes a temporary workspace with a few files; returns its path. */
export async function makeWorkspace(
  files: Record<string, string> = { "hello.txt": "hi there\n" },
): Promise<string> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-srv-" }));
  for (const [name, content] of Object.entries(files)) {
    const path = `${root}/${name}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, content);
  }
  return root;
}

/** The read tools, in the order every server lists them. */
export const READ_TOOLS = [
  "workspace_info",
  "list_directory",
  "read_file",
  "read_files",
  "read_media",
  "get_file_info",
  "find_files",
  "search_text",
];

/** Tools whose `path` argument is mirrored into Mcp-Param-Path. */
export const PATH_HEADER_TOOLS = new Set(["read_file", "get_file_info", "list_directory"]);

/** Protocol revision of the modern era. */
export const MODERN = "2026-07-28";

/** The per-request _meta envelope of a modern request. */
export function envelope(capabilities: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": { name: "raw-test", version: "0" },
    "io.modelcontextprotocol/clientCapabilities": capabilities,
  };
}

/** Parses a JSON or SSE response body into the JSON-RPC messages it carries. */
export async function messagesOf(res: Response): Promise<Record<string, unknown>[]> {
  const text = await res.text();
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    return text.split("\n").filter((l) => l.startsWith("data: ")).map((l) =>
      JSON.parse(l.slice(6))
    );
  }
  return text.trim() === "" ? [] : [JSON.parse(text)];
}

/** Sends one raw modern request (headers mirror the body) and returns status and messages. */
export async function modernRequest(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  options: {
    id?: number | string;
    headers?: Record<string, string>;
    capabilities?: Record<string, unknown>;
    /** How to send it (default: the global fetch; an in-process handler's fetch for no socket). */
    fetch?: (url: string, init: RequestInit) => Promise<Response>;
  } = {},
): Promise<{ status: number; headers: Headers; messages: Record<string, unknown>[] }> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
  };
  if (method === "tools/call") {
    headers["mcp-name"] = String(params.name);
    // Mirror the tool-defined header (x-mcp-header "Path") like a conforming client does.
    const path = (params.arguments as { path?: unknown } | undefined)?.path;
    if (PATH_HEADER_TOOLS.has(String(params.name)) && typeof path === "string") {
      headers["mcp-param-path"] = path;
    }
  }
  const res = await (options.fetch ?? fetch)(url, {
    method: "POST",
    headers: { ...headers, ...(options.headers ?? {}) },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: options.id ?? 1,
      method,
      params: {
        ...params,
        _meta: { ...envelope(options.capabilities), ...(params._meta as object ?? {}) },
      },
    }),
  });
  return { status: res.status, headers: res.headers, messages: await messagesOf(res) };
}

/**
 * `cli.ts serve stop --pid-file F [args]` with just the permissions it needs: read on `read`
 * (the pid file or its directory), loopback net, `kill`, and the uid for the owner check.
 */
export function serveStopCommand(
  pidFile: string,
  options: { read: string[]; args?: string[]; env?: Record<string, string> },
): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: cliArgv([
      "--quiet",
      "--no-prompt",
      `--allow-read=${options.read.join(",")}`,
      "--allow-net=127.0.0.1",
      "--allow-run=kill",
      "--allow-sys=uid",
    ], [
      "serve",
      "stop",
      "--pid-file",
      pidFile,
      ...(options.args ?? []),
    ]),
    env: options.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

/** A stdio server's input: newline-delimited JSON-RPC, with the legacy-era handshake ready made. */
export interface StdioInput {
  /** Writes one message. */
  send(message: unknown): Promise<void>;
  /** Sends initialize (2025-11-25) and notifications/initialized. */
  initialize(): Promise<void>;
  /** Closes the server's stdin. */
  close(): Promise<void>;
}

/** Wraps a child's stdin for newline-delimited JSON-RPC. */
export function stdioInput(stdin: WritableStream<Uint8Array>): StdioInput {
  const w = stdin.getWriter();
  const enc = new TextEncoder();
  const send = (m: unknown) =>
    w.write(enc.encode((typeof m === "string" ? m : JSON.stringify(m)) + "\n"));
  return {
    send,
    async initialize() {
      await send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "t", version: "0" },
        },
      });
      await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    },
    close: () => w.close(),
  };
}

/**
 * Polls `cond` every 25 ms until it holds or `ms` (a generous bound, default 10 s) has passed;
 * returns whether it holds at the end.
 */
export async function until(cond: () => boolean, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  return cond();
}

/** The server's JSON log events (its stderr lines that are JSON objects) about one tool. */
export function events(stderr: string, tool: string): Record<string, unknown>[] {
  return stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      return {};
    }
  }).filter((e) => e.tool === tool);
}
