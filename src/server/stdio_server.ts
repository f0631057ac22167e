/**
 * The stdio MCP server on one workspace, as a function: line framing under the request cap
 * (stdio_lines.ts), the fast path (stdio_fast.ts), the SDK's stdio transport, and the server
 * factory. serve_stdio.ts calls it with the process's stdin/stdout: on Deno, stdin is then read in
 * a plain loop and only lines the fast path does not answer reach a stream; an embedder may pass
 * any Node streams (pipes, sockets), which are framed by a Transform.
 */
import process from "node:process";
import { Buffer } from "node:buffer";
import { PassThrough, type Readable, Writable } from "node:stream";
import { serveStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import type { Workspace } from "../workspace/workspace.ts";
import { requestCapFor } from "../workspace/message_limits.ts";
import { ClientRoots } from "./client_roots.ts";
import { createServerFactory, DEFAULT_PAGE_SIZE } from "./factory.ts";
import { LineFramer, type OversizeLine, stdioLineFilter } from "./stdio_lines.ts";
import { createFastPath } from "./fast_path.ts";
import { createStdioFast, type StdioFast } from "./stdio_fast.ts";
import type { EarlyHandover, Suppressor } from "./stdio_early.ts";

/** Options of {@linkcode startStdioServer}. */
export interface StdioServerOptions {
  /** The workspace served (its limits set the request cap). */
  workspace: Workspace;
  /**
   * Serve the client's roots when it declares the `roots` capability (initialization era):
   * asked with roots/list after initialize and again on each list_changed, each checked, the
   * unusable ones skipped with a warning; `workspace` is served until then and to a client that
   * declares none (decision 0065). Default false: `workspace` only.
   */
  clientRoots?: boolean;
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
  /**
   * The stdio entry's first answers (stdio_early.ts): the process's stdin from its first byte
   * (read from here on instead of stdin), and the server's answers to drop (given already).
   * Internal, for serve_stdio.ts.
   * @ignore
   */
  early?: EarlyHandover;
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
    clientRoots: options.clientRoots === true ? new ClientRoots(workspace, log) : undefined,
    pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE,
  });
  // Answers to lines the entry answered already are dropped, the fast path's and the SDK's.
  const suppressor = options.early?.suppressor;
  const sdkOutput = suppressor === undefined ? output : suppressed(output, suppressor);
  // The fast path answers what it takes of each line before the SDK sees it (stdio_fast.ts).
  const fast = options.fastPath === false ? undefined : createStdioFast(
    createFastPath(factory.fast),
    { write: (line) => void (suppressor?.drop(line) || output.write(line)) },
  );
  const stdin = options.early?.input ?? (options.input === undefined ? directStdin() : undefined);
  const input = stdin !== undefined
    ? readStdinDirectly(stdin, { maxLineBytes, onOversize, fast })
    : framedInput(options.input ?? process.stdin, { maxLineBytes, onOversize, fast });
  const transport = new StdioServerTransport(input, sdkOutput, {
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

/** How the input is framed and served: the cap, its report, and the fast path if on. */
interface Framing {
  maxLineBytes: number;
  onOversize: (line: OversizeLine) => void;
  fast: StdioFast | undefined;
}

/** A caller's Node stream: framed by a Transform, then the fast path's filter, then the SDK. */
function framedInput(source: Readable, f: Framing): Readable {
  const lines = source.pipe(stdioLineFilter(f));
  return f.fast === undefined ? lines : lines.pipe(f.fast.filter);
}

/** The process's stdin as Deno gives it, when this runs on Deno (not under Node or Bun). */
function directStdin(): { read(buffer: Uint8Array): Promise<number | null> } | undefined {
  const deno = (globalThis as { Deno?: { stdin?: { read?: unknown } } }).Deno;
  return typeof deno?.stdin?.read === "function" ? deno.stdin as never : undefined;
}

const READ_BYTES = 64 * 1024;
const NEWLINE = new Uint8Array([10]);

/**
 * The process's stdin read in a plain loop (no Node streams, issue 21 §2): each read chunk is
 * framed at once; a line the fast path answers never reaches a stream, and every other line goes
 * on, in order, through one PassThrough that the SDK's transport reads. The end of stdin ends it.
 */
function readStdinDirectly(
  stdin: { read(buffer: Uint8Array): Promise<number | null> },
  f: Framing,
): Readable {
  const toSdk = new PassThrough();
  const forward = (line: Uint8Array) => void toSdk.write(Buffer.concat([line, NEWLINE]));
  const framer = new LineFramer({
    maxLineBytes: f.maxLineBytes,
    onOversize: f.onOversize,
    onLine: f.fast === undefined ? forward : (line) => f.fast!.serveLine(line, forward),
  });
  (async () => {
    const buffer = new Uint8Array(READ_BYTES);
    try {
      for (let n = await stdin.read(buffer); n !== null; n = await stdin.read(buffer)) {
        framer.push(buffer.subarray(0, n));
      }
    } catch {
      // stdin closed under the read (the process is ending): treated as its end
    }
    const rest = framer.end();
    if (rest !== undefined) toSdk.write(Buffer.from(rest)); // a last line without its newline
    f.fast?.ended();
    toSdk.end();
  })();
  return toSdk;
}

/** `output` without the lines the suppressor drops (each write is one message line). */
function suppressed(output: Writable, suppressor: Suppressor): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      if (suppressor.drop(String(chunk))) return done();
      output.write(chunk, (err?: Error | null) => done(err));
    },
  });
}
