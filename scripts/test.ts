/**
 * `deno task test`: the test suite in a few `deno test` processes at once (shards), each running
 * its files one after another, then one summary line for the whole suite.
 *
 * Why processes, not `deno test --parallel`: `--parallel` runs test modules as threads of one
 * process, which share the working directory (a test calls `Deno.chdir`), the environment and
 * Deno's permission state; every test file here was written to run alone in its process
 * (decision 0040). Separate processes share only the machine.
 *
 * The suite is type-checked once (`deno check`, beside the shards: a failed check stops them and
 * fails the run), and each shard runs `deno test --no-check` on its files. Files are assigned to shards longest first by the durations in tests/durations.json
 * (unknown files count DEFAULT_SECONDS); files of one directory listed in TOGETHER stay in one shard
 * (they build and use the same artefacts). Each file's output is printed whole once the file is
 * done, so the two shards' lines never interleave; a shard's closing part (errors, failures, its
 * summary) is printed when it ends, and the last line is the suite's, in deno's own summary form.
 *
 * Two suites. The default (`deno task -q test`, the README's command) is every test but those in
 * SECOND_SUITE, which take minutes and run as the second command, `deno task -q test:peers`
 * (`--peers`); CI runs both (decisions 0044 and 0052). The second suite is the real peers (the
 * third-party clients and servers installed from npm: MCP Inspector, mcpc, mcp-remote, the AI SDK,
 * the v1 and v2 SDK clients, server-everything, server-filesystem; Node and Bun running the
 * adapters; nginx in front of several servers) and the end-to-end suites of this project's own
 * parts that drive several real processes per case for minutes: the bundled client against real
 * servers, the docs' commands in a fresh clone, host entries started as hosts start them, the
 * launcher's kernel sandbox and engine broker, real terminals and shells.
 *
 * Flags: `--peers` (the second suite instead), `--shards N` (default 2, or WMCP_TEST_SHARDS),
 * `--write-durations` (rewrite tests/durations.json from this run's per-file wall times, keeping
 * the other files' entries; refresh it on an idle machine with both commands, `deno task -q test
 * --write-durations` and `deno task -q test:peers --write-durations`: the shards are balanced by the
 * files' relative weights, which a loaded run distorts). Other
 * arguments go to every shard's `deno test` (`--filter X`, `--fail-fast`); paths among them replace
 * the suite's own files (any test file, of either suite).
 */
import { stripVTControlCharacters } from "node:util";

const REPO = new URL("../", import.meta.url).pathname.replace(/\/$/, "");
const DURATIONS = `${REPO}/tests/durations.json`;
/** The test processes' permissions (what the suite's tests need). */
export const TEST_PERMISSIONS = [
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-env",
  "--allow-net=127.0.0.1,[::1]",
];

/**
 * Where a shard's tests start the native engine's broker (WMCP_TEST_ENGINE_DIR; decision 0054):
 * Deno grants a Unix socket by its exact path only, so each shard gets one known directory, whose
 * socket its net permission names. A shard runs its files one after another, and each test stops
 * its broker (which removes the directory) before the next starts one.
 */
export function shardEngineDir(shard: number): string {
  return `/tmp/wmcp-test-engine-${Deno.pid}-${shard}`;
}

/** A shard's permissions: the suite's, with net on its engine socket too. */
export function shardPermissions(shard: number): string[] {
  return TEST_PERMISSIONS.map((p) =>
    p.startsWith("--allow-net=") ? `${p},unix:${shardEngineDir(shard)}/engine.sock` : p
  );
}
/** Directories whose files share build artefacts (dist/ for the adapters): one shard each. */
const TOGETHER = ["tests/adapters/"];
/**
 * The second suite (directories end in "/"): what `--peers` runs and the default suite leaves out.
 * Each file either installs or starts a third-party program and talks to it through real
 * processes, or runs this project's own parts end to end through several real processes per case.
 */
