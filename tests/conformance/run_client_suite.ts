/**
 * Runs the official MCP conformance suite's client scenarios against the bundled client
 * (through client_adapter.sh), one scenario at a time, and summarizes each scenario's
 * checks.json. Not a test file: a CI step.
 *
 *   CONFORMANCE_BIN=/path/to/node_modules/.bin deno run --allow-env --allow-read \
 *     --allow-write=.ci-out --allow-run tests/conformance/run_client_suite.ts [SCENARIO...]
 *
 * CONFORMANCE_BIN is the directory holding the suite's `conformance` bin and Node 22's `node`
 * (it is put first on PATH). Results go to .ci-out/conformance/client/<scenario>-<time>/.
 * Exit 1 when any scenario has a failed or warning check, reports no checks (or no passed
 * check: the suite lets a do-nothing client through on some scenarios), or the suite itself
 * reports failure.
 */

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const WRAPPER = `${ROOT}/tests/conformance/client_adapter.sh`;
const OUT = `${ROOT}/.ci-out/conformance/client`;

/** A scenario and the spec version it is run at (undefined: the suite's default for it). */
interface Scenario {
  name: string;
  specVersion?: "2026-07-28" | "2025-11-25";
}

const MODERN = "2026-07-28" as const;
const LEGACY = "2025-11-25" as const;

/** The scored auth/* client scenarios of the 2025-11-25 requirement set (conformance 0.2.0-alpha.12). */
const AUTH_2025 = [
  "auth/metadata-default",
  "auth/metadata-var1",
  "auth/metadata-var2",
  "auth/metadata-var3",
  "auth/basic-cimd",
  "auth/scope-from-www-authenticate",
  "auth/scope-from-scopes-supported",
  "auth/scope-omitted-when-undefined",
  "auth/scope-step-up",
  "auth/scope-retry-limit",
  "auth/token-endpoint-auth-basic",
  "auth/token-endpoint-auth-post",
  "auth/token-endpoint-auth-none",
  "auth/pre-registration",
];

/** The 2026-07-28 set: the same, plus these. */
const AUTH_2026 = [
  ...AUTH_2025,
  "auth/resource-mismatch",
  "auth/offline-access-scope",
  "auth/offline-access-not-supported",
  "auth/authorization-server-migration",
  "auth/iss-supported",
  "auth/iss-not-advertised",
  "auth/iss-supported-missing",
  "auth/iss-wrong-issuer",
  "auth/iss-unexpected",
  "auth/iss-normalized",
  "auth/metadata-issuer-mismatch",
];

/**
 * The scenarios the bundled client covers; tools_call is run at both revisions it exists in,
 * the auth scenarios at the revision of each requirement set that scores them.
 */
const SCENARIOS: Scenario[] = [
  { name: "initialize" },
  { name: "tools_call" },
  { name: "tools_call", specVersion: MODERN },
  { name: "elicitation-sep1034-client-defaults" },
  { name: "sse-retry" },
  { name: "json-schema-2020-12-preservation" },
  { name: "json-schema-2020-12-preservation", specVersion: MODERN },
  { name: "request-metadata", specVersion: MODERN },
  { name: "sep-2322-client-request-state", specVersion: MODERN },
  { name: "http-standard-headers", specVersion: MODERN },
  { name: "http-custom-headers", specVersion: MODERN },
  { name: "http-invalid-tool-headers", specVersion: MODERN },
  { name: "json-schema-ref-no-deref", specVersion: MODERN },
  // MCP authorization: every scored auth scenario of both sets, each at its set's revision.
  ...AUTH_2025.map((name) => ({ name, specVersion: LEGACY })),
  ...AUTH_2026.map((name) => ({ name, specVersion: MODERN })),
];

interface Check {
  id: string;
  status: string;
  description?: string;
  errorMessage?: string;
}

interface Row {
  label: string;
  passed: number;
  failed: number;
  warnings: number;
  other: number;
  verdict: "PASS" | "FAIL";
  why: string[];
  ms: number;
  resultDir?: string;
}

