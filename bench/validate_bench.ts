/**
 * Validation per tools/call, zod against the generated checks (decision 0062), in one run:
 * parseInput of a read_file input, and the output check of a real read_file result (what
 * checkedOutput runs on the fast path, and McpServer on the SDK path).
 *
 * `deno bench --allow-read bench/validate_bench.ts`; each group's baseline is zod's path.
 */
import { runOperation, Workspace } from "../mod.ts";
import { getOperation, parseInput } from "../src/operations/registry.ts";
import { mcpOutput, TOOL_TABLE } from "../src/server/tools.ts";
import { structuredFor } from "../src/server/content.ts";

const op = getOperation("read_file")!;
/** The same definition outside the registry: parseInput takes zod's path with it. */
const zodOnly = { ...op };
const input = { path: "deno.json", startLine: 1, endLine: 40, maxBytes: 65536 };

const root = new URL("..", import.meta.url).pathname;
const workspace = await Workspace.open({ root, engine: "inline" });
const result = structuredFor("read_file", await runOperation({ workspace }, "read_file", input));
const zodValidate = mcpOutput(op).schema["~standard"].validate;
const toolValidate = TOOL_TABLE.find((t) => t.op === op)!.outputSchema["~standard"].validate;

let sink: unknown;

Deno.bench("parseInput read_file: zod", { group: "input", baseline: true }, () => {
  sink = parseInput(zodOnly, input);
});
Deno.bench("parseInput read_file: generated", { group: "input" }, () => {
  sink = parseInput(op, input);
});
Deno.bench("output read_file: zod", { group: "output", baseline: true }, () => {
  sink = zodValidate(result);
});
Deno.bench("output read_file: generated", { group: "output" }, () => {
  sink = toolValidate(result);
});

globalThis.addEventListener("unload", () => {
  if (sink === Symbol.for("never")) console.log(sink);
});
