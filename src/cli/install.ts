/**
 * `deno task -q install [--bin-dir DIR] [--data-dir DIR] [--uninstall]`: puts a `wmcp` command on
 * PATH. It copies the running Deno binary to DATA/runtime/deno-VERSION (so the command survives a
 * cleaned npx cache and needs no `deno` on PATH), caches the module graph with it, and writes
 * BIN/wmcp: a shell launcher that execs that Deno with this checkout's deno.json and the router's
 * fixed permissions (the `cli` task's) on cli.ts, or for `serve stdio|http` the launcher's (the
 * serve tasks') on serve.ts. Re-running it is idempotent; --uninstall removes the launcher and the
 * runtime that launcher names. Defaults: BIN ~/.local/bin, DATA
 * ${XDG_DATA_HOME:-~/.local/share}/wmcp.
 */
import { INSTALL } from "./commands.ts";
import { parseCommand, renderHelp, type ValuesOf } from "./declare.ts";
import { UsageError } from "../config.ts";
import { denoPath } from "../launch/deno.ts";
import { outputOfLauncher } from "../launch/child.ts";
import { cacheEntryModules } from "../launch/warm.ts";
import { projectDir } from "../launch/project.ts";
import { launcherFlags } from "./host_config.ts";
import denoConfig from "../../deno.json" with { type: "json" };

/** The checkout the installer runs from (always on disk: it is run as a task). */
const PROJECT = projectDir()!;
/** How the README has a newcomer run this script (no `deno` on PATH needed). */
const INSTALL_PROG = "npx -y deno@2.9.6 task -q";
/** The first line after the shebang: marks a launcher this script wrote (and may remove). */
export const LAUNCHER_MARK = "# wmcp launcher written by src/cli/install.ts";

/** The router's permission flags: exactly those of the `cli` task in deno.json. */
export function routerFlags(): string[] {
  const tokens = denoConfig.tasks.cli.split(/\s+/);
  const start = tokens.indexOf("run");
  const end = tokens.indexOf("cli.ts");
  if (start < 0 || end < start) {
    throw new Error("deno.json's cli task is not `deno run FLAGS cli.ts`");
  }
  return tokens.slice(start + 1, end);
}

/** Single-quotes a word for /bin/sh. */
function shQuote(s: string): string {
  return `'${s.replaceAll("'", `'"'"'`)}'`;
}

/** Where a launcher is written from: the checkout and the install's own flags (for "Remove:"). */
export interface LauncherOptions {
  /** The checkout the launcher runs (default: this one). */
  project?: string;
  /** The --bin-dir/--data-dir flags of a custom install, repeated in its "Remove:" line. */
  installFlags?: string[];
}

/** The launcher script for a runtime binary and this checkout. */
export function launcherScript(runtime: string, options: LauncherOptions = {}): string {
  const project = options.project ?? PROJECT;
  // The launcher's Deno is also allowed by its own path (on Linux /proc/self/exe names it too).
  const withSelf = (f: string) => f.startsWith("--allow-run=") ? `${f},${runtime}` : f;
  const flags = routerFlags().map(withSelf);
  const serve = launcherFlags().map(withSelf);
  const config = `--config=${shQuote(`${project}/deno.json`)}`;
  const installWords = (options.installFlags ?? []).map((w) =>
    /^[\w\/.,:=@%+-]+$/.test(w) ? w : shQuote(w)
  );
  const remove = ["deno task -q install", ...installWords, "--uninstall"];
  // A checkout moved or deleted: one line saying so and how to install again, instead of Deno's
  // error about a missing config file or module.
  const gone = `wmcp: the checkout ${project} is gone (moved or deleted): run \`${
    [`${INSTALL_PROG} install`, ...installWords].join(" ")
  }\` again from its new place`;
  return [
    "#!/bin/sh",
    LAUNCHER_MARK,
    `# for the checkout ${project}; re-run the install after moving it.`,
    `# Remove: ${remove.join(" ")} (or delete this file and the runtime it names).`,
    `if [ ! -f ${shQuote(`${project}/cli.ts`)} ]; then`,
    `  printf '%s\\n' ${shQuote(gone)} >&2`,
    "  exit 1",
    "fi",
    'INIT_CWD="$PWD" DENO_NO_UPDATE_CHECK=1',
    "export INIT_CWD DENO_NO_UPDATE_CHECK",
    // `serve stdio|http`: the serve launcher's own entry, without the CLI's module graph.
    'if [ "$1" = serve ] && { [ "$2" = stdio ] || [ "$2" = http ]; }; then',
    "  shift",
    `  exec ${shQuote(runtime)} run ${serve.join(" ")} ${config} ${
      shQuote(`${project}/serve.ts`)
    } "$@"`,
    "fi",
    `exec ${shQuote(runtime)} run ${flags.join(" ")} ${config} ${
      shQuote(`${project}/cli.ts`)
    } "$@"`,
    "",
  ].join("\n");
}

