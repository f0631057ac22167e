/**
 * How the client keeps a sign-in working (issue 20 §4), against a real authorization server and
 * MCP server on 127.0.0.1 (tests/client/fixtures/oauth_fixture.ts, which matches redirect URIs
 * exactly):
 * - a stored registration made for another redirect URI is replaced by a new one before the
 *   authorization URL is used (`tools list` in process, runInProcess); a refresh, which sends no
 *   redirect URI, keeps using it;
 * - tokens whose expiry is known are refreshed shortly before it (REFRESH_AHEAD_MS), not only
 *   after a 401; a refresh that fails falls back to the 401 path. These run the client's
 *   provider (WmcpAuthProvider) and authorizing transport under the SDK's Client, with the
 *   provider's clock injected: no test waits for a token to expire.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { startOAuthFixture } from "./fixtures/oauth_fixture.ts";
import { runInProcess } from "../_support/in_process.ts";
import { withTempDir } from "../_support/fs.ts";
import { fileStore } from "../../src/client/auth/store.ts";
import { signIn } from "../../src/client/auth/sign_in.ts";
import {
  FOLLOW_REDIRECT_URI,
  followingRedirector,
} from "../../src/client/auth/follow_redirector.ts";
import { REFRESH_AHEAD_MS, WmcpAuthProvider } from "../../src/client/auth/provider.ts";
import { authorizingTransport } from "../../src/client/auth/transport.ts";
import { type CredentialStore, memoryStore } from "../../src/client/auth/types.ts";

/** Revokes a refresh token at the fixture (RFC 7009), as a signed-out session would. */
async function revoke(issuer: string, token: string): Promise<void> {
  const res = await fetch(`${issuer}/revoke`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token }),
  });
  await res.body?.cancel();
  assert.equal(res.status, 200);
}

/** `tools list` in process against the fixture, credentials under `config`, no person. */
function toolsList(mcpUrl: string, config: string) {
  return runInProcess([
    "tools",
    "list",
    "--endpoint",
    mcpUrl,
    "--output",
    "json",
    "--auth-follow-redirects",
  ], { env: { WMCP_CONFIG_DIR: config } });
}

Deno.test("a stored registration for another redirect URI is replaced before the authorization URL is used", async () => {
  await withTempDir(async (config) => {
    const f = startOAuthFixture({});
    try {
      // A sign-in made elsewhere (another port), as `auth login` stores it.
      const store = fileStore({ dir: `${config}/auth` });
      const other = "http://127.0.0.1:9/callback";
      await signIn(new URL(f.mcpUrl), {
        store,
        redirector: followingRedirector({ redirectUri: other }),
      });
      const first = (await store.load(f.mcpUrl))!;
      const firstId = (first.clientInformation as { client_id: string }).client_id;
      // Its tokens no longer work: the access token expired, the refresh token was revoked.
      f.expireAccessTokens();
      await revoke(f.issuer, first.tokens!.refresh_token as string);

      const r = await toolsList(f.mcpUrl, config);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(f.log.registrations.length, 2, "registered again");
      assert.deepEqual(f.log.registrations[1].redirect_uris, [FOLLOW_REDIRECT_URI]);
      const authorize = f.log.authorizeRequests.at(-1)!.searchParams;
      assert.equal(authorize.get("redirect_uri"), FOLLOW_REDIRECT_URI);
      assert.notEqual(authorize.get("client_id"), firstId, "the new registration is asked for");
      const stored = (await store.load(f.mcpUrl))!;
      assert.equal(
        (stored.clientInformation as { client_id: string }).client_id,
        authorize.get("client_id"),
        "the new registration is kept",
      );
      assert.ok(f.log.accepted.includes(stored.tokens!.access_token as string));
      assert.deepEqual(f.log.tokenErrors, ["unknown refresh token"]);
    } finally {
      await f.close();
    }
  });
});

Deno.test("a refresh keeps using the registration made for another redirect URI (no new registration)", async () => {
  await withTempDir(async (config) => {
    const f = startOAuthFixture({});
    try {
      const store = fileStore({ dir: `${config}/auth` });
      await signIn(new URL(f.mcpUrl), {
        store,
        redirector: followingRedirector({ redirectUri: "http://127.0.0.1:9/callback" }),
      });
      f.expireAccessTokens();
      const r = await toolsList(f.mcpUrl, config);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(f.log.grants, ["authorization_code", "refresh_token"]);
      assert.equal(f.log.registrations.length, 1);
      assert.equal(f.log.authorizeRequests.length, 1, "no new authorization");
    } finally {
      await f.close();
    }
  });
});

/** A clock the test moves by hand. */
class Clock {
  now = Date.parse("2030-01-01T00:00:00Z");
  readonly read = () => this.now;
}

