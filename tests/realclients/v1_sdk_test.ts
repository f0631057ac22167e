/**
 * The latest v1 TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2, what most hosts embed)
 * against wmcp's servers: stdio through the launcher and Streamable HTTP, legacy era (v1 speaks
 * no other). Paged listing, every read tool, a write, and each typed error's real message.
 */
import { type ClientPlan, exerciseClient, installClients, runDriver } from "./_realclients.ts";
import type { StepsReport } from "./_realclients.ts";

const clients = await installClients();
const drive = (target: ClientPlan["target"], steps: ClientPlan["steps"]) =>
  runDriver<StepsReport>(clients.node, clients.script("v1_client.mjs"), { target, steps });

Deno.test("v1 SDK client over stdio (legacy): lists every page, reads, writes, shows typed errors", async () => {
  await exerciseClient("v1 stdio", { transport: "stdio", drive });
});

Deno.test("v1 SDK client over Streamable HTTP (legacy): lists every page, reads, writes, shows typed errors", async () => {
  await exerciseClient("v1 http", { transport: "http", drive });
});
