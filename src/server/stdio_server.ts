/**
 * The stdio MCP server on one workspace, as a function: line framing under the request cap
 * (stdio_lines.ts), the SDK's stdio transport, and the server factory. serve_stdio.ts calls it
 * with the process's stdin/stdout; an embedder may pass any Node streams (pipes, sockets).
 */
import process from "node:process";
import type { Readable, Writable } from "node:stream";
import { serveStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import type { Workspace } from "../workspace/workspace.ts";
import { requestCapFor } from "../workspace/message_limits.ts";
import { createServerFactory, DEFAULT_PAGE_SIZE } from "./factory.ts";
import { type OversizeLine, stdioLineFilter } from "./stdio_lines.ts";
import { createFastPath } from "./fast_path.ts";
import { createStdioFast } from "./stdio_fast.ts";

/** Options of {@linkcode startStdioServer}. */
export interface StdioServerOptions {
  /** The workspace served (its limits set the request cap). */
  workspace: Workspace;
  /** Page size of the lists (tools/list and the others). Default 50. */
  pageSize?: number;
  /** Where requests arrive, one JSON-RPC message per line. Default: the process's stdin. */
  input?: Readable;
  /** Where responses go; nothing else is written to it. Default: the process's stdout. */
  output?: Writable;
  /** Receives log lines (a refused oversize message, an out-of-band error). Default: stderr. */
  log?: (line: string) => void;
  /**
   * Whether the fast path (fast_path.ts, stdio_fast.ts) answers the common modern requests
   * (default true); false sends every line to the SDK. Internal, for the differential tests.
   * @ignore
   */
  fastPath?: boolean;
}

/** A running stdio server. */
export interface StdioServer {
  /** Closes the connection (the server and its transport); in-flight calls are aborted. */
  close(): Promise<void>;
  /**
   * How many requests the fast path answered (for the differential tests).
   * @ignore
   */
  fastPathTaken(): number;
}

/**
 * Serves MCP over a pair of streams (the process's stdio unless given). A line over the request
 * cap (6 x maxWriteBytes + 64 KiB) is answered with a -32600 error for its id and the connection
 * stays open. The server ends when `input` ends or `close()` is called.
 *
 * @example Serve a workspace over in-memory streams
 * ```ts
 * import { PassThrough } from "node:stream";
 * import { startStdioServer, Workspace } from "@wmcp/wmcp";
 *
 * const workspace = await Workspace.open({ root: "." });
 * const input = new PassThrough();
 * const output = new PassThrough();
 * const server = startStdioServer({ workspace, input, output });
 * input.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) + "\n");
 * await server.close();
 * ```
 */
export function startStdioServer(options: StdioServerOptions): StdioServer {
  const { workspace } = options;
  const log = options.log ?? ((line: string) => console.error(line));
  const output = options.output ?? process.stdout;
  // Lines over the request cap fail alone (a -32600 error for their id) instead of reaching the
  // SDK's buffer cap, which would close the connection; that cap stays as a backstop above ours.
  const maxLineBytes = requestCapFor(workspace.limits);
  const onOversize = ({ id, size }: OversizeLine) => {
    const message = `Message of ${size} bytes over ${maxLineBytes} bytes, the request cap`;
    log(
      `wmcp: refused ${
        id === undefined ? "a message without an id" : `request ${JSON.stringify(id)}`
      }: ${message}`,
    );
    if (id === undefined) return;
    transport.send({ jsonrpc: "2.0", id, error: { code: -32600, message } }).catch(() => {});
  };
  const factory = createServerFactory({
    workspace,
    pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE,
  });
  // The fast path answers what it takes of each line before the SDK sees it (stdio_fast.ts).
  const fast = options.fastPath === false ? undefined : createStdioFast(
    createFastPath(factory.fast),
    { write: (line) => void output.write(line) },
  );
  const lines = (options.input ?? process.stdin).pipe(
    stdioLineFilter({ maxLineBytes, onOversize }),
  );
  const input = fast === undefined ? lines : lines.pipe(fast.filter);
  const transport = new StdioServerTransport(input, output, {
    maxBufferSize: 2 * (maxLineBytes + 1),
  });
  const handle = serveStdio(
    factory,
    { transport, onerror: (err) => log(`wmcp: ${err.message}`) },
  );
  return {
    close: () => {
      fast?.close();
      return handle.close();
    },
    fastPathTaken: () => fast?.taken() ?? 0,
  };
}
