/**
 * mcp-remote 0.15.1 bridging a stdio host to wmcp's Streamable HTTP server, driven by the v1 SDK
 * stdio client (Claude Desktop's setup for a remote server), legacy era (what the bridge
 * speaks). Paged listing, every read tool, a write, and each typed error's real message.
 */
import {
  type ClientPlan,
  exerciseClient,
  installClients,
  runDriver,
  type StepsReport,
  viaMcpRemote,
} from "./_realclients.ts";

const clients = await installClients();

Deno.test("mcp-remote (stdio to HTTP, legacy) for a v1 SDK client: lists every page, reads, writes, shows typed errors", async () => {
  const configDir = await Deno.makeTempDir({ prefix: "wmcp-mcp-remote-" });
  const drive = (target: ClientPlan["target"], steps: ClientPlan["steps"]) => {
    if (target.type !== "http") throw new Error("mcp-remote bridges to an HTTP server");
    return runDriver<StepsReport>(clients.node, clients.script("v1_client.mjs"), {
      target: viaMcpRemote(clients, target.url, configDir),
      steps,
    });
  };
  try {
    await exerciseClient("mcp-remote", { transport: "http", drive });
  } finally {
    await Deno.remove(configDir, { recursive: true });
  }
});