/**
 * The runtime a launcher this installer wrote names (its `exec 'RUNTIME' run` line), when that
 * is one of ours: a `deno-VERSION` file in a `runtime` directory. Undefined otherwise.
 */
export function launcherRuntime(script: string): string | undefined {
  const m = /^exec '((?:[^']|'"'"')*)' run /m.exec(script);
  if (!m) return undefined;
  const runtime = m[1].replaceAll(`'"'"'`, "'");
  return /^\/.*\/runtime\/deno-[^/]+$/.test(runtime) ? runtime : undefined;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** Writes a file through a temporary one renamed over it (never half written). */
async function writeAtomic(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.tmp-${Deno.pid}`;
  await Deno.writeTextFile(tmp, data, { mode });
  await Deno.chmod(tmp, mode);
  await Deno.rename(tmp, path);
}

function env(name: string): string | undefined {
  const v = Deno.env.get(name);
  return v && v.startsWith("/") ? v.replace(/\/+$/, "") : undefined;
}

function say(line: string): void {
  console.log(line);
}

/** The install's directories: from the flags, else the defaults under HOME and XDG_DATA_HOME. */
interface InstallDirs {
  binDir: string;
  dataDir: string;
  /** BIN/wmcp. */
  launcher: string;
  /** DATA/runtime. */
  runtimeDir: string;
}

type InstallValues = ValuesOf<typeof INSTALL>;

/** The parsed flags, or the exit code when help, the version or a usage error answered. */
async function parseInstall(argv: string[]): Promise<InstallValues | number> {
  let values;
  try {
    ({ values } = await parseCommand(INSTALL, argv));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`install: ${err.message}; see \`${INSTALL_PROG} install --help\``);
    return 2;
  }
  if (values.help) {
    await Deno.stdout.write(new TextEncoder().encode(renderHelp(INSTALL, INSTALL_PROG)));
    return 0;
  }
  if (values.version) {
    say(denoConfig.version);
    return 0;
  }
  return values;
}

/** Where the launcher and the runtime go; undefined when HOME is needed and not usable. */
function installDirs(values: InstallValues): InstallDirs | undefined {
  const home = env("HOME");
  const cwd = Deno.env.get("INIT_CWD") ?? Deno.cwd();
  const absolute = (p: string) => (p.startsWith("/") ? p : `${cwd}/${p}`).replace(/\/+$/, "");
  const binDir = values["bin-dir"] !== undefined
    ? absolute(values["bin-dir"])
    : home && `${home}/.local/bin`;
  const dataBase = env("XDG_DATA_HOME") ?? (home && `${home}/.local/share`);
  const dataDir = values["data-dir"] !== undefined
    ? absolute(values["data-dir"])
    : dataBase && `${dataBase}/wmcp`;
  if (!binDir || !dataDir) return undefined;
  return { binDir, dataDir, launcher: `${binDir}/wmcp`, runtimeDir: `${dataDir}/runtime` };
}

/** The runtime this Deno is copied to: DATA/runtime/deno-VERSION. */
function runtimeOf(dirs: InstallDirs): string {
  return `${dirs.runtimeDir}/deno-${Deno.version.deno}`;
}

/** Removes the launcher and the runtime IT names (another install's runtime stays). */
async function uninstall(values: InstallValues, dirs: InstallDirs): Promise<number> {
  const { launcher } = dirs;
  let runtime: string | undefined;
  let removed = false;
  if (await exists(launcher)) {
    const text = await Deno.readTextFile(launcher).catch(() => "");
    if (!text.includes(LAUNCHER_MARK)) {
      console.error(`install: ${launcher} was not written by this installer; left as it is`);
      return 1;
    }
    runtime = launcherRuntime(text);
    await Deno.remove(launcher);
    say(`removed ${launcher}`);
    removed = true;
  } else if (values["data-dir"] !== undefined) {
    // No launcher: the runtime of the data directory named on the command line.
    runtime = runtimeOf(dirs);
  }
  if (runtime !== undefined && await exists(runtime)) {
    await Deno.remove(runtime);
    say(`removed ${runtime}`);
    removed = true;
    const dir = runtime.replace(/\/[^/]+$/, "");
    // Only when empty: other versions' runtimes (older installs) are left in place.
    await Deno.remove(dir).catch(() => {});
    await Deno.remove(dir.replace(/\/runtime$/, "")).catch(() => {});
  }
  if (!removed) say(`nothing to remove: no launcher at ${launcher}`);
  return 0;
}

