/**
 * Runs every row of the contract table (cases.ts) through the five adapters and asserts
 * the same meaning everywhere: result, error code/argument/details, files afterwards,
 * nothing touched outside. Servers are started once per configuration and shared by the
 * cases (each in its own subdirectory).
 *
 * The CLI fallback runs the table in process: the CLI's `main(argv)` with the same argv, its
 * output contract (one JSON line on stdout, or exit 1/2 with one JSON error object on stderr) and
 * exit code captured as a real run's (decision 0052). A fixed sample (realChildSample: each
 * operation's first success, each exit class, the answers where a path reaches outside the
 * child's grants, every case whose arguments go through stdin) also runs as real `cli.ts`
 * children with read (and, with --write, write) permission on the root only: each must meet the
 * table's expectation and answer the same exit code, stdout and stderr as main in process. The
 * stdio and HTTP servers and `op list` are real children.
 */
import assert from "node:assert/strict";
import { CASES } from "./cases.ts";
import { pool } from "../_support/pool.ts";
import {
  type Adapter,
  type CaseRun,
  cliAdapter,
  type CliCaseRun,
  cliOpList,
  configOf,
  httpAdapter,
  libraryAdapter,
  listedToolDefinitions,
  OUTSIDE_SNAPSHOT,
  startHttpServers,
  stdioAdapter,
} from "./_adapters.ts";
import {
  type AdapterName,
  type Case,
  comparable,
  type ConfigName,
  CONFIGS,
  fixtureSnapshot,
  normalizeOutcome,
  normalizeResult,
  type Paths,
  sortKeys,
} from "./_model.ts";
import { ERROR_CODES } from "../../mod.ts";
import { READ_TOOLS } from "../server/_harness.ts";
import type { Client } from "@modelcontextprotocol/client";

const ALL_TOOLS = [
  ...READ_TOOLS,
  "write_file",
  "edit_file",
  "create_directory",
  "move_path",
  "copy_path",
  "delete_path",
];

/**
 * Error codes the table cannot produce deterministically through the public interface,
 * and why (each is covered elsewhere or not reachable).
 */
const NOT_IN_TABLE: Record<string, string> = {
  CHANGED_DURING_OPERATION: "needs a swap between check and use (tests/security/toctou_test.ts)",
  PERMISSION_DENIED:
    "needs an unreadable file (tests run as root here) or a root outside Deno's permissions",
  CANCELLED: "needs a cancelled request (tests/server/cancel_progress_test.ts)",
  TIME_BUDGET_EXCEEDED: "needs work that outlasts the time budget (tests/security/runaway_test.ts)",
  NO_ROOT: "needs a client that names roots to a stdio server (tests/server/client_roots_test.ts)",
  IO_ERROR:
    "the fallback for unexpected operating-system failures; none can be provoked deterministically",
};

/** Configurations the table uses (servers are started only for these). */
const USED_CONFIGS = [...new Set(CASES.map(configOf))] as ConfigName[];

function assertCase(c: Case, adapter: AdapterName, run: CaseRun): void {
  const expect = c.byAdapter?.[adapter] ?? c.expect;
  const actual = normalizeOutcome(run.outcome, {
    prefix: run.prefix,
    op: c.op,
    mask: c.mask,
    places: run.places,
  });
  const { expected, actual: got } = comparable(expect, actual);
  assert.deepStrictEqual(
    got,
    expected,
    `${adapter}: outcome differs (raw: ${JSON.stringify(run.outcome)})`,
  );
  assert.deepStrictEqual(
    run.after,
    fixtureSnapshot(c.after ?? c.fixture ?? {}),
    `${adapter}: files on disk afterwards`,
  );
  if (CONFIGS[configOf(c)].readOnlyRoot) {
    assert.deepStrictEqual(
      run.second?.after,
      fixtureSnapshot(c.secondAfter ?? c.second ?? {}),
      `${adapter}: files in the second root afterwards`,
    );
  }
  assert.deepStrictEqual(run.outsideAfter, OUTSIDE_SNAPSHOT, `${adapter}: outside untouched`);
  if (run.outcome.kind === "error") {
    const { code, message } = run.outcome.error;
    if (run.second !== null && code === "OUTSIDE_WORKSPACE") {
      const roots = `(the roots: ${run.root}, ${run.second.root} (read-only))`;
      assert.ok(message.endsWith(roots), `${adapter}: the message names the roots: ${message}`);
    }
    // Errors speak in workspace-relative paths: the host's absolute paths appear in a
    // message only when the caller sent them. With several roots the roots are no secret
    // (workspace_info lists them; errors may name them): only the outside directory is.
    const sent = JSON.stringify(run.args);
    for (const abs of run.second === null ? [run.root, run.outside] : [run.outside]) {
      if (sent.includes(abs)) continue;
      assert.ok(
        !message.includes(abs),
        `${adapter}: the error message reveals ${abs}: ${message}`,
      );
    }
  }
}

