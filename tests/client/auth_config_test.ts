/**
 * OAuth settings in a `--config` entry (issue 20 §4): an HTTP entry's `oauth` object gives what
 * the flags give (clientId, clientSecretEnv or clientSecretFile, clientIssuer, clientMetadataUrl,
 * scope), checked as the rest of an entry is (exit 2 naming the field, never a secret), the
 * secret file read with the flags' care; the flags win, the client identity as a whole.
 * `tools list` runs in process (runInProcess) against a real authorization server and MCP server
 * on 127.0.0.1 that knows only a pre-registered client (no dynamic registration). One case runs
 * the router as a real child (as the `cli` task starts it): the entry's secret file must be
 * granted to the scoped child, which a run in process cannot show.
 */
import assert from "node:assert/strict";
import { startOAuthFixture } from "./fixtures/oauth_fixture.ts";
import { runInProcess } from "../_support/in_process.ts";
import { withTempDir, writeConfig } from "../_support/fs.ts";
import { FOLLOW_REDIRECT_URI } from "../../src/client/auth/follow_redirector.ts";
import { authSettingsFrom } from "../../src/cli/auth_flags.ts";
import { targetFromConfig } from "../../src/client/config_file.ts";
import { commandPermissions } from "../../src/cli/command_permissions.ts";
import { probeEntry } from "../../src/cli/entry_probe.ts";
import { PROJECT, ROUTER_FLAGS } from "../cli/_router.ts";

const SECRET = "pre-registered-SECRET-4f1c9a";

/** The fixture knowing one pre-registered client with SECRET, and no dynamic registration. */
function preRegisteredFixture() {
  return startOAuthFixture({
    dynamicRegistration: false,
    preRegistered: {
      clientId: "pre-client",
      clientSecret: SECRET,
      redirectUris: [FOLLOW_REDIRECT_URI],
    },
  });
}

/** `tools list` of entry `s` in `config`, headless, credentials in memory. */
function listEntry(
  config: string,
  options: Parameters<typeof runInProcess>[1] = {},
  extra: string[] = [],
) {
  return runInProcess([
    "tools",
    "list",
    "--config",
    config,
    "--server",
    "s",
    "--output",
    "json",
    "--auth-follow-redirects",
    "--no-auth-store",
    ...extra,
  ], options);
}

/** The last JSON error line of a run. */
function errorOf(stderr: string): { class: string; message: string } {
  return JSON.parse(stderr.trim().split("\n").at(-1)!).error;
}

Deno.test("an entry's oauth: a pre-registered client, its secret from a file (relative to the invocation dir); never printed", async () => {
  await withTempDir(async (dir) => {
    const f = preRegisteredFixture();
    try {
      await Deno.writeTextFile(`${dir}/client-secret`, `${SECRET}\n`);
      const config = await writeConfig(dir, {
        s: {
          url: f.mcpUrl,
          oauth: {
            clientId: "pre-client",
            clientSecretFile: "client-secret",
            clientIssuer: f.issuer,
          },
        },
      });
      const r = await listEntry(config, { cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout).tools.map((t: { name: string }) => t.name), ["hello"]);
      assert.deepEqual(f.log.registrations, [], "no dynamic registration");
      assert.equal(f.log.authorizeRequests[0].searchParams.get("client_id"), "pre-client");
      assert.deepEqual(f.log.clientAuth, ["basic"], "the secret authenticated the token request");
      assert.ok(!(r.stdout + r.stderr).includes(SECRET), "the secret is never printed");
    } finally {
      await f.close();
    }
  });
});

Deno.test("an entry's oauth: the secret from a variable, ${VAR} in its fields", async () => {
  await withTempDir(async (dir) => {
    const f = preRegisteredFixture();
    try {
      const config = await writeConfig(dir, {
        s: {
          url: f.mcpUrl,
          oauth: {
            clientId: "${PRE_CLIENT}",
            clientSecretEnv: "PRE_SECRET",
            clientIssuer: "${PRE_ISSUER}",
            scope: "tools",
          },
        },
      });
      const env = { PRE_CLIENT: "pre-client", PRE_SECRET: SECRET, PRE_ISSUER: f.issuer };
      const r = await listEntry(config, { env });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(f.log.authorizeRequests[0].searchParams.get("client_id"), "pre-client");
      assert.deepEqual(f.log.clientAuth, ["basic"]);
      assert.ok(!(r.stdout + r.stderr).includes(SECRET));
    } finally {
      await f.close();
    }
  });
});

