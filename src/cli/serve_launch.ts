/**
 * `cli serve stdio|http [--sandbox MODE] [--engine MODE] [server flags]`: launches a server entry
 * as a child whose Deno permissions are computed from its flags (read on each root, write only on
 * the writable ones with --write, net only on the bound host, env only for the variables it reads,
 * no run), on Linux inside a bubblewrap mount namespace when available (src/sandbox/bwrap.ts), with
 * stdio passed through and SIGINT/SIGTERM forwarded to the server itself; and, for the native
 * search engine, the engine broker beside it (src/launch/broker.ts, decision 0054).
 */
import { flagTokens } from "./declare.ts";
import {
  envIfGranted,
  EXIT_USAGE,
  isLiteralAbsoluteRoot,
  refuseBroadRoot,
  resolveFromInvocation,
  ROOT_DEFAULTED_ENV,
  rootFlag,
  rootFlagName,
  UsageError,
} from "../config.ts";
import { probePaths } from "./path_probe.ts";
import {
  denoCacheDir,
  type Mount,
  normalizeAbsolute,
  parentOf,
  SANDBOX_MODES,
  sandboxMarker,
  type SandboxMode,
  type SandboxPlan,
} from "../sandbox/bwrap.ts";
import { inspectPidDir } from "../sandbox/pid_dir.ts";
import { toWorkspaceError } from "../workspace/errors.ts";
import { seeHelp } from "./help.ts";
import { withPointer } from "./suggest.ts";
import {
  answerInfoFlags,
  parseServerFlags,
  rootsFromArgs,
  SERVER_FLAGS,
  serverDecl,
  type ServerKind,
  writeAsked,
} from "./server_flags.ts";
import { serverPermissions } from "./server_permissions.ts";
import { cannotRunSelf, denoPath, selfDeno } from "../launch/deno.ts";
import { signalExitCode, spawnHeld, supervise } from "../launch/child.ts";
import { runSandboxedDeno } from "../launch/sandboxed.ts";
import { projectDir, projectFile } from "../launch/project.ts";
import {
  type Broker,
  ENGINE_CHOICES,
  type EngineChoice,
  engineEnv,
  startBroker,
} from "../launch/broker.ts";

/**
 * The V8 heap sizing the launcher gives the HTTP server (decision 0039): a young generation of at
 * most 4 MB a semi-space (V8's default grows it to 16 MB under load, and load is where the HTTP
 * server's peak RSS is set) and an old generation limit grown by 1.5x after a full GC instead of
 * up to 4x. Neither is a cap: a large operation still gets the heap it needs, only sooner
 * collected. The stdio server (one client, sequential) keeps V8's defaults.
 */
export const HTTP_SERVER_V8_FLAGS = "--v8-flags=--max-semi-space-size=4,--heap-growing-percent=50";

/** The `deno run` flags a server of this kind is started with besides its permissions. */
export function serverRuntimeFlags(kind: ServerKind): string[] {
  return kind === "http" ? [HTTP_SERVER_V8_FLAGS] : [];
}

/** The launcher's own flags, split off the server's arguments. */
export interface LauncherFlags {
  sandbox: SandboxMode;
  engine: EngineChoice;
  serverArgs: string[];
}

/** Each launcher flag with its choices, in the words of its usage error. */
const LAUNCHER_CHOICES = {
  sandbox: { choices: SANDBOX_MODES, words: "auto, required or off" },
  engine: { choices: ENGINE_CHOICES, words: "auto, native or builtin" },
} as const;

/** Splits the launcher's own `--sandbox MODE` and `--engine MODE` off the server's arguments. */
export function splitLauncherFlags(args: string[]): LauncherFlags {
  const out: LauncherFlags = { sandbox: "auto", engine: "auto", serverArgs: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const name = (Object.keys(LAUNCHER_CHOICES) as (keyof typeof LAUNCHER_CHOICES)[]).find((n) =>
      a === `--${n}` || a.startsWith(`--${n}=`)
    );
    if (name === undefined) {
      out.serverArgs.push(a);
      continue;
    }
    const { choices, words } = LAUNCHER_CHOICES[name];
    const value = a === `--${name}` ? args[++i] : a.slice(name.length + 3);
    if (value === undefined) throw new UsageError(`--${name} takes ${words}`);
    if (!(choices as readonly string[]).includes(value)) {
      throw new UsageError(`--${name} takes ${words}, not ${JSON.stringify(value)}`);
    }
    if (name === "sandbox") out.sandbox = value as SandboxMode;
    else out.engine = value as EngineChoice;
  }
  return out;
}

