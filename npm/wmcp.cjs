#!/usr/bin/env node
// The `wmcp` command of the npm package (npm/README.md): runs the package's own cli.ts with the
// Deno binary of its `deno` dependency and the router's fixed permissions, exactly as the shell
// launcher `task -q install` writes does for a checkout. The router then gives each command the
// permissions it needs, the sandbox and the engine, as from a checkout. Node only starts Deno,
// forwards signals and returns its exit code. It reads two things of the arguments: `serve
// stdio|http` runs serve.ts (the same launcher without the rest of the CLI) with the launcher's
// permissions, and `--wmcp-prepare` is what the package's postinstall runs.
"use strict";

const { spawn, spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const os = require("node:os");

/**
 * Written at pack time by scripts/npm_pack.ts: its `wmcp.routerFlags` are the `cli` task's, its
 * `wmcp.launcherFlags` the serve tasks'.
 */
const PACKAGE = require(path.join(__dirname, "..", "package.json"));
const APP = path.join(__dirname, "..", "app");
/** Marks the modules as cached for this package version and Deno version. */
const MARKER = path.join(APP, ".wmcp-prepared");

function fail(message) {
  process.stderr.write(`wmcp: ${message}\n`);
  process.exit(1);
}

/** The Deno binary of the `deno` npm dependency (fetched by its own postinstall, or now). */
function denoBinary() {
  let dir;
  try {
    dir = path.dirname(require.resolve("deno/package.json", { paths: [__dirname] }));
  } catch {
    fail("the package's `deno` dependency is missing: reinstall @wmcp/wmcp");
  }
  const exe = path.join(dir, os.platform() === "win32" ? "deno.exe" : "deno");
  if (fs.existsSync(exe)) return exe;
  try {
    return require(path.join(dir, "install_api.cjs")).runInstall();
  } catch (err) {
    fail(`no Deno binary for this platform (${os.platform()}-${os.arch()}): ${err.message}`);
  }
}

/** The marker's contents: which versions the cached modules are for. */
function stamp(deno) {
  return `${PACKAGE.version} ${deno}\n`;
}

/**
 * Caches the module graph (npm packages into app/node_modules, pinned by app/deno.lock) once per
 * version, so that no server ever fetches at start (a sandboxed server cannot). Its output goes
 * to stderr: a stdio server's stdout carries protocol messages only.
 */
function prepare(deno) {
  try {
    if (fs.readFileSync(MARKER, "utf8") === stamp(deno)) return true;
  } catch {
    // not prepared yet
  }
  // The same entries as src/launch/warm.ts ENTRY_MODULES (the servers' graphs are loaded inside the
  // sandbox, where Deno's cache is read-only).
  const entries = [
    "cli.ts",
    "src/cli/scoped_main.ts",
    "serve.ts",
    "serve_stdio.ts",
    "serve_http.ts",
    "src/launch/broker/main.ts",
  ];
  const run = spawnSync(
    deno,
    [
      "cache",
      "--quiet",
      "--frozen",
      `--config=${path.join(APP, "deno.json")}`,
      ...entries.map((e) => path.join(APP, e)),
    ],
    {
      cwd: APP,
      stdio: ["ignore", 2, 2],
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1" },
    },
  );
  if (run.status !== 0) {
    process.stderr.write(
      `wmcp: caching the package's modules in ${APP} failed (above); ` +
        "run wmcp once as the user who installed it, or reinstall it where you can write\n",
    );
    return false;
  }
  try {
    const tmp = `${MARKER}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, stamp(deno));
    fs.renameSync(tmp, MARKER);
  } catch {
    // A read-only package directory: the cache is complete, only the marker is not kept.
  }
  return true;
}

const FORWARDED = ["SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGUSR1", "SIGUSR2"];

function main() {
  if (os.platform() === "win32") {
    // RUNTIME.md, "Platforms": the servers' containment needs POSIX calls Windows lacks.
    fail("Windows is not supported (see RUNTIME.md, Platforms); use WSL 2, where Linux is");
  }
  const args = process.argv.slice(2);
  const deno = denoBinary();
  if (args.length === 1 && args[0] === "--wmcp-prepare") {
    // postinstall: best effort (a failure here is reported again, with its cause, on first use).
    prepare(deno);
    process.exit(0);
  }
  const [first, second] = args;
  if (first !== "--version" && first !== "-V" && !prepare(deno)) process.exit(1);
  // `serve stdio|http` runs the serve launcher's own entry, as the tasks do: cli.ts's module graph
  // (the whole CLI) would cost every server start about 140 ms more (decision 0070).
  const serve = first === "serve" && (second === "stdio" || second === "http");
  const entry = serve ? ["serve.ts", ...args.slice(1)] : ["cli.ts", ...args];
  // The launcher's Deno is also allowed by its own path (on Linux /proc/self/exe names it too).
  const flags = (serve ? PACKAGE.wmcp.launcherFlags : PACKAGE.wmcp.routerFlags).map((f) =>
    f.startsWith("--allow-run=") ? `${f},${deno}` : f
  );
  const child = spawn(
    deno,
    [
      "run",
      ...flags,
      `--config=${path.join(APP, "deno.json")}`,
      path.join(APP, entry[0]),
      ...entry.slice(1),
    ],
    {
      stdio: "inherit",
      env: { ...process.env, INIT_CWD: process.cwd(), DENO_NO_UPDATE_CHECK: "1" },
    },
  );
  for (const sig of FORWARDED) {
    process.on(sig, () => {
      try {
        child.kill(sig);
      } catch {
        // already gone
      }
    });
  }
  child.on("error", (err) => fail(`cannot start ${deno}: ${err.message}`));
  child.on("exit", (code, signal) => {
    if (signal !== null) {
      const n = os.constants.signals[signal] ?? 0;
      process.exit(128 + n);
    }
    process.exit(code ?? 1);
  });
}

main();
