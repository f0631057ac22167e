/** Every program in examples/ runs, as `deno task examples` (part of `deno task check`) runs it. */
import assert from "node:assert/strict";
import { ROOT, runDeno } from "./_run.ts";
import { availableOperations } from "../../mod.ts";

/** What each example must print (a sign that it did its work, not just that it exited 0). */
const EXPECTED: Record<string, RegExp> = {
  "examples/library.ts": /path: "README\.md", type: "file"/,
  "examples/stdio_streams.ts": /^tools over stdio: workspace_info, list_directory, .*search_text$/m,
  "examples/in_process_client.ts": new RegExp(
    `^${availableOperations(false).length} tools: workspace_info, .*\nworkspace mode: read-only$`,
    "m",
  ),
  "examples/http_server.ts": /^2026-07-28: \d+ entries in the workspace root$/m,
};

/** The `deno run` commands of the examples task, split into argument lists. */
async function exampleCommands(): Promise<string[][]> {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const task = config.tasks.examples as string;
  return task.split(" && ").map((c) => c.trim().split(/\s+/));
}

Deno.test("the examples task runs every file in examples/", async () => {
  const files: string[] = [];
  for await (const e of Deno.readDir(`${ROOT}examples`)) {
    if (e.isFile && e.name.endsWith(".ts")) files.push(`examples/${e.name}`);
  }
  const run = (await exampleCommands()).map((argv) => argv[argv.length - 1]);
  assert.deepEqual([...run].sort(), files.sort());
  assert.deepEqual(Object.keys(EXPECTED).sort(), files.sort());
});

for (const argv of await exampleCommands()) {
  const file = argv[argv.length - 1];
  Deno.test(`${file} runs with the permissions the task gives it and does its work`, async () => {
    assert.equal(argv[0], "deno");
    const r = await runDeno(argv.slice(1), { cwd: ROOT });
    assert.equal(r.code, 0, `exit 0; stderr:\n${r.stderr}`);
    assert.match(r.stdout, EXPECTED[file]);
  });
}
