/**
 * MCP authorization of the bundled client through the real CLI, against an in-process
 * authorization server and protected MCP server on 127.0.0.1: discovery order, PKCE S256, the
 * resource parameter, refresh, step-up, static tokens winning, and no token or code in output.
 */
import assert from "node:assert/strict";
import { assertExit, describe, runClient } from "./_client.ts";

/** What the fixture saw, in order. */
interface Event {
  what: string;
  query?: Record<string, string>;
  body?: Record<string, string>;
  auth?: string;
  method?: string;
}

interface FixtureOptions {
  /** Requests an access token is good for before the server calls it expired. */
  tokenUses?: number;
  /** tools/call needs scope "write" (a 403 insufficient_scope otherwise). */
  callNeedsWrite?: boolean;
}

interface Fixture {
  rs: string;
  as: string;
  events: Event[];
  /** Every access token, refresh token and code the AS issued. */
  secrets: string[];
  /** Whether every code_verifier matched its S256 challenge. */
  pkce: boolean[];
  close(): Promise<void>;
}

async function s256(v: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(v)));
  return btoa(String.fromCharCode(...d)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

function startFixture(options: FixtureOptions = {}): Fixture {
  const events: Event[] = [];
  const secrets: string[] = [];
  const pkce: boolean[] = [];
  const codes = new Map<string, { challenge: string; scope: string; resource: string }>();
  const tokens = new Map<string, { scope: string[]; uses: number }>();
  const refreshTokens = new Map<string, string>();
  const random = (p: string) => {
    const v = `${p}-${crypto.randomUUID()}`;
    secrets.push(v);
    return v;
  };
  const issue = (scope: string) => {
    const access = random("at");
    tokens.set(access, { scope: scope.split(" ").filter(Boolean), uses: 0 });
    const refresh = random("rt");
    refreshTokens.set(refresh, scope);
    return json({
      access_token: access,
      token_type: "Bearer",
      expires_in: 3600,
      refresh_token: refresh,
      scope,
    });
  };

  const asServer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const as = url.origin;
    if (url.pathname === "/.well-known/oauth-authorization-server") {
      events.push({ what: "as-metadata" });
      return json({
        issuer: as,
        authorization_endpoint: `${as}/authorize`,
        token_endpoint: `${as}/token`,
        registration_endpoint: `${as}/register`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["none"],
        authorization_response_iss_parameter_supported: true,
      });
    }
    if (url.pathname === "/register") {
      const body = await req.json();
      events.push({ what: "register", body });
      return json({ ...body, client_id: "fixture-client" }, 201);
    }
    if (url.pathname === "/authorize") {
      const q = Object.fromEntries(url.searchParams);
      events.push({ what: "authorize", query: q });
      const code = random("code");
      codes.set(code, {
        challenge: q.code_challenge ?? "",
        scope: q.scope ?? "",
        resource: q.resource ?? "",
      });
      const back = new URL(q.redirect_uri);
      back.searchParams.set("code", code);
      if (q.state) back.searchParams.set("state", q.state);
      back.searchParams.set("iss", as);
      return new Response(null, { status: 302, headers: { location: back.href } });
    }
    if (url.pathname === "/token") {
      const body = Object.fromEntries(new URLSearchParams(await req.text()));
      events.push({ what: "token", body });
      if (body.grant_type === "authorization_code") {
        const c = codes.get(body.code);
        if (!c) return json({ error: "invalid_grant" }, 400);
        codes.delete(body.code);
        pkce.push(await s256(body.code_verifier ?? "") === c.challenge);
        return issue(c.scope);
      }
      if (body.grant_type === "refresh_token") {
        const scope = refreshTokens.get(body.refresh_token);
        if (scope === undefined) return json({ error: "invalid_grant" }, 400);
        refreshTokens.delete(body.refresh_token);
        return issue(scope);
      }
      return json({ error: "unsupported_grant_type" }, 400);
    }
    return new Response("not found", { status: 404 });
  });
  const asUrl = `http://127.0.0.1:${asServer.addr.port}`;

  const rsServer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const rs = url.origin;
    const prm = `${rs}/.well-known/oauth-protected-resource/mcp`;
    if (url.pathname === "/.well-known/oauth-protected-resource/mcp") {
      events.push({ what: "prm" });
      return json({ resource: `${rs}/mcp`, authorization_servers: [asUrl] });
    }
    if (url.pathname !== "/mcp") return new Response("not found", { status: 404 });
    if (req.method !== "POST") return new Response(null, { status: 405 });
    const msg = await req.json();
    const auth = req.headers.get("authorization") ?? "";
    events.push({ what: "mcp", method: msg.method, auth });
    const challenge = (extra = "") =>
      json({ error: "invalid_token" }, 401, {
        "www-authenticate": `Bearer resource_metadata="${prm}", scope="read"${extra}`,
      });
    if (!auth.startsWith("Bearer ")) return challenge();
    const t = tokens.get(auth.slice(7));
    if (!t || t.uses >= (options.tokenUses ?? Infinity)) {
      return challenge(', error="invalid_token"');
    }
    t.uses++;
    if (msg.method === "tools/call" && options.callNeedsWrite && !t.scope.includes("write")) {
      return json({ error: "insufficient_scope" }, 403, {
        "www-authenticate":
          `Bearer error="insufficient_scope", scope="write", resource_metadata="${prm}"`,
      });
    }
    if (msg.id === undefined) return new Response(null, { status: 202 });
    const result = msg.method === "initialize"
      ? {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "auth-fixture", version: "1.0.0" },
      }
      : msg.method === "tools/list"
      ? {
        tools: [{
          name: "echo",
          inputSchema: { type: "object", properties: { text: { type: "string" } } },
        }],
      }
      : msg.method === "tools/call"
      ? { content: [{ type: "text", text: `echo: ${msg.params.arguments?.text ?? ""}` }] }
      : undefined;
    if (result === undefined) {
      return json({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "no" } });
    }
    return json({ jsonrpc: "2.0", id: msg.id, result });
  });
  return {
    rs: `http://127.0.0.1:${rsServer.addr.port}/mcp`,
    as: asUrl,
    events,
    secrets,
    pkce,
    close: async () => {
      await rsServer.shutdown();
      await asServer.shutdown();
    },
  };
}

