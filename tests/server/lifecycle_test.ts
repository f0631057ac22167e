/** serve_http.ts lifecycle: ready line, port in use, refusals, graceful SIGTERM, pid files, `cli serve stop`. */
import assert from "node:assert/strict";
import { cliArgv } from "../_support/cli.ts";
import { HTTP_SERVER_V8_FLAGS } from "../../src/cli/serve_launch.ts";
import {
  envelope,
  makeWorkspace,
  MODERN,
  modernRequest,
  readFlag,
  readReadyLine,
  SERVE_HTTP,
  serveStopCommand,
  startHttpServer,
  stdioInput,
} from "./_harness.ts";

async function runServeHttp(root: string, args: string[], extraFlags: string[] = []) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      readFlag(root),
      `--allow-write=${root}`,
      "--allow-net=127.0.0.1",
      "--allow-env=INIT_CWD,WMCP_TOKEN,WMCP_STATE_KEY",
      ...extraFlags,
      SERVE_HTTP,
      "--root",
      root,
      ...args,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

async function searchTree(root: string, dirs = 30) {
  const body = "lorem ipsum dolor sit amet consectetur adipiscing elit 0123456789\n".repeat(250);
  for (let d = 0; d < dirs; d++) {
    await Deno.mkdir(`${root}/t${d}`, { recursive: true });
    await Promise.all(
      Array.from({ length: 100 }, (_, f) => Deno.writeTextFile(`${root}/t${d}/f${f}.txt`, body)),
    );
  }
}

/** Starts a search with a progress token and resolves once the server reported progress (it is in flight). */
async function searchInFlight(
  url: string,
  args: Record<string, unknown> = { query: "absent-needle" },
): Promise<{ rest: Promise<Record<string, unknown>[]> }> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": "search_text",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "search_text",
        arguments: args,
        _meta: { ...envelope(), progressToken: "p1" },
      },
    }),
  });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  const messages: Record<string, unknown>[] = [];
  const pump = async (untilProgress: boolean) => {
    while (true) {
      const nl = buf.indexOf("\n");
      if (nl !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.startsWith("data: ")) {
          const m = JSON.parse(line.slice(6));
          messages.push(m);
          if (untilProgress && m.method === "notifications/progress") return;
        }
        continue;
      }
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      buf += value;
    }
  };
  await pump(true);
  if (!messages.some((m) => m.method === "notifications/progress")) {
    throw new Error("no progress before the end");
  }
  return { rest: pump(false).then(() => messages) };
}

