/**
 * The one server flags module (src/cli/server_flags.ts): --help and --version on both servers and
 * through the launcher, bad numbers and short secrets refused with the same message directly and
 * through `cli.ts serve http`, did-you-mean for unknown flags, the permission function's output, a
 * server started with exactly that output, and the tasks and RUNTIME.md kept equal to the table.
 *
 * What a server or the launcher answers before it serves is not a property of the process
 * boundary, so those cases run in process (decision 0052): "directly" is what serve_http.ts and
 * serve_stdio.ts do before they serve (answerInfoFlags, parseServerFlags, loadServerSecrets, a
 * usage error printed as `wmcp: MESSAGE`, exit 2; Deno.mainModule set to the entry's, by which it
 * names itself), "through the launcher" is the CLI's
 * `main(["serve", KIND, ...])` (tests/_support/in_process.ts). Anchors run as real children (the
 * entry with exactly serverPermissions' flags, or none for help; `cli.ts serve` with the tasks'
 * launcher permissions) and must answer the same exit code, stdout and stderr as in process. The
 * launcher reads no secret (the server it starts does), so its short-secret cases are real
 * children: the launcher, the engine broker and the server. A server started with exactly
 * serverPermissions' output serves as a real child.
 */
import assert from "node:assert/strict";
import denoConfig from "../../deno.json" with { type: "json" };
import {
  answerInfoFlags,
  flagsOf,
  parseServerFlags,
  SERVER_FLAGS,
  type ServerKind,
  suggestFlag,
} from "../../src/cli/server_flags.ts";
import { serverPermissions } from "../../src/cli/server_permissions.ts";
import { loadServerSecrets } from "../../src/cli/server_secrets.ts";
import { UsageError } from "../../src/config.ts";
import { type OutStream, withStreams } from "../../src/std_streams.ts";
import { ENGINE_READ_PATH } from "../../src/workspace/engine/read_path.ts";
import { runInProcess } from "../_support/in_process.ts";
import {
  CLI,
  makeWorkspace,
  modernRequest,
  readReadyLine,
  SERVE_HTTP,
  SERVE_STDIO,
} from "./_harness.ts";

const dec = new TextDecoder();
const ENTRY: Record<ServerKind, string> = { http: SERVE_HTTP, stdio: SERVE_STDIO };
const LAUNCHER = serverPermissions("http", [], { via: "launcher" });

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(args: string[], env?: Record<string, string>): Promise<Outcome> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env,
  }).output();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** A stream that keeps what is written to it (as text). */
function capture(): OutStream & { text: () => string } {
  const chunks: Uint8Array[] = [];
  return {
    write: (bytes) => Promise.resolve((chunks.push(bytes.slice()), bytes.length)),
    writeSync: (bytes) => (chunks.push(bytes.slice()), bytes.length),
    isTerminal: () => false,
    text: () => dec.decode(new Uint8Array(chunks.flatMap((c) => [...c]))),
  };
}

/**
 * What a server entry run directly answers before it serves, in process: help or version
 * (answerInfoFlags, before anything is checked), else the flags (parseServerFlags) and, for HTTP,
 * the secrets (loadServerSecrets, reading env over this process's environment), a usage error
 * printed as the entries print it (`wmcp: MESSAGE`, exit 2), with Deno.mainModule the entry's for
 * the run (the entry names itself by it). Every case here is refused or answered before the
 * server would start.
 */
async function directInProcess(
  kind: ServerKind,
  args: string[],
  env: Record<string, string> = {},
): Promise<Outcome> {
  const stdout = capture();
  const stderr = capture();
  // The entry names itself by its main module (`serve_http.ts --help` in its messages).
  const mainModule = Object.getOwnPropertyDescriptor(Deno, "mainModule")!;
  const entry = new URL(`file://${ENTRY[kind]}`).href;
  Object.defineProperty(Deno, "mainModule", { get: () => entry, configurable: true });
  try {
    const code = await withStreams({ stdout, stderr, stdinIsTerminal: () => false }, async () => {
      const info = await answerInfoFlags(kind, args);
      if (info !== undefined) return info;
      try {
        const flags = await parseServerFlags(kind, args);
        if (kind === "http") {
          await loadServerSecrets(flags, { env: (name) => env[name] ?? Deno.env.get(name) });
        }
      } catch (err) {
        if (!(err instanceof UsageError)) throw err;
        stderr.writeSync(new TextEncoder().encode(`wmcp: ${err.message}\n`));
        return 2;
      }
      throw new Error(`${kind} ${args.join(" ")}: nothing refused, the server would start`);
    });
    return { code, stdout: stdout.text(), stderr: stderr.text() };
  } finally {
    Object.defineProperty(Deno, "mainModule", mainModule);
  }
}