const READ = [new URL("../..", import.meta.url).pathname];

function call(f: Fixture, extra: string[] = []) {
  return runClient([
    "tools",
    "call",
    "echo",
    "--arguments",
    '{"text":"hi"}',
    "--endpoint",
    f.rs,
    "--protocol-version",
    "2025-11-25",
    "--output",
    "mcp-json",
    ...extra,
  ], { read: READ });
}

const HEADLESS = ["--auth-follow-redirects", "--no-auth-store"];

function assertNoSecrets(f: Fixture, out: string) {
  assert.ok(f.secrets.length > 0, "the fixture issued nothing");
  for (const s of f.secrets) assert.ok(!out.includes(s), `a token or code appeared in the output`);
}

Deno.test("auth: discovery order, DCR, PKCE S256, resource parameter; no secret in output", async () => {
  const f = startFixture();
  try {
    const r = await call(f, HEADLESS);
    assertExit(r, 0);
    assert.equal(JSON.parse(r.stdout).mcpResult.content[0].text, "echo: hi");
    const order = f.events.map((e) => e.what).filter((w, i, a) => w !== a[i - 1]);
    assert.deepEqual(order.slice(0, 7), [
      "mcp",
      "prm",
      "as-metadata",
      "register",
      "authorize",
      "token",
      "mcp",
    ]);
    assert.equal(f.events[0].auth, "", "the first request carried no token");
    const authz = f.events.find((e) => e.what === "authorize")!.query!;
    assert.equal(authz.code_challenge_method, "S256");
    assert.equal(authz.resource, f.rs);
    assert.equal(authz.scope, "read", "the scope of the WWW-Authenticate challenge");
    assert.equal(authz.client_id, "fixture-client");
    assert.ok(authz.state && authz.state.length >= 16, "a state was sent");
    const token = f.events.find((e) => e.what === "token")!.body!;
    assert.equal(token.resource, f.rs);
    assert.deepEqual(f.pkce, [true], "the code_verifier matches the S256 challenge");
    const reg = f.events.find((e) => e.what === "register")!.body!;
    assert.deepEqual(reg.grant_types, ["authorization_code", "refresh_token"] as never);
    assert.ok(
      f.events.filter((e) => e.what === "mcp").slice(1).every((e) => /^Bearer at-/.test(e.auth!)),
    );
    assertNoSecrets(f, r.stdout + r.stderr);
  } finally {
    await f.close();
  }
});

Deno.test("auth: a refused token is refreshed, not re-authorized", async () => {
  const f = startFixture({ tokenUses: 2 });
  try {
    const r = await call(f, HEADLESS);
    assertExit(r, 0);
    const grants = f.events.filter((e) => e.what === "token").map((e) => e.body!.grant_type);
    assert.equal(grants[0], "authorization_code");
    assert.ok(
      grants.slice(1).length >= 1 && grants.slice(1).every((g) => g === "refresh_token"),
      describe(r),
    );
    assert.equal(f.events.filter((e) => e.what === "authorize").length, 1);
    assert.equal(
      f.events.find((e) => e.body?.grant_type === "refresh_token")!.body!.resource,
      f.rs,
    );
    assertNoSecrets(f, r.stdout + r.stderr);
  } finally {
    await f.close();
  }
});

Deno.test("auth: step-up on insufficient_scope asks for the union of scopes, then succeeds", async () => {
  const f = startFixture({ callNeedsWrite: true });
  try {
    const r = await call(f, HEADLESS);
    assertExit(r, 0);
    const scopes = f.events.filter((e) => e.what === "authorize").map((e) => e.query!.scope);
    assert.equal(scopes.length, 2, describe(r));
    assert.equal(scopes[0], "read");
    assert.deepEqual(scopes[1].split(" ").sort(), ["read", "write"]);
    assert.equal(JSON.parse(r.stdout).mcpResult.content[0].text, "echo: hi");
    assertNoSecrets(f, r.stdout + r.stderr);
  } finally {
    await f.close();
  }
});

Deno.test("auth: nobody to sign in is exit 8 (class auth); a static token wins", async () => {
  const f = startFixture();
  try {
    const r = await call(f, ["--no-auth-store", "--non-interactive"]);
    assertExit(r, 8);
    assert.equal(JSON.parse(r.stderr.trim().split("\n").at(-1)!).error.class, "auth");
    assert.equal(f.events.filter((e) => e.what === "token").length, 0);
    // --no-auth: a 401 stays what it was without authorization (transport, exit 3).
    assertExit(await call(f, ["--no-auth"]), 3);
    // A static bearer token: no discovery, no authorization (the server refuses it: exit 3).
    const before = f.events.length;
    const s = await runClient([
      "tools",
      "list",
      "--endpoint",
      f.rs,
      "--protocol-version",
      "2025-11-25",
      "--bearer-token-env",
      "FIXTURE_TOKEN",
    ], { read: READ, env: { FIXTURE_TOKEN: "static-token" } });
    assertExit(s, 3);
    const after = f.events.slice(before).map((e) => e.what);
    assert.ok(after.length > 0 && after.every((w) => w === "mcp"), after.join(","));
    assert.ok(f.events.slice(before).every((e) => e.auth === "Bearer static-token"));
  } finally {
    await f.close();
  }
});