/** One run of the client: a provider over `store` on `clock`, the tools listed, disconnected. */
async function listWith(mcpUrl: string, store: CredentialStore, clock: Clock): Promise<string[]> {
  const provider = new WmcpAuthProvider({
    serverUrl: new URL(mcpUrl),
    store,
    redirector: followingRedirector(),
    now: clock.read,
  });
  const client = new Client({ name: "renewal-test", version: "1" });
  await client.connect(
    authorizingTransport({ kind: "http", url: new URL(mcpUrl), headers: {} }, provider, {
      maxBytes: 1 << 20,
      failure: "protocol",
      what: "response",
    }),
  );
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

/** A fixture and a store signed in to it at `clock.now` (tokens with expires_in 3600). */
async function signedIn(
  clock: Clock,
  options: Parameters<typeof startOAuthFixture>[0] = {},
) {
  const f = startOAuthFixture(options);
  const store = memoryStore();
  assert.deepEqual(await listWith(f.mcpUrl, store, clock), ["hello"]);
  const creds = (await store.load(new URL(f.mcpUrl).href))!;
  assert.equal(creds.tokens!.expires_in, 3600);
  return { f, store, creds, token: creds.tokens!.access_token as string };
}

Deno.test("tokens are refreshed shortly before their known expiry, before any request, not after a 401", async () => {
  const clock = new Clock();
  const { f, store, token } = await signedIn(clock);
  try {
    const challenged = f.log.challenged.length;
    const accepted = f.log.accepted.length;
    // Inside the margin before expires_in runs out (the fixture itself still takes the token).
    clock.now += 3600_000 - REFRESH_AHEAD_MS / 2;
    assert.deepEqual(await listWith(f.mcpUrl, store, clock), ["hello"]);
    assert.deepEqual(f.log.grants, ["authorization_code", "refresh_token"]);
    assert.equal(f.log.challenged.length, challenged, "no request was refused first");
    const fresh = f.log.accessTokens.at(-1)!;
    assert.notEqual(fresh, token);
    const sent = f.log.accepted.slice(accepted);
    assert.ok(sent.length > 0 && sent.every((t) => t === fresh), "every request had the new one");
    assert.equal(f.log.authorizeRequests.length, 1, "no new sign-in");
    const stored = (await store.load(new URL(f.mcpUrl).href))!;
    assert.equal(stored.tokens!.access_token, fresh);
    assert.equal(stored.tokensSavedAt, clock.now);
  } finally {
    await f.close();
  }
});

Deno.test("no refresh while tokens are far from expiry, or when their expiry is not known", async () => {
  const clock = new Clock();
  const { f, store, creds, token } = await signedIn(clock);
  try {
    // Just outside the margin: not yet.
    clock.now += 3600_000 - REFRESH_AHEAD_MS - 1_000;
    assert.deepEqual(await listWith(f.mcpUrl, store, clock), ["hello"]);
    // No expires_in: the expiry is not known, a 401 would tell.
    const { expires_in: _, ...noExpiry } = creds.tokens!;
    await store.save({ ...creds, tokens: noExpiry });
    clock.now += 10 * 3600_000;
    assert.deepEqual(await listWith(f.mcpUrl, store, clock), ["hello"]);
    assert.deepEqual(f.log.grants, ["authorization_code"]);
    assert.ok(f.log.accepted.slice(-2).every((t) => t === token));
  } finally {
    await f.close();
  }
});

Deno.test("a refresh ahead of expiry that fails leaves the token in use and asks nobody to sign in", async () => {
  const clock = new Clock();
  let down = false;
  const { f, store, token } = await signedIn(clock, { refreshUnavailable: () => down });
  try {
    down = true;
    clock.now += 3600_000 - REFRESH_AHEAD_MS / 2;
    const accepted = f.log.accepted.length;
    assert.deepEqual(await listWith(f.mcpUrl, store, clock), ["hello"]);
    // One attempt for the run (not one per request), then the token as it was.
    assert.deepEqual(f.log.grants, ["authorization_code", "refresh_token"]);
    assert.deepEqual(f.log.tokenErrors, ["unavailable"]);
    assert.ok(f.log.accepted.slice(accepted).every((t) => t === token));
    assert.equal(f.log.authorizeRequests.length, 1, "no sign-in");
    assert.equal((await store.load(new URL(f.mcpUrl).href))!.tokens!.access_token, token);
  } finally {
    await f.close();
  }
});

Deno.test("a refresh ahead of expiry that is refused falls back to the 401 path (a new sign-in)", async () => {
  const clock = new Clock();
  const { f, store, creds } = await signedIn(clock);
  try {
    await revoke(f.issuer, creds.tokens!.refresh_token as string);
    f.expireAccessTokens();
    clock.now += 3600_000 - REFRESH_AHEAD_MS / 2;
    assert.deepEqual(await listWith(f.mcpUrl, store, clock), ["hello"]);
    assert.deepEqual(f.log.tokenErrors, ["unknown refresh token"]);
    assert.equal(f.log.challenged.length, 2, "the first request of each run was answered 401");
    assert.equal(f.log.authorizeRequests.length, 2, "signed in again");
    const stored = (await store.load(new URL(f.mcpUrl).href))!;
    assert.equal(stored.tokens!.access_token, f.log.accessTokens.at(-1));
  } finally {
    await f.close();
  }
});
