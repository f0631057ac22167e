/**
 * The Node and Bun adapters take serve_http.ts's flags with its checks, messages and exit codes
 * (the one table in src/cli/server_flags.ts): secrets only from WMCP_TOKEN or --token-file
 * (--token refused), short tokens refused, broad roots refused, bad limits and typos exit 2,
 * --help/-V answered (also by dist/bun.js on Node), a wildcard bind announced by its loopback
 * URL; times reported as Deno reports them; Node 20 warned and still given a worker pool. Real
 * processes on 127.0.0.1; Node 22 and Bun from npm, Node 20 from the machine when present.
 */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { runOperation, Workspace } from "../../mod.ts";
import { modernRequest } from "../server/_harness.ts";
import {
  buildAdapters,
  installRuntimes,
  runRefused,
  type Runtime,
  startAdapter,
} from "./_runtimes.ts";

const TOKEN = "adapter-token-0123456789";

async function refusals(t: Deno.TestContext, runtime: Runtime, base: string): Promise<void> {
  const root = `${base}/ws`;
  const cases: {
    name: string;
    args: string[];
    env?: Record<string, string>;
    cwd?: string;
    err: RegExp;
  }[] = [
    {
      name: "--token on argv is refused (ps shows it)",
      args: ["--root", root, "--token", TOKEN],
      err: /--token is not taken: .*visible .* in ps.*WMCP_TOKEN or pass --token-file/,
    },
    {
      name: "a short WMCP_TOKEN on 0.0.0.0 is refused",
      args: ["--root", root, "--host", "0.0.0.0", "--port", "0"],
      env: { WMCP_TOKEN: "a" },
      err: /WMCP_TOKEN holds a token shorter than 16 characters/,
    },
    {
      name: "a short token in --token-file is refused",
      args: ["--root", root, "--port", "0", "--token-file", `${base}/short.txt`],
      err: /--token-file holds a token shorter than 16 characters/,
    },
    {
      name: "--root . from $HOME is refused",
      args: ["--root", ".", "--port", "0"],
      env: { HOME: base },
      cwd: base,
      err: /refusing to serve your home directory/,
    },
    {
      name: "--limit bogus=5 is a usage error",
      args: ["--root", root, "--limit", "bogus=5"],
      err: /unknown limit bogus/,
    },
    { name: "a typo gets a did-you-mean", args: ["--roo", root], err: /did you mean --root\?/ },
    {
      name: "--pid-file is refused with the reason",
      args: ["--root", root, "--pid-file", `${base}/pid`],
      err: /--pid-file is a flag of the Deno server/,
    },
    {
      name: "a bad port is a usage error",
      args: ["--root", root, "--port", "70000"],
      err: /--port must be 0\.\.65535/,
    },
  ];
  for (const c of cases) {
    await t.step(`${runtime.name}: ${c.name} (exit 2, nothing served)`, async () => {
      const r = await runRefused(runtime, c.args, { env: c.env, cwd: c.cwd });
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, c.err);
    });
  }
  await t.step(`${runtime.name}: --help and -V answer on stdout, exit 0`, async () => {
    const help = await runRefused(runtime, ["--help", "--bogus"]);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /--token-file F/);
    assert.match(help.stdout, /--allowed-host H/);
    assert.doesNotMatch(help.stdout, /--pid-file/);
    const version = await runRefused(runtime, ["-V"]);
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  });
}

