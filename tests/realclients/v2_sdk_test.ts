/**
 * The v2 TypeScript SDK client (@modelcontextprotocol/client 2.4.0) against wmcp's servers, stdio
 * through the launcher and Streamable HTTP, in both eras (modern pinned to 2026-07-28, legacy by
 * initialize). Paged listing, every read tool, a write, and each typed error's real message.
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
    runDriver<StepsReport>(clients.node, clients.script("v2_client.mjs"), {
      target,
      steps,
      era,
    });
  for (const transport of ["stdio", "http"] as const) {
    Deno.test(`v2 SDK client over ${transport} (${era}): lists every page, reads, writes, shows typed errors`, async () => {
      await exerciseClient(`v2 ${transport} ${era}`, {
        transport,
        drive,
        protocolVersion: REVISION[era],
      });
    });
  }
}