export const SECOND_SUITE: readonly string[] = [
  "tests/realclients/",
  "tests/adapters/",
  // nginx in front of real instances (tests/deploy/'s other files, config.ts's help, start none).
  "tests/deploy/scale_out_test.ts",
  "tests/npm/",
  "tests/client/peers_test.ts",
  "tests/client/more_peers_test.ts",
  "tests/client/filesystem_peer_test.ts",
  "tests/client/everything_beyond_tools_test.ts",
  // End to end, this project's own parts (about 8 minutes of the first suite's 20 on two cores).
  "tests/client/own_server_test.ts",
  "tests/client/connect_test.ts",
  "tests/client/contract_edges_test.ts",
  "tests/client/auth_flow_test.ts",
  "tests/docs/doc_commands_test.ts",
  "tests/cli/host_config_test.ts",
  "tests/cli/pretty_test.ts",
  // The client against a hostile server on real ptys (script(1)), in both colour modes.
  "tests/security/client_terminal_test.ts",
  // The launcher's kernel sandbox and its engine broker, through the host's real processes.
  "tests/security/sandbox_test.ts",
  "tests/server/engine_launch_test.ts",
  "tests/cli/completion_test.ts",
];

/** Whether a test file belongs to the second suite (`--peers`). */
export function inSecondSuite(file: string): boolean {
  return SECOND_SUITE.some((p) => (p.endsWith("/") ? file.startsWith(p) : file === p));
}

/** The weight of a test file with no recorded duration (seconds). */
const DEFAULT_SECONDS = 2;
const TEST_FILE = /(^|\/)([^/]*[_.])?test\.(ts|tsx|mts|js|mjs|jsx)$/;

/** Test files under `dir` (repository-relative, sorted), as deno test discovers them. */
export async function testFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string) => {
    const entries = [];
    for await (const e of Deno.readDir(`${REPO}/${rel}`)) entries.push(e);
    for (const e of entries) {
      const p = `${rel}/${e.name}`;
      if (e.isDirectory && e.name !== "node_modules" && !e.name.startsWith(".")) await walk(p);
      else if (e.isFile && TEST_FILE.test(p)) out.push(p);
    }
  };
  const st = await Deno.stat(`${REPO}/${dir}`);
  if (st.isFile) return [dir];
  await walk(dir.replace(/\/$/, ""));
  return out.sort();
}

/**
 * Assigns files to `n` shards, heaviest group first to the lightest shard (LPT scheduling);
 * within a shard files keep their sorted order. Deterministic for the same inputs.
 */