/** Why a directory cannot be installed to (a comma or a line break in it), or undefined. */
function unusableDir(what: string, dir: string): string | undefined {
  if (dir.includes(",")) {
    return `install: cannot use ${what} ${dir}: Deno's permission flags cannot name a path ` +
      "containing a comma (the launcher grants its runtime by path); choose another";
  }
  if (/[\n\r]/.test(dir)) {
    return `install: cannot use ${what} ${JSON.stringify(dir)}: it contains a line break`;
  }
  return undefined;
}

/** Step 1. The runtime: a copy of this Deno, named by its version (a finished copy is never partial). */
async function copyRuntime(dirs: InstallDirs): Promise<string> {
  const runtime = runtimeOf(dirs);
  await Deno.mkdir(dirs.runtimeDir, { recursive: true });
  if (!(await exists(runtime))) {
    const tmp = `${runtime}.tmp-${Deno.pid}`;
    await Deno.copyFile(denoPath(), tmp);
    await Deno.chmod(tmp, 0o755);
    await Deno.rename(tmp, runtime);
    say(`copied Deno ${Deno.version.deno} to ${runtime}`);
  }
  return runtime;
}

/** Step 2. The module graph cached for that runtime (npm packages into the checkout's node_modules). */
function cacheModules(runtime: string): Promise<boolean> {
  return cacheEntryModules({ deno: runtime, stderr: "inherit" });
}

/**
 * Step 3. The launcher, written unless it is already this script; false (said why) when a file
 * this installer did not write is in its place.
 */
async function writeLauncher(
  values: InstallValues,
  dirs: InstallDirs,
  runtime: string,
): Promise<boolean> {
  const { binDir, dataDir, launcher } = dirs;
  await Deno.mkdir(binDir, { recursive: true });
  const installFlags = [
    ...(values["bin-dir"] !== undefined ? ["--bin-dir", binDir] : []),
    ...(values["data-dir"] !== undefined ? ["--data-dir", dataDir] : []),
  ];
  const script = launcherScript(runtime, { installFlags });
  const current = await Deno.readTextFile(launcher).catch(() => undefined);
  if (current !== undefined && !current.includes(LAUNCHER_MARK)) {
    console.error(
      `install: ${launcher} exists and was not written by this installer; not replaced`,
    );
    return false;
  }
  if (current !== script) await writeAtomic(launcher, script, 0o755);
  return true;
}

/** Step 4. The launcher answers `--version` with this checkout's version; says so, or why not. */
async function checkLauncher(dirs: InstallDirs, runtime: string): Promise<number> {
  const { binDir, launcher } = dirs;
  const check = await outputOfLauncher(launcher, ["--version"]);
  const version = new TextDecoder().decode(check.stdout).trim();
  if (!check.success || version !== denoConfig.version) {
    console.error(`install: ${launcher} --version did not answer ${denoConfig.version}`);
    return 1;
  }
  say(`installed ${launcher} (wmcp ${version}, Deno ${Deno.version.deno} at ${runtime})`);
  const path = (Deno.env.get("PATH") ?? "").split(":");
  if (!path.includes(binDir)) {
    say(`note: ${binDir} is not on your PATH; add it, e.g. in ~/.profile:`);
    say(`  export PATH="${binDir}:$PATH"`);
  }
  say("try: wmcp --help, or wmcp op list");
  return 0;
}

/** Runs the install (or uninstall) for argv; returns the exit code. */
export async function install(argv: string[]): Promise<number> {
  const values = await parseInstall(argv);
  if (typeof values === "number") return values;
  const dirs = installDirs(values);
  if (dirs === undefined) {
    console.error("install: HOME is not set to an absolute path; pass --bin-dir and --data-dir");
    return 2;
  }
  if (values.uninstall) return await uninstall(values, dirs);
  for (const [what, dir] of [["--bin-dir", dirs.binDir], ["--data-dir", dirs.dataDir]]) {
    const why = unusableDir(what, dir);
    if (why !== undefined) {
      console.error(why);
      return 2;
    }
  }
  const runtime = await copyRuntime(dirs);
  if (!(await cacheModules(runtime))) {
    console.error("install: caching the modules failed (see above); nothing was installed");
    return 1;
  }
  if (!(await writeLauncher(values, dirs, runtime))) return 1;
  return await checkLauncher(dirs, runtime);
}

if (import.meta.main) {
  Deno.exit(await install(Deno.args));
}