/** The path-valued flags of one server (SERVER_FLAGS' `value: "path"`): rewritten for the sandbox. */
function pathFlags(kind: "stdio" | "http"): string[] {
  return SERVER_FLAGS.filter((f) => f.value === "path" && f.servers.includes(kind)).map((f) =>
    f.name
  );
}

/**
 * Plans the sandbox for these server arguments: every path flag made absolute and normalized
 * (the invocation directory need not exist inside), and the mounts that make exactly those
 * paths visible: each root (`--root`, `--read-only-root`, in order) at its own path, read-write
 * only when it is a `--root` and --write is given. Returns the rewritten arguments with the plan.
 */
export function planSandbox(
  kind: "stdio" | "http",
  args: string[],
  options: {
    denoPath: string;
    projectDir: string;
    marker: string;
    /** The pid file's directory, links resolved: mounted and signed at that path. */
    pidDirReal?: string;
  },
): { plan: SandboxPlan; serverArgs: string[] } {
  const out = [...args];
  const given: Partial<Record<string, Mount>> = {};
  const roots: (Mount & { readOnly: boolean })[] = [];
  const relevant = new Set(pathFlags(kind));
  // The flags as the server will parse them (its own table): `--flag V` and `--flag=V` alike,
  // nothing after `--`; every root in order, else the last of a repeated flag wins, as in the
  // server.
  for (const t of flagTokens(serverDecl(kind), args)) {
    if (t.kind !== "option" || !relevant.has(t.name) || typeof t.value !== "string") continue;
    let source = resolveFromInvocation(t.value);
    if (t.name === "pid-file" && options.pidDirReal !== undefined) {
      source = `${options.pidDirReal === "/" ? "" : options.pidDirReal}/${baseName(source)}`;
    }
    const dest = normalizeAbsolute(source);
    if (t.name === "root" || t.name === "read-only-root") {
      roots.push({ source, dest, readOnly: t.name === "read-only-root" });
    } else given[t.name] = { source, dest };
    if (t.inlineValue) out[t.index] = `${t.rawName}=${dest}`;
    else out[t.index + 1] = dest;
  }
  if (roots.length === 0) {
    const source = resolveFromInvocation(".");
    roots.push({ source, dest: normalizeAbsolute(source), readOnly: false });
    out.push("--root", roots[0].dest);
  }
  const writes = flagTokens(serverDecl(kind), out).filter((t) =>
    t.kind === "option" && t.name === "write"
  );
  const last = writes.at(-1);
  const writable = last?.kind === "option" && writeAsked(last.value ?? true);
  const readFiles = [given["token-file"], given["read-token-file"], given["state-key-file"]]
    .filter((m) => m !== undefined);
  const pid = given["pid-file"];
  const writeDirs = pid === undefined
    ? []
    : [{ source: parentOf(pid.source), dest: parentOf(pid.dest) }];
  return {
    serverArgs: out,
    plan: {
      denoPath: options.denoPath,
      projectDir: options.projectDir,
      denoDir: denoCacheDir(envIfGranted),
      workspaces: roots.map((r) => ({
        source: r.source,
        dest: r.dest,
        writable: writable && !r.readOnly,
      })),
      readFiles,
      writeDirs,
      marker: options.marker,
    },
  };
}

function baseName(path: string): string {
  const parts = path.split("/").filter((p) => p !== "");
  return parts[parts.length - 1] ?? "";
}

/** The value of `--NAME V` or `--NAME=V` among server arguments, if given. */
function flagValue(args: string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === `--${name}` && i + 1 < args.length) value = args[i + 1];
    else if (args[i].startsWith(`--${name}=`)) value = args[i].slice(name.length + 3);
  }
  return value;
}

/**
 * Checks the pid file's directory before it is mounted read-write in the sandbox: it must hold
 * nothing but the pid file and its temporary (required refuses, auto says so once). Returns
 * its real path, the one to mount and sign.
 */
