/**
 * The Deno permissions a server needs for its flags: computed once from the flags (read on every
 * root, the worker modules and secret files, write with --write on every root but a read-only one,
 * net on the bound host, env for the variables it reads), for the launcher, the bundled client
 * server, config print and tests.
 */
import { resolveFromInvocation, ROOT_DEFAULTED_ENV, UsageError } from "../config.ts";
import { ENGINE_READ_PATH } from "../workspace/engine/read_path.ts";
import { SERVER_MODULE_READ_PATHS } from "../server/module_read.ts";
import { SANDBOX_ENV } from "../sandbox/report.ts";
import { ENGINE_ENV } from "../workspace/native/protocol.ts";
import { Grants, UngrantablePathError } from "../launch/grants.ts";
import { flagTokens } from "./declare.ts";
import { rootsFromArgs, serverDecl, type ServerKind, writeAsked } from "./server_flags.ts";
import { SECRET_ENV } from "./server_secrets.ts";
import { bindHost } from "./server_hosts.ts";

/**
 * Each flag's last value as a lenient scan reads the arguments (a boolean given bare is true):
 * what the permissions are computed from before the server parses for real.
 */
function lastValues(kind: ServerKind, args: string[]): Map<string, string | boolean> {
  const out = new Map<string, string | boolean>();
  for (const t of flagTokens(serverDecl(kind), args)) {
    if (t.kind === "option") out.set(t.name, t.value ?? true);
  }
  return out;
}

/** What the launcher (`cli.ts serve stdio|http`) itself holds: it starts the server, reads nothing. */
const LAUNCHER_PERMISSIONS: readonly string[] = [
  "--quiet",
  "--no-prompt",
  // INIT_CWD: the invocation directory; the rest locate Deno's cache (the sandbox mounts it).
  "--allow-env=INIT_CWD,DENO_DIR,XDG_CACHE_HOME,HOME",
  // bwrap: the kernel sandbox; kill: signals to the server inside it; /proc/self/exe: Deno itself.
  "--allow-run=bwrap,kill,/proc/self/exe",
];

/**
 * The Deno permission flags (after `deno run`) for serving with these server arguments: what the
 * server entry itself needs (`via: "direct"`, the default: read on every root and the engine's
 * worker modules, write with --write on each root but a --read-only-root, net on the bound host, env for the variables it reads,
 * sys=uid and the pid file with --pid-file, read on secret files; never run), or what the launcher
 * `cli.ts serve KIND ARGS` needs to start it (`via: "launcher"`: env and run only; it then starts
 * the server with the direct set). Values are not validated here (parseServerFlags does that).
 */
export function serverPermissions(
  kind: ServerKind,
  args: string[],
  options: {
    via?: "direct" | "launcher";
    sandboxMarker?: string;
    /**
     * The native engine (decision 0054): its variables, and with a broker its socket (read,
     * write and net on that one path).
     */
    engine?: { socket?: string };
    /**
     * For the stdio entry the launcher starts (src/server/stdio_launched.ts), which loads the
     * server's modules after its first answers: read on them (module_read.ts) instead of on the
     * search workers' directory alone (it is among them).
     */
    lazyModules?: boolean;
  } = {},
): string[] {
  if (options.via === "launcher") return [...LAUNCHER_PERMISSIONS];
  const given = lastValues(kind, args);
  const values = Object.fromEntries(given);
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  // Every root, in order (the invocation directory when none is given): read on each, write on
  // each that is not a --read-only-root, and only with --write (decision 0064).
  const named = rootsFromArgs(kind, args);
  const roots = (named.length > 0 ? named : [{ path: "." }]).map((r) => ({
    what: r.readOnly ? "--read-only-root" : "--root",
    path: resolveFromInvocation(r.path),
    readOnly: r.readOnly === true,
  }));
  // Each read path with what it is (named in the error when a flag cannot name it).
  const read: [string, string][] = roots.map((r) => [r.what, r.path]);
  if (options.lazyModules && kind === "stdio" && SERVER_MODULE_READ_PATHS !== null) {
    for (const p of SERVER_MODULE_READ_PATHS) read.push(["the server's modules", p]);
  } else if (ENGINE_READ_PATH !== null) {
    read.push(["the search worker directory", ENGINE_READ_PATH]);
  }
  if (options.sandboxMarker !== undefined) read.push(["the sandbox marker", options.sandboxMarker]);
  const write: [string, string][] = writeAsked(values.write)
    ? roots.filter((r) => !r.readOnly).map((r) => [r.what, r.path])
    : [];
  const grants = new Grants();
  const runtime: string[] = [];
  if (kind === "http") {
    runtime.push("--unstable-no-legacy-abort");
    const pidFile = str(values["pid-file"]);
    if (pidFile !== undefined) {
      // The pid file and the temporary file it is written through (renamed over it).
      const p = resolveFromInvocation(pidFile);
      for (const f of [p, `${p}.tmp`]) {
        read.push(["--pid-file", f]);
        write.push(["--pid-file", f]);
      }
      // sys=uid: a pid file is trusted only when this user owns it (src/server/pid_file.ts).
      grants.allow("sys", ["uid"]);
    }
    for (const f of ["token-file", "read-token-file", "state-key-file"] as const) {
      const v = str(values[f]);
      if (v !== undefined) read.push([`--${f}`, resolveFromInvocation(v)]);
    }
    // The same normal form serve_http.ts binds (`0` is 0.0.0.0, `::0` is ::), so both agree.
    const host = bindHost(str(values.host) ?? "127.0.0.1");
    const loopback = ["127.0.0.1", "localhost", "[::1]"];
    // A wildcard bind also reaches itself over loopback (a second server's pid file check).
    const net = host === "127.0.0.1" || host === "localhost"
      ? loopback
      : host === "0.0.0.0"
      ? ["0.0.0.0", ...loopback]
      : host.includes(":")
      ? [`[${host}]`, ...(host === "::" ? loopback : [])]
      : [host];
    const env = ["INIT_CWD", SECRET_ENV.token, SECRET_ENV.readToken, SECRET_ENV.stateKey];
    grants.allow("net", net).allow("env", [...env, SANDBOX_ENV]);
  } else {
    grants.allow("env", ["INIT_CWD", SANDBOX_ENV, ROOT_DEFAULTED_ENV]);
  }
  const engine = options.engine;
  if (engine !== undefined) grants.allow("env", Object.values(ENGINE_ENV));
  if (engine?.socket !== undefined) {
    grants.allow("net", [`unix:${engine.socket}`], "the engine socket");
    read.push(["the engine socket", engine.socket]);
    write.push(["the engine socket", engine.socket]);
  }
  // Paths last (after sys, net and env), as the flags have always been ordered; a path a flag
  // cannot name is a usage error naming the flag it came from.
  try {
    for (const [what, p] of read) grants.read(p, what);
    for (const [what, p] of write) grants.path(p, { what, write: true });
    return ["--quiet", "--no-prompt", ...runtime, ...grants.flags()];
  } catch (err) {
    if (err instanceof UngrantablePathError) throw new UsageError(err.message);
    throw err;
  }
}
