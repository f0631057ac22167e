/**
 * The client's roots (issue 23 §2, decision 0065): a stdio server started without a root flag
 * serves the `file://` roots its client declares, instead of the directory it was started in.
 *
 * In the initialization era, once the client has sent `notifications/initialized` and declared the
 * `roots` capability, the server asks `roots/list`, and asks again on every
 * `notifications/roots/list_changed`. Each root is checked as `--root` would be, plus: a root that
 * is not a `file://` URI, does not exist, is not a directory, is `/`, $HOME or above it, or overlaps
 * an earlier one is skipped with a warning on stderr. Calls wait for the answer; when no usable
 * root remains they fail NO_ROOT, and the server never falls back to a broad directory. A new set
 * of roots replaces the old for the calls that start after it; a call already running keeps the
 * roots it started with (a root that goes away under it fails it typed, as any swapped root does).
 *
 * @module
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { McpServer, StandardSchemaV1 } from "@modelcontextprotocol/server";
import { passThrough } from "./definition.ts";
import { Workspace } from "../workspace/workspace.ts";
import { toWorkspaceError, WorkspaceError } from "../workspace/errors.ts";
import { assertDisjoint, type Broadness, broadness, type RootSpec } from "../workspace/roots.ts";

/** Most roots taken from a client (the rest are skipped with a warning). */
export const MAX_CLIENT_ROOTS = 32;
/** How long the server waits for the client's answer to roots/list. */
export const ROOTS_LIST_TIMEOUT_MS = 10_000;

/** A result schema that takes any value (planClientRoots checks each root itself). */
const ANY_RESULT: StandardSchemaV1 = Object.freeze({
  "~standard": Object.freeze({ version: 1 as const, vendor: "wmcp", validate: passThrough }),
});

/** One root of a roots/list result, as far as it is read. */
interface ListedRoot {
  uri?: unknown;
}