async function checkPidDir(mode: SandboxMode, serverArgs: string[]): Promise<string | undefined> {
  const value = flagValue(serverArgs, "pid-file");
  if (value === undefined) return undefined;
  const file = normalizeAbsolute(resolveFromInvocation(value));
  const dir = parentOf(file);
  const info = await inspectPidDir(dir, baseName(file), { deno: selfDeno() });
  if (!info.ok) {
    // Let the server report a missing or unusable pid file in its own words.
    return undefined;
  }
  if (info.others.length > 0) {
    const why = `the pid file's directory ${dir} holds ${info.others.length} other entr${
      info.others.length === 1 ? "y" : "ies"
    }, which the sandbox would expose read-write; give the pid file a directory of its own`;
    if (mode === "required") throw new UsageError(`--sandbox required, but ${why}`);
    console.error(`wmcp: warning: ${why}`);
  }
  return info.real;
}

/**
 * Checks the roots and makes the default explicit for the server: an empty --root or
 * --read-only-root is refused, and each root not given as a literal absolute path (none given:
 * the invocation directory; or a relative one) is refused by refuseBroadRoot when it is `/`, $HOME
 * or above $HOME (links resolved by a probe child, since the launcher holds no read permission).
 * Returns the server arguments with `--root DIR` when no root was given. Exported for tests of
 * the launcher's decision in process.
 */
export async function explicitRoot(kind: ServerKind, serverArgs: string[]): Promise<string[]> {
  const named = rootsFromArgs(kind, serverArgs);
  const given = named.length > 0
    ? named.map((r) => ({ given: rootFlag(r.path, rootFlagName(r)), flag: rootFlagName(r) }))
    : [{ given: undefined, flag: "--root" as const }];
  const checked = given.filter((g) => !isLiteralAbsoluteRoot(g.given)).map((g) => ({
    ...g,
    root: normalizeAbsolute(resolveFromInvocation(g.given ?? ".")),
  }));
  if (checked.length === 0) return serverArgs;
  const home = envIfGranted("HOME");
  const homeProbed = home?.startsWith("/") === true;
  const facts = await probePaths([...checked.map((c) => c.root), ...(homeProbed ? [home!] : [])]);
  const homeReal = homeProbed ? facts?.[checked.length]?.real : undefined;
  for (const [i, c] of checked.entries()) {
    refuseBroadRoot({ ...c, rootReal: facts?.[i]?.real, home, homeReal });
  }
  return named.length === 0 ? [...serverArgs, "--root", checked[0].root] : serverArgs;
}

/**
 * Why the sandbox cannot be used before bwrap is even tried (not Linux, code not local), or
 * undefined. Whether bwrap is installed and can build the namespaces is learnt by running the
 * server in it (serveLaunch): a separate probe run cost every start a process (decision 0036).
 */
function sandboxUnavailable(): string | undefined {
  if (Deno.build.os !== "linux") return `bubblewrap needs Linux, this is ${Deno.build.os}`;
  if (projectDir() === undefined) return "the server's code is not on a local file system";
  return undefined;
}

/**
 * Applies the mode to a reason the sandbox is not used: required fails, auto says why once (and
 * returns undefined: serve without it).
 */
function withoutSandbox(mode: SandboxMode, reason: string): undefined {
  if (mode === "required") throw new UsageError(`--sandbox required, but ${reason}`);
  console.error(`wmcp: serving without the kernel sandbox: ${reason} (--sandbox off hides this)`);
  return undefined;
}

/** The signals the launcher passes on to the server (inside bubblewrap: to the server itself). */
const SERVER_SIGNALS: Deno.Signal[] = ["SIGINT", "SIGTERM"];

/** The entry module of a server of this kind. */
function serverEntry(kind: ServerKind): URL {
  // stdio: the entry that loads the server's modules after its first answers (decision 0063).
  return projectFile(kind === "http" ? "serve_http.ts" : "src/server/stdio_launched.ts");
}

/** The server's environment: the invocation directory, which the server's relative paths are from. */
function serverEnv(rootDefaulted: boolean): Record<string, string> {
  const env: Record<string, string> = { INIT_CWD: resolveFromInvocation(".") };
  // The `--root` explicitRoot added for the invocation directory: the server still serves its
  // start directory, and a stdio server may serve its client's roots instead (decision 0065).
  if (rootDefaulted) env[ROOT_DEFAULTED_ENV] = "1";
  return env;
}

/**
 * Serves inside bubblewrap, unless it cannot be used: returns the server's exit code, or
 * undefined when the server is to run without the sandbox (auto, having said why once). When
 * bwrap fails to set the sandbox up (before the server starts), `required` fails (exit 2).
 */
