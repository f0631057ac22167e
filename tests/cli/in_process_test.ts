/**
 * The in-process runner (tests/_support/in_process.ts) itself: it captures what main writes, keeps
 * the test's permissions while recording what main gives up, restores the environment and the
 * streams, and serialises concurrent runs.
 */
import assert from "node:assert/strict";
import { runInProcess } from "../_support/in_process.ts";
import { streams } from "../../src/std_streams.ts";

Deno.test("in process: completion's revocations are recorded, not applied; env and streams restored", async () => {
  const before = streams();
  Deno.env.set("WMCP_PROG", "outer");
  try {
    const r = await runInProcess(["completion", "bash"], { env: { WMCP_PROG: "inner" } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /complete -F/);
    assert.deepStrictEqual(
      r.revoked.map((d) => d.name).sort(),
      ["env", "ffi", "net", "read", "run", "sys", "write"],
    );
    assert.equal(Deno.permissions.querySync({ name: "write" }).state, "granted");
    assert.equal(Deno.env.get("WMCP_PROG"), "outer");
    assert.equal(streams(), before);
  } finally {
    Deno.env.delete("WMCP_PROG");
  }
});

Deno.test("in process: concurrent runs queue; each gets its own output and exit code", async () => {
  const [help, bad, version] = await Promise.all([
    runInProcess(["op", "--help"], { env: { WMCP_PROG: "a" } }),
    runInProcess(["zzzzzz"]),
    runInProcess(["op", "-V"]),
  ]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage:|\nUsage:/);
  assert.ok(help.stdout.includes("a op"), help.stdout);
  assert.equal(help.stderr, "");
  assert.equal(bad.code, 2);
  assert.equal(bad.stdout, "");
  assert.match(JSON.parse(bad.stderr).error.message, /unknown command "zzzzzz"/);
  assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
});
