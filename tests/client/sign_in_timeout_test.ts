/**
 * A sign-in that a client command starts is bounded by its own timeout (`--auth-timeout`), not by
 * `--connect-timeout` (issue 20 §4): the connect timer holds while a person has the browser page
 * open, and still bounds connecting to a server that never answers. `tools list` runs in process
 * (runInProcess) against a real authorization server and MCP server on 127.0.0.1; the "person" is
 * a fake browser (WMCP_BROWSER, a shell script that records the URL) and this test, which follows
 * the URL to the loopback redirect listener over real HTTP. Interrupting a connect that waits for
 * a sign-in is checked on the connection itself (openSession), with a Redirector that never
 * comes back.
 */
import assert from "node:assert/strict";
import { startOAuthFixture } from "./fixtures/oauth_fixture.ts";
import { runInProcess } from "../_support/in_process.ts";
import { withTempDir } from "../_support/fs.ts";
import { waitForFile } from "../_support/wait.ts";
import { openSession } from "../../src/client/session.ts";
import { nonInteractive } from "../../src/client/interaction.ts";
import { WmcpAuthProvider } from "../../src/client/auth/provider.ts";
import { memoryStore, type Redirector } from "../../src/client/auth/types.ts";
import { ClientError } from "../../src/client/errors.ts";

/** A fake browser in `dir`: it writes the URL it is given to `dir/url` (renamed into place). */
async function fakeBrowser(dir: string): Promise<{ browser: string; urlFile: string }> {
  const browser = `${dir}/fake-browser.sh`;
  const urlFile = `${dir}/url`;
  await Deno.writeTextFile(
    browser,
    `#!/bin/sh\nprintf '%s\\n' "$1" > '${urlFile}.tmp' && mv '${urlFile}.tmp' '${urlFile}'\n`,
  );
  await Deno.chmod(browser, 0o700);
  return { browser, urlFile };
}

/** The person in the browser: follows the authorization URL to the loopback callback. */
async function followInBrowser(url: string): Promise<number> {
  const res = await fetch(url, { redirect: "manual" });
  await res.body?.cancel();
  assert.equal(res.status, 302, "the fixture's /authorize redirects");
  const back = await fetch(res.headers.get("location")!);
  await back.body?.cancel();
  return back.status;
}