export function assignShards(
  files: string[],
  seconds: Record<string, number>,
  n: number,
  together: string[] = TOGETHER,
): string[][] {
  const groups = new Map<string, string[]>();
  for (const f of files) {
    const key = together.find((d) => f.startsWith(d)) ?? f;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  const weight = (g: string[]) => g.reduce((s, f) => s + (seconds[f] ?? DEFAULT_SECONDS), 0);
  const ordered = [...groups.values()].sort((a, b) =>
    weight(b) - weight(a) || (a[0] < b[0] ? -1 : 1)
  );
  const shards = Array.from({ length: n }, () => ({ files: [] as string[], load: 0 }));
  for (const g of ordered) {
    const lightest = shards.reduce((min, s) => (s.load < min.load ? s : min));
    lightest.files.push(...g);
    lightest.load += weight(g);
  }
  return shards.map((s) => s.files.sort()).filter((s) => s.length > 0);
}

/** Totals of one deno test summary line (`ok | 5 passed (3 steps) | 0 failed | 1 ignored ...`). */
export interface Totals {
  passed: number;
  failed: number;
  ignored: number;
  steps: number;
  ignoredSteps: number;
  filtered: number;
}

/**
 * Parses deno's summary line; null for any other line. Deno colours its output unless NO_COLOR is
 * set, piped or not (`\x1b[0m\x1b[32mok\x1b[0m | 1 passed ...`), so escape sequences and a
 * terminal's carriage return are dropped before the line is read.
 */
export function parseSummary(raw: string): Totals | null {
  const line = plain(raw);
  const m = /^(ok|FAILED) \| (\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed/.exec(line);
  if (!m) return null;
  const ignored = /\| (\d+) ignored(?: \((\d+) steps?\))?/.exec(line);
  const filtered = /\| (\d+) filtered out/.exec(line);
  return {
    passed: Number(m[2]),
    steps: Number(m[3] ?? 0),
    failed: Number(m[4]),
    ignored: Number(ignored?.[1] ?? 0),
    ignoredSteps: Number(ignored?.[2] ?? 0),
    filtered: Number(filtered?.[1] ?? 0),
  };
}

/** A line of deno's output without colour or other terminal escape sequences. */
export function plain(line: string): string {
  return stripVTControlCharacters(line).replace(/\r$/, "");
}

/** The suite's summary line, in deno's form. */
export function formatSummary(t: Totals, ok: boolean, ms: number): string {
  const steps = (n: number) => (n > 0 ? ` (${n} step${n === 1 ? "" : "s"})` : "");
  const s = Math.round(ms / 1000);
  const time = s >= 60 ? `${Math.floor(s / 60)}m${s % 60}s` : `${s}s`;
  return `${ok ? "ok" : "FAILED"} | ${t.passed} passed${steps(t.steps)} | ${t.failed} failed` +
    (t.ignored > 0 ? ` | ${t.ignored} ignored${steps(t.ignoredSteps)}` : "") +
    (t.filtered > 0 ? ` | ${t.filtered} filtered out` : "") + ` (${time})`;
}

const encoder = new TextEncoder();
/** Serialises whole blocks onto stdout. */
let writing = Promise.resolve();
function emit(text: string): Promise<void> {
  writing = writing.then(async () => {
    const bytes = encoder.encode(text.endsWith("\n") ? text : text + "\n");
    for (let off = 0; off < bytes.length;) off += await Deno.stdout.write(bytes.subarray(off));
  });
  return writing;
}

interface ShardResult {
  code: number;
  totals: Totals | null;
  /** Wall seconds per file, from its first line to the next file's (or the shard's end). */
  seconds: Record<string, number>;
  /** The failed tests, as deno names them (`name => ./file:line:col`), each once. */
  failures: string[];
}

const RUNNING = /^running \d+ tests? from \.\/(.+)$/;
/** A failed test's line in deno's ERRORS and FAILURES sections. */
const FAILED_TEST = /^\S.* => \.\/\S+:\d+:\d+$/;

/**
 * The failed tests named in deno's output lines, each once, in order. The suite's closing lines
 * repeat them, so a log cut to its tail (CI shows only the end) still says which test failed.
 */
export function failedTests(lines: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const raw of lines) {
    const line = plain(raw);
    if (FAILED_TEST.test(line)) out.add(line);
  }
  return [...out];
}

/** Runs one shard, printing each file's block when it is complete. */
async function runShard(
  shard: number,
  files: string[],
  extra: string[],
  children: Set<Deno.ChildProcess>,
): Promise<ShardResult> {
  // One pipe for both streams (through sh), so a test's stderr stays beside its lines.
  const child = new Deno.Command("/bin/sh", {
    args: [
      "-c",
      'exec "$0" "$@" 2>&1',
      Deno.execPath(),
      "test",
      "--no-check",
      ...shardPermissions(shard),
      ...extra,
      ...files,
    ],
    cwd: REPO,
    env: { WMCP_TEST_ENGINE_DIR: shardEngineDir(shard) },
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  children.add(child);
  const seconds: Record<string, number> = {};
  let block: string[] = [];
  let current: string | null = null;
  let started = performance.now();
  let totals: Totals | null = null;
  const failures = new Set<string>();
  const close = async () => {
    if (current !== null) seconds[current] = (performance.now() - started) / 1000;
    if (block.length > 0) await emit(block.join("\n"));
    block = [];
  };
  let pending = "";
  const decoder = new TextDecoder();
  const onLine = async (line: string) => {
    const m = RUNNING.exec(plain(line));
    if (m) {
      await close();
      current = m[1];
      started = performance.now();
    }
    totals = parseSummary(line) ?? totals;
    for (const f of failedTests([line])) failures.add(f);
    block.push(line);
  };
  for await (const chunk of child.stdout) {
    pending += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = pending.indexOf("\n")) !== -1) {
      await onLine(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
    }
  }
  if (pending.length > 0) await onLine(pending);
  const { code } = await child.status;
  children.delete(child);
  // What follows the last file's tests (errors, failures, the shard's summary) ends its block.
  await close();
  return { code, totals, seconds, failures: [...failures] };
}

/** deno test flags that take their value as the next argument. */
const VALUE_FLAGS = new Set(["--filter", "--ignore", "--reporter", "--junit-path", "--coverage"]);

/** Our flags, the arguments for deno test, and the paths among them. */
export function splitArgs(args: string[]): {
  shards: string | undefined;
  writeDurations: boolean;
  peers: boolean;
  extra: string[];
  paths: string[];
} {
  let shards: string | undefined;
  let writeDurations = false;
  let peers = false;
  const extra: string[] = [];
  const paths: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--shards") shards = args[++i];
    else if (a.startsWith("--shards=")) shards = a.slice("--shards=".length);
    else if (a === "--write-durations") writeDurations = true;
    else if (a === "--peers") peers = true;
    else if (VALUE_FLAGS.has(a) && i + 1 < args.length) extra.push(a, args[++i]);
    else if (a.startsWith("-")) extra.push(a);
    else paths.push(a);
  }
  return { shards, writeDurations, peers, extra, paths };
}

/** `deno check` of the files, its output (both streams) collected for one block. */
async function typeCheck(files: string[]): Promise<{ success: boolean; output: string }> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", 'exec "$0" "$@" 2>&1', Deno.execPath(), "check", "--quiet", ...files],
    cwd: REPO,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).output();
  return { success: out.success, output: new TextDecoder().decode(out.stdout) };
}