/**
 * Runs all cases through an adapter, then asserts each as its own step. Cases run
 * concurrently, except the adapter's known disagreements, which run afterwards one at a
 * time: a disagreement must not disturb the other cases (on modern HTTP, a -32020 makes
 * the v2 client evict and refetch its tools/list cache, and calls made meanwhile go out
 * without their Mcp-Param-* headers).
 */
async function runTable(
  t: Deno.TestContext,
  adapter: Adapter,
  concurrency: number,
  only: (c: Case, i: number) => boolean = () => true,
): Promise<CaseRun[]> {
  const runOne = async (c: Case, i: number): Promise<CaseRun> => {
    try {
      return await adapter.run(c, i);
    } catch (err) {
      return {
        outcome: { kind: "other", detail: `adapter threw: ${(err as Error).stack ?? err}` },
        prefix: null,
        places: [],
        second: null,
        after: {},
        outsideAfter: {},
        root: "",
        outside: "",
        args: {},
      };
    }
  };
  const isolated = (c: Case) => c.ignore?.[adapter.name] !== undefined;
  const runs: CaseRun[] = new Array(CASES.length);
  await pool(CASES, concurrency, async (c, i) => {
    if (only(c, i) && !isolated(c)) runs[i] = await runOne(c, i);
  });
  for (const [i, c] of CASES.entries()) if (only(c, i) && isolated(c)) runs[i] = await runOne(c, i);
  for (const [i, c] of CASES.entries()) {
    if (!only(c, i)) continue;
    const reason = c.ignore?.[adapter.name];
    await t.step({
      name: `${c.name}${reason ? ` [KNOWN DISAGREEMENT: ${reason}]` : ""}`,
      ignore: reason !== undefined,
      fn: () => assertCase(c, adapter.name, runs[i]),
    });
  }
  return runs;
}

/** The parts of a tool definition the CLI's `op list` and tools/list must agree on. */
function definitionView(d: Record<string, unknown>) {
  return {
    name: d.name,
    title: d.title,
    description: d.description,
    inputSchema: d.inputSchema,
    outputSchema: d.outputSchema,
    annotations: { title: d.title, ...(d.annotations as object) },
  };
}

/**
 * An `op list` definition as tools/list must show it: read_media's structuredContent has no
 * `data` (the payload is its media block), so its outputSchema is the CLI's without `data`.
 */
function asListed(d: Record<string, unknown>): Record<string, unknown> {
  if (d.name !== "read_media") return d;
  const schema = structuredClone(d.outputSchema) as {
    properties: Record<string, unknown>;
    required: string[];
  };
  delete schema.properties.data;
  schema.required = schema.required.filter((k) => k !== "data");
  return { ...d, outputSchema: schema };
}

/** Asserts each server lists exactly the CLI's operations for its mode, definition for definition. */
async function assertListings(
  t: Deno.TestContext,
  clients: Map<ConfigName, Client>,
): Promise<void> {
  await t.step(
    "tools/list equals `op list` (write tools only in read-write mode; read_media's outputSchema without data)",
    async () => {
      const cli = { ro: await cliOpList(false), rw: await cliOpList(true) };
      assert.deepEqual(cli.ro.map((o) => o.name), READ_TOOLS);
      assert.deepEqual(cli.rw.map((o) => o.name), ALL_TOOLS);
      for (const [config, client] of clients) {
        const mode = CONFIGS[config].write ? "rw" : "ro";
        const listed = await listedToolDefinitions(client);
        assert.deepStrictEqual(
          listed.map(definitionView),
          cli[mode].map(asListed).map(definitionView),
          `${config}: tools/list vs op list`,
        );
      }
    },
  );
}