async function serveSandboxed(
  kind: ServerKind,
  mode: SandboxMode,
  serverArgs: string[],
  engine: Engine,
  rootDefaulted: boolean,
): Promise<number | undefined> {
  const unavailable = sandboxUnavailable();
  if (unavailable !== undefined) return withoutSandbox(mode, unavailable);
  const marker = sandboxMarker();
  const pidDirReal = kind === "http" ? await checkPidDir(mode, serverArgs) : undefined;
  const { plan, serverArgs: inner } = planSandbox(kind, serverArgs, {
    denoPath: denoPath(),
    projectDir: projectDir()!,
    marker,
    pidDirReal,
  });
  const broker = isBroker(engine) ? engine : undefined;
  // The broker's directory, where its socket is, exists inside too, read-only (connecting to a
  // socket writes nothing).
  if (broker) plan.readFiles.push({ source: broker.dir, dest: broker.dir });
  const run = await runSandboxedDeno(
    plan,
    {
      flags: [
        ...serverRuntimeFlags(kind),
        ...serverPermissions(kind, inner, {
          sandboxMarker: marker,
          engine: engineGrant(engine),
          lazyModules: true,
        }),
      ],
      module: serverEntry(kind),
      args: inner,
      env: { ...serverEnv(rootDefaulted), ...engineEnv(engine) },
    },
    SERVER_SIGNALS,
    broker?.exited,
  );
  if (run.kind === "ended") return run.code;
  if (run.stage === "spawn") return withoutSandbox(mode, run.why);
  // The server never started: bwrap could not build the sandbox or run Deno in it.
  if (mode === "required") {
    console.error(
      `wmcp: --sandbox required, but bubblewrap could not set up the sandbox: ${run.why}`,
    );
    return EXIT_USAGE;
  }
  console.error(
    `wmcp: serving without the kernel sandbox: bubblewrap could not set it up: ${run.why} (--sandbox off hides this)`,
  );
  return undefined;
}

/**
 * Serves as this Deno's own child, without the sandbox (macOS: the tasks cannot grant it, said
 * as a usage error); forwards SIGINT/SIGTERM; returns the server's exit code.
 */
async function serveUnsandboxed(
  kind: ServerKind,
  serverArgs: string[],
  engine: Engine,
  rootDefaulted: boolean,
): Promise<number> {
  const cannot = cannotRunSelf();
  if (cannot !== undefined) {
    console.error(`wmcp: cannot start the server: ${cannot}`);
    return EXIT_USAGE;
  }
  const { child, held } = spawnHeld({
    flags: [
      ...serverRuntimeFlags(kind),
      ...serverPermissions(kind, serverArgs, { engine: engineGrant(engine), lazyModules: true }),
    ],
    module: serverEntry(kind),
    args: serverArgs,
    env: { ...serverEnv(rootDefaulted), ...engineEnv(engine) },
  }, SERVER_SIGNALS);
  const stop = isBroker(engine) ? engine.exited : undefined;
  return (await supervise(child, { held, signals: SERVER_SIGNALS, stop })).code;
}

/** The native engine of a launch: a running broker, why there is none, or none asked for. */
type Engine = Broker | { reason: string } | undefined;

function isBroker(engine: Engine): engine is Broker {
  return engine !== undefined && !("reason" in engine);
}

/** What the server's permissions need to know of its engine. */
function engineGrant(engine: Engine): { socket?: string } | undefined {
  if (engine === undefined) return undefined;
  return isBroker(engine) ? { socket: engine.socket } : {};
}

/**
 * Starts the engine broker when `--engine` asks for the native engine (auto, native): the
 * broker, or why the native engine cannot serve (auto serves with the built-in engine and says
 * so in workspace_info; native is a usage error). builtin starts nothing.
 */
