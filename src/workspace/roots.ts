/**
 * Several roots (issue 23, decision 0064): which root a path argument addresses, the refusal of
 * roots that overlap, and how a path of a root other than the first is shown in results.
 *
 * The addressing rule: an absolute path addresses the root it lies under (by its configured or its
 * real spelling, component by component); any other path addresses the first root. The chosen
 * root's own containment then decides, exactly as with one root: routing only picks which check
 * runs, it never admits anything by itself. Results name the first root's paths relative to it,
 * as with one root, and every other root's paths absolute (its configured spelling), so a path read
 * from a result addresses the same entry when it is passed back.
 *
 * @module
 */
import { WorkspaceError } from "./errors.ts";
import type { Workspace } from "./workspace.ts";

/** One root as configured: a directory, and whether it refuses writes whatever the mode. */
export interface RootSpec {
  /** The directory (absolute, or relative to the process's cwd). */
  path: string;
  /** Refuse every write under this root, even on a writable workspace. Default false. */
  readOnly?: boolean;
}

/** A root's two spellings, for routing: its configured absolute path and its real path. */
export interface RootSpellings {
  readonly rootGiven: string;
  readonly rootReal: string;
}

function parts(p: string): string[] {
  return p.split("/").filter((c) => c !== "" && c !== ".");
}

function under(p: readonly string[], root: readonly string[]): boolean {
  if (root.length > p.length) return false;
  for (let i = 0; i < root.length; i++) if (p[i] !== root[i]) return false;
  return true;
}

/**
 * The index of the root an argument addresses: for an absolute path, the root with the longest
 * spelling it lies under; otherwise (relative, not a string, or under no root) the first, whose
 * own check then reports it. Pure text: nothing is read.
 */
export function rootIndexFor(input: unknown, roots: readonly RootSpellings[]): number {
  if (roots.length < 2 || typeof input !== "string" || !input.startsWith("/")) return 0;
  const p = parts(input);
  let best = 0;
  let bestLength = -1;
  for (let i = 0; i < roots.length; i++) {
    for (const spelling of [roots[i].rootReal, roots[i].rootGiven]) {
      const r = parts(spelling);
      if (r.length > bestLength && under(p, r)) {
        best = i;
        bestLength = r.length;
      }
    }
  }
  return best;
}

/**
 * Refuses roots that are the same directory, or one inside another (by real path): a path would
 * then belong to two roots with different modes. INVALID_ARGUMENT naming both.
 */
export function assertDisjoint(roots: readonly RootSpellings[]): void {
  for (let i = 0; i < roots.length; i++) {
    for (let j = 0; j < roots.length; j++) {
      if (i === j) continue;
      const a = parts(roots[i].rootReal);
      const b = parts(roots[j].rootReal);
      if (!under(b, a) || (a.length === b.length && j < i)) continue;
      const what = a.length === b.length
        ? `are the same directory (${roots[i].rootReal})`
        : `overlap: ${roots[j].rootReal} is inside ${roots[i].rootReal}`;
      throw new WorkspaceError(
        "INVALID_ARGUMENT",
        `roots ${roots[i].rootGiven} and ${
          roots[j].rootGiven
        } ${what}; give each directory once, ` +
          "and no root inside another",
        { argument: "root" },
      );
    }
  }
}

/** How a root is too broad to serve: the whole file system, the home directory, or above it. */
export type Broadness = "file-system" | "home" | "contains-home";

/** Lexically normalized absolute path: no `.`, `..`, repeated or trailing slashes (no links resolved). */
export function normalized(path: string): string {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return `/${out.join("/")}`;
}

/**
 * The one rule on broad roots, by text only: whether any spelling of a root (absolute; normalized
 * here: no `.`, `..` or trailing slash) is `/`, a spelling of $HOME, or a directory above one.
 * Every caller passes the spellings it knows (as given and with links resolved, for both sides):
 * the servers' `--root` rule (src/config.ts), `config print`'s warning and the client's roots. A
 * $HOME that is not absolute is no spelling of it.
 */
