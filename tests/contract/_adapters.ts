/**
 * The five adapters of the contract table: each runs a case against a fresh copy of the
 * case's fixture and reports the raw outcome plus the files on disk afterwards.
 *
 * - library and CLI: a fresh workspace root per case (`<tmp>/<case>/ws`), paths as written; the
 *   CLI in process for the table, as a real child for a sample (cliAdapter);
 * - stdio and HTTP: one server per configuration on `<tmp>/<config>/ws`, each case in its
 *   own subdirectory `<tmp>/<config>/ws/<adapter>-<n>`, its paths prefixed with it (the
 *   prefix is stripped from results before comparison). Known disagreements run last.
 *
 * Every workspace root is named `ws` and every configuration's outside directory holds
 * `secret.txt`, so results that name the root or an escape are the same everywhere. A
 * configuration with a second root (`readOnlyRoot`) has it beside the first, named `second`
 * (`<tmp>/<case>/second`, or `<tmp>/<config>/second` shared with a subdirectory per case); the
 * roots and the case's directories in them, which results and messages show absolute, are
 * compared as `<root>` and `<second>` (CaseRun.places).
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { runOperation, Workspace, WorkspaceError } from "../../mod.ts";
import { type HttpServerProcess, SERVE_STDIO, startHttpServer } from "../server/_harness.ts";
import { serverPermissions } from "../../src/cli/server_permissions.ts";
import {
  type AdapterName,
  type Case,
  type ConfigName,
  CONFIGS,
  materialize,
  type Outcome,
  type Paths,
  type Snapshot,
  snapshot,
} from "./_model.ts";
import { runCli } from "../_support/cli.ts";
import { runInProcess } from "../_support/in_process.ts";

/** Content of the file outside every workspace. */
export const OUTSIDE_SNAPSHOT: Snapshot = { "secret.txt": "secret\n" };

/** A case's directory in the second root (configurations with `readOnlyRoot`). */
export interface SecondRun {
  /** The second root, absolute. */
  root: string;
  /** The case's directory in it, absolute. */
  dir: string;
  /** That directory afterwards. */
  after: Snapshot;
}

/** What one adapter saw for one case. */
export interface CaseRun {
  outcome: Outcome;
  /** Prefix to strip from results (shared-root adapters), else null. */
  prefix: string | null;
  /**
   * Absolute spellings to replace before comparison (NormalizeOptions.places): with a second
   * root, the case's directory in each root and the roots themselves, as `<root>` and `<second>`;
   * else none.
   */
  places: [string, string][];
  /** The case's directory in the second root, or null (one root). */
  second: SecondRun | null;
  /** The case directory afterwards. */
  after: Snapshot;
  /** The outside directory afterwards. */
  outsideAfter: Snapshot;
  /** Absolute paths of the workspace root and the outside directory, and the arguments sent. */
  root: string;
  outside: string;
  args: Record<string, unknown>;
}

/** A running adapter: run cases, then close. */
export interface Adapter {
  name: AdapterName;
  run(c: Case, index: number): Promise<CaseRun>;
  close(): Promise<void>;
}

/** The write operations: their cases run read-write unless they say otherwise. */
const WRITE_OPERATIONS = [
  "write_file",
  "edit_file",
  "create_directory",
  "move_path",
  "copy_path",
  "delete_path",
];

/** The configuration a case runs in. */
export function configOf(c: Case): ConfigName {
  if (c.config) return c.config;
  return WRITE_OPERATIONS.includes(c.op) ? "rw" : "ro";
}

function limitFlags(config: ConfigName): string[] {
  return Object.entries(CONFIGS[config].limits).flatMap(([k, v]) => ["--limit", `${k}=${v}`]);
}

async function realTemp(prefix: string): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix }));
}

