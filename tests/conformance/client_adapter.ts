/**
 * Client adapter for the official MCP conformance suite (`conformance client --command ...`).
 *
 * The suite starts a mock server per scenario and runs `<command> <serverUrl>` with
 * MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and, for some scenarios,
 * MCP_CONFORMANCE_CONTEXT (JSON) in the environment. This script maps each scenario onto
 * invocations of the real `cli.ts server-info | tools ...`, each a child process with scoped
 * permissions. It implements no protocol itself: it only chooses commands and flags, writes
 * the input files those flags name, and reads the CLI's own JSON output where a scenario asks
 * the client to act on what it listed.
 *
 * Invoked by client_adapter.sh: `client_adapter.ts --work DIR [suite args...] <serverUrl>`.
 * Exit code: 0 when every CLI invocation ended as the scenario requires (normally exit 0),
 * else the first unexpected CLI exit code (64 for an adapter usage error).
 */
import { cliArgv } from "../_support/cli.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const DENO_JSON = `${ROOT}/deno.json`;

/** What one CLI run produced. */
interface Run {
  code: number;
  stdout: string;
}

function log(message: string): void {
  console.error(`[adapter] ${message}`);
}

class AdapterError extends Error {
  constructor(message: string, readonly code: number) {
    super(message);
  }
}

function parseArgs(argv: string[]): { work: string; url: string } {
  const i = argv.indexOf("--work");
  if (i === -1 || argv[i + 1] === undefined) throw new AdapterError("--work DIR is required", 64);
  const url = argv.at(-1);
  if (url === undefined || i + 1 === argv.length - 1) {
    throw new AdapterError("the server URL (last argument) is missing", 64);
  }
  try {
    new URL(url);
  } catch {
    throw new AdapterError(`the last argument is not a URL: ${JSON.stringify(url)}`, 64);
  }
  return { work: argv[i + 1], url };
}

/**
 * Runs `cli.ts ARGS` as a child: read access to the work dir only, loopback network, env
 * (inherited from the wrapper, which drops INIT_CWD), no run/write. Its stdout and stderr are
 * passed through (the suite records them); stdout is also returned for the JSON it carries.
 */