async function launchEngine(
  kind: ServerKind,
  choice: EngineChoice,
  serverArgs: string[],
): Promise<Engine | { signalled: number }> {
  if (choice === "builtin") return undefined;
  const unavailable = (reason: string) => {
    if (choice === "native") throw new UsageError(`--engine native, but ${reason}`);
    return { reason };
  };
  if (Deno.build.os !== "linux") return unavailable(`it needs Linux, this is ${Deno.build.os}`);
  // The broker serves the first root (in order across --root and --read-only-root), the one
  // Workspace.open gives the prefilter to; the other roots search with the built-in engine.
  const first = rootsFromArgs(kind, serverArgs)[0]?.path ?? ".";
  const root = normalizeAbsolute(resolveFromInvocation(first));
  // A signal while the broker starts ends the launch at once (the broker is stopped, or ends with
  // the launcher's stdin pipe): the launcher exits as a server it forwarded the signal to would.
  let onSignal!: (sig: Deno.Signal) => void;
  const signal = new Promise<Deno.Signal>((resolve) => (onSignal = resolve));
  const listeners = SERVER_SIGNALS.map((sig) => {
    const listener = () => onSignal(sig);
    Deno.addSignalListener(sig, listener);
    return [sig, listener] as const;
  });
  try {
    // auto: the broker starts beside the server and its checks run meanwhile (its hello gives
    // their verdict; decision 0066); native must know before it starts anything else.
    const starting = startBroker(root, { noWait: choice === "auto" });
    const first = await Promise.race([starting, signal]);
    if (typeof first === "string") {
      void starting.then((b) => "reason" in b ? undefined : b.stop());
      return { signalled: signalExitCode(first) };
    }
    return "reason" in first ? unavailable(first.reason) : first;
  } finally {
    for (const [sig, listener] of listeners) Deno.removeSignalListener(sig, listener);
  }
}

/**
 * `cli.ts serve stdio|http ARGS` without the router and the CLI's command table: what main.ts
 * does for these two commands (write and net given up, then serveLaunch), with its errors
 * reported as main.ts reports them. The command a host runs starts here,
 * so nothing the launch does not use is loaded before the server is spawned (decision 0036).
 */
export async function serveFromCli(kind: ServerKind, args: string[]): Promise<number> {
  try {
    // The launcher only starts the child (with its own, narrower permissions).
    Deno.permissions.revokeSync({ name: "write" });
    Deno.permissions.revokeSync({ name: "net" });
    return await serveLaunch(kind, args);
  } catch (err) {
    // As main.ts reports it (JSON on stderr, the help pointer on usage errors), without its
    // module graph: a statically named import, even a dynamic one, is loaded at start-up.
    const usage = err instanceof UsageError;
    const error = usage
      ? { code: "USAGE", message: withPointer(err.message, seeHelp(["serve", kind])) }
      : toWorkspaceError(err).toJSON();
    Deno.stderr.writeSync(new TextEncoder().encode(JSON.stringify({ error }) + "\n"));
    return usage ? EXIT_USAGE : 1;
  }
}

/**
 * Runs the server as a child with scoped permissions (inside bubblewrap when the mode and the
 * machine allow); forwards SIGINT/SIGTERM to the server; returns its exit code. When bwrap itself
 * fails to set the sandbox up (before the server starts), `required` fails (exit 2) and `auto`
 * serves without it, each saying why in one stderr line.
 */
export async function serveLaunch(kind: ServerKind, args: string[]): Promise<number> {
  // Help and version are answered here: nothing is probed or started.
  const info = await answerInfoFlags(kind, args, { launcher: true });
  if (info !== undefined) return info;
  const { sandbox, engine: choice, serverArgs: given } = splitLauncherFlags(args);
  // The same checks, and messages, as the server's own: a bad flag starts nothing.
  await parseServerFlags(kind, given);
  const serverArgs = await explicitRoot(kind, given);
  const rootDefaulted = rootsFromArgs(kind, given).length === 0;
  const launched = await launchEngine(kind, choice, serverArgs);
  if (launched !== undefined && "signalled" in launched) return launched.signalled;
  const engine: Engine = launched;
  // A broker that exits while the server runs stops it (supervise's `stop`), and is reported.
  let serving = true;
  let brokerExit: number | undefined;
  if (isBroker(engine)) void engine.exited.then((code) => serving && (brokerExit = code));
  try {
    let code: number | undefined;
    if (sandbox !== "off") {
      code = await serveSandboxed(kind, sandbox, serverArgs, engine, rootDefaulted);
    }
    code ??= await serveUnsandboxed(kind, serverArgs, engine, rootDefaulted);
    serving = false;
    if (brokerExit === undefined) return code;
    console.error(
      `wmcp: the native search engine's broker exited (code ${brokerExit}) while serving; ` +
        "the server was stopped",
    );
    return 1;
  } finally {
    serving = false;
    if (isBroker(engine)) await engine.stop();
  }
}
