/**
 * scripts/test.ts, the suite's runner: which files it finds, how it splits them across
 * processes, and how it reads and writes deno's summary lines.
 */
import assert from "node:assert/strict";
import {
  assignShards,
  failedTests,
  formatSummary,
  inSecondSuite,
  parseSummary,
  plain,
  SECOND_SUITE,
  splitArgs,
  testFiles,
} from "../../scripts/test.ts";

Deno.test("the runner finds test files by deno's name pattern, sorted, this one among them; a file path is itself", async () => {
  const files = await testFiles("tests");
  assert.ok(files.includes("tests/scripts/test_runner_test.ts"));
  assert.ok(files.every((f) => /(^|\/)([^/]*[_.])?test\.(ts|tsx|mts|js|mjs|jsx)$/.test(f)));
  assert.ok(!files.some((f) => f.includes("/_support/") || f.includes("node_modules")));
  assert.deepEqual(files, [...files].sort());
  assert.deepEqual(await testFiles("tests/scripts/test_runner_test.ts"), [
    "tests/scripts/test_runner_test.ts",
  ]);
});

Deno.test("shards: heaviest first onto the lightest shard; grouped directories stay together", () => {
  const seconds = { "a_test.ts": 90, "b_test.ts": 50, "c_test.ts": 40, "d_test.ts": 10 };
  const files = ["a_test.ts", "b_test.ts", "c_test.ts", "d_test.ts"];
  assert.deepEqual(assignShards(files, seconds, 2, []), [
    ["a_test.ts", "d_test.ts"],
    ["b_test.ts", "c_test.ts"],
  ]);
  // Unknown files weigh DEFAULT_SECONDS (2); the result does not depend on input order.
  assert.deepEqual(
    assignShards(["x_test.ts", "y_test.ts", "z_test.ts"], {}, 2, []),
    assignShards(["z_test.ts", "x_test.ts", "y_test.ts"], {}, 2, []),
  );
  const grouped = assignShards(
    ["g/one_test.ts", "g/two_test.ts", "h_test.ts"],
    { "g/one_test.ts": 1, "g/two_test.ts": 1, "h_test.ts": 1.5 },
    2,
    ["g/"],
  );
  assert.equal(grouped.length, 2);
  assert.ok(grouped.some((s) => s.includes("g/one_test.ts") && s.includes("g/two_test.ts")));
  // Never an empty shard, never a file twice or lost.
  const one = assignShards(["a_test.ts"], {}, 4, []);
  assert.deepEqual(one, [["a_test.ts"]]);
  const many = assignShards(files, seconds, 3, []);
  assert.deepEqual(many.flat().sort(), files);
});

Deno.test("summary lines: deno's forms are read, and the suite's line is written in the same form", () => {
  assert.deepEqual(
    parseSummary("ok | 601 passed (1655 steps) | 0 failed | 1 ignored (3 steps) (15m53s)"),
    { passed: 601, steps: 1655, failed: 0, ignored: 1, ignoredSteps: 3, filtered: 0 },
  );
  assert.deepEqual(parseSummary("FAILED | 600 passed | 1 failed | 3 filtered out (9m6s)"), {
    passed: 600,
    steps: 0,
    failed: 1,
    ignored: 0,
    ignoredSteps: 0,
    filtered: 3,
  });
  assert.equal(parseSummary("ok | 1 passed ... (not a summary)"), null);
  assert.equal(parseSummary("a test named ok | 1 passed | 0 failed"), null);
  const line = formatSummary(
    { passed: 601, steps: 1655, failed: 0, ignored: 1, ignoredSteps: 3, filtered: 0 },
    true,
    (9 * 60 + 6) * 1000,
  );
  assert.equal(line, "ok | 601 passed (1655 steps) | 0 failed | 1 ignored (3 steps) (9m6s)");
  // What .ci/run reads off the last line.
  assert.match(line, /^(ok|FAILED) \| [0-9]+ passed/);
  assert.deepEqual(parseSummary(line), {
    passed: 601,
    steps: 1655,
    failed: 0,
    ignored: 1,
    ignoredSteps: 3,
    filtered: 0,
  });
  assert.equal(
    formatSummary(
      { passed: 2, steps: 1, failed: 1, ignored: 0, ignoredSteps: 0, filtered: 0 },
      false,
      4_400,
    ),
    "FAILED | 2 passed (1 step) | 1 failed (4s)",
  );
});

Deno.test("summary lines: deno's coloured forms (what it prints unless NO_COLOR is set) read the same", () => {
  const coloured =
    "\x1b[0m\x1b[32mok\x1b[0m | 8 passed (2 steps) | 0 failed \x1b[0m\x1b[38;5;245m(10ms)\x1b[0m";
  assert.deepEqual(parseSummary(coloured), {
    passed: 8,
    steps: 2,
    failed: 0,
    ignored: 0,
    ignoredSteps: 0,
    filtered: 0,
  });
  assert.deepEqual(
    parseSummary("\x1b[0m\x1b[1m\x1b[31mFAILED\x1b[0m | 7 passed | 1 failed | 2 ignored (4ms)\r"),
    { passed: 7, steps: 0, failed: 1, ignored: 2, ignoredSteps: 0, filtered: 0 },
  );
  assert.equal(
    plain("\x1b[0m\x1b[38;5;245mrunning 2 tests from ./a_test.ts\x1b[0m\r"),
    "running 2 tests from ./a_test.ts",
  );
  assert.equal(parseSummary("\x1b[32ma test named ok | 1 passed | 0 failed\x1b[0m"), null);
});