async function cli(work: string, args: string[], stdin?: string): Promise<Run> {
  log(`+ wmcp ${args.map((a) => (/^[\w./:@=-]+$/.test(a) ? a : JSON.stringify(a))).join(" ")}`);
  const child = new Deno.Command("deno", {
    args: cliArgv([
      "--quiet",
      "--no-prompt",
      "--config",
      DENO_JSON,
      `--allow-read=${work}`,
      "--allow-env",
      "--allow-net=127.0.0.1,localhost,[::1]",
    ], args),
    cwd: work,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const out = await child.output();
  const stdout = new TextDecoder().decode(out.stdout);
  for (let done = 0; done < out.stdout.length;) {
    done += await Deno.stdout.write(out.stdout.subarray(done));
  }
  log(`exit ${out.code}`);
  return { code: out.code, stdout };
}

/** Fails the scenario unless the run ended with `expected`. */
function expect(run: Run, expected = 0): Run {
  if (run.code !== expected) {
    throw new AdapterError(`wmcp exited ${run.code}, expected ${expected}`, run.code || 1);
  }
  return run;
}

/** Parses the one JSON document the CLI printed (mcp-json and json outputs print one line). */
// deno-lint-ignore no-explicit-any
function json(run: Run): any {
  try {
    return JSON.parse(run.stdout);
  } catch {
    throw new AdapterError(`wmcp printed no single JSON document: ${run.stdout.slice(0, 500)}`, 1);
  }
}

/** JSONL for `tools run`: one `{"name","arguments"}` per line. */
function jsonl(calls: { name: string; arguments?: Record<string, unknown> }[]): string {
  return calls.map((c) => JSON.stringify({ name: c.name, arguments: c.arguments ?? {} }) + "\n")
    .join("");
}

/**
 * Plausible arguments for a tool, from its inputSchema's required properties (the scenario
 * gives none): a string, integer, number or boolean example per required property.
 */
function exampleArguments(tool: Record<string, unknown>): Record<string, unknown> {
  const schema = tool.inputSchema as
    | { properties?: Record<string, { type?: unknown }>; required?: string[] }
    | undefined;
  const out: Record<string, unknown> = {};
  for (const name of schema?.required ?? []) {
    const type = schema?.properties?.[name]?.type;
    out[name] = type === "integer" || type === "number"
      ? 1
      : type === "boolean"
      ? true
      : "conformance";
  }
  return out;
}

/** The client ID metadata document URL the auth/basic-cimd scenario expects as client_id. */
const CIMD_URL = "https://conformance-test.local/client-metadata.json";

/**
 * Scenarios where the right outcome is that the client refuses to go on (the suite's
 * allowClientError): a resource or issuer mismatch, an `iss` that fails RFC 9207, a scope
 * challenge that never ends. The CLI must end with exit 8 (class auth) there.
 */
const AUTH_REFUSALS = new Set([
  "auth/resource-mismatch",
  "auth/iss-supported-missing",
  "auth/iss-wrong-issuer",
  "auth/iss-unexpected",
  "auth/iss-normalized",
  "auth/metadata-issuer-mismatch",
  "auth/scope-retry-limit",
]);

/**
 * Every auth/* scenario is one real `tools call test-tool` (it lists the tools first, then calls:
 * both need a token, and the call may need more scope than the listing). The authorization
 * server of the suite approves without a person, so the CLI follows the authorization URL
 * itself (--auth-follow-redirects) and keeps credentials in memory (--no-auth-store). Client
 * identification comes from what the scenario gives: pre-registered credentials in the context
 * (the secret through a file, never argv), or the CIMD URL the scenario expects.
 */
async function authScenario(
  work: string,
  scenario: string,
  conn: string[],
  context: string | undefined,
  file: (name: string, text: string) => Promise<string>,
): Promise<number> {
  const args = [
    "tools",
    "call",
    "test-tool",
    ...conn,
    "--auth-follow-redirects",
    "--no-auth-store",
    "--output",
    "mcp-json",
  ];
  const given = context ? JSON.parse(context) as Record<string, unknown> : {};
  if (typeof given.client_id === "string") {
    args.push("--client-id", given.client_id);
    if (typeof given.client_secret === "string") {
      args.push("--client-secret-file", await file("client-secret", given.client_secret));
    }
    // The suite names the AS the credentials belong to; the client refuses to send them elsewhere.
    if (typeof given.issuer === "string") args.push("--client-issuer", given.issuer);
  }
  if (scenario === "auth/basic-cimd") args.push("--client-metadata-url", CIMD_URL);
  const run = await cli(work, args);
  expect(run, AUTH_REFUSALS.has(scenario) ? 8 : 0);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const { work, url } = parseArgs(argv);
  const scenario = Deno.env.get("MCP_CONFORMANCE_SCENARIO") ?? "";
  const version = Deno.env.get("MCP_CONFORMANCE_PROTOCOL_VERSION") || "2025-11-25";
  const context = Deno.env.get("MCP_CONFORMANCE_CONTEXT");
  log(`scenario ${scenario}, protocol version ${version}, server ${url}`);
  // Every scenario pins the revision the suite asks for: no auto negotiation fallback.
  const conn = ["--endpoint", url, "--protocol-version", version, "--timeout", "20"];
  const file = async (name: string, text: string) => {
    const path = `${work}/${name}`;
    await Deno.writeTextFile(path, text);
    return path;
  };

  if (scenario.startsWith("auth/")) return await authScenario(work, scenario, conn, context, file);

  switch (scenario) {
    case "initialize": {
      // The handshake (and its version) is what is tested: server-info runs just that.
      expect(await cli(work, ["server-info", ...conn, "--output", "mcp-json"]));
      return 0;
    }
    case "tools_call": {
      expect(
        await cli(work, [
          "tools",
          "call",
          "add_numbers",
          "--arguments",
          '{"a":2,"b":3}',
          ...conn,
          "--output",
          "mcp-json",
        ]),
      );
      return 0;
    }
    case "request-metadata": {
      // The first request is rejected with -32022 (unsupported version): the client retries.
      expect(await cli(work, ["server-info", ...conn, "--output", "mcp-json"]));
      expect(await cli(work, ["tools", "list", ...conn, "--output", "mcp-json"]));
      return 0;
    }
    case "sep-2322-client-request-state": {
      // Two tools ask for input (one with requestState, one without): each gets one accept.
      const answers = await file(
        "responses.json",
        JSON.stringify({
          responses: [
            { action: "accept", content: { confirmed: true } },
            { action: "accept", content: { confirmed: true } },
          ],
        }),
      );
      const calls = await file(
        "calls.jsonl",
        jsonl([
          { name: "test_mrtr_echo_state" },
          { name: "test_mrtr_unrelated" },
          { name: "test_mrtr_no_state" },
          { name: "test_mrtr_no_result_type" },
        ]),
      );
      expect(
        await cli(work, ["tools", "run", calls, "--input-responses-file", answers, ...conn]),
      );
      return 0;
    }
    case "http-standard-headers": {
      expect(await cli(work, ["tools", "list", ...conn, "--output", "mcp-json"]));
      const calls = await file(
        "calls.jsonl",
        jsonl([{ name: "test_headers" }, { name: "my-hyphenated-tool" }]),
      );
      expect(await cli(work, ["tools", "run", calls, ...conn]));
      return 0;
    }
    case "http-custom-headers": {
      // The calls come from the scenario's context. One of them passes null for a boolean
      // (the client must omit that header), which the local schema check would refuse.
      if (!context) throw new AdapterError("MCP_CONFORMANCE_CONTEXT is not set", 64);
      const { toolCalls } = JSON.parse(context) as {
        toolCalls: { name: string; arguments: Record<string, unknown> }[];
      };
      const calls = await file("calls.jsonl", jsonl(toolCalls));
      expect(
        await cli(work, ["tools", "run", calls, "--skip-local-validation", ...conn]),
      );
      return 0;
    }
    case "http-invalid-tool-headers": {
      // The derived inventory leaves out tools with invalid x-mcp-header annotations: call what
      // it keeps. Then ask the CLI to call each left-out tool anyway: it must refuse (exit 2)
      // before sending anything (the suite fails the scenario if such a call arrives).
      const lossless = json(
        expect(await cli(work, ["tools", "list", ...conn, "--output", "mcp-json"])),
      );
      const derived = json(
        expect(await cli(work, ["tools", "list", ...conn, "--output", "json"])),
      );
      const kept = derived.tools as Record<string, unknown>[];
      const keptNames = new Set(kept.map((t) => String(t.name)));
      const all = (lossless.pages as { mcpResult: { tools: Record<string, unknown>[] } }[])
        .flatMap((p) => p.mcpResult.tools);
      const leftOut = all.filter((t) => !keptNames.has(String(t.name)));
      log(`kept by the client: ${[...keptNames].join(", ") || "(none)"}`);
      log(`left out by the client: ${leftOut.map((t) => t.name).join(", ") || "(none)"}`);
      if (kept.length === 0) throw new AdapterError("the client kept no tool", 1);
      const calls = await file(
        "calls.jsonl",
        jsonl(kept.map((t) => ({ name: String(t.name), arguments: exampleArguments(t) }))),
      );
      expect(await cli(work, ["tools", "run", calls, ...conn]));
      for (const t of leftOut) {
        expect(
          await cli(work, [
            "tools",
            "call",
            String(t.name),
            "--arguments",
            JSON.stringify(exampleArguments(t)),
            ...conn,
          ]),
          2,
        );
      }
      return 0;
    }
    case "json-schema-ref-no-deref": {
      // Listing (and showing) the tool must not fetch the network $ref in its inputSchema.
      expect(await cli(work, ["tools", "list", ...conn, "--output", "mcp-json"]));
      expect(await cli(work, ["tools", "show", "lookup_user", ...conn, "--output", "mcp-json"]));
      return 0;
    }
    case "json-schema-2020-12-preservation": {
      // The scenario asks the client to send the focal tool's inputSchema, as it received it,
      // to json_schema_echo: take it from the lossless listing.
      const listed = json(
        expect(await cli(work, ["tools", "list", ...conn, "--output", "mcp-json"])),
      );
      const tools = (listed.pages as { mcpResult: { tools: Record<string, unknown>[] } }[])
        .flatMap((p) => p.mcpResult.tools);
      const focal = tools.find((t) => t.name !== "json_schema_echo");
      if (!focal) throw new AdapterError("no focal tool listed", 1);
      const args = await file("arguments.json", JSON.stringify({ schema: focal.inputSchema }));
      expect(
        await cli(work, [
          "tools",
          "call",
          "json_schema_echo",
          "--arguments-file",
          args,
          ...conn,
          "--output",
          "mcp-json",
        ]),
      );
      return 0;
    }
    case "elicitation-sep1034-client-defaults": {
      // Accept with no content of our own: the client fills in the form's defaults.
      const answers = await file(
        "responses.json",
        JSON.stringify({ responses: [{ action: "accept", content: {} }] }),
      );
      expect(
        await cli(work, [
          "tools",
          "call",
          "test_client_elicitation_defaults",
          "--input-responses-file",
          answers,
          ...conn,
          "--output",
          "mcp-json",
        ]),
      );
      return 0;
    }
    case "sse-retry": {
      // The server closes the call's SSE stream early; the response arrives after reconnecting.
      expect(
        await cli(work, ["tools", "call", "test_reconnection", ...conn, "--output", "mcp-json"]),
      );
      return 0;
    }
    default:
      throw new AdapterError(`unsupported scenario ${JSON.stringify(scenario)}`, 64);
  }
}

if (import.meta.main) {
  let code: number;
  try {
    code = await main(Deno.args);
  } catch (err) {
    if (!(err instanceof AdapterError)) throw err;
    log(err.message);
    code = err.code;
  }
  log(code === 0 ? "scenario done" : `scenario failed (exit ${code})`);
  Deno.exit(code);
}
