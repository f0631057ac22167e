/**
 * Secrets in client messages (the redaction rule, INTERFACES.md "Bundled ad hoc MCP tool
 * client"): a value a config entry got from a `${VAR}` expansion is never printed, in pretty or
 * JSON output, whichever field failed; the message names the field and `${VAR}` where it quotes
 * the field. Each case runs the CLI's `main(argv)` in process (`tools list --config F --server
 * S`: what a message says is not a property of the process boundary; decision 0052), and one case
 * of each test also runs as a real `cli.ts` child with the client's scoped permissions, asserting
 * the same exit code and output.
 */
import assert from "node:assert/strict";
import { type ClientResult, describe, runClient } from "../client/_client.ts";
import { runInProcess } from "../_support/in_process.ts";

/** The variable every case expands. */
const VAR = "LEAK_VALUE";

/** A fresh secret per case: `sk-LEAKME-<random>`. */
const secret = () => `sk-LEAKME-${crypto.randomUUID().slice(0, 8)}`;

/** A port nothing listens on (bound, then released). */
function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

interface Case {
  name: string;
  entry: Record<string, unknown>;
  /** Substrings the error message must contain (the field, `${VAR}`); none if the server quotes it. */
  names: string[];
  exit: number;
  /** Also run as a real child, which must answer exactly as the in-process run did. */
  anchor?: boolean;
  /** Run as a real child only (what it tests is the child's permissions). */
  realOnly?: boolean;
}

/** One run of `tools list` on the case's config: in process, or as a real client child. */
async function listTools(
  args: string[],
  o: { dir: string; value: string; real: boolean },
): Promise<ClientResult> {
  const env = { [VAR]: o.value, NO_COLOR: "1" };
  if (o.real) return await runClient(args, { read: [o.dir], env, timeoutMs: 60_000 });
  return await runInProcess(args, { env });
}

/** Runs one case in both outputs and checks the secret appears nowhere. */
async function check(c: Case): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-secrets-" });
  try {
    const config = `${dir}/mcp.json`;
    await Deno.writeTextFile(config, JSON.stringify({ mcpServers: { s: c.entry } }));
    for (const output of ["pretty", "json"]) {
      const value = secret();
      const args = ["tools", "list", "--config", config, "--server", "s", "--output", output];
      const r = await listTools(args, { dir, value, real: c.realOnly === true });
      if (c.anchor) {
        const real = await listTools(args, { dir, value, real: true });
        assert.deepEqual(
          { code: real.code, stdout: real.stdout, stderr: real.stderr },
          { code: r.code, stdout: r.stdout, stderr: r.stderr },
          `${c.name} (${output}): a real child answers as the in-process run`,
        );
      }
      const all = (r.stdout + r.stderr).toLowerCase();
      for (const form of [value, encodeURIComponent(value)]) {
        assert.ok(!all.includes(form.toLowerCase()), `${c.name} (${output}) leaks: ${describe(r)}`);
      }
      assert.equal(r.code, c.exit, `${c.name} (${output}): ${describe(r)}`);
      assert.equal(r.stdout, "", `${c.name} (${output}): ${describe(r)}`);
      const message = output === "json" ? JSON.parse(r.stderr).error.message : r.stderr;
      for (const n of c.names) {
        assert.ok(message.includes(n), `${c.name} (${output}) does not name ${n}: ${message}`);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A server answering every request with status and the given body (built from the request). */
function serve(answer: (req: Request) => Response): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, answer);
}

const v = `\${${VAR}}`;
const sh = (script: string, extra: Record<string, unknown> = {}) => ({
  command: "sh",
  args: ["-c", script, "sh", ...(extra.args as string[] ?? [])],
  ...(extra.env ? { env: extra.env } : {}),
});

Deno.test("an expanded cwd that does not exist is shown as its template", async () => {
  await check({
    anchor: true,
    name: "cwd",
    entry: { command: "sh", cwd: `/tmp/${v}/missing` },
    names: ["mcpServers.s.cwd", v, "does not exist"],
    exit: 3,
  });
});

Deno.test("an expanded command that does not exist is shown as its template", async () => {
  await check({
    name: "command",
    entry: { command: `/nonexistent/${v}/server` },
    names: ["mcpServers.s.command", v, "was not found"],
    exit: 3,
  });
});

Deno.test("an expanded command that is not executable is shown as its template", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wmcp-noexec-" });
  try {
    await Deno.writeTextFile(`${dir}/server`, "#!/bin/sh\n");
    await Deno.chmod(`${dir}/server`, 0o644);
    await check({
      name: "command (EACCES)",
      entry: { command: `${dir}/server`, args: [v], env: { X: v } },
      names: [],
      exit: 3,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("expanded args and env values with a NUL byte are refused without the value", async () => {
  await check({
    name: "args NUL",
    entry: { command: "sh", args: [`${v}\u0000`] },
    names: ["mcpServers.s.args[0]", "NUL"],
    exit: 2,
  });
  await check({
    name: "env NUL",
    entry: { command: "sh", env: { TOKEN: `${v}\u0000` } },
    names: ["mcpServers.s.env.TOKEN", "NUL"],
    exit: 2,
  });
  await check({
    name: "cwd NUL",
    entry: { command: "sh", cwd: `/tmp/${v}\u0000` },
    names: ["mcpServers.s.cwd", "NUL"],
    exit: 2,
  });
});

Deno.test("a server that quotes its expanded args or env on stderr is quoted redacted", async () => {
  await check({
    anchor: true,
    name: "args echoed",
    entry: sh('echo "bad token: $1" >&2; exit 3', { args: [v] }),
    names: [`bad token: ${v}`],
    exit: 3,
  });
  await check({
    name: "env echoed",
    entry: sh('echo "bad token: $TOKEN" >&2; exit 3', { env: { TOKEN: `key=${v}` } }),
    names: [`bad token: key=${v}`],
    exit: 3,
  });
});

Deno.test("an expanded url that cannot be reached is shown as its template", async () => {
  const port = closedPort();
  await check({
    name: "url path",
    entry: { url: `http://127.0.0.1:${port}/${v}/mcp?key=${v}` },
    names: ["mcpServers.s.url", `/${v}/mcp?key=***`, "cannot reach"],
    exit: 3,
  });
  // Not allowed by the client's --allow-net: the runtime's refusal quotes the host. That refusal
  // is the real child's permissions at work, so this case runs as a real child only.
  await check({
    realOnly: true,
    name: "url host",
    entry: { url: `http://${v}.invalid/mcp` },
    names: [v],
    exit: 3,
  });
  await check({
    name: "url unparsable",
    entry: { url: `http://[${v}/` },
    names: ["mcpServers.s.url"],
    exit: 2,
  });
});

Deno.test("a server answering an error about an expanded url or header is quoted redacted", async () => {
  const server = serve((req) =>
    new Response(`no such endpoint ${new URL(req.url).pathname}, key ${req.headers.get("x-key")}`, {
      status: 404,
    })
  );
  try {
    await check({
      name: "url/header echoed",
      entry: { url: `http://127.0.0.1:${server.addr.port}/${v}`, headers: { "X-Key": v } },
      names: [`/${v}`, `key ${v}`],
      exit: 4,
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("an expanded header value that is not valid is refused without the value", async () => {
  await check({
    name: "header",
    entry: { url: `http://127.0.0.1:${closedPort()}/mcp`, headers: { "X-Key": `a\u0000${v}` } },
    names: ["mcpServers.s.headers.X-Key", "not a valid HTTP header"],
    exit: 2,
  });
});
