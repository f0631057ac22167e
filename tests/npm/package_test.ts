/**
 * The npm package as it would be published: `deno task -q pack:npm`'s tarball (npm pack),
 * installed with npm into an empty prefix, then its `wmcp` command (the Node launcher
 * npm/wmcp.cjs) driven by the v2 SDK client over stdio and Streamable HTTP, run through
 * `npx --package TARBALL`, and asked for a host entry. Nothing here runs this checkout's cli.ts:
 * every Deno module comes from the installed package.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { NPM_NAME, NPM_SPEC } from "../../src/cli/host_config.ts";
import { packNpm } from "../../scripts/npm_pack.ts";
import denoConfig from "../../deno.json" with { type: "json" };

const TMP = Deno.realPathSync(await Deno.makeTempDir({ prefix: "wmcp-npm-" }));
const TARBALL = await packNpm(TMP);
const PREFIX = `${TMP}/prefix`;
const WORKSPACE = `${TMP}/workspace`;
const WMCP = `${PREFIX}/bin/wmcp`;
const PACKAGE_DIR = `${PREFIX}/lib/node_modules/${NPM_NAME}`;

await Deno.mkdir(`${WORKSPACE}/docs`, { recursive: true });
await Deno.writeTextFile(`${WORKSPACE}/docs/note.txt`, "packed and served\n");
await Deno.writeTextFile(`${TMP}/outside.txt`, "not served\n");

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(cmd: string, args: string[], cwd = WORKSPACE): Promise<Ran> {
  const out = await new Deno.Command(cmd, {
    args,
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

const installed = await run("npm", [
  "install",
  "--global",
  "--prefix",
  PREFIX,
  "--no-audit",
  "--no-fund",
  "--loglevel=error",
  TARBALL,
], TMP);

type Json = Record<string, unknown>;

function text(result: Json): string {
  const content = result.content as { type: string; text?: string }[];
  return content.map((c) => c.text ?? "").join("");
}

/** Lists the tools and reads inside and outside the root through one connected client. */
async function exercise(client: Client, tag: string): Promise<void> {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  assert.ok(names.includes("read_file") && names.includes("search_text"), `${tag}: ${names}`);
  assert.ok(!names.includes("write_file"), `${tag}: read-only unless --write`);
  const read = await client.callTool({ name: "read_file", arguments: { path: "docs/note.txt" } });
  assert.notEqual(read.isError, true, `${tag}: ${JSON.stringify(read)}`);
  assert.equal((read.structuredContent as Json).content, "packed and served\n", tag);
  const found = await client.callTool({
    name: "search_text",
    arguments: { query: "packed" },
  });
  assert.match(text(found as Json), /docs\/note\.txt:1:1: packed and served/, tag);
  const outside = await client.callTool({
    name: "read_file",
    arguments: { path: "../outside.txt" },
  });
  assert.equal(outside.isError, true, tag);
  assert.match(text(outside as Json), /^OUTSIDE_WORKSPACE: /, tag);
}

Deno.test({
  name: "npm package: the tarball installs into an empty prefix with a wmcp command",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    assert.equal(installed.code, 0, installed.stderr);
    assert.ok(Deno.statSync(WMCP).isFile || Deno.lstatSync(WMCP).isSymlink);
    const pkg = JSON.parse(await Deno.readTextFile(`${PACKAGE_DIR}/package.json`));
    assert.equal(pkg.name, NPM_NAME);
    assert.equal(pkg.version, denoConfig.version);
    assert.deepEqual(Object.keys(pkg.dependencies), ["deno"]);
    // Only the runtime's files: no tests, docs, benchmarks or scripts.
    for (const absent of ["tests", "bench", "docs", "scripts", "examples"]) {
      assert.equal(await Deno.stat(`${PACKAGE_DIR}/app/${absent}`).catch(() => null), null);
    }
    const version = await run(WMCP, ["--version"]);
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout, `${denoConfig.version}\n`);
    // One operation, least privilege as from a checkout: inside reads, outside is refused.
    const op = await run(WMCP, ["op", "read_file", "path=docs/note.txt"]);
    assert.equal(op.code, 0, op.stderr);
    assert.equal(JSON.parse(op.stdout).content, "packed and served\n");
    const refused = await run(WMCP, ["op", "read_file", `path=${TMP}/outside.txt`]);
    assert.equal(refused.code, 1, refused.stderr);
    assert.equal(JSON.parse(refused.stderr).error.code, "OUTSIDE_WORKSPACE");
  },
});

