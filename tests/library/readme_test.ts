/** The README's library example: it is examples/library.ts, and it runs as shown in a new project. */
import assert from "node:assert/strict";
import { ROOT, runDeno } from "./_run.ts";

/** The first ```ts block of the README's "## Library" section. */
async function readmeLibraryBlock(): Promise<string> {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const section = readme.slice(readme.indexOf("\n## Library\n"));
  const match = /```ts\n([\s\S]*?)```/.exec(section.slice(0, section.indexOf("\n## ", 5)));
  assert.ok(match, "the README's Library section has a ```ts block");
  return match[1];
}

Deno.test("the README's library example is examples/library.ts, character for character", async () => {
  const block = await readmeLibraryBlock();
  assert.equal(block, await Deno.readTextFile(`${ROOT}examples/library.ts`));
});

Deno.test("the README's library example runs as shown in a project that links the checkout", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-readme-" });
  try {
    // The project the README describes: its deno.json links the checkout.
    await Deno.writeTextFile(
      `${dir}/deno.json`,
      JSON.stringify({
        links: [ROOT.replace(/\/$/, "")],
        imports: { "@wmcp/wmcp": "jsr:@wmcp/wmcp@^0.1.0" },
      }),
    );
    await Deno.writeTextFile(`${dir}/main.ts`, await readmeLibraryBlock());
    await Deno.writeTextFile(`${dir}/notes.md`, "# notes\n");
    await Deno.mkdir(`${dir}/docs`);
    await Deno.writeTextFile(`${dir}/docs/guide.md`, "# guide\n");
    await Deno.writeTextFile(`${dir}/data.txt`, "not markdown\n");
    // Exactly the command the README gives.
    const r = await runDeno(["run", "--allow-read=.", "main.ts"], { cwd: dir });
    assert.equal(r.code, 0, `exit 0; stderr:\n${r.stderr}`);
    assert.match(r.stdout, /path: "notes\.md", type: "file"/);
    assert.match(r.stdout, /path: "docs\/guide\.md", type: "file"/);
    assert.doesNotMatch(r.stdout, /data\.txt|main\.ts/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