export function broadness(
  roots: readonly (string | undefined)[],
  homes: readonly (string | undefined)[],
): Broadness | undefined {
  const rs = roots.filter((r): r is string => r !== undefined).map(normalized);
  const hs = homes.filter((h): h is string => h !== undefined && h.startsWith("/"))
    .map(normalized);
  if (rs.includes("/")) return "file-system";
  if (hs.some((h) => rs.includes(h))) return "home";
  if (hs.some((h) => rs.some((r) => h.startsWith(`${r}/`)))) return "contains-home";
  return undefined;
}

/** The keys of a result whose string values are workspace paths. */
const PATH_KEYS = new Set(["path", "source", "destination"]);

/**
 * A result of an operation on a root other than the first, its paths made absolute: every string
 * under a key `path`, `source` or `destination` (and `copied`, a list of destination paths, in
 * error details), at any depth, is joined to `prefix` (the root's configured spelling). `dest`
 * is the destination's prefix where a copy spans two roots. An undefined prefix (the first root)
 * leaves its paths as they are.
 */
export function rebased<T>(
  value: T,
  prefix: string | undefined,
  dest: string | undefined,
): T {
  if (prefix === undefined && dest === undefined) return value;
  return rebase(value, prefix, dest, 0) as T;
}

/** `rel` (a root-relative path, "." for the root) under `prefix`. */
export function joinRoot(prefix: string, rel: string): string {
  if (rel === "." || rel === "") return prefix;
  return (prefix === "/" ? "" : prefix) + "/" + rel;
}

function rebase(
  value: unknown,
  prefix: string | undefined,
  dest: string | undefined,
  depth: number,
): unknown {
  if (depth > 8 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => rebase(v, prefix, dest, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === "string" && PATH_KEYS.has(k)) {
      const base = k === "destination" ? dest : prefix;
      out[k] = base === undefined ? v : joinRoot(base, v);
    } else if (k === "copied" && Array.isArray(v) && dest !== undefined) {
      out[k] = v.map((p) => typeof p === "string" ? joinRoot(dest, p) : p);
    } else out[k] = rebase(v, prefix, dest, depth + 1);
  }
  return out;
}

/** `/a, /b (read-only)`: the roots as errors name them. */
export function rootsList(
  roots: readonly { policy: RootSpellings; readOnlyRoot: boolean }[],
): string {
  return roots.map((r) => r.policy.rootGiven + (r.readOnlyRoot ? " (read-only)" : "")).join(", ");
}

/**
 * The roots as a server's "serving ..." line names them: each real path, in order, a read-only
 * root marked (one root: its real path alone, as it has always been said).
 */
export function servedRoots(ws: Workspace): string {
  return ws.roots.map((r) => r.policy.rootReal + (r.readOnlyRoot ? " (read-only root)" : ""))
    .join(", ");
}

/** The root of the workspace `ws` that `path` addresses (its one root when it has one). */
export function rootFor(ws: Workspace, path: unknown): Workspace {
  const roots = ws.roots;
  if (roots.length === 1) return roots[0];
  return roots[rootIndexFor(path, roots.map((r) => r.policy))];
}

/** The prefix a root's result paths get: none for the first root, its configured path otherwise. */
export function shownPrefix(ws: Workspace, root: Workspace): string | undefined {
  return root === ws.roots[0] ? undefined : root.policy.rootGiven;
}

/**
 * An OUTSIDE_WORKSPACE error of a workspace with several roots, naming them (message and
 * `details.roots`); any other error, or one of a single root, as it is.
 */
export function namingRoots(ws: Workspace, e: WorkspaceError): WorkspaceError {
  if (ws.roots.length < 2 || e.code !== "OUTSIDE_WORKSPACE") return e;
  return new WorkspaceError(e.code, `${e.message} (the roots: ${ws.rootsText})`, {
    argument: e.argument,
    details: { ...e.details, roots: ws.roots.map((r) => r.policy.rootGiven) },
    cause: e.cause ?? e,
  });
}