/** Runs the real runner on the fixture module, with or without NO_COLOR. */
async function runRunner(env: Record<string, string>, noColor: boolean) {
  const environment = { ...Deno.env.toObject(), ...env };
  delete environment.NO_COLOR;
  if (noColor) environment.NO_COLOR = "1";
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      "--allow-read",
      "--allow-run",
      "--allow-env",
      "scripts/test.ts",
      "--shards",
      "1",
      "tests/_support/runner_fixture.ts",
    ],
    cwd: new URL("../../", import.meta.url).pathname,
    env: environment,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  const lines = text.trimEnd().split("\n");
  return { code: out.code, text, last: lines[lines.length - 1] };
}

for (const noColor of [false, true]) {
  const how = noColor ? "NO_COLOR=1" : "colours on (no NO_COLOR)";
  Deno.test(`the runner reads its shards' summaries with ${how}: passing and failing runs`, async () => {
    const pass = await runRunner({}, noColor);
    assert.equal(pass.code, 0, pass.text);
    assert.doesNotMatch(pass.text, /without deno's summary line/);
    // The shard's own summary came through as deno printed it: coloured unless NO_COLOR.
    assert.equal(pass.text.includes("\x1b["), !noColor, pass.text);
    assert.match(pass.last, /^ok \| 2 passed \| 0 failed \(\d+s\)$/);

    const fail = await runRunner({ WMCP_RUNNER_FIXTURE_FAIL: "1" }, noColor);
    assert.equal(fail.code, 1, fail.text);
    assert.doesNotMatch(fail.text, /without deno's summary line/);
    assert.match(fail.last, /^FAILED \| 1 passed \| 1 failed \(\d+s\)$/);
    // The closing lines name the failed test once more, just above the summary.
    const tail = fail.text.trimEnd().split("\n").slice(-4).map(plain);
    assert.deepEqual(tail.slice(0, 2), [
      "test: failed:",
      "  runner fixture: fails only when asked => ./tests/_support/runner_fixture.ts:8:6",
    ]);
    assert.doesNotMatch(pass.text, /test: failed:/);
  });
}

Deno.test("failedTests: each failed test once, from coloured ERRORS and FAILURES lines", () => {
  const named = "\x1b[0ma > b => ./tests/x_test.ts:3:6\x1b[0m\r";
  assert.deepEqual(
    failedTests([
      " ERRORS ",
      named,
      "error: Error: no",
      " FAILURES ",
      "a > b => ./tests/x_test.ts:3:6",
      "ok => not a location",
      "  indented => ./tests/x_test.ts:1:1",
    ]),
    ["a > b => ./tests/x_test.ts:3:6"],
  );
});

Deno.test("arguments: --shards and --write-durations are the runner's; the rest go to deno test", () => {
  assert.deepEqual(
    splitArgs(["--shards", "3", "--filter", "read file", "tests/cli/", "--fail-fast"]),
    {
      shards: "3",
      writeDurations: false,
      peers: false,
      extra: ["--filter", "read file", "--fail-fast"],
      paths: ["tests/cli/"],
    },
  );
  assert.deepEqual(splitArgs(["--shards=1", "--write-durations", "--peers", "--filter=x"]), {
    shards: "1",
    writeDurations: true,
    peers: true,
    extra: ["--filter=x"],
    paths: [],
  });
});

Deno.test("two suites: the real peers and the end-to-end suites are the second command's, every other file the first's", async () => {
  const files = await testFiles("tests");
  const peers = files.filter(inSecondSuite);
  // Each entry of SECOND_SUITE names files that exist (a renamed suite would silently move).
  for (const p of ["tests/realclients/", "tests/adapters/"]) {
    assert.ok(peers.some((f) => f.startsWith(p)), p);
  }
  for (
    const f of [
      "tests/deploy/scale_out_test.ts",
      "tests/client/peers_test.ts",
      "tests/client/more_peers_test.ts",
      "tests/client/filesystem_peer_test.ts",
      "tests/client/own_server_test.ts",
      "tests/docs/doc_commands_test.ts",
      "tests/security/client_terminal_test.ts",
      "tests/security/sandbox_test.ts",
    ]
  ) assert.ok(peers.includes(f), f);
  // Every entry names a file or a directory that holds test files.
  for (const p of SECOND_SUITE) {
    assert.ok(files.some((f) => inSecondSuite(f) && f.startsWith(p)), p);
  }
  // The default suite keeps the contract, security and in-process client tests.
  for (
    const f of [
      "tests/contract/contract_test.ts",
      "tests/security/client_response_cap_test.ts",
      "tests/cli/help_test.ts",
      "tests/scripts/test_runner_test.ts",
      // deploy/nginx/config.ts's own flags: no nginx, so the quick suite.
      "tests/deploy/config_help_test.ts",
    ]
  ) assert.ok(files.includes(f) && !inSecondSuite(f), f);
  assert.ok(!inSecondSuite("tests/client/peers_test.tsx"));
});
