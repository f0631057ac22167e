/** One typed configuration object, built from flags and the environment. */
import { DEFAULT_LIMITS, type Limits } from "./workspace/limits.ts";
import type { EngineMode } from "./workspace/engine/pool.ts";
import { Workspace } from "./workspace/workspace.ts";
import { toWorkspaceError } from "./workspace/errors.ts";

/** What every entry point needs to open the workspace. */
export interface Config {
  /** Workspace root directory. */
  root: string;
  /** Enable the write operations. */
  write: boolean;
  /** Overrides of the default limits. */
  limits: Partial<Limits>;
}

/** A bad flag or value: the caller's mistake, reported with exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The directory the user ran the command from: INIT_CWD under `deno task`, else the cwd. */
export function invocationDirectory(): string {
  const allowed =
    Deno.permissions.querySync({ name: "env", variable: "INIT_CWD" }).state === "granted";
  return (allowed ? Deno.env.get("INIT_CWD") : undefined) ?? Deno.cwd();
}

/** Parses repeated `--limit name=value` flags. */
export function parseLimitFlags(values: readonly string[]): Partial<Limits> {
  const out: Partial<Limits> = {};
  for (const v of values) {
    const m = /^([A-Za-z]+)=(\d+)$/.exec(v);
    if (!m) throw new UsageError(`--limit takes name=positive-integer, got ${JSON.stringify(v)}`);
    if (!(m[1] in DEFAULT_LIMITS)) {
      throw new UsageError(
        `unknown limit ${m[1]}; known: ${Object.keys(DEFAULT_LIMITS).join(", ")}`,
      );
    }
    const n = Number(m[2]);
    if (!Number.isSafeInteger(n) || n <= 0) {
      throw new UsageError(`--limit ${m[1]} must be a positive integer`);
    }
    out[m[1] as keyof Limits] = n;
  }
  return out;
}

/** Fails with a usage error naming the flag to add when the process lacks a permission the mode needs. */
export function assertPermissions(config: Config, absRoot: string): void {
  const need: Deno.PermissionDescriptor[] = [{ name: "read", path: absRoot }];
  if (config.write) need.push({ name: "write", path: absRoot });
  for (const d of need) {
    if (Deno.permissions.querySync(d).state !== "granted") {
      throw new UsageError(
        `this process has no ${d.name} permission for ${absRoot}; run it with --allow-${d.name}=${absRoot} ` +
          "(the deno tasks grant the directory they are run from)",
      );
    }
  }
}

/** Resolves a user-given path against the directory the command was run from (not the task's cwd). */
export function resolveFromInvocation(path: string): string {
  if (path.startsWith("/")) return path;
  const base = invocationDirectory();
  return `${base === "/" ? "" : base}/${path}`;
}

/** The workspace flags every entry point takes. */
export interface WorkspaceFlags {
  root?: string;
  write?: boolean;
  limit?: string[];
}

/**
 * Opens the workspace an entry point was asked for: root relative to the invocation
 * directory, limits from --limit, and the Deno permissions the mode needs checked.
 * Every failure is a UsageError that says what to change.
 */
export async function openWorkspaceFromFlags(
  flags: WorkspaceFlags,
  options: { engine?: EngineMode } = {},
): Promise<Workspace> {
  const config: Config = {
    root: resolveFromInvocation(flags.root ?? "."),
    write: flags.write === true,
    limits: parseLimitFlags(flags.limit ?? []),
  };
  let ws: Workspace;
  try {
    ws = await Workspace.open({
      root: config.root,
      writable: config.write,
      limits: config.limits,
      engine: options.engine,
    });
  } catch (err) {
    const e = toWorkspaceError(err);
    const cause = e.cause ?? err;
    if (cause instanceof Deno.errors.NotCapable || cause instanceof Deno.errors.PermissionDenied) {
      // The root could not even be resolved: name the permission flag to add.
      assertPermissions(config, config.root);
    }
    throw new UsageError(`cannot open the workspace: ${e.message}`);
  }
  assertPermissions(config, ws.policy.rootReal);
  return ws;
}
