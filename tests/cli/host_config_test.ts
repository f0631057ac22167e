/**
 * `config print`: each host's snippet has exactly its documented shape, an absolute existing root
 * and --write only when asked; and the printed stdio command, run as a real child from another
 * start directory with only the environment a host gives, serves exactly that root over MCP.
 */
import assert from "node:assert/strict";
import {
  HOSTS,
  MCP_REMOTE,
  NPM_SPEC,
  TOKEN_FILE_PLACEHOLDER,
  TOKEN_PLACEHOLDER,
} from "../../src/cli/host_config.ts";
import { serverPermissions } from "../../src/cli/server_permissions.ts";

const PROJECT = new URL("../../", import.meta.url).pathname;
const DENO_JSON = `${PROJECT}deno.json`;

/** The test's environment without INIT_CWD (a `deno task` keeps an INIT_CWD it inherits). */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = Deno.env.toObject();
  delete env.INIT_CWD;
  return { ...env, ...extra };
}

/** Runs `deno task cli config print ARGS` from cwd, as a user would. */
async function configPrint(args: string[], cwd: string, env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "--config", DENO_JSON, "cli", "config", "print", ...args],
    cwd,
    env: cleanEnv(env),
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** A root with one file inside and one file beside it (outside). */
async function fixture(): Promise<{ base: string; root: string; outside: string }> {
  const base = Deno.realPathSync(await Deno.makeTempDir({ prefix: "wmcp-hosts-" }));
  const root = `${base}/proj`;
  await Deno.mkdir(root);
  await Deno.writeTextFile(`${root}/inside.txt`, "inside\n");
  await Deno.writeTextFile(`${base}/outside.txt`, "outside\n");
  return { base, root, outside: `${base}/outside.txt` };
}

type Json = Record<string, unknown>;

function keys(o: unknown): string[] {
  assert.equal(typeof o, "object");
  assert.ok(o !== null && !Array.isArray(o));
  return Object.keys(o as Json).sort();
}

/** The one server entry of a snippet, checked to sit alone under the host's servers object. */
function entryOf(host: string, snippet: Json, name = "wmcp"): Json {
  const top = host === "vscode" ? "servers" : "mcpServers";
  assert.deepEqual(keys(snippet), [top]);
  const servers = snippet[top] as Json;
  assert.deepEqual(keys(servers), [name]);
  return servers[name] as Json;
}

/** The documented keys of a stdio entry per host. */
const STDIO_KEYS: Record<string, string[]> = {
  "claude-desktop": ["args", "command"],
  "claude-code": ["args", "command", "env", "type"],
  "vscode": ["args", "command", "type"],
  "cursor": ["args", "command"],
  "generic": ["args", "command"],
};

/** The documented keys of a remote (--http) entry per host. */
const HTTP_KEYS: Record<string, string[]> = {
  "claude-desktop": ["args", "command", "env"],
  "claude-code": ["type", "url"],
  "vscode": ["type", "url"],
  "cursor": ["url"],
  "generic": ["type", "url"],
};

function checkStdioEntry(
  host: string,
  entry: Json,
  root: string,
): { command: string; args: string[]; env: Record<string, string> } {
  assert.deepEqual(keys(entry), STDIO_KEYS[host], `${host} stdio keys`);
  if ("type" in entry) assert.equal(entry.type, "stdio");
  if ("env" in entry) assert.deepEqual(entry.env, {});
  const command = entry.command as string;
  const args = entry.args as string[];
  assert.equal(typeof command, "string");
  assert.ok(command.startsWith("/"), `command is absolute: ${command}`);
  assert.ok(Array.isArray(args) && args.every((a) => typeof a === "string"));
  assert.equal(Deno.realPathSync(command), Deno.realPathSync(Deno.execPath()), "the same Deno");
  // The launcher's own entry (decision 0036; `cli.ts serve stdio` runs the same launcher).
  const serve = args.find((a) => a.endsWith("/serve.ts"));
  assert.ok(serve !== undefined && serve.startsWith("/") && Deno.statSync(serve).isFile);
  assert.equal(Deno.realPathSync(serve), Deno.realPathSync(`${PROJECT}serve.ts`));
  const i = args.indexOf("--root");
  assert.ok(i > 0, "an explicit --root");
  assert.equal(args[i + 1], root);
  assert.deepEqual(args.slice(args.indexOf(serve) + 1, args.indexOf(serve) + 4), [
    "stdio",
    "--sandbox",
    "auto",
  ]);
  return { command, args, env: (entry.env as Record<string, string> | undefined) ?? {} };
}

