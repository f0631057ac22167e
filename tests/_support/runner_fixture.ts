/**
 * A tiny test module for tests/scripts/test_runner_test.ts, which runs the real runner on it. Not
 * named like a test file, so the suite does not pick it up; WMCP_RUNNER_FIXTURE_FAIL=1 makes its
 * second test fail.
 */
Deno.test("runner fixture: passes", () => {});

Deno.test("runner fixture: fails only when asked", () => {
  if (Deno.env.get("WMCP_RUNNER_FIXTURE_FAIL") === "1") throw new Error("asked to fail");
});
