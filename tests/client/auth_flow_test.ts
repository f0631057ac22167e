/**
 * The terminal sign-in (`auth login|status|logout`) against a local authorization server and
 * protected MCP resource: loopback redirect, state, timeout, refresh, logout with revocation,
 * file permissions, no secret in any output, and a browser opener that only ever gets http(s).
 */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { CLI } from "../server/_harness.ts";
import { type OAuthFixture, startEvilAS, startOAuthFixture } from "./fixtures/oauth_fixture.ts";
import { fileStore } from "../../src/client/auth/store.ts";
import { authFailure, storeProvider } from "../../src/cli/auth_cli.ts";
import { auth } from "@modelcontextprotocol/client";
import { WmcpAuthProvider } from "../../src/client/auth/provider.ts";
import {
  AuthFlowError,
  headlessRedirector,
  loopbackRedirector,
} from "../../src/client/auth/loopback.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A temporary config dir and a fake browser that appends each URL it is given to a log. */
async function setup() {
  const tmp = await Deno.makeTempDir({ prefix: "wmcp-auth-" });
  const config = `${tmp}/config`;
  const browserLog = `${tmp}/browser.log`;
  const browser = `${tmp}/fake-browser.sh`;
  await Deno.writeTextFile(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${browserLog}'\n`);
  await Deno.chmod(browser, 0o700);
  return { tmp, config, browserLog, browser, authDir: `${config}/auth` };
}
type Setup = Awaited<ReturnType<typeof setup>>;

/** Starts the CLI (`auth ...` or a client command) as a child with the auth permissions. */
function spawnCli(s: Setup, args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      `--allow-read=${s.config}`,
      `--allow-write=${s.config}`,
      "--allow-env",
      "--allow-net=127.0.0.1",
      `--allow-run=${s.browser}`,
      "--allow-sys=uid",
      CLI,
      ...args,
    ],
    env: { WMCP_CONFIG_DIR: s.config, WMCP_BROWSER: s.browser },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const done = child.output().then((o): Run => ({
    code: o.code,
    stdout: new TextDecoder().decode(o.stdout),
    stderr: new TextDecoder().decode(o.stderr),
  })).finally(() => clearTimeout(timer));
  return { child, done };
}

/** Waits (bounded) for the fake browser to be handed a URL. */
async function browserUrl(s: Setup): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const text = await Deno.readTextFile(s.browserLog).catch(() => "");
    if (text.trim()) return text.trim().split("\n")[0];
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the browser was never opened");
}

/** The "person in the browser": follows the authorization URL to the loopback callback. */
async function followInBrowser(url: string): Promise<{ status: number; page: string }> {
  const res = await fetch(url, { redirect: "manual" });
  await res.body?.cancel();
  assert.equal(res.status, 302, "the fixture's /authorize redirects");
  const back = await fetch(res.headers.get("location")!);
  return { status: back.status, page: await back.text() };
}

async function login(s: Setup, f: OAuthFixture, extra: string[] = []) {
  const run = spawnCli(s, ["auth", "login", "--endpoint", f.mcpUrl, ...extra]);
  const url = await browserUrl(s);
  const browser = await followInBrowser(url);
  return { run: await run.done, browser, url };
}

async function withFixture(
  options: Parameters<typeof startOAuthFixture>[0],
  body: (s: Setup, f: OAuthFixture) => Promise<void>,
) {
  const s = await setup();
  const f = startOAuthFixture(options);
  try {
    await body(s, f);
  } finally {
    await f.close();
    await Deno.remove(s.tmp, { recursive: true });
  }
}

function assertNoSecrets(f: OAuthFixture, ...texts: string[]) {
  const secrets = [...f.log.codes, ...f.log.accessTokens, ...f.log.refreshTokens];
  assert.ok(secrets.length > 0, "the fixture issued something to look for");
  for (const t of texts) {
    for (const secret of secrets) assert.ok(!t.includes(secret), `a secret leaked into: ${t}`);
  }
}