Deno.test("config print: every host's stdio snippet has its documented shape and an absolute root", async () => {
  const { base, root } = await fixture();
  try {
    for (const host of HOSTS) {
      // A relative root resolves against the directory the user ran the command from.
      const r = await configPrint(["--host", host, "--root", "proj"], base);
      assert.equal(r.code, 0, `${host}: ${r.stderr}`);
      const snippet = JSON.parse(r.stdout) as Json;
      const { args } = checkStdioEntry(host, entryOf(host, snippet), root);
      assert.ok(!args.includes("--write"), `${host}: --write only when asked`);
      // stderr says which file the snippet goes into.
      const file = {
        "claude-desktop": "claude_desktop_config.json",
        "claude-code": ".mcp.json",
        "vscode": ".vscode/mcp.json",
        "cursor": "~/.cursor/mcp.json",
        "generic": '"mcpServers"',
      }[host];
      assert.ok(r.stderr.includes(file), `${host} names ${file}: ${r.stderr}`);
      assert.ok(r.stderr.includes("read-only"));
    }
    const w = await configPrint([
      "--host",
      "cursor",
      "--root",
      root,
      "--write",
      "--name",
      "proj-rw",
    ], "/");
    assert.equal(w.code, 0, w.stderr);
    const { args } = checkStdioEntry(
      "cursor",
      entryOf("cursor", JSON.parse(w.stdout), "proj-rw"),
      root,
    );
    assert.equal(args.filter((a) => a === "--write").length, 1);
    assert.equal(args[args.length - 1], "--write");
    assert.ok(w.stderr.includes("read-write"));
    // claude-code's stderr also gives the equivalent `claude mcp add-json` command line.
    const cc = await configPrint(["--host", "claude-code", "--root", root], "/");
    const entry = entryOf("claude-code", JSON.parse(cc.stdout));
    const m = /claude mcp add-json wmcp '([^']*)'/.exec(cc.stderr);
    assert.ok(m, cc.stderr);
    assert.deepEqual(JSON.parse(m[1]), entry);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("config print --http: the remote form per host; Claude Desktop through mcp-remote", async () => {
  const url = "http://127.0.0.1:39123/mcp";
  for (const host of HOSTS) {
    const r = await configPrint(["--host", host, "--http", url], "/");
    assert.equal(r.code, 0, `${host}: ${r.stderr}`);
    const entry = entryOf(host, JSON.parse(r.stdout));
    assert.deepEqual(keys(entry), HTTP_KEYS[host], `${host} http keys`);
    if (host === "claude-desktop") {
      assert.deepEqual(entry.args, ["-y", MCP_REMOTE, url]);
      assert.ok((entry.command as string).endsWith("npx"));
      assert.equal(typeof (entry.env as Json).PATH, "string");
      assert.ok(r.stderr.includes("only stdio servers"), r.stderr);
    } else {
      assert.equal(entry.url, url);
      if ("type" in entry) assert.equal(entry.type, "http");
    }
  }
  // With --root, stderr gives the command that starts that server on the URL's port.
  const { base, root } = await fixture();
  try {
    const r = await configPrint(["--host", "vscode", "--http", url, "--root", root], "/");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`/serve\\.ts http --root ${root} --port 39123\\n`));
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("config print --via npx: each host's stdio entry runs the npm package at this version", async () => {
  const { base, root } = await fixture();
  try {
    for (const host of HOSTS) {
      const r = await configPrint(["--host", host, "--root", root, "--via", "npx"], base);
      assert.equal(r.code, 0, `${host}: ${r.stderr}`);
      const entry = entryOf(host, JSON.parse(r.stdout));
      assert.ok((entry.command as string).endsWith("/npx"), `${host}: ${entry.command}`);
      assert.deepEqual(entry.args, [
        "-y",
        NPM_SPEC,
        "serve",
        "stdio",
        "--sandbox",
        "auto",
        "--root",
        root,
      ], host);
      // npx is `#!/usr/bin/env node`: Claude Desktop (which passes env) gets a PATH for it.
      if (host === "claude-desktop") assert.equal(typeof (entry.env as Json).PATH, "string");
    }
    // --write reaches the entry; the http start line takes the same form.
    const w = await configPrint(
      ["--host", "cursor", "--root", root, "--via", "npx", "--write"],
      base,
    );
    assert.deepEqual((entryOf("cursor", JSON.parse(w.stdout)).args as string[]).slice(-1), [
      "--write",
    ]);
    const h = await configPrint([
      "--host",
      "cursor",
      "--http",
      "http://127.0.0.1:39124/mcp",
      "--root",
      root,
      "--via",
      "npx",
    ], base);
    assert.match(
      h.stderr,
      new RegExp(`npx -y ${NPM_SPEC} serve http --root ${root} --port 39124\\n`),
    );
    // A checkout defaults to Deno and this copy's serve.ts.
    const d = await configPrint(["--host", "cursor", "--root", root], base);
    assert.ok(
      (entryOf("cursor", JSON.parse(d.stdout)).args as string[]).some((a) =>
        a.endsWith("/serve.ts")
      ),
    );
    const bad = await configPrint(["--host", "cursor", "--root", root, "--via", "npm"], base);
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, "");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("config print: bad input is a usage error (exit 2) that prints no snippet", async () => {
  const { base, root } = await fixture();
  try {
    const cases: [string[], RegExp][] = [
      [
        ["--host", "emacs", "--root", root],
        /^unknown --host "emacs"; --host takes claude-desktop, /,
      ],
      [["--host", "vscdoe", "--root", root], /unknown --host "vscdoe" \(did you mean vscode\?\)/],
      [["--root", root], /--host/],
      [["--host", "cursor"], /--root DIR/],
      [["--host", "cursor", "--root", `${base}/missing`], /No such file/],
      [["--host", "cursor", "--root", `${root}/inside.txt`], /not a directory/],
      [["--host", "cursor", "--http", "ftp://example.com/"], /http:\/\/ or https:\/\//],
      [["--host", "cursor", "--http", "http://127.0.0.1:0/mcp"], /real URL/],
      [["--host", "cursor", "--root", root, "--name", "a b"], /--name/],
      [["--host", "cursor", "--root", root, "--bogus"], /bogus/],
      // What a host sends for an unset ${workspaceFolder}: never the start directory.
      [["--host", "cursor", "--root", ""], /--root is empty/],
      [["--host", "vscode", "--root", "  "], /--root is empty/],
      [
        ["--host", "cursor", "--http", "http://127.0.0.1:39123/mcp", "--root", ""],
        /--root is empty/,
      ],
      [["--host", "cursor", "--root", root, "--read-only-root", ""], /^--read-only-root is empty/],
      // Every root is checked, a --read-only-root naming its flag; overlapping roots are refused.
      [
        ["--host", "cursor", "--root", root, "--read-only-root", `${base}/no`],
        /^--read-only-root .*No such file/,
      ],
      [["--host", "cursor", "--root", root, "--read-only-root", base], /overlap/],
      [["--host", "cursor", "--read-only-root", root, "--root", `${root}/`], /same directory/],
      // --write only means something for the server config print says how to start.
      [
        ["--host", "cursor", "--http", "http://127.0.0.1:39123/mcp", "--write"],
        /--write with --http needs --root/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await configPrint(args, base);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.equal(r.stdout, "");
      assert.match(JSON.parse(r.stderr).error.message, message);
    }
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

/** Runs a stdio entry from cwd with only the environment a host passes plus the entry's, and talks MCP. */
async function runEntry(
  entry: { command: string; args: string[]; env: Record<string, string> },
  cwd: string,
  requests: Json[],
): Promise<{ responses: Map<number, Json>; stdoutLines: string[]; stderr: string; code: number }> {
  // What hosts pass by default (the SDK's stdio client: HOME, LOGNAME, PATH, SHELL, TERM, USER),
  // the Deno cache location if this machine sets one, and the snippet's env.
  const env: Record<string, string> = { PATH: "/usr/bin:/bin" };
  for (const k of ["HOME", "LOGNAME", "USER", "SHELL", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const v = Deno.env.get(k);
    if (v !== undefined) env[k] = v;
  }
  const child = new Deno.Command(entry.command, {
    args: entry.args,
    cwd,
    env: { ...env, ...entry.env },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderrText = new Response(child.stderr).text();
  const w = child.stdin.getWriter();
  const enc = new TextEncoder();
  for (const r of requests) await w.write(enc.encode(JSON.stringify(r) + "\n"));
  const want = new Set(requests.filter((r) => "id" in r).map((r) => r.id as number));
  const responses = new Map<number, Json>();
  const stdoutLines: string[] = [];
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((
    res,
  ) => (timer = setTimeout(() => res("timeout"), 60_000)));
  try {
    while (responses.size < want.size) {
      const next = await Promise.race([reader.read(), timeout]);
      if (next === "timeout" || next.done) break;
      buf += next.value;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        stdoutLines.push(line);
        const msg = JSON.parse(line) as Json;
        if (typeof msg.id === "number") responses.set(msg.id, msg);
      }
    }
  } finally {
    clearTimeout(timer);
    await w.close().catch(() => {});
    await reader.cancel().catch(() => {});
  }
  const status = await child.status;
  return { responses, stdoutLines, stderr: await stderrText, code: status.code };
}

const call = (id: number, name: string, args: Json) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

Deno.test("config print: the printed stdio command serves exactly the root, from any start directory", async () => {
  const { base, root, outside } = await fixture();
  const elsewhere = Deno.realPathSync(await Deno.makeTempDir({ prefix: "wmcp-elsewhere-" }));
  try {
    for (const [i, host] of HOSTS.entries()) {
      const r = await configPrint(["--host", host, "--root", root], base);
      assert.equal(r.code, 0, r.stderr);
      const entry = checkStdioEntry(host, entryOf(host, JSON.parse(r.stdout)), root);
      // Hosts start servers in / (Claude Desktop) or wherever they run: alternate both.
      const cwd = i % 2 === 0 ? "/" : elsewhere;
      const run = await runEntry(entry, cwd, [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "host-config-test", version: "0" },
          },
        },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
        call(3, "list_directory", { path: "." }),
        call(4, "read_file", { path: "inside.txt" }),
        call(5, "read_file", { path: "../outside.txt" }),
        call(6, "read_file", { path: outside }),
        call(7, "get_file_info", { path: "/etc/hostname" }),
      ]);
      const ctx = `${host} from ${cwd}: ${run.stderr}`;
      assert.equal(run.code, 0, ctx);
      // stdout is protocol only.
      assert.ok(run.stdoutLines.every((l) => JSON.parse(l).jsonrpc === "2.0"), ctx);
      const init = run.responses.get(1)?.result as Json;
      assert.equal((init.serverInfo as Json).name, "wmcp", ctx);
      const tools = ((run.responses.get(2)?.result as Json).tools as Json[]).map((t) => t.name);
      assert.ok(tools.includes("read_file") && !tools.includes("write_file"), ctx);
      const listed = (run.responses.get(3)?.result as Json).structuredContent as Json;
      assert.deepEqual((listed.entries as Json[]).map((e) => e.path), ["inside.txt"], ctx);
      const read = (run.responses.get(4)?.result as Json).structuredContent as Json;
      assert.equal(read.content, "inside\n", ctx);
      for (const id of [5, 6, 7]) {
        const res = run.responses.get(id)?.result as Json;
        assert.equal(res.isError, true, `${ctx} id ${id}`);
        assert.ok(JSON.stringify(res).includes("OUTSIDE_WORKSPACE"), `${ctx} id ${id}`);
      }
      assert.ok(run.stderr.includes(`serving ${root} over stdio (read-only)`), ctx);
    }
  } finally {
    await Deno.remove(base, { recursive: true });
    await Deno.remove(elsewhere, { recursive: true });
  }
});

Deno.test("config print --root A --read-only-root B --write: both roots, absolute and in order; the printed command serves them (B read-only)", async () => {
  const { base, root, outside } = await fixture();
  const other = `${base}/other`;
  await Deno.mkdir(other);
  await Deno.writeTextFile(`${other}/b.txt`, "bravo\n");
  try {
    // Relative values, from the invocation directory; the order is kept.
    const r = await configPrint(
      ["--host", "generic", "--root", "proj", "--read-only-root", "./other", "--write"],
      base,
    );
    assert.equal(r.code, 0, r.stderr);
    const entry = checkStdioEntry("generic", entryOf("generic", JSON.parse(r.stdout)), root);
    const i = entry.args.indexOf("--root");
    assert.deepEqual(entry.args.slice(i), [
      "--root",
      root,
      "--read-only-root",
      other,
      "--write",
    ]);
    assert.match(r.stderr, new RegExp(`serves ${root} \\(read-write\\), ${other} \\(read-only`));
    const run = await runEntry(entry, "/", [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "host-config-test", version: "0" },
        },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      call(2, "read_file", { path: `${other}/b.txt` }),
      call(3, "write_file", { path: `${other}/new.txt`, content: "no\n" }),
      call(4, "write_file", { path: "new.txt", content: "yes\n" }),
      call(5, "read_file", { path: outside }),
    ]);
    const ctx = run.stderr;
    assert.equal(run.code, 0, ctx);
    const result = (id: number) => run.responses.get(id)?.result as Json;
    assert.equal((result(2).structuredContent as Json).content, "bravo\n", ctx);
    assert.ok(JSON.stringify(result(3)).includes("READ_ONLY"), ctx);
    await assert.rejects(Deno.stat(`${other}/new.txt`), Deno.errors.NotFound);
    assert.equal(result(4).isError, undefined, ctx);
    assert.equal(await Deno.readTextFile(`${root}/new.txt`), "yes\n");
    assert.ok(JSON.stringify(result(5)).includes("OUTSIDE_WORKSPACE"), ctx);
    // The HTTP start line names both roots too, in order.
    const h = await configPrint(
      [
        "--host",
        "cursor",
        "--http",
        "http://127.0.0.1:39123/mcp",
        "--read-only-root",
        other,
        "--root",
        root,
      ],
      base,
    );
    assert.equal(h.code, 0, h.stderr);
    assert.match(
      h.stderr,
      new RegExp(`/serve\\.ts http --read-only-root ${other} --root ${root} --port 39123`),
    );
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("config print --http: mcp-remote gets --allow-http unless the host is exactly localhost or 127.0.0.1", async () => {
  // mcp-remote 0.15.1 allows plain http only to those two names (checked with the real one).
  const cases: [string, boolean][] = [
    ["http://127.0.0.1:39123/mcp", false],
    ["http://localhost:39123/mcp", false],
    ["http://[::1]:39123/mcp", true],
    ["http://127.0.0.2:39123/mcp", true],
    ["http://192.168.1.5:39123/mcp", true],
    ["https://example.com/mcp", false],
  ];
  for (const [url, allow] of cases) {
    const r = await configPrint(["--host", "claude-desktop", "--http", url], "/");
    assert.equal(r.code, 0, `${url}: ${r.stderr}`);
    const args = entryOf("claude-desktop", JSON.parse(r.stdout)).args as string[];
    assert.deepEqual(args.slice(0, 3), ["-y", MCP_REMOTE, url]);
    assert.equal(args.includes("--allow-http"), allow, `${url}: ${args.join(" ")}`);
  }
});

Deno.test("config print --http on a non-loopback host: a token in each host's header form and in the start line", async () => {
  const url = "http://192.168.1.5:9000/mcp";
  const { base, root } = await fixture();
  try {
    const want: Record<string, Json> = {
      "claude-code": { type: "http", url, headers: { Authorization: "Bearer ${WMCP_TOKEN}" } },
      "vscode": { type: "http", url, headers: { Authorization: "Bearer ${input:wmcp-token}" } },
      "cursor": { url, headers: { Authorization: "Bearer ${env:WMCP_TOKEN}" } },
      "generic": { type: "http", url, headers: { Authorization: "Bearer ${WMCP_TOKEN}" } },
    };
    for (const host of HOSTS) {
      const r = await configPrint(["--host", host, "--http", url, "--root", root], "/");
      assert.equal(r.code, 0, `${host}: ${r.stderr}`);
      const snippet = JSON.parse(r.stdout) as Json;
      if (host === "vscode") {
        // The prompt VS Code shows for ${input:wmcp-token}, declared beside "servers".
        assert.deepEqual(keys(snippet), ["inputs", "servers"]);
        assert.deepEqual(snippet.inputs, [{
          type: "promptString",
          id: "wmcp-token",
          description: "Bearer token of the wmcp server wmcp",
          password: true,
        }]);
        delete snippet.inputs;
      }
      const entry = entryOf(host, snippet);
      if (host === "claude-desktop") {
        assert.deepEqual((entry.args as string[]).slice(3), [
          "--allow-http",
          "--header",
          // mcp-remote's advice: no space in the argument, the whole value in the env.
          "Authorization:${AUTH_HEADER}",
        ]);
        assert.deepEqual(keys(entry.env), ["AUTH_HEADER", "PATH"]);
        assert.equal((entry.env as Json).AUTH_HEADER, `Bearer ${TOKEN_PLACEHOLDER}`);
      } else {
        assert.deepEqual(entry, want[host], host);
      }
      assert.match(r.stderr, /requires a bearer token/, host);
      // The server refuses a non-loopback bind without a token: the start line gives one.
      assert.match(
        r.stderr,
        new RegExp(
          `/serve\\.ts http --root ${root} --host 192\\.168\\.1\\.5 --port 9000 --token-file ${TOKEN_FILE_PLACEHOLDER}\\n`,
        ),
        host,
      );
    }
    // A loopback URL needs no token: no headers anywhere.
    const lo = await configPrint(["--host", "cursor", "--http", "http://127.0.0.1:9000/mcp"], "/");
    assert.deepEqual(entryOf("cursor", JSON.parse(lo.stdout)), {
      url: "http://127.0.0.1:9000/mcp",
    });
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("the launcher grants an IPv6 --host in brackets, spelled ::1 or [::1]", () => {
  for (const host of ["::1", "[::1]"]) {
    const flags = serverPermissions("http", ["--root", "/tmp", "--host", host]);
    assert.ok(flags.includes("--allow-net=[::1]"), `${host}: ${flags.join(" ")}`);
  }
  const v4 = serverPermissions("http", ["--root", "/tmp", "--host", "192.168.1.5"]);
  assert.ok(v4.includes("--allow-net=192.168.1.5"), v4.join(" "));
});

Deno.test("config print --http http://[::1]:PORT: the printed start command serves on that URL", async () => {
  const { base, root } = await fixture();
  // A port free on 127.0.0.1 (this test may listen only there) is almost surely free on ::1.
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const url = `http://[::1]:${port}/mcp`;
  try {
    const r = await configPrint(["--host", "claude-code", "--http", url, "--root", root], "/");
    assert.equal(r.code, 0, r.stderr);
    const line = /start the server with: (.*)\n/.exec(r.stderr)?.[1];
    assert.ok(line !== undefined, r.stderr);
    assert.ok(!line.includes("'"), `no quoting needed: ${line}`);
    const [command, ...args] = line.split(" ");
    assert.ok(args.includes("--host") && args[args.indexOf("--host") + 1] === "::1", line);
    const child = new Deno.Command(command, {
      args,
      cwd: "/",
      env: cleanEnv(),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(child.stderr).text();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((
      res,
    ) => (timer = setTimeout(() => res("timeout"), 60_000)));
    try {
      while (!out.includes("\n")) {
        const next = await Promise.race([reader.read(), timeout]);
        if (next === "timeout" || next.done) break;
        out += next.value;
      }
    } finally {
      clearTimeout(timer);
      try {
        child.kill("SIGTERM");
      } catch {
        // already gone
      }
      await reader.cancel().catch(() => {});
    }
    await child.status;
    const err = await stderr;
    assert.ok(out.includes("\n"), `no ready line; stderr: ${err}`);
    const ready = JSON.parse(out.slice(0, out.indexOf("\n")));
    assert.equal(ready.event, "ready", err);
    assert.equal(ready.url, url, err);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("config print caches the server's modules, which the sandbox cannot", async () => {
  const { base, root } = await fixture();
  try {
    // A Deno cache of its own: what config print writes there is what a host's start then finds.
    const denoDir = `${base}/deno-cache`;
    const r = await configPrint(["--host", "claude-code", "--root", root], base, {
      DENO_DIR: denoDir,
    });
    assert.equal(r.code, 0, r.stderr);
    const project = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
    for (const m of ["serve.ts", "serve_stdio.ts", "serve_http.ts", "src/launch/broker/main.ts"]) {
      const emitted = `${denoDir}/gen/file${project}/${m}.js`;
      assert.ok((await Deno.stat(emitted)).isFile, emitted);
    }
    assert.doesNotMatch(r.stderr, /could not be cached/);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
