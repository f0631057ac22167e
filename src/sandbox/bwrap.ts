/**
 * The kernel sandbox: a bubblewrap (`bwrap`) mount namespace in which only the workspace's roots and
 * the read-only files the runtime needs exist. This module builds bwrap's argv; src/launch/sandboxed.ts
 * runs a child Deno in it, and src/cli/serve_launch.ts falls back (auto) or fails (required) when
 * bwrap cannot start the server. See docs/decisions/0011-kernel-sandbox-bubblewrap.md.
 */
import { MARKER_PREFIX, SANDBOX_ENV } from "./report.ts";
import { normalized } from "../workspace/roots.ts";

export { SANDBOX_ENV };

/** How the launcher uses the sandbox: when available, always (else fail), or never. */
export type SandboxMode = "auto" | "required" | "off";

/** The modes `--sandbox` accepts. */
export const SANDBOX_MODES: readonly SandboxMode[] = ["auto", "required", "off"];

/**
 * Where the sandbox's HOME (an empty tmpfs) is mounted inside: under the random marker directory,
 * so it never collides with a workspace (a read-only /tmp workspace made /tmp/wmcp-home fail) and
 * never leaves a directory on the host.
 */
export function sandboxHome(marker: string): string {
  return `${marker}/home`;
}

/** One bind mount: `source` as seen by the launcher, `dest` as seen inside. */
export interface Mount {
  source: string;
  dest: string;
}

/** Everything the sandbox makes visible, and how. */
export interface SandboxPlan {
  /** The Deno binary (src/launch/deno.ts denoPath()), bound read-only at its own path. */
  denoPath: string;
  /** The project directory (entry scripts, src/, node_modules), read-only. */
  projectDir: string;
  /** Deno's cache directory (npm packages, compiled modules), read-only when given. */
  denoDir?: string;
  /**
   * The workspace's roots in order, each at its own path, read-write only when writable; the
   * server starts in the first (decision 0064).
   */
  workspaces: (Mount & { writable: boolean })[];
  /** Extra files bound read-only (token and state-key files). */
  readFiles: Mount[];
  /** Extra directories bound read-write (the pid file's directory). */
  writeDirs: Mount[];
  /** An empty directory created inside only, naming this sandbox (see sandboxMarker). */
  marker: string;
}

/** The dynamic loader and shared libraries, read-only: what any dynamically linked program needs. */
export const LIBRARY_PATHS: readonly string[] = [
  "/usr",
  "/lib",
  "/lib64",
  "/lib32",
  "/libx32",
  "/etc/ld.so.cache",
];

/**
 * System paths the server needs read-only: the loader and libraries, /bin/sh (which announces
 * the server's pid), and name lookup for --host.
 */
const SYSTEM_PATHS: readonly string[] = [
  ...LIBRARY_PATHS,
  "/bin",
  "/etc/hosts",
  "/etc/nsswitch.conf",
  "/etc/host.conf",
  "/etc/gai.conf",
  "/etc/resolv.conf",
];

/**
 * The server's time zone inside: UTC. wmcp writes every time as ISO 8601 in UTC and formats none
 * in local time, so the zone changes no output. Set, and /etc/localtime not bound: bwrap would
 * bind it as the file it links to, without the zone's name, and ICU then looks for the name by
 * comparing the files below /usr/share/zoneinfo on the first Date it makes (about 10 ms of every
 * start; decision 0069).
 */
const SANDBOX_TZ = "UTC";

/** Namespace and session flags of the server's sandbox. Pid and net stay shared. */
const ISOLATION = [
  "--die-with-parent",
  "--new-session",
  "--unshare-user",
  "--unshare-ipc",
  "--unshare-uts",
  "--unshare-cgroup-try",
];

/** Collapses `.`, `..` and repeated slashes of an absolute path, as text (no file-system access). */
export function normalizeAbsolute(path: string): string {
  if (!path.startsWith("/")) throw new Error(`not an absolute path: ${path}`);
  return normalized(path);
}

/** The parent directory of an absolute path, as text. */
export function parentOf(path: string): string {
  const n = normalizeAbsolute(path);
  const i = n.lastIndexOf("/");
  return i <= 0 ? "/" : n.slice(0, i);
}

/** A fresh marker path: an empty directory that exists inside this sandbox and nowhere else. */
export function sandboxMarker(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `${MARKER_PREFIX}${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Deno's cache directory as Deno itself picks it on Linux: DENO_DIR, XDG_CACHE_HOME/deno, ~/.cache/deno. */
export function denoCacheDir(env: (name: string) => string | undefined): string | undefined {
  const dir = env("DENO_DIR");
  if (dir) return dir;
  const xdg = env("XDG_CACHE_HOME");
  if (xdg) return `${xdg}/deno`;
  const home = env("HOME");
  return home ? `${home}/.cache/deno` : undefined;
}

function depth(path: string): number {
  return path === "/" ? 0 : path.split("/").length - 1;
}

/**
 * The bwrap argv (without the program name) that runs `command` in the sandbox of `plan`.
 * Mounts are ordered from the shallowest destination to the deepest, so a more specific mount
 * wins: a workspace inside the project is writable with --write, a workspace that contains the
 * pid file's directory stays read-only around it. At equal depth the roots come last.
 */
export function bwrapArgs(plan: SandboxPlan, command: string[]): string[] {
  const args = [...ISOLATION];
  for (const p of SYSTEM_PATHS) args.push("--ro-bind-try", p, p);
  type M = { flag: string; source: string; dest: string; rank: number };
  const mounts: M[] = [
    { flag: "--ro-bind", source: plan.denoPath, dest: plan.denoPath, rank: 0 },
    { flag: "--ro-bind", source: plan.projectDir, dest: plan.projectDir, rank: 0 },
  ];
  if (plan.denoDir) {
    mounts.push({ flag: "--ro-bind-try", source: plan.denoDir, dest: plan.denoDir, rank: 0 });
  }
  for (const f of plan.readFiles) mounts.push({ flag: "--ro-bind", ...f, rank: 0 });
  for (const d of plan.writeDirs) mounts.push({ flag: "--bind", ...d, rank: 0 });
  for (const w of plan.workspaces) {
    mounts.push({
      flag: w.writable ? "--bind" : "--ro-bind",
      source: w.source,
      dest: w.dest,
      rank: 1,
    });
  }
  mounts.sort((a, b) => depth(a.dest) - depth(b.dest) || a.rank - b.rank);
  for (const m of mounts) args.push(m.flag, m.source, m.dest);
  args.push(
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--dir",
    plan.marker,
    "--tmpfs",
    sandboxHome(plan.marker),
    "--setenv",
    "HOME",
    sandboxHome(plan.marker),
    "--setenv",
    SANDBOX_ENV,
    `bubblewrap:${plan.marker}`,
  );
  if (plan.denoDir) args.push("--setenv", "DENO_DIR", plan.denoDir);
  args.push("--setenv", "TZ", SANDBOX_TZ);
  args.push("--chdir", plan.workspaces[0].dest, ...command);
  return args;
}
