/**
 * The stdio entry the launcher starts (src/server/stdio_launched.ts, decision 0063) as a real
 * child: it names the server's module through a variable, so Deno loads that graph only after the
 * first answers, and needs read permission on the server's modules, which serverPermissions grants
 * with `lazyModules` (the launcher's own call). Without them it answers nothing and says which
 * paths to grant (exit 2); with them it answers a leading tools/list early and then serves calls
 * with the same bytes serve_stdio.ts gives.
 */
import assert from "node:assert/strict";
import { serverPermissions } from "../../src/cli/server_permissions.ts";
import { SERVER_MODULE_READ_PATHS } from "../../src/server/module_read.ts";
import { ENGINE_READ_PATH } from "../../src/workspace/engine/read_path.ts";
import { envelope, makeWorkspace, permissionFlags, SERVE_STDIO } from "./_harness.ts";
import { GrowingText } from "../_support/wait.ts";

const LAUNCHED = new URL("../../src/server/stdio_launched.ts", import.meta.url).pathname;

/**
 * Runs an entry with these flags on root, writes `lines`, keeps stdin open until every id has
 * been answered or the child ended (a call still running when stdin ends is abandoned by design),
 * then closes it; everything it wrote.
 */
async function run(flags: string[], entry: string, root: string, lines: { id: number }[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, entry, "--root", root],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(lines.map((l) => JSON.stringify(l) + "\n").join("")))
    .catch(() => {});
  const stderr = new Response(child.stderr).text();
  const out = new GrowingText();
  const drained = out.drain(child.stdout);
  const ended = child.status.then(() => true);
  const all = () => lines.every((l) => out.text.includes(`"id":${l.id}}`));
  // Bounded only as a failure's stop (generous: the test waits for the answers, not for time).
  await Promise.race([out.waitFor(all, 60_000), ended]);
  await w.close().catch(() => {});
  const status = await child.status;
  await drained;
  return { code: status.code, stdout: out.text, stderr: await stderr };
}

const toolsList = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/list",
  params: { _meta: envelope() },
});
const readCall = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "read_file", arguments: { path: "hello.txt" }, _meta: envelope() },
});

Deno.test("serverPermissions: lazyModules grants read on the server's modules (stdio only)", () => {
  const root = "/srv/w";
  const read = (flags: string[]) =>
    flags.find((f) => f.startsWith("--allow-read="))?.slice("--allow-read=".length).split(",");
  const lazy = read(serverPermissions("stdio", ["--root", root], { lazyModules: true }));
  assert.deepEqual(lazy, [root, ...(SERVER_MODULE_READ_PATHS ?? [])]);
  const direct = read(serverPermissions("stdio", ["--root", root]));
  assert.deepEqual(direct, [root, ...(ENGINE_READ_PATH === null ? [] : [ENGINE_READ_PATH])]);
  // The HTTP server loads its modules as before: the option changes nothing for it.
  assert.deepEqual(
    serverPermissions("http", ["--root", root], { lazyModules: true }),
    serverPermissions("http", ["--root", root]),
  );
});

Deno.test("the launcher's stdio entry without read on the server's modules answers nothing and says what to grant (exit 2)", async () => {
  const root = await makeWorkspace();
  try {
    const r = await run(permissionFlags(root), LAUNCHED, root, [toolsList(1)]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "", "not even the early answer");
    for (const p of SERVER_MODULE_READ_PATHS ?? []) {
      if (p !== ENGINE_READ_PATH) assert.ok(r.stderr.includes(p), `${p} named: ${r.stderr}`);
    }
    assert.match(r.stderr, /^wmcp: the stdio server loads its modules after its first answers/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the launcher's stdio entry with lazyModules answers tools/list and a call with serve_stdio.ts's bytes", async () => {
  const root = await makeWorkspace();
  try {
    const lines = [toolsList(1), readCall(2)];
    const flags = serverPermissions("stdio", ["--root", root], { lazyModules: true });
    const launched = await run(flags, LAUNCHED, root, lines);
    const direct = await run(permissionFlags(root), SERVE_STDIO, root, lines);
    assert.equal(launched.code, 0, launched.stderr);
    assert.equal(direct.code, 0, direct.stderr);
    const byId = (text: string) =>
      Object.fromEntries(
        text.split("\n").filter((l) => l !== "").map((l) => [JSON.parse(l).id, l]),
      );
    const a = byId(launched.stdout);
    assert.deepEqual(Object.keys(a).sort(), ["1", "2"], launched.stdout);
    assert.deepEqual(a, byId(direct.stdout));
    assert.match(a[2], /hi there/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