async function runScenario(
  s: Scenario,
  bin: string,
  env: Record<string, string>,
): Promise<Row> {
  const label = s.specVersion ? `${s.name}@${s.specVersion}` : s.name;
  const args = ["client", "--command", WRAPPER, "--scenario", s.name, "-o", OUT];
  if (s.specVersion) args.push("--spec-version", s.specVersion);
  const started = performance.now();
  const out = await new Deno.Command(`${bin}/conformance`, {
    args,
    env,
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = Math.round(performance.now() - started);
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  const why: string[] = [];
  const saved = text.match(/^Results saved to (.+)$/m)?.[1]?.trim();
  let checks: Check[] = [];
  if (!saved) {
    why.push(/SKIPPED: /.test(text) ? "scenario skipped by the suite" : "no results directory");
  } else {
    try {
      checks = JSON.parse(await Deno.readTextFile(`${saved}/checks.json`));
    } catch (err) {
      why.push(`cannot read checks.json: ${(err as Error).message}`);
    }
  }
  const count = (status: string) => checks.filter((c) => c.status === status).length;
  const row: Row = {
    label,
    passed: count("SUCCESS"),
    failed: count("FAILURE"),
    warnings: count("WARNING"),
    other: checks.length - count("SUCCESS") - count("FAILURE") - count("WARNING"),
    verdict: "PASS",
    why,
    ms,
    resultDir: saved,
  };
  if (saved) {
    // The adapter checks what the suite cannot (an exit code: 8 where the client must refuse).
    const clientErr = await Deno.readTextFile(`${saved}/stderr.txt`).catch(() => "");
    const failed = clientErr.match(/^\[adapter\] (.*)\n\[adapter\] scenario failed.*$/m);
    if (failed) why.push(`the adapter failed the scenario: ${failed[1]}`);
  }
  if (saved && checks.length === 0) why.push("zero checks");
  else if (saved && row.passed === 0) why.push("no passed check");
  for (const c of checks) {
    if (c.status === "FAILURE" || c.status === "WARNING") {
      why.push(`${c.status} ${c.id}: ${c.errorMessage ?? c.description ?? ""}`);
    }
  }
  if (out.code !== 0) why.push(`the suite exited ${out.code}`);
  if (/CLIENT TIMED OUT/.test(text)) why.push("the client timed out");
  if (!/OVERALL: PASSED/.test(text)) why.push("the suite did not report OVERALL: PASSED");
  if (why.length > 0) {
    row.verdict = "FAIL";
    console.error(`\n--- ${label}: suite output ---\n${text.trimEnd()}\n---`);
  }
  return row;
}

function table(rows: Row[]): string {
  const head = ["scenario", "passed", "failed", "warnings", "verdict", "time"];
  const body = rows.map((r) => [
    r.label,
    String(r.passed),
    String(r.failed),
    String(r.warnings),
    r.verdict,
    `${(r.ms / 1000).toFixed(1)}s`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join(" | ");
  return [fmt(head), widths.map((w) => "-".repeat(w)).join("-|-"), ...body.map(fmt)].join("\n");
}

async function main(argv: string[]): Promise<number> {
  const bin = Deno.env.get("CONFORMANCE_BIN");
  if (!bin) {
    console.error("CONFORMANCE_BIN must name the directory holding `conformance` and `node`");
    return 2;
  }
  const selected = argv.length === 0
    ? SCENARIOS
    : SCENARIOS.filter((s) =>
      argv.includes(s.name) || argv.includes(`${s.name}@${s.specVersion ?? ""}`)
    );
  if (selected.length === 0) {
    console.error(`no known scenario among: ${argv.join(" ")}`);
    return 2;
  }
  const env = Deno.env.toObject();
  env.PATH = `${bin}:${env.PATH ?? ""}`;
  delete env.INIT_CWD;
  await Deno.mkdir(OUT, { recursive: true });
  const rows: Row[] = [];
  const started = performance.now();
  for (const s of selected) {
    const row = await runScenario(s, bin, env);
    console.error(`${row.verdict} ${row.label} (${row.ms} ms)`);
    rows.push(row);
  }
  console.log(table(rows));
  const failed = rows.filter((r) => r.verdict === "FAIL");
  for (const r of failed) {
    console.log(`\n${r.label}: FAIL${r.resultDir ? ` (${r.resultDir})` : ""}`);
    for (const w of r.why) console.log(`  - ${w}`);
  }
  const total = rows.reduce((n, r) => n + r.passed, 0);
  console.log(
    `\n${rows.length - failed.length}/${rows.length} scenarios passed, ${total} passed checks, ${
      ((performance.now() - started) / 1000).toFixed(1)
    } s; results in ${OUT}`,
  );
  return failed.length === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
