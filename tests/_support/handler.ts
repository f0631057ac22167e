/**
 * The HTTP handler in process: createHttpHandler served through `handler.fetch(new Request(...))`,
 * no socket, for tests of guards, status codes, headers, JSON-RPC results and sessions. Tests of
 * socket behaviour (floods, slow bodies, binding, ready lines, signals, real SDK clients) keep
 * real servers on 127.0.0.1 (tests/server/_harness.ts).
 */
import { Workspace } from "../../mod.ts";
import {
  createHttpHandler,
  type HttpHandler,
  type HttpHandlerOptions,
} from "../../src/server/http.ts";
import { makeTree, removeDir } from "./fs.ts";

/** The endpoint URL of an in-process handler: a loopback name, never bound. */
export const IN_PROCESS_URL = "http://127.0.0.1:8000/mcp";

/** A fetch-like function that serves every request through one handler, in process. */
export type InProcessFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * Serves requests through handler.fetch with the headers a socket client (Deno's fetch) would
 * have sent: Host from the URL, `Accept: *\/*`, and Content-Length of a string body.
 */
export function inProcessFetch(handler: HttpHandler): InProcessFetch {
  return (input, init = {}) => {
    const url = new URL(input);
    const headers = new Headers(init.headers);
    if (!headers.has("host")) headers.set("host", url.host);
    if (!headers.has("accept")) headers.set("accept", "*/*");
    if (typeof init.body === "string" && !headers.has("content-length")) {
      headers.set("content-length", String(new TextEncoder().encode(init.body).length));
    }
    return handler.fetch(new Request(url, { ...init, headers }));
  };
}

/** One in-process server: the handler, its URL and a fetch that reaches it. */
export interface InProcessServer {
  handler: HttpHandler;
  /** The endpoint's URL (IN_PROCESS_URL); its origin serves /healthz and the other routes. */
  url: string;
  /** Sends a request to the handler (see inProcessFetch). */
  fetch: InProcessFetch;
  /** The workspace root, when withHandler made one. */
  root?: string;
}

/** Options of withHandler: the handler's own, plus the workspace it makes when given none. */
export interface WithHandlerOptions extends HttpHandlerOptions {
  /** Files of the temporary workspace made when neither workspace nor definition is given. */
  files?: Record<string, string>;
  /** Open that workspace writable (like `serve_http.ts --write`). */
  write?: boolean;
}

/** A handler made by openHandler, with what disposes of it. */
interface Opened {
  handler: HttpHandler;
  root?: string;
  dispose(): Promise<void>;
}

/** Creates the handler (and, without workspace or definition, a temporary workspace). */
async function openHandler(options: WithHandlerOptions): Promise<Opened> {
  const { files, write, ...handlerOptions } = options;
  let root: string | undefined;
  let made: Workspace | undefined;
  if (handlerOptions.workspace === undefined && handlerOptions.definition === undefined) {
    root = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-srv-" }));
    await makeTree(root, files ?? { "hello.txt": "hi there\n" });
    made = await Workspace.open({ root, writable: write ?? false });
    handlerOptions.workspace = made;
  }
  const handler = createHttpHandler(handlerOptions);
  return {
    handler,
    root,
    async dispose() {
      await handler.close();
      // The workspace's worker pool goes with it (its workers are unref'd; closed is tidier).
      made?.engine.close();
      if (root !== undefined) await removeDir(root);
    },
  };
}

/**
 * Runs body with an in-process handler; closes it (and removes the workspace it made) afterwards.
 * Without workspace or definition it serves a fresh temporary workspace holding `files`
 * (default: hello.txt), with the default limits, like serve_http.ts on that directory.
 */
export async function withHandler(
  options: WithHandlerOptions,
  body: (server: InProcessServer) => Promise<void>,
): Promise<void> {
  const { handler, root, dispose } = await openHandler(options);
  try {
    await body({ handler, url: IN_PROCESS_URL, fetch: inProcessFetch(handler), root });
  } finally {
    await dispose();
  }
}

/** A handler bound with Deno.serve on 127.0.0.1 (a free port), for tests of socket behaviour. */
export interface LoopbackServer {
  handler: HttpHandler;
  /** The endpoint's URL on the bound port. */
  url: string;
  port: number;
  /** The workspace root, when withLoopbackServer made one. */
  root?: string;
}

/**
 * Like withHandler, but served over a real socket on 127.0.0.1: the handler is closed first (so
 * open streams end), then the listener is shut down.
 */
export async function withLoopbackServer(
  options: WithHandlerOptions,
  body: (server: LoopbackServer) => Promise<void>,
): Promise<void> {
  const { handler, root, dispose } = await openHandler(options);
  let server: Deno.HttpServer<Deno.NetAddr> | undefined;
  try {
    server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler.fetch);
    const port = server.addr.port;
    await body({ handler, url: `http://127.0.0.1:${port}/mcp`, port, root });
  } finally {
    await dispose();
    await server?.shutdown();
  }
}