/** The same answer from the launcher, in process: the CLI's main(["serve", KIND, ...]). */
async function launchedInProcess(
  kind: ServerKind,
  args: string[],
  env?: Record<string, string>,
): Promise<Outcome> {
  const r = await runInProcess(["serve", kind, ...args], { env });
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

/** A server entry run directly as a real child with exactly the permissions its flags need. */
function directReal(kind: ServerKind, args: string[], env?: Record<string, string>) {
  return run(["run", ...serverPermissions(kind, args), ENTRY[kind], ...args], env);
}

/** `cli.ts serve KIND` as a real child, with the tasks' launcher permissions. */
function launchedReal(kind: ServerKind, args: string[], env?: Record<string, string>) {
  return run(["run", ...LAUNCHER, CLI, "serve", kind, ...args], env);
}

/** Asserts a real child answered exactly as the in-process run; returns the in-process outcome. */
function same(inProcess: Outcome, real: Outcome, what: string): Outcome {
  assert.deepStrictEqual(inProcess, real, `in process and as a real child: ${what}`);
  return inProcess;
}

/** A server entry run directly: in process, and with `anchor` also as a real child (the same). */
async function direct(
  kind: ServerKind,
  args: string[],
  o: { env?: Record<string, string>; anchor?: boolean } = {},
): Promise<Outcome> {
  const inProcess = await directInProcess(kind, args, o.env);
  if (!o.anchor) return inProcess;
  return same(inProcess, await directReal(kind, args, o.env), `serve_${kind}.ts ${args.join(" ")}`);
}

/** The same flags through the launcher (`--sandbox off`): in process, with `anchor` also real. */
async function launched(
  kind: ServerKind,
  args: string[],
  o: { anchor?: boolean } = {},
): Promise<Outcome> {
  const full = ["--sandbox", "off", ...args];
  const inProcess = await launchedInProcess(kind, full);
  if (!o.anchor) return inProcess;
  return same(inProcess, await launchedReal(kind, full), `serve ${kind} ${full.join(" ")}`);
}

/** The usage message of a failed direct run (`wmcp: MESSAGE`). */
function directMessage(o: Outcome): string {
  const line = o.stderr.trim().split("\n").pop() ?? "";
  assert.match(line, /^wmcp: /, o.stderr);
  return line.slice("wmcp: ".length);
}

/** The usage message of a failed launcher run: its JSON USAGE line, or the server's own line. */
function launchedMessage(o: Outcome): string {
  const line = o.stderr.trim().split("\n").pop() ?? "";
  if (line.startsWith("{")) {
    const { error } = JSON.parse(line);
    assert.equal(error.code, "USAGE", o.stderr);
    // The CLI ends every usage error with a pointer to its command's help; the sentence before it
    // is the server's own.
    return error.message.replace(/; see `[^`]* --help`$/, "");
  }
  return directMessage(o);
}

Deno.test("--help and --version: both servers, directly (no permissions) and through the launcher", async () => {
  // The anchors: per server, one help flag directly with no permissions at all and one version
  // flag through the launcher, the other way round for the other server.
  const anchors = new Set(["http direct --help", "http launcher -V", "stdio direct --version"]);
  anchors.add("stdio launcher -h");
  for (const kind of ["http", "stdio"] as const) {
    const ways: [string, (flag: string) => Promise<Outcome>, string[]][] = [
      ["direct", (flag) => directInProcess(kind, [flag]), ["run", "--no-prompt", ENTRY[kind]]],
      [
        "launcher",
        (flag) => launchedInProcess(kind, [flag]),
        ["run", ...LAUNCHER, CLI, "serve", kind],
      ],
    ];
    for (const [way, inProcess, realPrefix] of ways) {
      const answer = async (flag: string) => {
        const o = await inProcess(flag);
        if (!anchors.has(`${kind} ${way} ${flag}`)) return o;
        return same(o, await run([...realPrefix, flag]), `${kind} ${way} ${flag}`);
      };
      for (const flag of ["--help", "-h"]) {
        const o = await answer(flag);
        const ctx = `${kind} ${way} ${flag}: ${o.stderr}`;
        assert.equal(o.code, 0, ctx);
        assert.equal(o.stderr, "", ctx);
        for (const f of flagsOf(kind)) {
          assert.ok(o.stdout.includes(`--${f.name}`), `${ctx} --${f.name}`);
        }
        for (const f of SERVER_FLAGS.filter((f) => !f.servers.includes(kind))) {
          assert.ok(!o.stdout.includes(`--${f.name} `), `${ctx}: lists --${f.name}`);
        }
        // Examples that run under the installed command (not `deno task`).
        assert.match(o.stdout, new RegExp(`Examples:\\n {2}wmcp serve ${kind} --root `), ctx);
        assert.ok(!o.stdout.includes("cli.ts") && !o.stdout.includes("deno task"), ctx);
        assert.match(o.stdout, /-V, --version/, ctx);
        assert.equal(o.stdout.includes("--sandbox MODE"), way === "launcher", ctx);
      }
      for (const flag of ["--version", "-V"]) {
        const o = await answer(flag);
        assert.equal(o.code, 0, `${kind} ${way} ${flag}: ${o.stderr}`);
        assert.equal(o.stdout, `${denoConfig.version}\n`);
        assert.equal(o.stderr, "");
      }
    }
  }
  // Help wins over a bad value: nothing is checked, nothing starts (anchored: the entry's order).
  const args = ["--port", "nope", "--help"];
  const o = same(
    await directInProcess("http", args),
    await run(["run", "--no-prompt", SERVE_HTTP, ...args]),
    "serve_http.ts --port nope --help",
  );
  assert.equal(o.code, 0, o.stderr);
  assert.match(o.stdout, /^serve_http\.ts /);
});

Deno.test("bad numbers: exit 2 naming the flag, the same message directly and through the launcher", async () => {
  const root = await makeWorkspace();
  try {
    const cases: [string[], string][] = [
      [["--port", "65536"], "--port"],
      [["--port", "0x50"], "--port"],
      [["--port="], "--port"],
      [["--page-size", "0"], "--page-size"],
      [["--shutdown-timeout", "-1"], "--shutdown-timeout"],
      [["--body-timeout", "0"], "--body-timeout"],
      [["--unused-session", "1e3"], "--unused-session"],
      [["--max-buffered-body", "1.5"], "--max-buffered-body"],
      [["--limit", "maxWriteBytes=0"], "--limit"],
      [["--endpoint", "mcp"], "--endpoint"],
    ];
    // Anchored: a port (the first case) and a limit (parsed by the limits' own table).
    const anchored = new Set(["--port 65536", "--limit maxWriteBytes=0"]);
    for (const [args, flag] of cases) {
      // A case about --port gives its own (a second --port is a different refusal).
      const port = flag === "--port" ? [] : ["--port", "0"];
      const full = ["--root", root, ...port, ...args];
      const anchor = anchored.has(args.join(" "));
      const d = await direct("http", full, { anchor });
      const l = await launched("http", full, { anchor });
      const ctx = `${args.join(" ")}: direct ${d.stderr} launcher ${l.stderr}`;
      assert.equal(d.code, 2, ctx);
      assert.equal(l.code, 2, ctx);
      assert.equal(d.stdout + l.stdout, "", `${ctx}: nothing served`);
      assert.ok(directMessage(d).includes(flag), ctx);
      assert.equal(launchedMessage(l), directMessage(d), ctx);
      assert.doesNotMatch(directMessage(d), /given twice|more than once/, ctx);
    }
    // The stdio server checks its numbers with the same table.
    const s = await direct("stdio", ["--root", root, "--page-size", "-3"], { anchor: true });
    assert.equal(s.code, 2, s.stderr);
    assert.match(directMessage(s), /--page-size/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("short secrets: exit 2 naming the flag or variable, directly and through the launcher", async () => {
  const root = await makeWorkspace();
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-secrets-" }));
  try {
    await Deno.writeTextFile(`${dir}/short.tokens`, "long-enough-token-0123\nshort\n");
    await Deno.writeTextFile(`${dir}/short.key`, "k".repeat(31));
    // The last field: also through the launcher as real children (the launcher reads no secret;
    // the server it starts refuses, and its line reaches the launcher's stderr). One file flag and
    // one variable; the direct run of each is anchored as well.
    const cases: [string[], Record<string, string>, RegExp, boolean][] = [
      [["--token-file", `${dir}/short.tokens`], {}, /--token-file .*at least 16 characters/, true],
      [["--read-token-file", `${dir}/short.tokens`], {}, /--read-token-file .*at least 16/, false],
      [[], { WMCP_TOKEN: "short" }, /WMCP_TOKEN .*at least 16 characters/, false],
      [["--state-key-file", `${dir}/short.key`], {}, /--state-key-file .*at least 32 bytes/, false],
      [[], { WMCP_STATE_KEY: "k".repeat(31) }, /WMCP_STATE_KEY .*at least 32 bytes/, true],
    ];
    for (const [args, env, expected, throughLauncher] of cases) {
      const full = ["--root", root, "--port", "0", ...args];
      const d = await direct("http", full, { env, anchor: throughLauncher });
      const ctx0 = `${JSON.stringify([args, env])}: direct ${d.stderr}`;
      assert.equal(d.code, 2, ctx0);
      assert.equal(d.stdout, "", `${ctx0}: nothing served`);
      assert.match(directMessage(d), expected, ctx0);
      if (!throughLauncher) continue;
      const l = await launchedReal("http", ["--sandbox", "off", ...full], env);
      const ctx = `${ctx0} launcher ${l.stderr}`;
      assert.equal(l.code, 2, ctx);
      assert.equal(l.stdout, "", `${ctx}: nothing served`);
      assert.equal(launchedMessage(l), directMessage(d), ctx);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("unknown flags: exit 2 with a did-you-mean from the table, directly and through the launcher", async () => {
  const root = await makeWorkspace();
  try {
    for (
      const [kind, flag, hint] of [
        ["http", "--prot", "--port"],
        ["http", "--tokenfile", "--token-file"],
        ["http", "--max-buffered", "--max-buffered-body"],
        ["stdio", "--wirte", "--write"],
      ] as const
    ) {
      const args = ["--root", root, flag, "1"];
      // Anchored: the first HTTP case, and the stdio case directly.
      const d = await direct(kind, args, { anchor: flag === "--prot" || kind === "stdio" });
      const l = await launched(kind, args, { anchor: flag === "--prot" });
      const ctx = `${kind} ${flag}: ${d.stderr} ${l.stderr}`;
      assert.equal(d.code, 2, ctx);
      assert.equal(l.code, 2, ctx);
      // The CLI's one wording (src/cli/suggest.ts); run directly, the entry names its own help.
      const sentence = `unknown flag ${flag} (did you mean ${hint}?)`;
      assert.equal(directMessage(d), `${sentence}; see \`serve_${kind}.ts --help\``);
      assert.equal(launchedMessage(l), sentence, ctx);
      assert.ok(l.stderr.includes(`see \`wmcp serve ${kind} --help\``), ctx);
    }
    const far = await direct("http", ["--root", root, "--zzzzzz"]);
    assert.equal(far.code, 2);
    assert.doesNotMatch(far.stderr, /did you mean/);
    const other = await direct("stdio", ["--root", root, "--port", "1"]);
    assert.equal(other.code, 2);
    assert.match(
      other.stderr,
      /--port is a flag of the HTTP server; serve_stdio\.ts does not take it/,
    );
    // Through the launcher the message names the command as typed (anchored).
    const typed = await launched("stdio", ["--root", root, "--port", "1"], { anchor: true });
    assert.equal(typed.code, 2);
    assert.equal(
      launchedMessage(typed),
      "--port is a flag of the HTTP server; wmcp serve stdio does not take it",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("suggestFlag: typos, swaps and prefixes; nothing for a far name", () => {
  const known = flagsOf("http").map((f) => f.name);
  assert.equal(suggestFlag("prot", known), "port");
  assert.equal(suggestFlag("hots", known), "host");
  assert.equal(suggestFlag("pid", known), "pid-file");
  assert.equal(suggestFlag("shutdown-timout", known), "shutdown-timeout");
  assert.equal(suggestFlag("banana", known), undefined);
  assert.equal(suggestFlag("x", known), undefined);
});

Deno.test("serverPermissions: representative flag sets", () => {
  const engine = ENGINE_READ_PATH === null ? [] : [ENGINE_READ_PATH];
  assert.deepEqual(serverPermissions("stdio", ["--root", "/srv/w"]), [
    "--quiet",
    "--no-prompt",
    "--allow-env=INIT_CWD,WMCP_SANDBOX,WMCP_ROOT_DEFAULTED",
    `--allow-read=${["/srv/w", ...engine].join(",")}`,
  ]);
  assert.deepEqual(serverPermissions("stdio", ["--root=/srv/w", "--write", "--page-size", "5"]), [
    "--quiet",
    "--no-prompt",
    "--allow-env=INIT_CWD,WMCP_SANDBOX,WMCP_ROOT_DEFAULTED",
    `--allow-read=${["/srv/w", ...engine].join(",")}`,
    "--allow-write=/srv/w",
  ]);
  const http = serverPermissions("http", [
    "--root",
    "/srv/w",
    "--write",
    "--host",
    "::1",
    "--pid-file",
    "/run/wmcp/pid",
    "--token-file",
    "/etc/wmcp/rw",
    "--read-token-file=/etc/wmcp/ro",
    "--state-key-file",
    "/etc/wmcp/key",
  ]);
  assert.deepEqual(http, [
    "--quiet",
    "--no-prompt",
    "--unstable-no-legacy-abort",
    "--allow-sys=uid",
    "--allow-net=[::1]",
    "--allow-env=INIT_CWD,WMCP_TOKEN,WMCP_READ_TOKEN,WMCP_STATE_KEY,WMCP_SANDBOX",
    `--allow-read=${
      [
        "/srv/w",
        ...engine,
        "/run/wmcp/pid",
        "/run/wmcp/pid.tmp",
        "/etc/wmcp/rw",
        "/etc/wmcp/ro",
        "/etc/wmcp/key",
      ].join(",")
    }`,
    "--allow-write=/srv/w,/run/wmcp/pid,/run/wmcp/pid.tmp",
  ]);
  // No run permission for a server, ever; sys only with a pid file; net defaults to loopback.
  const plain = serverPermissions("http", ["--root", "/srv/w"]);
  assert.ok(!plain.some((f) => f.startsWith("--allow-run") || f.startsWith("--allow-sys")));
  assert.ok(plain.includes("--allow-net=127.0.0.1,localhost,[::1]"));
  assert.ok(!plain.some((f) => f.startsWith("--allow-write")));
  // The launcher itself: env and run only, whatever the server flags.
  assert.deepEqual(
    serverPermissions("stdio", ["--root", "/srv/w", "--write"], { via: "launcher" }),
    [
      "--quiet",
      "--no-prompt",
      "--allow-env=INIT_CWD,DENO_DIR,XDG_CACHE_HOME,HOME",
      "--allow-run=bwrap,kill,/proc/self/exe",
    ],
  );
  assert.throws(() => serverPermissions("http", ["--root", "/a,b"]), /comma/);
});

Deno.test("serverPermissions: several roots: read on each, write only on --root ones with --write", () => {
  const engine = ENGINE_READ_PATH === null ? [] : [ENGINE_READ_PATH];
  const args = ["--root", "/srv/a", "--read-only-root=/srv/b", "--root", "/srv/c"];
  const read = `--allow-read=${["/srv/a", "/srv/b", "/srv/c", ...engine].join(",")}`;
  assert.deepEqual(serverPermissions("stdio", args), [
    "--quiet",
    "--no-prompt",
    "--allow-env=INIT_CWD,WMCP_SANDBOX,WMCP_ROOT_DEFAULTED",
    read,
  ]);
  assert.deepEqual(serverPermissions("stdio", [...args, "--write"]), [
    "--quiet",
    "--no-prompt",
    "--allow-env=INIT_CWD,WMCP_SANDBOX,WMCP_ROOT_DEFAULTED",
    read,
    "--allow-write=/srv/a,/srv/c",
  ]);
  // Only read-only roots: no write at all, even with --write.
  const ro = serverPermissions("http", ["--read-only-root", "/srv/b", "--write"]);
  assert.ok(ro.includes(`--allow-read=${["/srv/b", ...engine].join(",")}`), ro.join(" "));
  assert.ok(!ro.some((f) => f.startsWith("--allow-write")), ro.join(" "));
  // An ungrantable read-only root is named by its flag.
  assert.throws(
    () => serverPermissions("stdio", ["--root", "/srv/a", "--read-only-root", "/x,y"]),
    /--read-only-root \/x,y/,
  );
});

Deno.test("the deno.json server tasks grant exactly the launcher permissions of serverPermissions", () => {
  const tasks = denoConfig.tasks as Record<string, string>;
  const names = [
    "start",
    "start:write",
    "serve:http",
    "serve:http:write",
    "serve:stdio",
    "serve:stdio:write",
  ];
  for (const name of names) {
    const words = tasks[name].split(/\s+/);
    // The launcher's own entry (serve.ts KIND), not cli.ts: decision 0070.
    const entry = words.indexOf("serve.ts");
    assert.deepEqual(words.slice(0, 2), ["deno", "run"], name);
    assert.ok(entry > 2, name);
    const kind = words[entry + 1] as ServerKind;
    assert.ok(kind === "stdio" || kind === "http", name);
    const serverArgs = words.slice(entry + 2);
    assert.deepEqual(
      words.slice(2, entry),
      serverPermissions(kind, serverArgs, { via: "launcher" }),
      name,
    );
  }
});

Deno.test("a server started with exactly serverPermissions' output serves (write, pid file, token file)", async () => {
  const root = await makeWorkspace({ "hello.txt": "hi there\n" });
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-perm-" }));
  const token = "exact-permissions-token-0123";
  await Deno.writeTextFile(`${dir}/rw.tokens`, `${token}\n`);
  const args = [
    "--root",
    root,
    "--write",
    "--port",
    "0",
    "--pid-file",
    `${dir}/pid`,
    "--token-file",
    `${dir}/rw.tokens`,
  ];
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...serverPermissions("http", args), SERVE_HTTP, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  try {
    const { ready, reader } = await readReadyLine(child.stdout);
    void reader.cancel();
    const auth = { authorization: `Bearer ${token}` };
    const write = await modernRequest(ready.url, "tools/call", {
      name: "write_file",
      arguments: { path: "new.txt", content: "written\n" },
    }, { headers: auth });
    assert.equal(write.status, 200, JSON.stringify(write.messages));
    assert.equal(await Deno.readTextFile(`${root}/new.txt`), "written\n");
    const read = await modernRequest(ready.url, "tools/call", {
      name: "read_file",
      arguments: { path: "hello.txt" },
    }, { headers: auth });
    assert.ok(JSON.stringify(read.messages).includes("hi there"));
    const denied = await modernRequest(ready.url, "tools/list", {});
    assert.equal(denied.status, 401);
    assert.equal(JSON.parse(await Deno.readTextFile(`${dir}/pid`)).pid, ready.pid);
  } finally {
    child.kill("SIGTERM");
    const status = await child.status;
    const err = await stderr;
    assert.equal(status.code, 0, err);
    await assert.rejects(Deno.stat(`${dir}/pid`), Deno.errors.NotFound);
    await Deno.remove(root, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("RUNTIME.md lists every flag of the table under its server", async () => {
  const text = await Deno.readTextFile(new URL("../../RUNTIME.md", import.meta.url));
  const section = (title: string) => {
    const start = text.indexOf(`### ${title}\n`);
    assert.ok(start >= 0, `RUNTIME.md has no ### ${title}`);
    const end = text.indexOf("\n#", start + 4);
    return text.slice(start, end < 0 ? undefined : end);
  };
  const http = section("serve_http.ts");
  const stdio = section("serve_stdio.ts");
  for (const f of SERVER_FLAGS) {
    const row = `| \`--${f.name}${f.meta ? ` ${f.meta}` : ""}\``;
    if (f.servers.includes("http")) assert.ok(http.includes(row), `serve_http.ts lacks ${row}`);
    if (f.servers.includes("stdio")) {
      assert.ok(stdio.includes(`\`--${f.name}`), `serve_stdio.ts lacks --${f.name}`);
    } else {
      assert.ok(!stdio.includes(`\`--${f.name}`), `serve_stdio.ts lists --${f.name}`);
    }
    if (f.default !== undefined && f.servers.includes("http")) {
      const line = http.split("\n").find((l) => l.startsWith(row))!;
      assert.ok(line.includes(`\`${f.default}\``), `RUNTIME.md's default of --${f.name}`);
    }
  }
  for (const flag of ["--help", "--version"]) {
    assert.ok(http.includes(flag) && stdio.includes(flag), `RUNTIME.md lacks ${flag}`);
  }
});