Deno.test({
  name: "npm package: the installed wmcp serves a directory to the v2 SDK client over stdio",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    assert.equal(installed.code, 0, installed.stderr);
    const transport = new StdioClientTransport({
      command: WMCP,
      args: ["serve", "stdio", "--root", WORKSPACE],
      // A host's start directory is not the root (Claude Desktop starts servers in /).
      cwd: "/",
      stderr: "pipe",
    });
    const client = new Client({ name: "npm-package-test", version: "0" });
    await client.connect(transport);
    try {
      await exercise(client, "stdio");
    } finally {
      await client.close();
    }
  },
});

Deno.test({
  name: "npm package: the installed wmcp serves Streamable HTTP and stops on SIGTERM",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    assert.equal(installed.code, 0, installed.stderr);
    const server = new Deno.Command(WMCP, {
      args: ["serve", "http", "--root", WORKSPACE, "--port", "0"],
      cwd: "/",
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).spawn();
    const stderr = new Response(server.stderr).text();
    const lines = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = "";
    let ready: { event: string; url: string } | undefined;
    try {
      while (ready === undefined) {
        const { value, done } = await lines.read();
        if (done) throw new Error(`the server ended before its ready line: ${await stderr}`);
        buffered += value;
        const nl = buffered.indexOf("\n");
        if (nl >= 0) ready = JSON.parse(buffered.slice(0, nl));
      }
      assert.equal(ready.event, "ready");
      assert.match(ready.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const client = new Client({ name: "npm-package-test", version: "0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(ready.url)));
      try {
        await exercise(client, "http");
      } finally {
        await client.close();
      }
    } finally {
      // The Node launcher forwards the signal; the server ends by itself (exit 0).
      server.kill("SIGTERM");
      const status = await server.status;
      await lines.cancel().catch(() => {});
      const err = await stderr;
      if (ready !== undefined) assert.equal(status.code, 0, err);
    }
  },
});

Deno.test({
  name: "npm package: npx --package TARBALL runs it too, and config print writes the npx entry",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    assert.equal(installed.code, 0, installed.stderr);
    const npx = await run("npx", [
      "-y",
      `--package=${TARBALL}`,
      "wmcp",
      "op",
      "read_file",
      "path=docs/note.txt",
    ]);
    assert.equal(npx.code, 0, npx.stderr);
    assert.equal(JSON.parse(npx.stdout).content, "packed and served\n");
    // From the package, a host entry runs the package through npx by default.
    const printed = await run(WMCP, ["config", "print", "--host", "generic", "--root", "."]);
    assert.equal(printed.code, 0, printed.stderr);
    const entry = JSON.parse(printed.stdout).mcpServers.wmcp;
    assert.ok(entry.command.endsWith("/npx"), entry.command);
    assert.deepEqual(entry.args, [
      "-y",
      NPM_SPEC,
      "serve",
      "stdio",
      "--sandbox",
      "auto",
      "--root",
      WORKSPACE,
    ]);
    // --via deno names the package's own Deno and serve.ts, with its deno.json.
    const viaDeno = await run(WMCP, [
      "config",
      "print",
      "--host",
      "generic",
      "--root",
      ".",
      "--via",
      "deno",
    ]);
    assert.equal(viaDeno.code, 0, viaDeno.stderr);
    const args = JSON.parse(viaDeno.stdout).mcpServers.wmcp.args as string[];
    assert.ok(args.includes(`--config=${Deno.realPathSync(PACKAGE_DIR)}/app/deno.json`), `${args}`);
    assert.ok(args.includes(`${Deno.realPathSync(PACKAGE_DIR)}/app/serve.ts`), `${args}`);
  },
});

globalThis.addEventListener("unload", () => {
  try {
    Deno.removeSync(TMP, { recursive: true });
  } catch {
    // best effort
  }
});