/** The user's home directory, when this process may know it. */
function homeDirectory(): string | undefined {
  try {
    const deno = (globalThis as { Deno?: typeof Deno }).Deno;
    if (deno !== undefined) {
      if (deno.permissions.querySync({ name: "env", variable: "HOME" }).state !== "granted") {
        return undefined;
      }
      return deno.env.get("HOME");
    }
    return (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env
      .HOME;
  } catch {
    return undefined;
  }
}

/**
 * $HOME with its links resolved, when this process may read it: a root is checked against both
 * spellings, as `--root` is (refuseBroadRoot), so a $HOME that is a link does not let its real
 * directory through.
 */
function realHomeDirectory(home: string | undefined): string | undefined {
  if (home === undefined || !home.startsWith("/")) return undefined;
  try {
    const deno = (globalThis as { Deno?: typeof Deno }).Deno;
    const state = deno?.permissions.querySync({ name: "read", path: home }).state ?? "granted";
    return state === "granted" ? realpathSync(home) : undefined;
  } catch {
    return undefined;
  }
}

/** Why a root is too broad to serve, in a warning's words. */
const BROAD_WORDS: Record<Broadness, string> = {
  "file-system": "it is the whole file system",
  home: "it is your home directory",
  "contains-home": "it contains your home directory",
};

/**
 * Why a root's path is too broad to serve (`/`, $HOME or above it, by the one rule: broadness),
 * checked against $HOME as given and as resolved (`homeReal`); undefined when it is not.
 */
function tooBroadFor(path: string, options: { home?: string; homeReal?: string }) {
  const kind = broadness([path], [options.home, options.homeReal]);
  return kind === undefined ? undefined : BROAD_WORDS[kind];
}

/** Shown in a warning: a client's text, quoted and cut, never raw. */
function quoted(text: unknown): string {
  const s = typeof text === "string" ? text : String(text);
  return JSON.stringify(s.length > 300 ? `${s.slice(0, 300)}…` : s);
}

/**
 * The hint for a root outside the start directory that could not be opened: a server reads only
 * within the directory it was started in (its Deno permissions and, under the launcher, its
 * sandbox's mount are scoped to it).
 */
function reach(path: string, start: string | undefined): string {
  if (start === undefined || path === start || path.startsWith(`${start}/`)) return "";
  return ` (this server reaches only ${start}, the directory it was started in; start it there, ` +
    "or with --root, to serve this directory)";
}

/** What a client's roots give: the roots to serve, and why each other one was skipped. */
export interface ClientRootsPlan {
  roots: RootSpec[];
  skipped: string[];
}

/**
 * The roots of a roots/list result that can be served (see the module's words), each opened once
 * to check it; every other one with the reason it is skipped.
 */
export async function planClientRoots(
  listed: readonly ListedRoot[],
  options: { home?: string; homeReal?: string; readOnly?: boolean; start?: string } = {},
): Promise<ClientRootsPlan> {
  const roots: RootSpec[] = [];
  const opened: Workspace[] = [];
  const skipped: string[] = [];
  for (const [i, root] of listed.entries()) {
    const uri = root !== null && typeof root === "object" ? root.uri : undefined;
    if (i >= MAX_CLIENT_ROOTS) {
      skipped.push(`${quoted(uri)}: more than ${MAX_CLIENT_ROOTS} roots`);
      continue;
    }
    let path: string;
    try {
      if (typeof uri !== "string" || !uri.startsWith("file:")) throw new Error("not a file:// URI");
      const url = new URL(uri);
      if (url.host !== "" && url.host !== "localhost") throw new Error("names another host");
      path = fileURLToPath(url);
      if (path.includes("\0")) throw new Error("contains a NUL byte");
    } catch (err) {
      skipped.push(`${quoted(uri)}: ${(err as Error).message}`);
      continue;
    }
    // Broad by its spelling, before anything is opened (a process may not even read `/`).
    const spelled = tooBroadFor(path, options);
    if (spelled !== undefined) {
      skipped.push(`${quoted(uri)}: ${spelled}, too broad to serve`);
      continue;
    }
    let ws: Workspace;
    try {
      ws = await Workspace.open({ root: path });
    } catch (err) {
      skipped.push(`${quoted(uri)}: ${toWorkspaceError(err).message}${reach(path, options.start)}`);
      continue;
    }
    const broad = tooBroadFor(ws.policy.rootReal, options);
    if (broad !== undefined) {
      skipped.push(`${quoted(uri)}: ${broad}, too broad to serve`);
      continue;
    }
    try {
      assertDisjoint([...opened.map((o) => o.policy), ws.policy]);
    } catch (err) {
      skipped.push(`${quoted(uri)}: ${(err as Error).message}`);
      continue;
    }
    opened.push(ws);
    roots.push({ path: ws.policy.rootGiven, readOnly: options.readOnly });
  }
  return { roots, skipped };
}

/**
 * The workspace on the roots planClientRoots kept. Opening resolves each root's spelling again (a
 * link among them may have been re-pointed since it was checked), so what was opened is checked
 * again: a root that is now `/`, $HOME or above it fails the whole answer, never served.
 */
async function openPlanned(
  roots: RootSpec[],
  start: Workspace,
  homes: { home?: string; homeReal?: string },
): Promise<Workspace> {
  const ws = await Workspace.open({
    roots,
    writable: start.writable,
    limits: start.limits,
    sharedWith: start,
    rootsFrom: "client",
  });
  for (const root of ws.roots) {
    const broad = tooBroadFor(root.policy.rootReal, homes);
    if (broad === undefined) continue;
    throw new WorkspaceError(
      "CHANGED_DURING_OPERATION",
      `the root ${root.policy.rootGiven} changed after it was checked: ${broad}, too broad to serve`,
    );
  }
  return ws;
}

/** The one error of a call made while no usable root is served. */
function noRoot(why: string): WorkspaceError {
  return new WorkspaceError("NO_ROOT", `no root to serve: ${why}`);
}

/**
 * The roots a stdio server serves when its client may name them: the start directory (the
 * workspace it was started with) until the client's roots are known, then those. One per process
 * (stdio serves one client).
 */
export class ClientRoots {
  readonly #start: Workspace;
  readonly #log: (line: string) => void;
  #current: Workspace | WorkspaceError;
  #pending: Promise<void> | undefined;
  #generation = 0;

  constructor(start: Workspace, log: (line: string) => void) {
    this.#start = start;
    this.#current = start;
    this.#log = log;
  }

  /** The workspace a call runs on: waits for a pending roots/list; NO_ROOT when none is usable. */
  async workspace(): Promise<Workspace> {
    while (this.#pending !== undefined) await this.#pending;
    const current = this.#current;
    if (current instanceof WorkspaceError) throw current;
    return current;
  }

  /** Hooks one initialization-era McpServer: roots/list after initialized and on list_changed. */
  install(server: McpServer): void {
    const inner = server.server;
    const previous = inner.oninitialized;
    inner.oninitialized = () => {
      previous?.();
      if (inner.getClientCapabilities()?.roots !== undefined) void this.refresh(server);
    };
    inner.setNotificationHandler("notifications/roots/list_changed", () => {
      if (inner.getClientCapabilities()?.roots !== undefined) void this.refresh(server);
    });
  }

  /** Asks the client for its roots and serves them (the latest answer wins). */
  refresh(server: McpServer): Promise<void> {
    const generation = ++this.#generation;
    const done = this.#ask(server, generation);
    const pending = done.finally(() => {
      if (this.#pending === pending) this.#pending = undefined;
    });
    this.#pending = pending;
    return pending;
  }

  async #ask(server: McpServer, generation: number): Promise<void> {
    let next: Workspace | WorkspaceError;
    try {
      // Asked without the SDK's result schema, which refuses the whole list for one root that is
      // not file://; each root is checked here, and only the unusable ones are skipped.
      const listed = await server.server.request(
        { method: "roots/list" },
        ANY_RESULT,
        { timeout: ROOTS_LIST_TIMEOUT_MS },
      ) as { roots?: unknown };
      if (!Array.isArray(listed?.roots)) throw new Error("the result holds no roots list");
      const roots = listed.roots as ListedRoot[];
      const home = homeDirectory();
      const homes = { home, homeReal: realHomeDirectory(home) };
      const plan = await planClientRoots(roots, { ...homes, start: this.#start.policy.rootGiven });
      for (const why of plan.skipped) this.#log(`wmcp: warning: skipped a client root ${why}`);
      next = plan.roots.length === 0
        ? noRoot(
          roots.length === 0
            ? "the client lists no roots"
            : "none of the client's roots can be served (see the server's warnings)",
        )
        : await openPlanned(plan.roots, this.#start, homes);
    } catch (err) {
      const e = toWorkspaceError(err);
      this.#log(`wmcp: warning: the client's roots could not be read: ${e.message}`);
      next = noRoot(`the client's roots could not be read (${e.message})`);
    }
    if (generation !== this.#generation) return;
    this.#current = next;
    if (!(next instanceof WorkspaceError)) {
      const list = next.roots.map((r) => r.policy.rootGiven).join(", ");
      this.#log(`wmcp: serving the client's roots: ${list}`);
    }
  }
}
