import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { READ_TOOLS, readFlag } from "./_harness.ts";

const SERVER = new URL("../../serve_stdio.ts", import.meta.url).pathname;

async function withClient(
  root: string,
  opts: { write?: boolean; mode: "auto" | "legacy" },
  fn: (c: Client) => Promise<void>,
) {
  const args = ["run", readFlag(root)];
  if (opts.write) args.push(`--allow-write=${root}`);
  args.push(SERVER, "--root", root);
  if (opts.write) args.push("--write");
  const transport = new StdioClientTransport({ command: Deno.execPath(), args, stderr: "pipe" });
  const client = new Client({ name: "wmcp-test", version: "0" }, {
    versionNegotiation: { mode: opts.mode, probe: { timeoutMs: 5000 } },
  });
  await client.connect(transport);
  try {
    await fn(client);
  } finally {
    await client.close();
  }
}

for (const mode of ["auto", "legacy"] as const) {
  Deno.test(`stdio server (${mode} era): lists read tools, reads a file, reports typed errors`, async () => {
    const root = await Deno.makeTempDir();
    try {
      await Deno.writeTextFile(`${root}/hello.txt`, "hi there\n");
      await withClient(root, { mode }, async (client) => {
        assert.equal(client.getProtocolEra(), mode === "auto" ? "modern" : "legacy");
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((t) => t.name), READ_TOOLS);
        const ok = await client.callTool({ name: "read_file", arguments: { path: "hello.txt" } });
        assert.equal(ok.isError, undefined);
        assert.equal((ok.structuredContent as { content: string }).content, "hi there\n");
        const invalid = await client.callTool({
          name: "read_file",
          arguments: { path: 7, extra: true },
        });
        assert.equal(invalid.isError, true);
        const ie = invalid._meta?.["wmcp/error"] as { code: string; argument?: string };
        assert.deepEqual([ie.code, ie.argument], ["INVALID_ARGUMENT", "path"]);
        const bad = await client.callTool({ name: "read_file", arguments: { path: "../x" } });
        assert.equal(bad.isError, true);
        assert.deepEqual(
          (bad._meta?.["wmcp/error"] as { code: string }).code,
          "OUTSIDE_WORKSPACE",
        );
      });
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
}

Deno.test("stdio server with --write exposes and runs the write tools", async () => {
  const root = await Deno.makeTempDir();
  try {
    await withClient(root, { mode: "auto", write: true }, async (client) => {
      const { tools } = await client.listTools();
      assert.equal(tools.length, 13);
      const r = await client.callTool({
        name: "write_file",
        arguments: { path: "new.txt", content: "x" },
      });
      assert.equal(r.isError, undefined);
      assert.equal(await Deno.readTextFile(`${root}/new.txt`), "x");
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("stdio server: the v1 SDK client (legacy era) lists and calls tools", async () => {
  const { Client: V1Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport: V1Stdio } = await import(
    "@modelcontextprotocol/sdk/client/stdio.js"
  );
  const root = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${root}/a.md`, "alpha\nbeta\n");
    const client = new V1Client({ name: "v1", version: "0" });
    await client.connect(
      new V1Stdio({
        command: Deno.execPath(),
        args: ["run", readFlag(root), SERVER, "--root", root],
        stderr: "pipe",
      }),
    );
    try {
      const { tools } = await client.listTools();
      assert.equal(tools.length, 7);
      const r = await client.callTool({ name: "search_text", arguments: { query: "beta" } });
      const sc = r.structuredContent as { matches: { path: string; line: number }[] };
      assert.deepEqual(sc.matches.map((m) => [m.path, m.line]), [["a.md", 2]]);
    } finally {
      await client.close();
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("stdio server: stdout carries only protocol messages", async () => {
  const root = await Deno.makeTempDir();
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", readFlag(root), SERVER, "--root", root],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const w = child.stdin.getWriter();
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "raw", version: "0" },
      },
    };
    await w.write(new TextEncoder().encode(JSON.stringify(init) + "\n"));
    await w.write(
      new TextEncoder().encode(
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n",
      ),
    );
    await w.write(
      new TextEncoder().encode(
        JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }) + "\n",
      ),
    );
    await w.close();
    const out = await child.output();
    const lines = new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "");
    assert.equal(lines.length, 2);
    for (const l of lines) assert.equal(JSON.parse(l).jsonrpc, "2.0");
    assert.equal(JSON.parse(lines[0]).result.protocolVersion, "2025-06-18");
    assert.match(new TextDecoder().decode(out.stderr), /serving/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