async function main(): Promise<number> {
  const { shards: shardsFlag, writeDurations, peers, extra, paths } = splitArgs(Deno.args);
  const asked = shardsFlag ?? Deno.env.get("WMCP_TEST_SHARDS") ?? "2";
  const shardCount = Number(asked);
  if (!Number.isInteger(shardCount) || shardCount < 1 || shardCount > 16) {
    console.error(`test: --shards takes a whole number from 1 to 16, not ${JSON.stringify(asked)}`);
    return 2;
  }
  const files: string[] = [];
  if (paths.length > 0) { for (const p of paths) files.push(...await testFiles(p)); }
  else files.push(...(await testFiles("tests")).filter((f) => inSecondSuite(f) === peers));
  const recorded: Record<string, number> = await Deno.readTextFile(DURATIONS)
    .then((t) => JSON.parse(t), () => ({}));

  const t0 = performance.now();
  const children = new Set<Deno.ChildProcess>();
  let stopped = false;
  const stop = () => {
    stopped = true;
    for (const c of children) {
      try {
        c.kill("SIGTERM");
      } catch { /* already gone */ }
    }
  };
  // The type-check runs beside the shards (they run with --no-check): most of a shard's time is
  // spent waiting on its tests' children, so the check's CPU overlaps that instead of delaying
  // the first test. A check that fails stops the shards at once and fails the run.
  const check = typeCheck(files).then(async (r) => {
    if (r.output.trim() !== "") await emit(r.output);
    if (!r.success) {
      await emit("test: the tests do not type-check (deno check above); stopping the shards");
      stop();
    }
    return r.success;
  });

  const shards = assignShards(files, recorded, shardCount);
  await emit(
    `running ${files.length} test files in ${shards.length} processes (` +
      shards.map((s, i) => `shard ${i + 1}: ${s.length} files`).join(", ") + ")",
  );
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  const results = stopped
    ? []
    : await Promise.all(shards.map((s, i) => runShard(i, s, extra, children)));
  Deno.removeSignalListener("SIGINT", stop);
  Deno.removeSignalListener("SIGTERM", stop);
  const checked = await check;

  const sum: Totals = { passed: 0, failed: 0, ignored: 0, steps: 0, ignoredSteps: 0, filtered: 0 };
  let ok = true;
  for (const [i, r] of results.entries()) {
    if (r.code !== 0) ok = false;
    if (r.totals === null) {
      ok = false;
      await emit(`test: shard ${i + 1} ended (exit ${r.code}) without deno's summary line`);
      continue;
    }
    for (const k of Object.keys(sum) as (keyof Totals)[]) sum[k] += r.totals[k];
  }
  if (sum.failed > 0 || !checked) ok = false;
  if (writeDurations && checked) {
    const merged: Record<string, number> = { ...recorded };
    for (const r of results) {
      for (const [f, s] of Object.entries(r.seconds)) merged[f] = Math.round(s * 10) / 10;
    }
    // Entries of either suite's files are kept (a `test:peers` run keeps the first suite's and
    // the reverse); only files that no longer exist are dropped.
    const existing = new Set(await testFiles("tests"));
    const sorted = Object.fromEntries(
      Object.entries(merged).filter(([f]) => existing.has(f)).sort(),
    );
    await Deno.writeTextFile(DURATIONS, JSON.stringify(sorted, null, 2) + "\n");
  }
  const failures = results.flatMap((r) => r.failures);
  if (failures.length > 0) {
    await emit(["", "test: failed:", ...failures.map((f) => `  ${f}`)].join("\n"));
  }
  await emit("");
  await emit(formatSummary(sum, ok, performance.now() - t0));
  await writing;
  return ok ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main());
