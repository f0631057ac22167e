/**
 * One failure class for one event (issue 20 §4): a sign-in nobody answers in time is `timeout`
 * (exit 7) whether `auth login` or a client command started it, with the same message (the
 * sign-in's own `--auth-timeout`, in both), and a sign-in a non-interactive client command cannot
 * start is `auth` (exit 8) in both. The commands run in process (runInProcess) against a real
 * authorization server and MCP server on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { startOAuthFixture } from "./fixtures/oauth_fixture.ts";
import { runInProcess } from "../_support/in_process.ts";
import { withTempDir } from "../_support/fs.ts";
import { AuthFlowError } from "../../src/client/auth/loopback.ts";
import { classify } from "../../src/client/errors.ts";
import { authFailure } from "../../src/client/auth/failure.ts";

Deno.test("a sign-in that runs out of time is class timeout (exit 7) in tools list and in auth login", async () => {
  await withTempDir(async (config) => {
    const f = startOAuthFixture({});
    try {
      // Interactive (stdin a terminal), so the client signs in; --no-browser prints the URL and
      // nobody follows it.
      const env = { WMCP_CONFIG_DIR: config };
      const base = ["--endpoint", f.mcpUrl, "--no-browser", "--output", "json"];
      // The connect timeout is far longer than the sign-in's: the sign-in's own timeout ends it.
      const [list, login] = [
        await runInProcess([
          "tools",
          "list",
          ...base,
          "--connect-timeout",
          "60",
          "--auth-timeout",
          "1",
        ], {
          env,
          stdinIsTerminal: true,
        }),
        await runInProcess(["auth", "login", ...base, "--auth-timeout", "1"], {
          env,
          stdinIsTerminal: true,
        }),
      ];
      for (const [name, r] of [["tools list", list], ["auth login", login]] as const) {
        assert.equal(r.code, 7, `${name}: ${r.stderr}`);
        assert.ok(r.stderr.includes(`${f.issuer}/authorize?`), `${name}: the URL is printed`);
        const error = JSON.parse(r.stderr.trim().split("\n").at(-1)!).error;
        assert.equal(error.class, "timeout", `${name}: ${r.stderr}`);
        assert.equal(error.message, "no answer from the browser within 1 s", name);
        assert.deepEqual(error.details, { auth: "timeout" }, name);
      }
      assert.deepEqual(f.log.grants, [], "no token was issued");
    } finally {
      await f.close();
    }
  });
});

Deno.test("classify: a sign-in's own failure inside an SDK error keeps auth login's class", () => {
  const inside = (e: AuthFlowError) => new Error("connect failed", { cause: e });
  const cases: [AuthFlowError, string][] = [
    [new AuthFlowError("timeout", "no answer from the browser within 300 s"), "timeout"],
    [new AuthFlowError("cancelled", "sign-in cancelled"), "timeout"],
    [new AuthFlowError("listen", "cannot listen on 127.0.0.1:1"), "transport"],
    [new AuthFlowError("denied", "no authorization code"), "auth"],
  ];
  for (const [flow, cls] of cases) {
    const viaClient = classify(inside(flow));
    const viaLogin = authFailure(flow);
    assert.equal(viaClient.failure, cls, flow.message);
    assert.equal(viaLogin.failure, cls, flow.message);
    assert.equal(viaClient.message, viaLogin.message);
    assert.equal(viaClient.exitCode, viaLogin.exitCode);
  }
});
