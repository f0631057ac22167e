/** One typed configuration object, built from flags and the environment. */
import { DEFAULT_LIMITS, type Limits } from "./workspace/limits.ts";
import { broadness, normalized } from "./workspace/roots.ts";

/** What every entry point needs to open the workspace. */
export interface Config {
  /** Workspace root directory. */
  root: string;
  /** Enable the write operations. */
  write: boolean;
  /** Overrides of the default limits. */
  limits: Partial<Limits>;
}

/** The exit code of every usage error (UsageError), in the servers, the launcher and `op`. */
export const EXIT_USAGE = 2;

/** A bad flag or value: the caller's mistake, reported with exit code 2 (EXIT_USAGE). */
export class UsageError extends Error {
  /** The process exit code this error ends with. */
  readonly exitCode: typeof EXIT_USAGE = EXIT_USAGE;
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
          "(`wmcp` grants the paths named on its command line; this process was started without them)",
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

/** What is known of a server's root and of the user's home directory. */
export interface BroadRootFacts {
  /** The --root value as given; undefined when --root was absent (the invocation directory). */
  given?: string;
  /** The flag that gave it, for the message: `--root` (the default) or `--read-only-root`. */
  flag?: RootFlagName;
  /** The root, absolute: the given value resolved against the invocation directory. */
  root: string;
  /** The root with links resolved, when known. */
  rootReal?: string;
  /** $HOME, when readable. */
  home?: string;
  /** $HOME with links resolved, when known. */
  homeReal?: string;
}

/** The two flags that name a root. */
export type RootFlagName = "--root" | "--read-only-root";

/** The flag of a root: `--read-only-root` for a read-only one, else `--root`. */
export function rootFlagName(r: { readOnly?: boolean }): RootFlagName {
  return r.readOnly ? "--read-only-root" : "--root";
}

/**
 * A root flag's value checked: an empty or blank value (what a host sends for an unset
 * `${workspaceFolder}` or `$PROJECT`) is a UsageError naming the flag (`--root` unless said)
 * rather than the invocation directory.
 */
export function rootFlag(
  value: string | undefined,
  flag: RootFlagName = "--root",
): string | undefined {
  if (value !== undefined && value.trim() === "") {
    throw new UsageError(
      `${flag} is empty (${JSON.stringify(value)}): a host sends that for an unset variable such ` +
        `as \${workspaceFolder}; pass ${flag} DIR naming the directory to serve`,
    );
  }
  return value;
}

/**
 * Whether a --root value names its directory literally: absolute, with no `.` or `..` part (so
 * `${workspaceFolder}/..` with an empty variable is not literal). Only such a value may name
 * `/`, $HOME or a directory above $HOME (refuseBroadRoot).
 */
export function isLiteralAbsoluteRoot(given: string | undefined): boolean {
  return given !== undefined && given.startsWith("/") &&
    !given.split("/").some((p) => p === "." || p === "..");
}

/**
 * The one rule on broad roots: a root not given as a literal absolute path (no --root, a
 * relative one such as `.`, or one with `.`/`..` parts) is refused when it resolves to `/`, to
 * $HOME or to a directory containing $HOME (links resolved on both sides), with a UsageError
 * (exit code 2) that says to pass the absolute path. Hosts start servers in whatever directory
 * they run in, often `/` or $HOME; `--root /` or `--root /home/you` still serves them on purpose.
 * An empty --root is refused first (rootFlag).
 */
export function refuseBroadRoot(facts: BroadRootFacts): void {
  const flag = facts.flag ?? "--root";
  rootFlag(facts.given, flag);
  if (isLiteralAbsoluteRoot(facts.given)) return;
  const root = normalized(facts.rootReal ?? facts.root);
  const kind = broadness([facts.root, facts.rootReal], [facts.home, facts.homeReal]);
  const what = kind === "file-system"
    ? "the whole file system (/)"
    : kind === "home"
    ? `your home directory (${root})`
    : kind === "contains-home"
    ? `${root}, which contains your home directory`
    : undefined;
  if (what === undefined) return;
  const why = facts.given === undefined
    ? "no --root was given, so the workspace defaulted to the directory wmcp was started in"
    : `${flag} ${facts.given} is relative to the directory wmcp was started in`;
  throw new UsageError(
    `refusing to serve ${what}: ${why}, and MCP hosts often start servers in / or the home ` +
      `directory. Pass ${flag} with the absolute path of the directory to serve (\`config print\` ` +
      `writes a host's snippet with it); ${flag} ${root} serves this one on purpose.`,
  );
}

/**
 * refuseBroadRoot for a root as given (`--root` or none) and as resolved, with this process's view
 * of $HOME (when it may read it) and real paths (where it may read them): the one check every
 * entry runs, the servers, `op` and the client's bundled server alike.
 */
export function refuseBroadDefault(
  given: string | undefined,
  root: string,
  flag: RootFlagName = "--root",
): void {
  if (isLiteralAbsoluteRoot(given)) return;
  const home = envIfGranted("HOME");
  refuseBroadRoot({
    given,
    flag,
    root,
    rootReal: realPathIfReadable(root),
    home,
    homeReal: home === undefined ? undefined : realPathIfReadable(home),
  });
}

/** An environment variable when this process may read it (no prompt, no throw); else undefined. */
export function envIfGranted(name: string): string | undefined {
  if (Deno.permissions.querySync({ name: "env", variable: name }).state !== "granted") {
    return undefined;
  }
  return Deno.env.get(name);
}

function realPathIfReadable(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Set (to "1") by the server launcher in its server's environment when it added `--root` itself
 * for the invocation directory (no root flag was given): the server then still serves from its
 * start directory, and may serve its client's roots instead (decision 0065). Internal.
 */
export const ROOT_DEFAULTED_ENV = "WMCP_ROOT_DEFAULTED";