async function makeOutside(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/secret.txt`, "secret\n");
}

const absIn = (dir: string) => (rel: string) => rel === "." ? dir : `${dir}/${rel}`;

function pathsFor(
  dir: string,
  prefix: string | null,
  outside: string,
  second: SecondSite | null,
): Paths {
  const p =
    ((rel: string) => prefix === null ? rel : rel === "." ? prefix : `${prefix}/${rel}`) as Paths;
  p.abs = absIn(dir);
  p.out = (rel: string) => `${outside}/${rel}`;
  p.second = second === null
    ? () => {
      throw new Error("p.second: this case's configuration has one root");
    }
    : absIn(second.dir);
  return p;
}

/** A case's directory in the second root. */
interface SecondSite {
  root: string;
  dir: string;
}

/** A case site: where its fixture lives and how its paths are spelled. */
interface Site {
  root: string;
  dir: string;
  outside: string;
  prefix: string | null;
  second: SecondSite | null;
  paths: Paths;
}

/** Makes a case's directories (the case directory, and in the second root its own) and fixtures. */
async function makeSite(
  c: Case,
  where: { root: string; dir: string; outside: string; prefix: string | null },
  second: SecondSite | null,
): Promise<Site> {
  await Deno.mkdir(where.dir, { recursive: true });
  await materialize(where.dir, c.fixture ?? {}, where.outside);
  if (second !== null) {
    await Deno.mkdir(second.dir, { recursive: true });
    await materialize(second.dir, c.second ?? {}, where.outside, where.dir);
  } else if (c.second !== undefined) {
    throw new Error(`${c.name}: a second-root fixture in a configuration with one root`);
  }
  return { ...where, second, paths: pathsFor(where.dir, where.prefix, where.outside, second) };
}

/**
 * A fresh root per case: `<base>/<id>/ws` with `<base>/<id>/outside` beside it (and
 * `<base>/<id>/second`, the second root, when the configuration has one).
 */
async function ownRootSite(base: string, id: string, c: Case): Promise<Site> {
  const root = `${base}/${id}/ws`;
  const outside = `${base}/${id}/outside`;
  await makeOutside(outside);
  const secondRoot = `${base}/${id}/second`;
  const second = CONFIGS[configOf(c)].readOnlyRoot ? { root: secondRoot, dir: secondRoot } : null;
  return await makeSite(c, { root, dir: root, outside, prefix: null }, second);
}

/** A subdirectory of a shared root (and of the shared second root, when there is one). */
async function sharedSite(shared: SharedRoot, id: string, c: Case): Promise<Site> {
  const { root, outside } = shared;
  const second = shared.second === null
    ? null
    : { root: shared.second, dir: `${shared.second}/${id}` };
  return await makeSite(c, { root, dir: `${root}/${id}`, outside, prefix: id }, second);
}

async function finish(
  site: Site,
  args: Record<string, unknown>,
  outcome: Outcome,
): Promise<CaseRun> {
  const { second } = site;
  return {
    outcome,
    prefix: site.prefix,
    // The case's directories first: a shared root's case directory lies below the root.
    places: second === null ? [] : [
      [site.dir, "<root>"],
      [second.dir, "<second>"],
      [site.root, "<root>"],
      [second.root, "<second>"],
    ],
    after: await snapshot(site.dir, site.outside),
    second: second === null
      ? null
      : { ...second, after: await snapshot(second.dir, site.outside, site.dir) },
    outsideAfter: await snapshot(site.outside, site.outside),
    root: site.root,
    outside: site.outside,
    args,
  };
}

function errorOutcome(e: Record<string, unknown>): Outcome {
  return {
    kind: "error",
    error: e as { code: string; message: string; argument?: string; details?: unknown },
  };
}

// ---------------------------------------------------------------------------------------
// (1) library

/** runOperation on a Workspace opened in-process. */
export async function libraryAdapter(): Promise<Adapter> {
  const base = await realTemp("wmcp-contract-lib-");
  return {
    name: "library",
    async run(c, index) {
      const site = await ownRootSite(base, `lib-${index}`, c);
      const cfg = CONFIGS[configOf(c)];
      const ws = await Workspace.open({
        roots: [
          { path: site.root },
          ...(site.second === null ? [] : [{ path: site.second.root, readOnly: true }]),
        ],
        writable: cfg.write,
        limits: cfg.limits,
      });
      const args = c.args(site.paths);
      let outcome: Outcome;
      try {
        const value = await runOperation({ workspace: ws }, c.op, args);
        outcome = { kind: "result", value: JSON.parse(JSON.stringify(value)) };
      } catch (err) {
        outcome = err instanceof WorkspaceError
          ? errorOutcome(JSON.parse(JSON.stringify(err.toJSON())))
          : { kind: "other", detail: String((err as Error)?.stack ?? err) };
      }
      return await finish(site, args, outcome);
    },
    close: () => Deno.remove(base, { recursive: true }),
  };
}

// ---------------------------------------------------------------------------------------
// (2) CLI fallback

/** What one CLI run produced: its exit code and both streams. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** One case through the CLI: what the table compares, and the run's exit code and streams. */
export interface CliCaseRun extends CaseRun {
  raw: CliRun;
}

/** The CLI adapter: its runs carry the exit code and streams too. */
export interface CliAdapter extends Adapter {
  run(c: Case, index: number): Promise<CliCaseRun>;
}

/**
 * The outcome a CLI run reports: one JSON line on stdout and nothing on stderr with exit 0; one
 * JSON error object on stderr and nothing on stdout with exit 1 or 2 (2 with INVALID_ARGUMENT:
 * refused by the input schema, decision 0028; 2 with USAGE: a usage error).
 */
function cliOutcome(out: CliRun): Outcome {
  const { stdout, stderr } = out;
  try {
    if (out.code === 0) {
      if (stderr !== "") throw new Error(`exit 0 with stderr: ${stderr}`);
      if (!stdout.endsWith("\n") || stdout.trim().includes("\n")) {
        throw new Error(`stdout is not one JSON line: ${stdout}`);
      }
      return { kind: "result", value: JSON.parse(stdout) };
    }
    if (out.code === 1 || out.code === 2) {
      if (stdout !== "") throw new Error(`exit ${out.code} with stdout: ${stdout}`);
      const { error } = JSON.parse(stderr) as { error: Record<string, unknown> };
      if (out.code === 2 && error.code !== "INVALID_ARGUMENT") {
        if (error.code !== "USAGE") throw new Error(`exit 2 but code ${error.code}`);
        return { kind: "usage", detail: String(error.message) };
      }
      if (typeof error.message !== "string") throw new Error(`no message: ${stderr}`);
      return errorOutcome(error);
    }
    throw new Error(`exit ${out.code}: ${stderr}`);
  } catch (err) {
    return { kind: "other", detail: `CLI: ${(err as Error).message}` };
  }
}

/**
 * `op NAME --root DIR [--read-only-root DIR] [--write] [--limit ...]` for a case: the arguments
 * after the command.
 */
function opArgs(c: Case, site: Site): string[] {
  const config = configOf(c);
  const write = CONFIGS[config].write;
  return [
    "op",
    c.op,
    "--root",
    site.root,
    ...secondRootFlags(site.second?.root ?? null),
    ...(write ? ["--write"] : []),
    ...limitFlags(config),
  ];
}

/** `--read-only-root DIR` for a second root, or nothing. */
function secondRootFlags(second: string | null): string[] {
  return second === null ? [] : ["--read-only-root", second];
}

/**
 * The CLI fallback: `cli.ts op NAME --arguments JSON --root DIR [--write] [--limit ...]`.
 *
 * `in-process` (the table): the CLI's `main(argv)` in the test's process
 * (tests/_support/in_process.ts), its exit code and both streams captured exactly as a real run's,
 * so every case still goes through the CLI's code, output contract and exit codes (decision 0052).
 * `child` (a sample, the anchor): a real `cli.ts` child with read (and, with --write, write)
 * permission on the root only, as the `cli` task's scoped child holds them; large arguments go
 * through stdin, since the kernel caps one argv string (128 KiB).
 */
export async function cliAdapter(
  via: "in-process" | "child" = "in-process",
): Promise<CliAdapter> {
  const base = await realTemp(`wmcp-contract-cli-${via}-`);
  return {
    name: "cli",
    async run(c, index) {
      const site = await ownRootSite(base, `cli-${index}`, c);
      const args = c.args(site.paths);
      const json = JSON.stringify(args);
      let out: CliRun;
      if (via === "in-process") {
        const { code, stdout, stderr } = await runInProcess(
          [...opArgs(c, site), "--arguments", json],
          { cwd: site.root },
        );
        out = { code, stdout, stderr };
      } else {
        // As the `cli` task runs it: --quiet keeps Deno's own notices (such as "Blocking
        // waiting for file lock on node_modules") off the stderr that carries errors.
        const perms = ["--quiet", "--no-prompt", readFlag(site.root, site.second?.root ?? null)];
        if (CONFIGS[configOf(c)].write) perms.push(`--allow-write=${site.root}`);
        const viaStdin = json.length > 64 * 1024;
        out = await runCli(perms, [
          ...opArgs(c, site),
          ...(viaStdin ? ["--arguments-stdin"] : ["--arguments", json]),
        ], {
          cwd: site.root,
          stdin: viaStdin ? json : undefined,
          // No deadline of its own before the split either: the suite's bound is generous.
          timeoutMs: 10 * 60_000,
        });
      }
      return { ...await finish(site, args, cliOutcome(out)), raw: out };
    },
    close: () => Deno.remove(base, { recursive: true }),
  };
}

// ---------------------------------------------------------------------------------------
// MCP clients (3-5)

/** One content block as the clients hand it over. */
interface Block {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  resource?: { uri?: string; mimeType?: string; blob?: string };
}

/** The media block read_media must send for a MIME type. */
function mediaType(mimeType: string): string {
  return mimeType.startsWith("image/")
    ? "image"
    : mimeType.startsWith("audio/")
    ? "audio"
    : "resource";
}

/**
 * Why a success result's content blocks are not what a model must read, or null. The typed
 * result is structuredContent; the content is checked against it, tool by tool.
 */
function contentProblem(name: string, sc: Record<string, unknown>, blocks: Block[]): string | null {
  const texts = blocks.filter((b) => b.type === "text").map((b) => b.text ?? "");
  if (name === "read_media") {
    const media = blocks.filter((b) => b.type !== "text");
    const mime = String(sc.mimeType);
    if (media.length !== 1) return `read_media: ${media.length} media blocks`;
    const [m] = media;
    if (m.type !== mediaType(mime)) return `read_media: a ${m.type} block for ${mime}`;
    const blockMime = m.type === "resource" ? m.resource?.mimeType : m.mimeType;
    if (blockMime !== mime) return `read_media: block MIME ${blockMime}, result ${mime}`;
    if (m.type === "resource") {
      const path = String(sc.path).split("/").map(encodeURIComponent).join("/");
      if (m.resource?.uri !== `wmcp://workspace/${path}`) {
        return `read_media: resource URI ${m.resource?.uri}`;
      }
    }
    if ("data" in sc) return "read_media: data in structuredContent";
    return texts.length <= 1 ? null : `read_media: ${texts.length} text blocks`;
  }
  if (blocks.length !== 1 || texts.length !== 1) {
    return `${blocks.length} blocks, expected one text`;
  }
  const [text] = texts;
  if (/^\s*[{[]"/.test(text)) return "the text block is JSON";
  const lines = text.split("\n");
  switch (name) {
    case "read_file": {
      const body = text.slice(text.indexOf("\n") + 1);
      if (!lines[0].startsWith(`[${sc.path}, `)) return `read_file header: ${lines[0]}`;
      return body === sc.content
        ? null
        : "read_file: the text after the header is not the file text";
    }
    case "search_text": {
      const matches = sc.matches as { path: string; line: number; column: number }[];
      for (const m of matches) {
        if (!lines.some((l) => l.startsWith(`${m.path}:${m.line}:${m.column}: `))) {
          return `search_text: no line for ${m.path}:${m.line}`;
        }
      }
      return /\.$/.test(lines.at(-1)!) ? null : `search_text: no summary line`;
    }
    case "list_directory":
    case "find_files": {
      const entries = (sc.entries ?? sc.matches) as { path: string; type: string }[];
      for (const [i, e] of entries.entries()) {
        const want = e.type === "directory" ? `${e.path}/` : e.path;
        if (!lines[i]?.startsWith(want)) return `${name}: line ${i} is ${lines[i]}, not ${want}`;
      }
      if (typeof sc.nextCursor === "string" && !text.includes(sc.nextCursor)) {
        return `${name}: the cursor is not in the text`;
      }
      return null;
    }
    default:
      return text.trim() === "" ? "empty text" : null;
  }
}

/** Maps a tools/call result (or the error it threw) to an outcome, checking presentation. */
async function callOutcome(client: Client, name: string, args: unknown): Promise<Outcome> {
  let r;
  try {
    r = await client.callTool({ name, arguments: args as Record<string, unknown> });
  } catch (err) {
    const msg = (err as Error).message ?? String(err);
    const code = (err as { code?: unknown }).code;
    // What both servers answer for a tool they do not list: JSON-RPC -32602 naming it.
    if (code === -32602 && msg.includes(`Tool ${name} not found`)) {
      return { kind: "unknownTool", detail: `ProtocolError ${code}: ${msg}` };
    }
    return { kind: "other", detail: `threw ${code ?? ""}: ${msg}` };
  }
  const blocks = (r.content ?? []) as Block[];
  const sc = r.structuredContent as Record<string, unknown> | undefined;
  if (r.isError === true) {
    // An error result: no structuredContent, one text block "<CODE>: ...", the typed error
    // in _meta["wmcp/error"].
    const error = (r._meta as Record<string, unknown> | undefined)?.["wmcp/error"] as
      | Record<string, unknown>
      | undefined;
    if (sc !== undefined) return { kind: "other", detail: "error result with structuredContent" };
    if (error === undefined) return { kind: "other", detail: "isError without _meta[wmcp/error]" };
    if (typeof error.message !== "string") return { kind: "other", detail: "no error message" };
    const text = blocks.length === 1 && blocks[0].type === "text" ? blocks[0].text : undefined;
    if (
      text === undefined || !text.startsWith(`${error.code}: `) || !text.includes(error.message)
    ) {
      return { kind: "other", detail: `error text block: ${JSON.stringify(blocks)}` };
    }
    return errorOutcome(error);
  }
  if (sc === undefined) return { kind: "other", detail: `no structuredContent` };
  const problem = contentProblem(name, sc, blocks);
  if (problem !== null) return { kind: "other", detail: `content: ${problem}` };
  if (name !== "read_media") return { kind: "result", value: sc };
  // The payload travels once, in the media block: the typed result gets its data back from it.
  const media = blocks.find((b) => b.type !== "text")!;
  return { kind: "result", value: { ...sc, data: media.data ?? media.resource?.blob } };
}

/**
 * The read flag a server (or `op`) on these roots needs, as serverPermissions computes it: every
 * root, and the engine's modules (its worker pool).
 */
function readFlag(root: string, second: string | null): string {
  return serverPermissions("stdio", ["--root", root, ...secondRootFlags(second)])
    .find((f) => f.startsWith("--allow-read="))!;
}

function stdioArgs(shared: SharedRoot, config: ConfigName): string[] {
  const { write } = CONFIGS[config];
  const { root, second } = shared;
  return [
    "run",
    "--quiet",
    "--no-prompt",
    readFlag(root, second),
    ...(write ? [`--allow-write=${root}`] : []),
    SERVE_STDIO,
    "--root",
    root,
    ...secondRootFlags(second),
    ...(write ? ["--write"] : []),
    ...limitFlags(config),
  ];
}

/** A configuration's shared root, its outside directory and its second root (or null). */
interface SharedRoot {
  root: string;
  outside: string;
  second: string | null;
}

async function sharedRoots(base: string, configs: ConfigName[]) {
  const roots = new Map<ConfigName, SharedRoot>();
  for (const config of configs) {
    const root = `${base}/${config}/ws`;
    const outside = `${base}/${config}/outside`;
    const second = CONFIGS[config].readOnlyRoot ? `${base}/${config}/second` : null;
    await Deno.mkdir(root, { recursive: true });
    if (second !== null) await Deno.mkdir(second);
    await makeOutside(outside);
    roots.set(config, { root, outside, second });
  }
  return roots;
}

/**
 * Lists the tools once after connecting: it fills the client's tools/list cache, from
 * which a modern client mirrors `x-mcp-header` arguments into Mcp-Param-* headers and
 * validates structuredContent against each tool's outputSchema.
 */
async function primeToolCache(client: Client): Promise<void> {
  await client.listTools();
}

/** (3) The stdio server, one process per configuration, v2 client in auto (modern) mode. */
export async function stdioAdapter(
  configs: ConfigName[],
): Promise<Adapter & { clients: Map<ConfigName, Client> }> {
  const base = await realTemp("wmcp-contract-stdio-");
  const roots = await sharedRoots(base, configs);
  const clients = new Map<ConfigName, Client>();
  try {
    await Promise.all(configs.map(async (config) => {
      const client = new Client({ name: "contract-stdio", version: "0" }, {
        versionNegotiation: { mode: "auto", probe: { timeoutMs: 10_000 } },
      });
      await client.connect(
        new StdioClientTransport({
          command: Deno.execPath(),
          args: stdioArgs(roots.get(config)!, config),
          stderr: "pipe",
        }),
      );
      clients.set(config, client);
      if (client.getProtocolEra() !== "modern") {
        throw new Error(`stdio: expected the modern era, got ${client.getProtocolEra()}`);
      }
      await primeToolCache(client);
    }));
  } catch (err) {
    await Promise.all([...clients.values()].map((c) => c.close()));
    await Deno.remove(base, { recursive: true });
    throw err;
  }
  return {
    name: "stdio",
    clients,
    async run(c, index) {
      const config = configOf(c);
      const site = await sharedSite(roots.get(config)!, `stdio-${index}`, c);
      const args = c.args(site.paths);
      return await finish(site, args, await callOutcome(clients.get(config)!, c.op, args));
    },
    async close() {
      await Promise.all([...clients.values()].map((c) => c.close()));
      await Deno.remove(base, { recursive: true });
    },
  };
}

/** The HTTP servers (one per configuration) that adapters (4) and (5) share. */
export interface HttpServers {
  servers: Map<ConfigName, HttpServerProcess>;
  roots: Map<ConfigName, SharedRoot>;
  close(): Promise<Deno.CommandStatus[]>;
}

/**
 * Starts one HTTP server per configuration on `<tmp>/<config>/ws` (serve_http.ts by default;
 * tests/adapters passes a starter for the Node and Bun adapters).
 */
export async function startHttpServers(
  configs: ConfigName[],
  start: typeof startHttpServer = startHttpServer,
): Promise<HttpServers> {
  const base = await realTemp("wmcp-contract-http-");
  const roots = await sharedRoots(base, configs);
  const servers = new Map<ConfigName, HttpServerProcess>();
  try {
    await Promise.all(configs.map(async (config) => {
      const { root, second } = roots.get(config)!;
      servers.set(
        config,
        await start(root, {
          write: CONFIGS[config].write,
          args: [...secondRootFlags(second), ...limitFlags(config)],
        }),
      );
    }));
  } catch (err) {
    await Promise.all([...servers.values()].map((s) => s.stop()));
    await Deno.remove(base, { recursive: true });
    throw err;
  }
  return {
    servers,
    roots,
    async close() {
      const statuses = await Promise.all([...servers.values()].map((s) => s.stop()));
      await Deno.remove(base, { recursive: true });
      return statuses;
    },
  };
}

/** (4) modern (v2 client, auto) or (5) legacy (v2 client, versionNegotiation 'legacy'). */
export async function httpAdapter(
  http: HttpServers,
  era: "modern" | "legacy",
): Promise<Adapter & { clients: Map<ConfigName, Client> }> {
  const clients = new Map<ConfigName, Client>();
  const transports: StreamableHTTPClientTransport[] = [];
  try {
    await Promise.all([...http.servers.entries()].map(async ([config, server]) => {
      const client = new Client({ name: `contract-http-${era}`, version: "0" }, {
        versionNegotiation: { mode: era === "modern" ? "auto" : "legacy" },
      });
      const transport = new StreamableHTTPClientTransport(new URL(server.url));
      transports.push(transport);
      await client.connect(transport);
      if (client.getProtocolEra() !== era) {
        throw new Error(`expected the ${era} era, negotiated ${client.getProtocolEra()}`);
      }
      clients.set(config, client);
      await primeToolCache(client);
    }));
  } catch (err) {
    await Promise.all([...clients.values()].map((c) => c.close()));
    throw err;
  }
  const tag = era === "modern" ? "modern" : "legacy";
  return {
    name: era === "modern" ? "httpModern" : "httpLegacy",
    clients,
    async run(c, index) {
      const config = configOf(c);
      const site = await sharedSite(http.roots.get(config)!, `${tag}-${index}`, c);
      const args = c.args(site.paths);
      return await finish(site, args, await callOutcome(clients.get(config)!, c.op, args));
    },
    async close() {
      if (era === "legacy") {
        await Promise.all(transports.map((t) => t.terminateSession().catch(() => {})));
      }
      await Promise.all([...clients.values()].map((c) => c.close()));
    },
  };
}

const opLists = new Map<boolean, Promise<Record<string, unknown>[]>>();

/**
 * `cli.ts op list [--write]` as a real child: the operations the CLI offers in a mode. Run once
 * per mode and shared by every caller in this process (each gets its own copy).
 */
export function cliOpList(write: boolean): Promise<Record<string, unknown>[]> {
  let list = opLists.get(write);
  if (list === undefined) {
    list = (async () => {
      const out = await runCli(["--quiet", "--no-prompt"], [
        "op",
        "list",
        ...(write ? ["--write"] : []),
      ]);
      if (out.code !== 0) throw new Error(`op list: ${out.stderr}`);
      return (JSON.parse(out.stdout) as { operations: Record<string, unknown>[] }).operations;
    })();
    opLists.set(write, list);
  }
  return list.then((ops) => structuredClone(ops));
}

/** The tools a connected client lists, as full definitions. */
export async function listedToolDefinitions(client: Client): Promise<Record<string, unknown>[]> {
  return (await client.listTools()).tools as unknown as Record<string, unknown>[];
}