Deno.test("flags win over an entry's oauth: the client identity as a whole, the rest one by one", async () => {
  await withTempDir(async (dir) => {
    const f = preRegisteredFixture();
    try {
      // The entry's identity is another client, whose secret file does not exist: with identity
      // flags given, none of it is used (the file is never read).
      const config = await writeConfig(dir, {
        s: {
          url: f.mcpUrl,
          oauth: {
            clientId: "entry-client",
            clientSecretFile: `${dir}/no-such-file`,
            clientIssuer: f.issuer,
          },
        },
      });
      const r = await listEntry(config, { env: { PRE_SECRET: SECRET } }, [
        "--client-id",
        "pre-client",
        "--client-secret-env",
        "PRE_SECRET",
        "--client-issuer",
        f.issuer,
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(f.log.authorizeRequests[0].searchParams.get("client_id"), "pre-client");
    } finally {
      await f.close();
    }
    // Scope and metadata URL: the flag when given, else the entry's.
    const config = await writeConfig(dir, {
      s: {
        url: "http://127.0.0.1:9/mcp",
        oauth: { scope: "files:read", clientMetadataUrl: "https://client.example/meta.json" },
      },
    });
    const target = await targetFromConfig(config, "s");
    const fromEntry = await authSettingsFrom({}, target);
    assert.equal(fromEntry?.scope, "files:read");
    assert.equal(fromEntry?.clientMetadataUrl, "https://client.example/meta.json");
    assert.equal(fromEntry?.clientId, undefined);
    const fromFlags = await authSettingsFrom({
      scope: "files:write",
      "client-metadata-url": "https://other.example/meta.json",
    }, target);
    assert.equal(fromFlags?.scope, "files:write");
    assert.equal(fromFlags?.clientMetadataUrl, "https://other.example/meta.json");
    // --no-auth: the entry's settings are not used at all.
    assert.equal(await authSettingsFrom({ "no-auth": true }, target), undefined);
  });
});

Deno.test("an entry's oauth is checked as the rest of the entry: exit 2 naming the field, never a secret", async () => {
  await withTempDir(async (dir) => {
    const fifo = `${dir}/fifo`;
    await new Deno.Command("mkfifo", { args: [fifo] }).output();
    await Deno.writeTextFile(`${dir}/empty`, "\n");
    const hidden = `${dir}/private-dir-of-the-user`;
    const url = "http://127.0.0.1:9/mcp";
    const issuer = "https://as.example";
    const F = "mcpServers.s.oauth";
    const cases: [string, Record<string, unknown>, string | RegExp][] = [
      ["not an object", { url, oauth: "pre-client" }, `${F} must be an object`],
      [
        "on a stdio entry",
        { command: "true", oauth: { clientId: "x" } },
        `${F} applies to HTTP servers (an entry with "url")`,
      ],
      [
        "a secret in the file",
        { url, oauth: { clientId: "x", clientSecret: SECRET, clientIssuer: issuer } },
        new RegExp(`^${F}\\.clientSecret is refused: give the secret through an environment`),
      ],
      [
        "two secrets",
        {
          url,
          oauth: {
            clientId: "x",
            clientSecretEnv: "A",
            clientSecretFile: "f",
            clientIssuer: issuer,
          },
        },
        `give ${F}.clientSecretEnv or ${F}.clientSecretFile, not both`,
      ],
      [
        "a secret without its issuer",
        { url, oauth: { clientId: "x", clientSecretEnv: "PRE_SECRET" } },
        `a client secret needs ${F}.clientIssuer URL (the authorization server that issued it)`,
      ],
      [
        "a secret without a client id",
        { url, oauth: { clientSecretEnv: "PRE_SECRET", clientIssuer: issuer } },
        `a client secret needs ${F}.clientId`,
      ],
      [
        "an issuer that is not http(s)",
        { url, oauth: { clientId: "x", clientIssuer: "ftp://as.example" } },
        `${F}.clientIssuer must be an http(s) URL without query or fragment`,
      ],
      [
        "a metadata URL that is not https",
        { url, oauth: { clientMetadataUrl: "http://client.example/meta.json" } },
        `${F}.clientMetadataUrl must be an https URL with a path (a client ID metadata document)`,
      ],
      [
        "a field that is not a string",
        { url, oauth: { clientId: 5 } },
        `${F}.clientId must be a non-empty string`,
      ],
      [
        "an unset ${VAR}",
        { url, oauth: { clientId: "${NOT_SET_ANYWHERE}" } },
        `${F}.clientId refers to \${NOT_SET_ANYWHERE}, which is not set`,
      ],
      [
        "an unset secret variable",
        {
          url,
          oauth: { clientId: "x", clientSecretEnv: "NOT_SET_ANYWHERE", clientIssuer: issuer },
        },
        `environment variable NOT_SET_ANYWHERE (${F}.clientSecretEnv) is not set`,
      ],
      [
        "a missing secret file",
        { url, oauth: { clientId: "x", clientSecretFile: `${dir}/missing`, clientIssuer: issuer } },
        `cannot read ${F}.clientSecretFile ${dir}/missing: no such file`,
      ],
      [
        "a FIFO for a secret file (refused without blocking)",
        { url, oauth: { clientId: "x", clientSecretFile: fifo, clientIssuer: issuer } },
        `${F}.clientSecretFile ${fifo} is a FIFO; give a regular file`,
      ],
      [
        "an empty secret file",
        { url, oauth: { clientId: "x", clientSecretFile: `${dir}/empty`, clientIssuer: issuer } },
        `${dir}/empty is empty`,
      ],
      [
        "a secret file path from ${VAR}, shown as ${VAR}",
        {
          url,
          oauth: {
            clientId: "x",
            clientSecretFile: "${SECRET_HOME}/secret",
            clientIssuer: issuer,
          },
        },
        `cannot read ${F}.clientSecretFile \${SECRET_HOME}/secret: no such file`,
      ],
    ];
    for (const [label, entry, message] of cases) {
      const config = await writeConfig(dir, { s: entry });
      const r = await listEntry(config, { env: { PRE_SECRET: SECRET, SECRET_HOME: hidden } });
      assert.equal(r.code, 2, `${label}: ${r.stderr}`);
      const e = errorOf(r.stderr);
      assert.equal(e.class, "usage", label);
      if (typeof message === "string") assert.equal(e.message.split("; see ")[0], message, label);
      else assert.match(e.message, message, label);
      assert.ok(!r.stderr.includes(SECRET), `${label}: the secret was printed`);
      assert.ok(!r.stderr.includes(hidden), `${label}: an expanded value was printed`);
      assert.equal(r.stdout, "", label);
    }
  });
});

Deno.test("an entry's oauth: a field wmcp does not read, and oauth beside an Authorization header, are warnings", async () => {
  await withTempDir(async (dir) => {
    const url = "http://127.0.0.1:9/mcp";
    const config = await writeConfig(dir, {
      s: { url, oauth: { clientId: "x", callbackPort: 8080 } },
      h: { url, headers: { Authorization: "Bearer t0ken-value" }, oauth: { clientId: "x" } },
    });
    const r = await listEntry(config);
    assert.equal(r.code, 3, r.stderr); // nothing listens there: it went on to connect
    assert.match(
      r.stderr,
      /^wmcp: warning: mcpServers\.s\.oauth has "callbackPort", which wmcp does not read \(it reads clientId, clientSecretEnv, clientSecretFile, clientIssuer, clientMetadataUrl, scope\); ignored$/m,
    );
    const h = await runInProcess(["tools", "list", "--config", config, "--server", "h"]);
    assert.equal(h.code, 3, h.stderr);
    assert.match(
      h.stderr,
      /^wmcp: warning: mcpServers\.h\.oauth is not used: the entry's headers carry an Authorization header, which wins$/m,
    );
  });
});

Deno.test("router: an entry's oauth.clientSecretFile is probed and granted to the scoped child (a real child)", async () => {
  await withTempDir(async (base) => {
    const dir = Deno.realPathSync(base);
    const f = preRegisteredFixture();
    try {
      // The secret lives outside the invocation directory and the config file's.
      for (const d of ["cwd", "conf", "secrets"]) await Deno.mkdir(`${dir}/${d}`);
      const secretFile = `${dir}/secrets/client-secret`;
      await Deno.writeTextFile(secretFile, SECRET);
      const config = await writeConfig(`${dir}/conf`, {
        s: {
          url: f.mcpUrl,
          oauth: { clientId: "pre-client", clientSecretFile: secretFile, clientIssuer: f.issuer },
        },
      });
      const self = Deno.build.os === "linux" ? "/proc/self/exe" : Deno.execPath();
      const facts = await probeEntry(
        { path: config, server: "s", read: [config] },
        { deno: self, invocationDir: `${dir}/cwd` },
      );
      assert.deepEqual(facts, { kind: "http", secretFile });
      const plan = commandPermissions(["tools", "list", "--config", config, "--server", "s"], {
        invocationDir: `${dir}/cwd`,
        deno: [Deno.execPath()],
        configEntry: facts,
      });
      assert.equal(plan.kind, "child");
      if (plan.kind === "child") {
        const read = plan.flags.find((x) => x.startsWith("--allow-read="))!;
        assert.ok(read.split("=")[1].split(",").includes(secretFile), read);
      }
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          ...ROUTER_FLAGS,
          `${PROJECT}cli.ts`,
          "tools",
          "list",
          "--config",
          config,
          "--server",
          "s",
          "--output",
          "json",
          "--auth-follow-redirects",
          "--no-auth-store",
        ],
        cwd: `${dir}/cwd`,
        stdin: "null",
        env: { INIT_CWD: `${dir}/cwd`, WMCP_CONFIG_DIR: `${dir}/creds` },
        signal: AbortSignal.timeout(60_000),
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, stderr);
      assert.deepEqual(f.log.clientAuth, ["basic"]);
      assert.ok(!(new TextDecoder().decode(out.stdout) + stderr).includes(SECRET));
    } finally {
      await f.close();
    }
  });
});