async function served(t: Deno.TestContext, runtime: Runtime, base: string): Promise<void> {
  const root = `${base}/ws`;
  const wild = await startAdapter(runtime, root, {
    args: ["--host", "0.0.0.0"],
    env: { WMCP_TOKEN: TOKEN },
  });
  try {
    await t.step(
      `${runtime.name}: a wildcard bind is announced by its loopback URL, with bind and a note`,
      async () => {
        const url = new URL(wild.url);
        assert.equal(url.hostname, "127.0.0.1");
        assert.equal(url.pathname, "/mcp");
        const r = await modernRequest(wild.url, "tools/list", {}, {
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        assert.equal(r.status, 200);
        assert.match(
          wild.stderr(),
          new RegExp(`bound to 0\\.0\\.0\\.0:${url.port}, every interface`),
        );
        assert.match(wild.stderr(), /--allowed-host names the ones clients on other machines use/);
      },
    );
  } finally {
    await wild.stop();
  }
  const filed = await startAdapter(runtime, root, {
    args: ["--token-file", `${base}/tokens.txt`],
  });
  try {
    await t.step(`${runtime.name}: --token-file tokens authenticate (401 without)`, async () => {
      for (const [auth, status] of [[undefined, 401], [`Bearer ${TOKEN}`, 200]] as const) {
        const r = await modernRequest(filed.url, "tools/list", {}, {
          headers: auth === undefined ? {} : { authorization: auth },
        });
        assert.equal(r.status, status, `authorization ${auth}`);
      }
    });
  } finally {
    await filed.stop();
  }
}

/** get_file_info's times of one file through an adapter. */
async function timesVia(url: string, path: string): Promise<Record<string, unknown>> {
  const client = new Client({ name: "times", version: "0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const r = await client.callTool({ name: "get_file_info", arguments: { path } });
    const sc = r.structuredContent as Record<string, unknown>;
    return { mtime: sc.mtime, ctime: sc.ctime };
  } finally {
    await client.close();
  }
}

Deno.test({
  name: "adapters: serve_http.ts's flags, checks and exit codes on Node 22 and Bun",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const { runtimes, install } = await installRuntimes();
    const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-adapter-flags-" }));
    try {
      await buildAdapters();
      await Deno.mkdir(`${base}/ws`);
      await Deno.writeTextFile(`${base}/ws/hello.txt`, "hello\n");
      // A sub-millisecond mtime: Node and Bun would round it, Deno truncates.
      const touch = new Deno.Command("touch", {
        args: ["-m", "-d", "2024-01-02 03:04:05.123999999", `${base}/ws/hello.txt`],
      }).outputSync();
      assert.equal(touch.code, 0);
      await Deno.writeTextFile(`${base}/short.txt`, "short\n");
      await Deno.writeTextFile(`${base}/tokens.txt`, `${TOKEN}\nanother-token-0123456789\n`);
      const ws = await Workspace.open({ root: `${base}/ws`, engine: "inline" });
      const deno = await runOperation({ workspace: ws }, "get_file_info", {
        path: "hello.txt",
      }) as Record<
        string,
        unknown
      >;
      const denoTimes = { mtime: deno.mtime, ctime: deno.ctime };
      assert.match(String(deno.mtime), /\.123Z$/);
      for (const runtime of runtimes) {
        await refusals(t, runtime, base);
        await served(t, runtime, base);
        await t.step(`${runtime.name}: get_file_info's mtime and ctime are Deno's`, async () => {
          const server = await startAdapter(runtime, `${base}/ws`);
          try {
            assert.deepEqual(await timesVia(server.url, "hello.txt"), denoTimes);
          } finally {
            await server.stop();
          }
        });
      }
      const node = runtimes.find((r) => r.name === "node")!;
      await t.step("dist/bun.js on Node answers --help (not 'runs on Bun only')", async () => {
        const r = await runRefused(node, ["--help"], {
          entry: node.entry.replace(/node\.js$/, "bun.js"),
        });
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /on Bun/);
      });
      const machineNode = await new Deno.Command("node", { args: ["--version"] }).output()
        .then((o) => new TextDecoder().decode(o.stdout).trim(), () => "");
      await t.step({
        name: `Node ${
          machineNode || "(none)"
        } older than 22: a warning, and a worker pool of the cores`,
        ignore: !/^v(1\d|2[01])\./.test(machineNode),
        fn: async () => {
          const old: Runtime = { name: "node", bin: "node", entry: node.entry };
          const server = await startAdapter(old, `${base}/ws`);
          try {
            assert.match(
              server.stderr(),
              /warning: Node v\d+\.\d+\.\d+ is older than the supported Node 22/,
            );
            const client = new Client({ name: "node20", version: "0" });
            await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
            try {
              const info = await client.callTool({ name: "workspace_info", arguments: {} });
              const sc = info.structuredContent as { engine: { workers: number } };
              const cores = Math.min(navigator.hardwareConcurrency, 4);
              assert.ok(cores < 2 || sc.engine.workers >= 2, JSON.stringify(sc.engine));
            } finally {
              await client.close();
            }
          } finally {
            await server.stop();
          }
        },
      });
    } finally {
      await Deno.remove(base, { recursive: true });
      await install.cleanup();
    }
  },
});