Deno.test("contract table is well-formed", () => {
  const names = new Set<string>();
  for (const c of CASES) {
    assert.ok(!names.has(c.name), `duplicate case name ${c.name}`);
    names.add(c.name);
  }
  const ops = new Set(CASES.filter((c) => "result" in c.expect).map((c) => c.op));
  assert.deepEqual([...ops].sort(), [...ALL_TOOLS].sort(), "every operation has a success case");
  for (const name of Object.keys(CLI_REAL_ANCHORS)) {
    assert.ok(names.has(name), `a CLI real-child anchor row is not in the table: ${name}`);
  }
  const codes = new Set(
    CASES.flatMap((c) => "error" in c.expect ? [c.expect.error.code] : []),
  );
  assert.deepEqual(
    [...codes].sort(),
    ERROR_CODES.filter((code) => !(code in NOT_IN_TABLE)).sort(),
    "every error code the public interface can produce deterministically has a case",
  );
});

Deno.test("contract: (1) library", async (t) => {
  const adapter = await libraryAdapter();
  try {
    await runTable(t, adapter, 8);
  } finally {
    await adapter.close();
  }
});

Deno.test("contract: (2) CLI fallback", async (t) => {
  const adapter = await cliAdapter("in-process");
  try {
    await runTable(t, adapter, 12);
  } finally {
    await adapter.close();
  }
});

/**
 * Rows that run through a real CLI child besides each operation's first success, every usage
 * error and every case on stdin (realChildSample), each with the claim the process boundary
 * could change: an exit class, or an answer under --allow-read=ROOT (and --allow-write=ROOT)
 * only, where a path reaches outside the grants and Deno, not only the workspace's own checks,
 * could answer first.
 */
const CLI_REAL_ANCHORS: Record<string, string> = {
  "NOT_FOUND: read_file of a missing file": "exit 1: an operation's typed error",
  "INVALID_ARGUMENT: endLine before startLine":
    "exit 1: INVALID_ARGUMENT from the operation (a refinement beyond the input schema)",
  "INVALID_ARGUMENT: unknown argument": "exit 2: INVALID_ARGUMENT from the input schema check",
  "READ_ONLY: write_file in read-only mode (servers do not list it: unknown tool)":
    "a write asked of a child granted no write at all is READ_ONLY",
  "get_file_info: symlink leading outside (target not shown)":
    "a link out described, never followed, with no read outside the root",
  "OUTSIDE_WORKSPACE: .. escapes the root": "a lexical escape",
  "OUTSIDE_WORKSPACE: absolute path elsewhere": "an absolute path outside the read grant",
  "OUTSIDE_WORKSPACE: through a symlink that leads outside": "a read through a link out",
  "OUTSIDE_WORKSPACE: write_file through a link out creates nothing outside":
    "a write through a link out, outside the write grant",
  "OUTSIDE_WORKSPACE: move_path destination outside": "a write's destination outside the grants",
  "roots: read_file by an absolute path in the second root (result path absolute)":
    "a read in the second root, under the child's read grant on both roots",
  "READ_ONLY: write_file in the read-only root creates nothing":
    "a write under the read-only root, which the child may read but not write",
};

/**
 * The cases that also run through a real CLI child (the anchor of the in-process table, decision
 * 0052): the first success of each operation (exit 0, one JSON line, each operation's reads and
 * writes under the child's scoped grants), every usage error (exit 2, USAGE), every case whose
 * arguments go through stdin (`--arguments-stdin`, which has no in-process counterpart: the run in
 * process gets the same JSON through --arguments), and the rows CLI_REAL_ANCHORS names.
 */
function realChildSample(): Set<number> {
  const picked = new Set<number>();
  const seen = new Set<string>();
  const p = ((rel: string) => rel) as Paths;
  p.abs = (rel) => `/ws/${rel}`;
  p.out = (rel) => `/outside/${rel}`;
  p.second = (rel) => `/second/${rel}`;
  for (const [i, c] of CASES.entries()) {
    const expect = c.byAdapter?.cli ?? c.expect;
    const firstSuccess = "result" in expect && !seen.has(c.op);
    if ("result" in expect) seen.add(c.op);
    const viaStdin = JSON.stringify(c.args(p)).length > 64 * 1024;
    if (firstSuccess || "usage" in expect || viaStdin || c.name in CLI_REAL_ANCHORS) picked.add(i);
  }
  return picked;
}

