/**
 * Apify's mcpc (`@apify/mcpc` 0.2.6, built on the v1 SDK client) against wmcp's servers: a
 * session (`mcpc connect`, a background bridge holding one connection) to a stdio server from an
 * mcpServers config file entry and to a Streamable HTTP server, legacy era (what it speaks).
 * Paged listing (`tools-list` follows every cursor), every read tool, a write, and each typed
 * error's real message; the session is closed with `mcpc close`.
 */
import {
  type ClientPlan,
  exerciseClient,
  installClients,
  poolSteps,
  run,
  type Shown,
  type Step,
  type StepsReport,
} from "./_realclients.ts";

const clients = await installClients();
const MCPC = clients.module("@apify/mcpc/bin/mcpc");
/** mcpc commands at once (each a Node process; the bridge serves them on one connection). */
const CONCURRENCY = 3;

/** Runs one mcpc command with its own HOME (sessions, logs); JSON output. */
function mcpc(home: string, args: string[]) {
  return run(clients.node, {
    args: [MCPC, ...args, "--json"],
    env: { HOME: home, PATH: Deno.env.get("PATH") ?? "" },
  });
}

/** One step through the session: what mcpc printed, or its error. */
async function step(home: string, s: Step): Promise<StepsReport["steps"][number]> {
  const out = s.op === "list"
    ? await mcpc(home, ["@wmcp", "tools-list"])
    : await mcpc(home, ["@wmcp", "tools-call", s.name, JSON.stringify(s.arguments)]);
  let printed: unknown;
  try {
    printed = JSON.parse(out.stdout);
  } catch { /* not JSON: an error below */ }
  if (out.code === 0 && s.op === "list" && Array.isArray(printed)) {
    return { list: (printed as { name: string }[]).map((t) => t.name), pages: -1 };
  }
  if (out.code === 0 && printed !== null && typeof printed === "object") {
    return { result: printed } as Shown;
  }
  return { thrown: `exit ${out.code}: ${out.stderr.trim()} ${out.stdout.trim()}` };
}

/**
 * `mcpc connect`, again (at most twice more) when mcpc's own bridge did not start. mcpc gives the
 * Node process it spawns as its bridge a fixed 5 s to create its socket, before the bridge talks to
 * any MCP server (bridge-manager.js, `waitForFile(socketPath, { timeoutMs: 5000 })`): on a loaded
 * machine Node's first load of mcpc's modules can take longer. That is mcpc's start-up, not
 * wmcp's, so it is retried; any other failure is not.
 */
async function connect(home: string, server: string) {
  for (let attempt = 1;; attempt++) {
    const connected = await mcpc(home, ["connect", server, "@wmcp"]);
    const bridgeLate = connected.code !== 0 &&
      /Bridge failed to start: socket file not created/.test(connected.stdout + connected.stderr);
    if (!bridgeLate || attempt === 3) return connected;
    console.log(`mcpc's bridge missed its 5 s start-up (attempt ${attempt}); connecting again`);
  }
}

for (const transport of ["stdio", "http"] as const) {
  // One Node process per command: the reads and the write over stdio only.
  const reads = transport === "stdio";
  Deno.test(`mcpc over ${transport} (legacy): lists every page, ${reads ? "reads, writes, " : ""}shows typed errors`, async () => {
    const home = await Deno.makeTempDir({ prefix: "wmcp-mcpc-home-" });
    const drive = async (target: ClientPlan["target"], steps: Step[]) => {
      let server = target.type === "http" ? target.url : "";
      if (target.type === "stdio") {
        // How hosts' config files name a stdio server: an mcpServers entry.
        const config = `${home}/mcp.json`;
        await Deno.writeTextFile(
          config,
          JSON.stringify({ mcpServers: { wmcp: { command: target.command, args: target.args } } }),
        );
        server = `${config}:wmcp`;
      }
      const connected = await connect(home, server);
      if (connected.code !== 0) {
        throw new Error(`mcpc connect failed (${connected.code}): ${connected.stderr}`);
      }
      try {
        return await poolSteps(steps, CONCURRENCY, (s) => step(home, s));
      } finally {
        await mcpc(home, ["close", "@wmcp"]);
      }
    };
    try {
      await exerciseClient(`mcpc ${transport}`, { transport, drive, reads });
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  });
}
