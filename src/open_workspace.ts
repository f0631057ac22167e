/**
 * Opening the workspace an entry point was asked for (the servers, `op`): its own module, apart
 * from config.ts's flag helpers, because the serve launcher uses those and must not load the
 * workspace's module graph: Deno loads every import named by a literal, dynamic ones included,
 * before an entry runs anything (decision 0036).
 */
import type { EngineMode } from "./workspace/engine/pool.ts";
import { Workspace } from "./workspace/workspace.ts";
import type { RootSpec } from "./workspace/roots.ts";
import { toWorkspaceError } from "./workspace/errors.ts";
import type { SearchPrefilter } from "./workspace/native/prefilter.ts";
import { unavailablePrefilter } from "./workspace/native/prefilter.ts";
import { NativeEngine } from "./workspace/native/client.ts";
import { ENGINE_ENV } from "./workspace/native/protocol.ts";
import { detectSandbox } from "./sandbox/report.ts";
import {
  assertPermissions,
  type Config,
  envIfGranted,
  parseLimitFlags,
  refuseBroadDefault,
  resolveFromInvocation,
  ROOT_DEFAULTED_ENV,
  rootFlag,
  rootFlagName,
  UsageError,
} from "./config.ts";

/**
 * The native engine the launcher set up for this server (decision 0054): the broker's client
 * when it gave a socket and a token, the reason there is none when it gave one, else none (a
 * server entry run directly, `op`, the library).
 */
function prefilterFromEnv(): SearchPrefilter | undefined {
  const socket = envIfGranted(ENGINE_ENV.socket);
  const token = envIfGranted(ENGINE_ENV.token);
  if (socket !== undefined && token !== undefined) {
    return new NativeEngine({
      socket,
      token,
      onFallback: (why) =>
        console.error(JSON.stringify({ source: "wmcp", event: "native-fallback", why })),
    });
  }
  const reason = envIfGranted(ENGINE_ENV.reason);
  if (reason === undefined) return undefined;
  return unavailablePrefilter(reason);
}

/** The workspace flags every entry point takes. */
export interface WorkspaceFlags {
  /** One root (`op`'s and the client's --root); ignored when roots has any. */
  root?: string;
  /** The servers' --root and --read-only-root, in command-line order (decision 0064). */
  roots?: readonly RootSpec[];
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
  options: {
    engine?: EngineMode;
    /** Refuse `/`, $HOME and its ancestors unless named literally (refuseBroadRoot). */
    refuseBroadDefaultRoot?: boolean;
  } = {},
): Promise<Workspace> {
  const asked: RootSpec[] = flags.roots !== undefined && flags.roots.length > 0
    ? [...flags.roots]
    : [{ path: flags.root as string }];
  // No root flag, or the one --root the launcher added for the invocation directory.
  const defaulted = asked.length === 1 &&
    (asked[0].path === undefined || envIfGranted(ROOT_DEFAULTED_ENV) === "1");
  const write = flags.write === true;
  const limits = parseLimitFlags(flags.limit ?? []);
  const roots = asked.map((r) => {
    const flag = rootFlagName(r);
    const given = rootFlag(r.path, flag);
    const root = resolveFromInvocation(given ?? ".");
    // The launcher checks first; this covers a server entry run directly, and `op`.
    if (options.refuseBroadDefaultRoot) refuseBroadDefault(given, root, flag);
    return { path: root, readOnly: r.readOnly };
  });
  const configOf = (r: RootSpec): Config => ({
    root: r.path,
    write: write && r.readOnly !== true,
    limits,
  });
  let ws: Workspace;
  try {
    ws = await Workspace.open({
      roots,
      writable: write,
      limits,
      engine: options.engine,
      prefilter: prefilterFromEnv(),
      // Under the launcher's bubblewrap the roots are mount points (decision 0059).
      rootMounted: (await detectSandbox()) === "bubblewrap",
      rootsFrom: defaulted ? "start-directory" : "configured",
    });
  } catch (err) {
    const e = toWorkspaceError(err);
    const cause = e.cause ?? err;
    if (cause instanceof Deno.errors.NotCapable || cause instanceof Deno.errors.PermissionDenied) {
      // A root could not even be resolved: name the permission flag to add.
      for (const r of roots) assertPermissions(configOf(r), r.path);
    }
    throw new UsageError(`cannot open the workspace: ${e.message}`);
  }
  for (const [i, r] of ws.roots.entries()) assertPermissions(configOf(roots[i]), r.policy.rootReal);
  return ws;
}
