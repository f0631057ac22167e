/**
 * The AI SDK's MCP client (@ai-sdk/mcp 2.0.99, createMCPClient; Node 22) against wmcp's servers,
 * stdio through the launcher and Streamable HTTP, in both eras (modern: its server/discover
 * probe; legacy: initialize first). It lists through tools() and calls each tool's execute(),
 * as an AI SDK app does. Paged listing, every read tool, a write, each typed error's message.
 */
import {
  type ClientPlan,
  exerciseClient,
  installClients,
  REVISION,
  runDriver,
  type StepsReport,
} from "./_realclients.ts";

const clients = await installClients();

for (const era of ["modern", "legacy"] as const) {
  const drive = (target: ClientPlan["target"], steps: ClientPlan["steps"]) =>
    runDriver<StepsReport>(clients.node22, clients.script("ai_sdk_client.mjs"), {
      target,
      steps,
      era,
    });
  for (const transport of ["stdio", "http"] as const) {
    Deno.test(`AI SDK MCP client over ${transport} (${era}): lists every page, reads, writes, shows typed errors`, async () => {
      await exerciseClient(`ai-sdk ${transport} ${era}`, {
        transport,
        drive,
        protocolVersion: REVISION[era],
      });
    });
  }
}