Deno.test("ready line, then nothing else on stdout; port in use is exit 3", async () => {
  const root = await makeWorkspace();
  const a = await startHttpServer(root);
  try {
    const u = new URL(a.url);
    assert.equal(u.hostname, "127.0.0.1");
    assert.equal(u.pathname, "/mcp");
    assert.ok(Number(u.port) > 0);
    const b = await runServeHttp(root, ["--port", u.port]);
    assert.equal(b.code, 3);
    assert.match(b.stderr, /already in use/);
    assert.equal(b.stdout, "", "no ready line when it did not start");
  } finally {
    assert.equal((await a.stop()).code, 0);
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("binding a non-loopback address without a token refuses to start, saying why", async () => {
  const root = await makeWorkspace();
  try {
    const r = await runServeHttp(root, ["--host", "0.0.0.0", "--port", "0"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /without authentication/);
    assert.equal(r.stdout, "");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("SIGTERM lets an in-flight search finish, then exits 0", async () => {
  const root = await makeWorkspace();
  await searchTree(root);
  const server = await startHttpServer(root, { args: ["--shutdown-timeout", "20"] });
  try {
    const inflight = await searchInFlight(server.url);
    server.child.kill("SIGTERM");
    const messages = await inflight.rest;
    const result = messages.find((m) => "result" in m)?.result as {
      structuredContent: { filesSearched: number };
    };
    assert.equal(result.structuredContent.filesSearched, 3001, "the search ran to completion");
    assert.equal((await server.status).code, 0);
    const after = await fetch(server.url.replace("/mcp", "/healthz")).then(
      () => "up",
      () => "down",
    );
    assert.equal(after, "down", "no longer accepting");
  } finally {
    await server.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("SIGTERM past the shutdown timeout cancels the in-flight search and still exits 0", async () => {
  const root = await makeWorkspace();
  await searchTree(root, 60);
  const server = await startHttpServer(root, { args: ["--shutdown-timeout", "0"] });
  try {
    // A line-by-line regex keeps the search busy well past the (zero) shutdown timeout.
    const inflight = await searchInFlight(server.url, {
      query: "(?:lorem|ipsum)+ absent$",
      regex: true,
    });
    const t0 = performance.now();
    server.child.kill("SIGTERM");
    assert.equal((await server.status).code, 0, server.stderr());
    assert.ok(performance.now() - t0 < 4000, "exited promptly after the timeout");
    const messages = await inflight.rest;
    assert.ok(!messages.some((m) => "result" in m), "no result was sent for the cancelled search");
    assert.match(server.stderr(), /"event":"cancelled","tool":"search_text"/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

/** Runs `cli serve stop` with just the permissions it needs (read on the pid file's directory). */
function serveStop(pidDir: string, pidFile: string): Promise<Deno.CommandOutput> {
  return serveStopCommand(pidFile, { read: [pidDir] }).output();
}

Deno.test("pid file: stale is replaced, live refuses a second start, `cli serve stop` stops and waits", async () => {
  const root = await makeWorkspace();
  // Outside the workspace: a server refuses a pid file inside the one it serves.
  const pidDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-pid-" }));
  const pidFile = `${pidDir}/server.pid`;
  const pidPaths = `${pidFile},${pidFile}.tmp`;
  await Deno.writeTextFile(
    pidFile,
    JSON.stringify({ pid: 999999, url: "http://127.0.0.1:9/mcp", startedAt: "x" }),
  );
  const server = await startHttpServer(root, {
    args: ["--pid-file", pidFile],
    extraFlags: [`--allow-read=${pidPaths}`, `--allow-write=${pidPaths}`, "--allow-sys=uid"],
  });
  try {
    assert.match(server.stderr(), /stale pid file/);
    const rec = JSON.parse(await Deno.readTextFile(pidFile));
    assert.deepEqual([rec.pid, rec.url], [server.pid, server.url]);

    const second = await runServeHttp(root, ["--port", "0", "--pid-file", pidFile], [
      `--allow-read=${pidPaths}`,
      `--allow-write=${pidPaths}`,
      "--allow-sys=uid",
    ]);
    assert.equal(second.code, 4);
    assert.match(
      second.stderr,
      new RegExp(`already running.*pid ${server.pid}|pid ${server.pid}.*already running`),
    );

    const stop = await serveStop(pidDir, pidFile);
    const line = JSON.parse(new TextDecoder().decode(stop.stdout));
    assert.equal(stop.code, 0, new TextDecoder().decode(stop.stderr));
    assert.deepEqual([line.event, line.pid], ["stopped", server.pid]);
    assert.equal((await server.status).code, 0);
    await assert.rejects(Deno.stat(pidFile), "the pid file is removed on exit");

    const again = await serveStop(pidDir, pidFile);
    assert.equal(again.code, 3, "nothing to stop");
  } finally {
    await server.stop();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(pidDir, { recursive: true });
  }
});

Deno.test("`deno task start` serves the directory it is run from, read-only, over HTTP", async () => {
  const dir = await makeWorkspace({ "note.md": "# hi\n" });
  const config = new URL("../../deno.json", import.meta.url).pathname;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "--config", config, "start", "--port", "0"],
    cwd: dir,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    // A clean environment, as from a shell: an inherited INIT_CWD would name another directory.
    clearEnv: true,
    env: { NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "" },
  }).spawn();
  const { ready, reader } = await readReadyLine(child.stdout, "task");
  try {
    const info = await modernRequest(ready.url, "tools/call", {
      name: "workspace_info",
      arguments: {},
    });
    const sc = (info.messages.find((m) => "result" in m)!.result as {
      structuredContent: { root: string; mode: string; permissions: Record<string, string> };
    }).structuredContent;
    assert.equal(sc.root, dir.split("/").pop());
    assert.equal(sc.mode, "read-only");
    assert.equal(sc.permissions.writeWorkspace, "prompt", "no write permission held");
    assert.equal(sc.permissions.run, "prompt", "no run permission held");
    const list = await modernRequest(ready.url, "tools/list");
    const names = (list.messages[0].result as { tools: { name: string }[] }).tools.map((t) =>
      t.name
    );
    assert.ok(!names.includes("write_file"));
  } finally {
    child.kill("SIGTERM");
    await reader.cancel().catch(() => {});
    await child.stderr.cancel().catch(() => {});
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("`cli serve http|stdio` launch the servers with permissions scoped from their flags", async () => {
  const root = await makeWorkspace({ "note.md": "# launched\n" });
  const launcher = (args: string[]) =>
    new Deno.Command(Deno.execPath(), {
      // The launcher itself may read nothing of the workspace; the child gets exactly the root.
      args: cliArgv(["--quiet", "--no-prompt", "--allow-env", "--allow-run"], ["serve", ...args]),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  try {
    const http = launcher(["http", "--root", root, "--port", "0"]);
    const { ready, reader } = await readReadyLine(http.stdout, "launcher");
    if (Deno.build.os === "linux") {
      // The server itself (no pid namespace in the sandbox) runs with the launcher's V8 heap sizing.
      const ps = await new Deno.Command("ps", { args: ["-o", "args=", "-p", String(ready.pid)] })
        .output();
      const args = new TextDecoder().decode(ps.stdout).trim().split(" ");
      assert.ok(args.includes(HTTP_SERVER_V8_FLAGS), args.join(" "));
    }
    const info = await modernRequest(ready.url, "tools/call", {
      name: "workspace_info",
      arguments: {},
    });
    const sc = (info.messages.find((m) => "result" in m)!.result as {
      structuredContent: { mode: string; permissions: Record<string, string> };
    }).structuredContent;
    assert.equal(sc.mode, "read-only");
    assert.equal(sc.permissions.readWorkspace, "granted");
    assert.notEqual(sc.permissions.writeWorkspace, "granted");
    assert.notEqual(sc.permissions.readAnywhere, "granted");
    assert.notEqual(sc.permissions.run, "granted");
    http.kill("SIGTERM");
    await reader.cancel().catch(() => {});
    await http.stderr.cancel().catch(() => {});
    await http.stdin.close().catch(() => {});
    assert.equal((await http.status).code, 0, "the signal is forwarded and the server exits 0");

    // stdio: the launcher is a stdio MCP server command (protocol passes straight through).
    const stdio = launcher(["stdio", "--root", root]);
    const io = stdioInput(stdio.stdin);
    const send = io.send;
    await io.initialize();
    await send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "read_file", arguments: { path: "note.md" } },
    });
    // Wait for both answers before closing stdin (in-flight requests end with stdin).
    const rd = stdio.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (text.split("\n").filter((l) => l.trim()).length < 2) {
      const { value, done } = await rd.read();
      if (done) break;
      text += value;
    }
    await io.close();
    while (!(await rd.read()).done) { /* drain until the child exits */ }
    await stdio.stderr.cancel().catch(() => {});
    const lines = text.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines[1].result.structuredContent.content, "# launched\n");
    assert.equal((await stdio.status).code, 0);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