/** Resolves true when `p` settles within `ms` of this process's clock, else false. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const elapsed = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true, () => true), elapsed]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("a sign-in inside tools list outlasts --connect-timeout: the person's wait is the sign-in's", async () => {
  await withTempDir(async (dir) => {
    const f = startOAuthFixture({});
    try {
      const { browser, urlFile } = await fakeBrowser(dir);
      const run = runInProcess([
        "tools",
        "list",
        "--endpoint",
        f.mcpUrl,
        "--output",
        "json",
        "--connect-timeout",
        "0.5",
      ], {
        env: { WMCP_CONFIG_DIR: `${dir}/config`, WMCP_BROWSER: browser },
        stdinIsTerminal: true,
      });
      const opened = waitForFile(urlFile, 60_000);
      if (await Promise.race([opened, run.then(() => "ended" as const)]) !== true) {
        assert.fail(`no URL reached the browser: ${JSON.stringify(await run)}`);
      }
      const url = (await Deno.readTextFile(urlFile)).trim();
      // The person takes longer than the connect timeout. This wait is the subject, not a pause:
      // the client's connect timer (0.5 s) was set in this same process before the URL reached
      // the browser, so it comes due before this 2 s one on any machine, however busy. Before
      // the fix the run had ended by then (exit 7, the connect timer); now nothing ends it.
      if (await settlesWithin(run, 2_000)) {
        assert.fail(`the run ended while the sign-in waited: ${JSON.stringify(await run)}`);
      }
      assert.equal(await followInBrowser(url), 200, "the loopback listener took the code");
      const r = await run;
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout).tools.map((t: { name: string }) => t.name), [
        "hello",
      ]);
      assert.deepEqual(f.log.grants, ["authorization_code"]);
      assert.match(
        r.stderr,
        /waiting for the redirect to http:\/\/127\.0\.0\.1:\d+\/callback \(up to 300 s\)/,
      );
    } finally {
      await f.close();
    }
  });
});

Deno.test("--connect-timeout still bounds connecting to an HTTP server that never answers (sign-in possible)", async () => {
  let release!: () => void;
  const never = new Promise<void>((resolve) => (release = resolve));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    await never;
    await req.body?.cancel();
    return new Response(null, { status: 503 });
  });
  try {
    const endpoint = `http://127.0.0.1:${server.addr.port}/mcp`;
    for (const version of ["auto", "2025-11-25"]) {
      const r = await runInProcess([
        "tools",
        "list",
        "--endpoint",
        endpoint,
        "--output",
        "json",
        "--connect-timeout",
        "0.5",
        "--protocol-version",
        version,
      ], { stdinIsTerminal: true });
      assert.equal(r.code, 7, `${version}: ${r.stderr}`);
      const error = JSON.parse(r.stderr.trim().split("\n").at(-1)!).error;
      assert.equal(error.class, "timeout");
      assert.equal(
        error.message,
        "timed out: no response within the client's time limits (--connect-timeout 0.5 s)",
      );
      assert.equal(error.details.timer, "connect", version);
    }
  } finally {
    release();
    await server.shutdown();
  }
});

Deno.test("--auth-timeout is an HTTP sign-in's: refused for stdio, with --no-auth, and past a day", async () => {
  const cases: [string[], RegExp][] = [
    [["--auth-timeout", "5"], /--auth-timeout applies to HTTP servers only/],
    [
      ["--endpoint", "http://127.0.0.1:9/mcp", "--no-auth", "--auth-timeout", "5"],
      /--no-auth contradicts --auth-timeout/,
    ],
    [
      ["--endpoint", "http://127.0.0.1:9/mcp", "--auth-timeout", "86401"],
      /--auth-timeout must be a number of seconds above 0, at most 86400/,
    ],
    [["--endpoint", "http://127.0.0.1:9/mcp", "--auth-timeout", "0"], /--auth-timeout must be/],
  ];
  for (const [args, message] of cases) {
    const r = await runInProcess(["tools", "list", "--output", "json", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(JSON.parse(r.stderr.trim().split("\n").at(-1)!).error.message, message);
  }
});

Deno.test("the run's interruption (Ctrl-C) ends a connect that waits for a sign-in", async () => {
  const f = startOAuthFixture({});
  let reached!: () => void;
  const waiting = new Promise<void>((resolve) => (reached = resolve));
  // A person who never comes back, within a sign-in timeout far beyond this test.
  const redirector: Redirector = {
    redirectUri: "http://127.0.0.1:9/callback",
    timeoutMs: 300_000,
    authorize: () => {
      reached();
      return new Promise(() => {});
    },
    close: () => Promise.resolve(),
  };
  try {
    const provider = new WmcpAuthProvider({
      serverUrl: new URL(f.mcpUrl),
      store: memoryStore(),
      redirector,
    });
    const abort = new AbortController();
    const opening = openSession({
      target: { kind: "http", url: new URL(f.mcpUrl), headers: {}, label: "fixture" },
      protocolVersion: "auto",
      interaction: nonInteractive(),
      maxInputRounds: 8,
      connectTimeoutMs: 500,
      serverLogs: false,
      authProvider: provider,
      signal: abort.signal,
    });
    opening.catch(() => {});
    await waiting;
    abort.abort();
    assert.ok(await settlesWithin(opening, 30_000), "the connect went on after the interruption");
    await assert.rejects(opening, (e: unknown) => {
      assert.ok(e instanceof ClientError, String(e));
      assert.equal(e.failure, "timeout");
      assert.equal(e.message, "cancelled before the connection was set up");
      return true;
    });
  } finally {
    await f.close();
  }
});
