/**
 * MCP Inspector's CLI mode (`@modelcontextprotocol/inspector` 2.12.0 `--cli`, built on the v2
 * client; Node 22) against wmcp's servers, stdio through the launcher and Streamable HTTP, in both
 * eras (`--protocol-era legacy|modern`). One process per method, as the CLI works: a paged
 * listing, every read tool, a write, and each typed error's real message.
 */
import {
  type ClientPlan,
  type Drive,
  exerciseClient,
  installClients,
  poolSteps,
  run,
  type Shown,
  type Step,
  type StepsReport,
} from "./_realclients.ts";

const clients = await installClients();
const INSPECTOR = clients.module("@modelcontextprotocol/inspector/clients/launcher/build/index.js");
/** Inspector processes at once (each a Node 22 process, and over stdio a server too). */
const CONCURRENCY = 3;

/** One Inspector CLI run of a step: what it printed (exit 0, or 5 for an isError result). */
async function inspect(
  home: string,
  era: "legacy" | "modern",
  target: ClientPlan["target"],
  step: Step,
): Promise<StepsReport["steps"][number]> {
  const method = step.op === "list" ? ["--method", "tools/list"] : [
    "--method",
    "tools/call",
    "--tool-name",
    step.name,
    "--tool-args-json",
    JSON.stringify(step.arguments),
  ];
  const where = target.type === "http"
    ? ["--server-url", target.url]
    : ["--transport", "stdio", "--", target.command, ...target.args];
  const out = await run(clients.node22, {
    args: [
      INSPECTOR,
      "--cli",
      "--format",
      "json",
      "-q",
      "--protocol-era",
      era,
      ...method,
      ...where,
    ],
    env: { HOME: home, PATH: Deno.env.get("PATH") ?? "", NODE_COMPILE_CACHE: clients.compileCache },
  });
  let printed: { result?: Record<string, unknown> } | undefined;
  try {
    printed = JSON.parse(out.stdout);
  } catch { /* nothing on stdout: the error envelope is on stderr */ }
  if (printed?.result !== undefined && (out.code === 0 || out.code === 5)) {
    if (step.op === "list") {
      return { list: (printed.result.tools as { name: string }[]).map((t) => t.name), pages: -1 };
    }
    return { result: printed.result } as Shown;
  }
  return { thrown: `exit ${out.code}: ${out.stderr.trim()}` };
}

for (const era of ["modern", "legacy"] as const) {
  for (const transport of ["stdio", "http"] as const) {
    const reads = transport === "http" && era === "modern" ? "reads, writes, " : "";
    Deno.test(`Inspector CLI over ${transport} (${era}): lists every page, ${reads}shows typed errors`, async () => {
      const home = await Deno.makeTempDir({ prefix: "wmcp-inspector-home-" });
      const drive: Drive = (target, steps) =>
        poolSteps(steps, CONCURRENCY, (step) => inspect(home, era, target, step));
      try {
        await exerciseClient(`inspector ${transport} ${era}`, {
          transport,
          drive,
          // One Node process per call: the reads and the write on one combination (the SDK suites
          // cover reads in every one).
          reads: transport === "http" && era === "modern",
        });
      } finally {
        await Deno.remove(home, { recursive: true });
      }
    });
  }
}