async function credentialFiles(s: Setup): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(s.authDir)) if (e.name.endsWith(".json")) out.push(e.name);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return out;
}

Deno.test("auth login: the loopback redirect completes, tokens stored 0600 in a 0700 dir, no secret printed", async () => {
  await withFixture({}, async (s, f) => {
    const { run, browser, url } = await login(s, f);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(browser.status, 200);
    assert.match(browser.page, /Signed in/);
    const auth = new URL(url);
    assert.equal(auth.searchParams.get("code_challenge_method"), "S256");
    assert.equal(auth.searchParams.get("resource"), f.mcpUrl);
    assert.match(auth.searchParams.get("redirect_uri")!, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const out = JSON.parse(run.stdout);
    assert.equal(out.operation, "auth/login");
    assert.equal(out.serverUrl, f.mcpUrl);
    assert.equal(out.issuer, f.issuer);
    assert.equal(out.hasRefreshToken, true);
    assert.deepEqual(out.scopes, ["tools"]);
    assertNoSecrets(f, run.stdout, run.stderr);

    const files = await credentialFiles(s);
    assert.equal(files.length, 1);
    assert.equal((await Deno.stat(s.authDir)).mode! & 0o777, 0o700);
    assert.equal((await Deno.stat(`${s.authDir}/${files[0]}`)).mode! & 0o777, 0o600);
    const stored = JSON.parse(await Deno.readTextFile(`${s.authDir}/${files[0]}`));
    assert.equal(stored.tokens.access_token, f.log.accessTokens.at(-1));
    assert.ok(stored.clientInformation.client_id);

    const status = await spawnCli(s, ["auth", "status"]).done;
    assert.equal(status.code, 0, status.stderr);
    const st = JSON.parse(status.stdout);
    assert.equal(st.servers.length, 1);
    assert.equal(st.servers[0].serverUrl, f.mcpUrl);
    assert.equal(st.servers[0].clientId, stored.clientInformation.client_id);
    assert.equal(st.servers[0].hasRefreshToken, true);
    assert.equal(typeof st.servers[0].expiresAt, "string");
    assertNoSecrets(f, status.stdout, status.stderr);

    // A later client command uses the stored token, with nobody at a terminal, and prints none
    // of the secrets in its lossless output either.
    const accepted = f.log.accepted.length;
    const list = await spawnCli(s, [
      "tools",
      "list",
      "--endpoint",
      f.mcpUrl,
      "--output",
      "mcp-json",
      "--non-interactive",
    ]).done;
    assert.equal(list.code, 0, list.stderr);
    assert.ok(f.log.accepted.length > accepted, "the server accepted the stored access token");
    assert.ok(JSON.parse(list.stdout.split("\n")[0]), "mcp-json output");
    assertNoSecrets(f, list.stdout, list.stderr);
  });
});

Deno.test("auth login: a callback whose state does not match is refused and nothing is stored", async () => {
  await withFixture({ stateOverride: "not-the-state" }, async (s, f) => {
    const { run, browser } = await login(s, f);
    assert.equal(browser.status, 400);
    assert.match(browser.page, /refused/);
    assert.equal(run.code, 8, run.stderr);
    const err = JSON.parse(run.stderr.trim().split("\n").at(-1)!).error;
    assert.equal(err.details.auth, "state-mismatch");
    assert.deepEqual(f.log.grants, [], "no code was redeemed");
    for (const name of await credentialFiles(s)) {
      const c = JSON.parse(await Deno.readTextFile(`${s.authDir}/${name}`));
      assert.equal(c.tokens, undefined);
    }
  });
});

Deno.test("auth login: an error= redirect fails the flow with the server's reason", async () => {
  await withFixture({ deny: true }, async (s, f) => {
    const { run, browser } = await login(s, f);
    assert.match(browser.page, /Sign-in failed/);
    assert.equal(run.code, 8);
    assert.match(run.stderr, /access_denied/);
    assert.deepEqual(f.log.grants, []);
  });
});

Deno.test("auth login: no browser answer within --auth-timeout fails (exit 7); --no-browser prints the URL", async () => {
  await withFixture({}, async (s, f) => {
    const run = await spawnCli(s, [
      "auth",
      "login",
      "--endpoint",
      f.mcpUrl,
      "--no-browser",
      "--auth-timeout",
      "1",
    ]).done;
    assert.equal(run.code, 7, run.stderr);
    assert.match(run.stderr, /no answer from the browser within 1 s/);
    assert.ok(run.stderr.includes(`${f.issuer}/authorize?`), "the URL is printed on stderr");
    assert.equal(await Deno.readTextFile(s.browserLog).catch(() => ""), "", "no browser started");
  });
});

Deno.test("auth login: a login that times out leaves the stored sign-in working", async () => {
  await withFixture({}, async (s, f) => {
    const first = await login(s, f);
    assert.equal(first.run.code, 0, first.run.stderr);
    const before = JSON.parse((await spawnCli(s, ["auth", "status"]).done).stdout).servers[0];
    // A second login on another port (a new registration) that nobody answers.
    const again = await spawnCli(s, [
      "auth",
      "login",
      "--endpoint",
      f.mcpUrl,
      "--no-browser",
      "--auth-timeout",
      "1",
    ]).done;
    assert.equal(again.code, 7, again.stderr);
    const after = JSON.parse((await spawnCli(s, ["auth", "status"]).done).stdout).servers[0];
    assert.equal(after.clientId, before.clientId, "the stored registration is kept");
    assert.equal(after.hasAccessToken, true, "the stored tokens are kept");
    const list = await spawnCli(s, [
      "tools",
      "list",
      "--endpoint",
      f.mcpUrl,
      "--output",
      "json",
      "--non-interactive",
    ]).done;
    assert.equal(list.code, 0, list.stderr);
  });
});

Deno.test("auth login --non-interactive fails at once without waiting on a person", async () => {
  await withFixture({}, async (s, f) => {
    const run = await spawnCli(s, ["auth", "login", "--endpoint", f.mcpUrl, "--non-interactive"])
      .done;
    assert.equal(run.code, 8);
    assert.match(run.stderr, /bearer-token-env/);
    assert.equal(f.log.authorizeRequests.length, 0);
  });
});

Deno.test("an expired access token is refreshed with the stored refresh token (SDK transport)", async () => {
  await withFixture({}, async (s, f) => {
    const { run } = await login(s, f);
    assert.equal(run.code, 0, run.stderr);
    const firstAccess = f.log.accessTokens.at(-1)!;
    f.expireAccessTokens();
    const store = fileStore({ dir: s.authDir });
    const creds = (await store.load(f.mcpUrl))!;
    const provider = storeProvider(creds, { store, redirector: headlessRedirector() });
    const client = new Client({ name: "t", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(f.mcpUrl), { authProvider: provider }),
    );
    try {
      const tools = await client.listTools();
      assert.deepEqual(tools.tools.map((t) => t.name), ["hello"]);
    } finally {
      await client.close();
    }
    assert.ok(f.log.grants.includes("refresh_token"), `grants: ${f.log.grants}`);
    const after = (await store.load(f.mcpUrl))!;
    assert.notEqual(after.tokens!.access_token, firstAccess, "the refreshed token was stored");
    assert.ok(f.log.accepted.includes(after.tokens!.access_token as string));
    assert.equal(f.log.authorizeRequests.length, 1, "no second browser sign-in");
  });
});

Deno.test("auth logout removes the stored credentials (file gone) and revokes at the server", async () => {
  await withFixture({}, async (s, f) => {
    const { run } = await login(s, f);
    assert.equal(run.code, 0, run.stderr);
    assert.equal((await credentialFiles(s)).length, 1);
    const out = await spawnCli(s, ["auth", "logout", "--endpoint", f.mcpUrl]).done;
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(await credentialFiles(s), []);
    assert.ok(f.log.revoked.includes(f.log.refreshTokens.at(-1)!));
    assert.ok(f.log.revoked.includes(f.log.accessTokens.at(-1)!));
    const r = JSON.parse(out.stdout);
    assert.equal(r.removed[0].revokedTokens, 2);
    assertNoSecrets(f, out.stdout, out.stderr);
    const status = JSON.parse((await spawnCli(s, ["auth", "status"]).done).stdout);
    assert.deepEqual(status.servers, []);
  });
});

Deno.test("auth logout revokes only at the issuer of the tokens, never at an AS a cached discovery names", async () => {
  await withFixture({}, async (s, f) => {
    const evil = startEvilAS();
    try {
      const { run } = await login(s, f);
      assert.equal(run.code, 0, run.stderr);
      // The cache a server that switched its resource metadata to another AS leaves behind.
      const store = fileStore({ dir: s.authDir });
      const creds = (await store.load(f.mcpUrl))!;
      assert.equal(creds.issuer, f.issuer);
      creds.discoveryState = {
        authorizationServerUrl: evil.issuer,
        authorizationServerMetadata: {
          issuer: evil.issuer,
          authorization_endpoint: `${evil.issuer}/authorize`,
          token_endpoint: `${evil.issuer}/token`,
          revocation_endpoint: `${evil.issuer}/revoke`,
          response_types_supported: ["code"],
        },
      };
      creds.clientInformation = { ...creds.clientInformation, client_secret: "the-client-secret" };
      await store.save(creds);
      const out = await spawnCli(s, ["auth", "logout", "--endpoint", f.mcpUrl]).done;
      assert.equal(out.code, 0, out.stderr);
      assert.deepEqual(evil.requests, [], "the other AS got no request");
      assert.ok(f.log.revoked.includes(f.log.refreshTokens.at(-1)!), "revoked at the issuer");
      assert.equal(JSON.parse(out.stdout).removed[0].revokedTokens, 2);
      assert.deepEqual(await credentialFiles(s), []);
    } finally {
      await evil.close();
    }
  });
});

Deno.test("auth logout reports nothing revoked when the issuer's metadata cannot be read", async () => {
  await withFixture({}, async (s, f) => {
    const evil = startEvilAS();
    try {
      const { run } = await login(s, f);
      assert.equal(run.code, 0, run.stderr);
      const store = fileStore({ dir: s.authDir });
      const creds = (await store.load(f.mcpUrl))!;
      // Tokens from an issuer that is gone; the cache names a live, different AS.
      creds.issuer = "http://127.0.0.1:1";
      creds.discoveryState = {
        authorizationServerUrl: evil.issuer,
        authorizationServerMetadata: {
          issuer: evil.issuer,
          revocation_endpoint: `${evil.issuer}/revoke`,
        },
      };
      await store.save(creds);
      const out = await spawnCli(s, ["auth", "logout", "--endpoint", f.mcpUrl]).done;
      assert.equal(out.code, 0, out.stderr);
      assert.deepEqual(evil.requests, []);
      assert.equal(JSON.parse(out.stdout).removed[0].revokedTokens, 0);
      assert.match(out.stderr, /not revoked/);
    } finally {
      await evil.close();
    }
  });
});

Deno.test("a pre-registered client secret never goes to an AS other than --client-issuer (exit 8)", async () => {
  const evil = startEvilAS();
  try {
    await withFixture({ authorizationServers: () => [evil.issuer] }, async (s, f) => {
      const secret = "pre-registered-secret-value";
      await Deno.mkdir(s.config, { recursive: true });
      await Deno.writeTextFile(`${s.config}/secret`, secret);
      const run = await spawnCli(s, [
        "tools",
        "list",
        "--endpoint",
        f.mcpUrl,
        "--auth-follow-redirects",
        "--no-auth-store",
        "--client-id",
        "real-client",
        "--client-secret-file",
        `${s.config}/secret`,
        "--client-issuer",
        f.issuer,
      ]).done;
      assert.equal(run.code, 8, run.stderr);
      assert.match(run.stderr, /client-issuer/);
      const sent = evil.requests.filter((r) => !r.path.startsWith("/.well-known/"));
      assert.deepEqual(sent, [], "the other AS got nothing but metadata requests");
      assert.ok(!JSON.stringify(evil.requests).includes("real-client"));
      // Without --client-issuer a secret is refused before any request.
      const before = evil.requests.length;
      const bare = await spawnCli(s, [
        "tools",
        "list",
        "--endpoint",
        f.mcpUrl,
        "--auth-follow-redirects",
        "--no-auth-store",
        "--client-id",
        "real-client",
        "--client-secret-file",
        `${s.config}/secret`,
      ]).done;
      assert.equal(bare.code, 2, bare.stderr);
      assert.match(bare.stderr, /--client-issuer/);
      assert.equal(evil.requests.length, before);
    });
  } finally {
    await evil.close();
  }
});

Deno.test("a file: resource_metadata in WWW-Authenticate is refused (exit 8), never read", async () => {
  const s = await setup();
  await Deno.mkdir(s.config, { recursive: true });
  const prm = `${s.config}/prm.json`;
  const f = startOAuthFixture({ resourceMetadataUrl: `file://${prm}` });
  try {
    // A readable file the client would otherwise take for the server's metadata.
    await Deno.writeTextFile(
      prm,
      JSON.stringify({ resource: f.mcpUrl, authorization_servers: [f.issuer] }),
    );
    const run = await spawnCli(s, [
      "tools",
      "list",
      "--endpoint",
      f.mcpUrl,
      "--auth-follow-redirects",
      "--no-auth-store",
    ]).done;
    assert.equal(run.code, 8, run.stderr);
    assert.match(run.stderr, /non-http\(s\) URL/);
    assert.equal(f.log.authorizeRequests.length, 0);
    assert.equal(f.log.registrations.length, 0);
  } finally {
    await f.close();
    await Deno.remove(s.tmp, { recursive: true });
  }
});

Deno.test("two runs refreshing at once: the one refused (invalid_grant) keeps the other's new tokens", async () => {
  await withFixture({}, async (s, f) => {
    const { run } = await login(s, f);
    assert.equal(run.code, 0, run.stderr);
    const store = fileStore({ dir: s.authDir });
    const serverUrl = new URL(f.mcpUrl);
    const make = () => new WmcpAuthProvider({ serverUrl, store, redirector: headlessRedirector() });
    const a = make();
    const b = make();
    const first = (await a.tokens())!.refresh_token; // both runs read the same stored tokens
    assert.equal((await b.tokens())!.refresh_token, first);
    // Run b refreshes first (the fixture rotates refresh tokens) and saves its new tokens.
    assert.equal(await auth(b, { serverUrl }), "AUTHORIZED");
    const bTokens = (await store.load(f.mcpUrl))!.tokens!;
    assert.notEqual(bTokens.refresh_token, first);
    // Run a refreshes with the rotated-away token: invalid_grant. It must not sign the user out.
    await auth(a, { serverUrl }).catch(() => {});
    assert.ok(f.log.tokenErrors.includes("unknown refresh token"), `${f.log.tokenErrors}`);
    const after = (await store.load(f.mcpUrl))!;
    assert.ok(after.tokens?.refresh_token, "the stored entry still has tokens");
    assert.ok(
      f.log.refreshTokens.includes(after.tokens!.refresh_token as string),
      "the stored refresh token is one the AS issued",
    );
    assert.equal(f.log.authorizeRequests.length, 1, "no new sign-in was needed");
  });
});

Deno.test("the store refuses a loose directory, a loose file, and a symlinked file", async () => {
  await withFixture({}, async (s, f) => {
    const { run } = await login(s, f);
    assert.equal(run.code, 0, run.stderr);
    const [name] = await credentialFiles(s);
    const file = `${s.authDir}/${name}`;

    await Deno.chmod(s.authDir, 0o755);
    let st = await spawnCli(s, ["auth", "status"]).done;
    assert.equal(st.code, 2);
    assert.match(st.stderr, /permissions 0755 let others read it/);
    await Deno.chmod(s.authDir, 0o700);

    await Deno.chmod(file, 0o644);
    st = await spawnCli(s, ["auth", "status"]).done;
    assert.equal(st.code, 2);
    assert.match(st.stderr, /permissions 0644/);
    assertNoSecrets(f, st.stdout, st.stderr);
    await Deno.chmod(file, 0o600);

    const elsewhere = `${s.tmp}/elsewhere.json`;
    await Deno.rename(file, elsewhere);
    await Deno.symlink(elsewhere, file);
    st = await spawnCli(s, ["auth", "status"]).done;
    assert.equal(st.code, 2);
    assert.match(st.stderr, /symbolic link/);
    // A login refuses to write through the link too; the link's target is untouched.
    const before = await Deno.readTextFile(elsewhere);
    const again = spawnCli(s, ["auth", "login", "--endpoint", f.mcpUrl, "--auth-timeout", "5"]);
    const r = await again.done;
    assert.equal(r.code, 2, r.stderr);
    assert.equal(await Deno.readTextFile(elsewhere), before);
  });
});

Deno.test("the store: a symlinked credentials directory is refused", async () => {
  const s = await setup();
  try {
    await Deno.mkdir(`${s.config}`, { mode: 0o700 });
    await Deno.mkdir(`${s.tmp}/real`, { mode: 0o700 });
    await Deno.symlink(`${s.tmp}/real`, s.authDir);
    const store = fileStore({ dir: s.authDir });
    await assert.rejects(
      store.save({ serverUrl: "http://127.0.0.1:1/mcp", tokens: { access_token: "x" } }),
      /symbolic link/,
    );
    assert.deepEqual([...Deno.readDirSync(`${s.tmp}/real`)], []);
  } finally {
    await Deno.remove(s.tmp, { recursive: true });
  }
});

Deno.test("the store keys by normalised URL (no query or fragment) and writes 0600 atomically", async () => {
  const s = await setup();
  try {
    const store = fileStore({ dir: s.authDir });
    await store.save({ serverUrl: "HTTP://Example.COM:80/mcp?x=1#f", issuer: "https://as" });
    const c = await store.load("http://example.com/mcp");
    assert.equal(c?.serverUrl, "http://example.com/mcp");
    assert.equal(await store.load("http://example.com/other"), undefined);
    const names = [...Deno.readDirSync(s.authDir)].map((e) => e.name);
    assert.equal(names.length, 1, `no temporary file left: ${names}`);
    assert.equal((await Deno.stat(`${s.authDir}/${names[0]}`)).mode! & 0o777, 0o600);
    assert.equal(await store.remove("http://example.com/mcp"), true);
    assert.equal(await store.remove("http://example.com/mcp"), false);
    await assert.rejects(store.load("file:///etc/passwd"), /http/);
  } finally {
    await Deno.remove(s.tmp, { recursive: true });
  }
});

for (
  const [label, endpoint] of [
    ["javascript:", "javascript:alert(1)//"],
    ["file:", "file:///etc/passwd"],
    ["shell metacharacters", "http://x/$(touch /tmp/pwned-wmcp);`id`|sh&"],
  ] as const
) {
  Deno.test(`the browser opener never receives a hostile authorization_endpoint (${label})`, async () => {
    await withFixture({ authorizationEndpoint: endpoint }, async (s, f) => {
      const run = await spawnCli(s, [
        "auth",
        "login",
        "--endpoint",
        f.mcpUrl,
        "--auth-timeout",
        "2",
      ]).done;
      assert.notEqual(run.code, 0);
      const opened = await Deno.readTextFile(s.browserLog).catch(() => "");
      for (const u of opened.split("\n").filter(Boolean)) {
        const p = new URL(u).protocol;
        assert.ok(p === "http:" || p === "https:", `the opener got ${u}`);
      }
      if (label !== "shell metacharacters") assert.equal(opened, "");
      assert.ok(!(await Deno.stat("/tmp/pwned-wmcp").then(() => true, () => false)));
    });
  });
}

Deno.test("the loopback redirector itself refuses a non-http(s) URL before starting the opener", async () => {
  const s = await setup();
  const r = await loopbackRedirector({ browserCommand: s.browser, timeoutMs: 2000, say: () => {} });
  try {
    for (const bad of ["javascript:alert(1)", "file:///etc/passwd", "data:text/html,x"]) {
      await assert.rejects(r.authorize(new URL(bad)), (e: Error) => {
        assert.ok(e instanceof AuthFlowError);
        assert.equal(e.failure, "unsafe-url");
        assert.ok(!e.message.includes("alert") && !e.message.includes("passwd"));
        return true;
      });
    }
    assert.equal(await Deno.readTextFile(s.browserLog).catch(() => ""), "");
    // A stray request to another path is ignored; the listener is on 127.0.0.1.
    const stray = await fetch(r.redirectUri.replace("/callback", "/other"));
    assert.equal(stray.status, 404);
    await stray.body?.cancel();
  } finally {
    await r.close();
    await Deno.remove(s.tmp, { recursive: true });
  }
});

/** A loopback port nothing listens on (bound, then closed). */
function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = l.addr as Deno.NetAddr;
  l.close();
  return port;
}