/**
 * A CLI run's exit code and output, comparable across runs: the run's own root, outside
 * directory and second root spelled <root>, <outside> and <second>; stdout's result normalised
 * as the table normalises it (timestamps, directory sizes, workspace_info's process-dependent
 * permission states); stderr's error object whole, its message included.
 */
function cliView(c: Case, run: CliCaseRun) {
  const local = (v: unknown): unknown => {
    if (typeof v === "string") {
      const s = v.replaceAll(run.outside, "<outside>").replaceAll(run.root, "<root>");
      return run.second === null ? s : s.replaceAll(run.second.root, "<second>");
    }
    if (Array.isArray(v)) return v.map(local);
    if (v && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, local(x)]));
    }
    return v;
  };
  const { code, stdout, stderr } = run.raw;
  return {
    code,
    stdout: stdout === ""
      ? ""
      : normalizeResult(local(JSON.parse(stdout)), { prefix: null, op: c.op, mask: c.mask }),
    stderr: stderr === "" ? "" : sortKeys(local(JSON.parse(stderr))),
  };
}

Deno.test("contract: (2b) CLI fallback as a real child, a sample of the table", async (t) => {
  const sample = realChildSample();
  assert.ok(sample.size >= 15 && sample.size < CASES.length / 2, `${sample.size} cases`);
  const child = await cliAdapter("child");
  const here = await cliAdapter("in-process");
  try {
    const reals = await runTable(t, child, 8, (_c, i) => sample.has(i)) as Partial<CliCaseRun>[];
    const picked = [...sample].sort((a, b) => a - b);
    const heres = await pool(picked, 4, (i) => here.run(CASES[i], i));
    for (const [k, i] of picked.entries()) {
      const c = CASES[i];
      await t.step(`the real child answers as main in process: ${c.name}`, () => {
        const real = reals[i];
        assert.ok(real.raw !== undefined, `the real child ran: ${JSON.stringify(real.outcome)}`);
        assert.deepStrictEqual(
          cliView(c, real as CliCaseRun),
          cliView(c, heres[k]),
          "real child vs in process: exit code, stdout, stderr",
        );
      });
    }
    await t.step("the sample holds each exit class and every operation's success", () => {
      const classes = new Set(picked.map((i) => {
        const { code, stderr } = heres[picked.indexOf(i)].raw;
        return code === 2 ? `2 ${JSON.parse(stderr).error.code}` : `${code}`;
      }));
      assert.deepEqual([...classes].sort(), ["0", "1", "2 INVALID_ARGUMENT", "2 USAGE"]);
      const succeeded = new Set(
        picked.filter((_, k) => heres[k].raw.code === 0).map((i) => CASES[i].op),
      );
      assert.deepEqual([...succeeded].sort(), [...ALL_TOOLS].sort());
    });
  } finally {
    await child.close();
    await here.close();
  }
});

Deno.test("contract: (3) stdio server", async (t) => {
  const adapter = await stdioAdapter(USED_CONFIGS);
  try {
    await assertListings(t, adapter.clients);
    await runTable(t, adapter, 8);
  } finally {
    await adapter.close();
  }
});

Deno.test("contract: (4, 5) HTTP server, modern and legacy eras", async (t) => {
  const http = await startHttpServers(USED_CONFIGS);
  let stopped = false;
  try {
    for (const era of ["modern", "legacy"] as const) {
      await t.step(`${era} era`, async (t) => {
        const adapter = await httpAdapter(http, era);
        try {
          await assertListings(t, adapter.clients);
          await runTable(t, adapter, 8);
        } finally {
          await adapter.close();
        }
      });
    }
    const statuses = await http.close();
    stopped = true;
    for (const s of statuses) assert.equal(s.code, 0, "HTTP server exits 0 on SIGTERM");
  } finally {
    if (!stopped) await http.close();
  }
});