Deno.test("auth login names the address it cannot reach (exit 3, as the tools commands say it)", async () => {
  const s = await setup();
  const asPort = closedPort();
  const f = startOAuthFixture({ authorizationServers: () => [`http://127.0.0.1:${asPort}`] });
  try {
    const endpoint = `http://127.0.0.1:${closedPort()}/mcp`;
    const [server, pretty, as] = await Promise.all([
      spawnCli(s, ["auth", "login", "--endpoint", endpoint, "--no-browser"]).done,
      spawnCli(s, ["auth", "login", "--endpoint", `${endpoint}?key=s3cret`, "--output", "pretty"])
        .done,
      // The server answers; its authorization server does not: that address is named.
      spawnCli(s, ["auth", "login", "--endpoint", f.mcpUrl, "--no-browser"]).done,
    ]);
    assert.equal(server.code, 3, server.stderr);
    assert.equal(server.stdout, "");
    const e = JSON.parse(server.stderr).error;
    assert.equal(e.class, "transport");
    assert.equal(e.exitCode, 3);
    assert.match(e.message, new RegExp(`^cannot reach ${endpoint}: Connection refused`));
    assert.deepEqual(e.details, { auth: "unreachable" });
    // Redacted as every client message redacts a URL.
    assert.equal(pretty.code, 3, pretty.stderr);
    assert.match(
      pretty.stderr,
      new RegExp(`^error \\(transport\\): cannot reach ${endpoint}\\?key=\\*\\*\\*: Connection`),
    );
    assert.ok(!pretty.stderr.includes("s3cret"));
    assert.equal(as.code, 3, as.stderr);
    assert.match(
      JSON.parse(as.stderr).error.message,
      new RegExp(`^cannot reach http://127\\.0\\.0\\.1:${asPort}/\\S*: Connection refused`),
    );
    assert.deepEqual(await credentialFiles(s), []);
  } finally {
    await f.close();
    await Deno.remove(s.tmp, { recursive: true });
  }
});

Deno.test("an authorization server that does not answer in time is unreachable (exit 3), not a failed flow", () => {
  const e = authFailure(
    new DOMException("The operation was aborted due to timeout", "TimeoutError"),
  );
  assert.equal(e.failure, "transport");
  assert.equal(e.exitCode, 3);
  assert.equal((e.details as { auth?: string } | undefined)?.auth, "unreachable");
});
