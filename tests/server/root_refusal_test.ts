/**
 * A server whose root was not given (no --root: the invocation directory) refuses `/` and the
 * home directory (links resolved) and a directory containing it, exit 2, through every way a
 * server starts: the deno tasks, `cli serve`, the launcher run directly and the server entries run
 * directly, and `op` and the client's bundled server follow the same rule; --root names them on
 * purpose, and an empty or blank --root is a usage error everywhere.
 *
 * The rule's matrix runs in process (decision 0052), through each entry's own check with HOME
 * and the invocation directory set for the run: the launcher (`main` running `serve stdio|http`,
 * whose path probe is a real child; its decision on served roots through `explicitRoot`), the
 * server entries (serve_stdio.ts's and serve_http.ts's parseServerFlags + openWorkspaceFromFlags),
 * `op` and the client (`main`). Each way a server starts is then proven once per refusal class by
 * a real child started in /, in a temporary HOME or above it (the deno tasks, the launcher with
 * the tasks' permissions, serve_stdio.ts, serve_http.ts, op and the client through the router),
 * and two of them are run in process too and must answer with the same bytes and exit code.
 */
import assert from "node:assert/strict";
import { SERVE_HTTP, SERVE_STDIO } from "./_harness.ts";
import { cliArgv } from "../_support/cli.ts";
import { runInProcess } from "../_support/in_process.ts";
import { launcherFlags } from "../../src/cli/host_config.ts";
import { explicitRoot } from "../../src/cli/serve_launch.ts";
import { parseServerFlags, type ServerKind } from "../../src/cli/server_flags.ts";
import { UsageError } from "../../src/config.ts";
import { openWorkspaceFromFlags } from "../../src/open_workspace.ts";
import denoConfig from "../../deno.json" with { type: "json" };

const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;

/** The Deno cache this machine uses, so a temporary HOME does not mean an empty cache. */
function denoDir(): string {
  const real = Deno.env.get("DENO_DIR");
  if (real) return real;
  const xdg = Deno.env.get("XDG_CACHE_HOME");
  return xdg ? `${xdg}/deno` : `${Deno.env.get("HOME")}/.cache/deno`;
}

/** A clean environment: HOME as given, PATH, the Deno cache; no INIT_CWD unless given. */
function env(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: home,
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    DENO_DIR: denoDir(),
    ...extra,
  };
}

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "t", version: "0" },
  },
}) + "\n";

/**
 * Runs a server command in cwd as a real child. stdio servers get one initialize and then EOF
 * (they exit when stdin closes); an HTTP server that starts is stopped once its ready line is out.
 */
async function run(
  args: string[],
  options: { cwd: string; env: Record<string, string>; http?: boolean },
): Promise<Outcome> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: options.cwd,
    env: options.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  if (!options.http) await w.write(new TextEncoder().encode(INITIALIZE)).catch(() => {});
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let stdout = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((
    res,
  ) => (timer = setTimeout(() => res("timeout"), 60_000)));
  try {
    // Until the first line (initialize's answer or the ready line) or the end of stdout.
    while (!stdout.includes("\n")) {
      const next = await Promise.race([reader.read(), timeout]);
      if (next === "timeout" || next.done) break;
      stdout += next.value;
    }
  } finally {
    clearTimeout(timer);
  }
  if (options.http && stdout.includes("\n")) {
    try {
      child.kill("SIGTERM");
    } catch {
      // already gone
    }
  }
  await w.close().catch(() => {});
  await reader.cancel().catch(() => {});
  const status = await child.status;
  return { code: status.code, stdout, stderr: await stderr };
}

/** The launcher run directly with the task's permissions (as `config print` snippets do). */
const launcher = (kind: ServerKind, ...rest: string[]) =>
  cliArgv(launcherFlags(), ["serve", kind, ...rest]);

/** A deno task of this checkout, run in cwd (deno task sets INIT_CWD to it). */
const task = (...rest: string[]) => ["task", "-q", "--config", DENO_JSON, ...rest];

/**
 * serve_stdio.ts or serve_http.ts run directly, with read on `read`. Every Deno started here gets
 * --quiet, as the tasks give it: Deno's own notices ("Blocking waiting for file lock on
 * node_modules" while another test caches the project) stay off the stderr that is asserted.
 */
function direct(kind: ServerKind, read: string, ...rest: string[]): string[] {
  return kind === "stdio"
    ? [
      "run",
      "--quiet",
      "--no-prompt",
      `--allow-read=${read}`,
      "--allow-env=INIT_CWD,HOME",
      SERVE_STDIO,
      ...rest,
    ]
    : [
      "run",
      "--quiet",
      "--no-prompt",
      `--allow-read=${read}`,
      "--allow-env=INIT_CWD,HOME",
      "--allow-net=127.0.0.1",
      SERVE_HTTP,
      "--port",
      "0",
      ...rest,
    ];
}

/** `op get_file_info --root VALUE` (a person's command: the broad rule does not apply). */
const opArgs = (root: string) => [
  "op",
  "get_file_info",
  "--root",
  root,
  "--arguments",
  '{"path":"."}',
];
/** Runs `cli.ts op get_file_info --root VALUE` with read on / and no HOME for its scoped child. */
const op = (root: string) =>
  cliArgv(["--quiet", "--no-prompt", "--allow-read=/", "--allow-env=INIT_CWD,HOME"], opArgs(root));

/** The router as the `cli` task starts it: the command runs in its scoped child. */
const routed = (...args: string[]) => cliArgv(["--quiet", "--no-prompt", "--allow-all"], args);

/** A refusal that names the flag of the root refused (`--root` or `--read-only-root`). */
function assertRefused(o: Outcome, what: RegExp, ctx: string, flag = "--root"): void {
  assert.equal(o.code, 2, `${ctx}: exit ${o.code}, stderr ${o.stderr}`);
  assert.match(o.stderr, /refusing to serve/, ctx);
  assert.match(o.stderr, what, ctx);
  assert.ok(o.stderr.includes(`Pass ${flag} with the absolute path`), `${ctx}: ${o.stderr}`);
  assert.equal(o.stdout, "", `${ctx}: nothing served`);
}

function assertServed(o: Outcome, root: string, ctx: string): void {
  assert.ok(o.stdout.includes("\n"), `${ctx}: no answer; exit ${o.code}, stderr ${o.stderr}`);
  const first = JSON.parse(o.stdout.slice(0, o.stdout.indexOf("\n")));
  if (first.event !== "ready") assert.equal(first.result.serverInfo.name, "wmcp", ctx);
  assert.ok(o.stderr.includes(`serving ${root}`) || first.event === "ready", `${ctx}: ${o.stderr}`);
}

function assertEmpty(o: Outcome, ctx: string, served = true, flag = "--root"): void {
  assert.equal(o.code, 2, `${ctx}: exit ${o.code}, stderr ${o.stderr}`);
  assert.ok(o.stderr.includes(`${flag} is empty`), `${ctx}: ${o.stderr}`);
  assert.ok(o.stderr.includes(`pass ${flag} DIR`), `${ctx}: ${o.stderr}`);
  if (served) assert.equal(o.stdout, "", `${ctx}: nothing served`);
}

/** Sets env for the duration of fn, then puts back what was there. */
async function withEnv<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const before = new Map(Object.keys(env).map((k) => [k, Deno.env.get(k)]));
  for (const [k, v] of Object.entries(env)) Deno.env.set(k, v);
  try {
    return await fn();
  } finally {
    for (const [k, v] of before) v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
  }
}

/**
 * A server entry's start in process, up to serving: what serve_stdio.ts and serve_http.ts run
 * (parseServerFlags, then openWorkspaceFromFlags with the broad-root rule), reported as they
 * report it (`wmcp: MESSAGE` on stderr, exit 2), with INIT_CWD and HOME set for the run.
 */
function entry(
  kind: ServerKind,
  args: string[],
  o: { cwd: string; home: string },
): Promise<Outcome> {
  const argv = kind === "http" ? ["--port", "0", ...args] : args;
  return withEnv({ INIT_CWD: o.cwd, HOME: o.home }, async () => {
    try {
      const ws = await openWorkspaceFromFlags(await parseServerFlags(kind, argv), {
        refuseBroadDefaultRoot: true,
      });
      return { code: 0, stdout: "", stderr: `wmcp: serving ${ws.policy.rootReal}\n` };
    } catch (err) {
      const usage = err instanceof UsageError;
      return {
        code: usage ? 2 : 1,
        stdout: "",
        stderr: `wmcp: ${usage ? "" : "cannot start: "}${(err as Error).message}\n`,
      };
    }
  });
}

/** The launcher (`serve KIND ARGS`) through main in process, in cwd with this HOME. */
const launcherIn = (kind: ServerKind, args: string[], o: { cwd: string; home: string }) =>
  runInProcess(["serve", kind, ...args], { cwd: o.cwd, env: { HOME: o.home } });

/** The launcher's decision on the root, in process: the server arguments it would start with. */
const launcherRoot = (args: string[], o: { cwd: string; home: string }) =>
  withEnv({ INIT_CWD: o.cwd, HOME: o.home }, () => explicitRoot("stdio", args));

/** The scratch layout: HOME is <base>/users/you (<base>/users contains it, as /home does). */
async function layout() {
  const base = Deno.realPathSync(await Deno.makeTempDir({ prefix: "wmcp-home-" }));
  const users = `${base}/users`;
  const home = `${users}/you`;
  const project = `${home}/project`;
  await Deno.mkdir(project, { recursive: true });
  const linkedHome = `${base}/linked-home`;
  await Deno.symlink(home, linkedHome);
  return {
    base,
    users,
    home,
    project,
    linkedHome,
    cleanup: () => Deno.remove(base, { recursive: true }),
  };
}

Deno.test("in process: no --root, or a relative one, resolving to /, $HOME (links resolved) or above it is refused by every entry's check", async () => {
  const L = await layout();
  try {
    const { home, users, project, linkedHome } = L;
    // [what, args, cwd (the invocation directory), HOME, refusal, the flag named (--root)]
    const cases: [string, string[], string, string, RegExp, string?][] = [
      ["no --root, from /", [], "/", home, /whole file system \(\/\)/],
      ["no --root, from $HOME", [], home, home, /your home directory/],
      ["no --root, from $HOME, HOME through a link", [], home, linkedHome, /your home directory/],
      // INIT_CWD spelled through the link, as a shell's $PWD would be.
      ["no --root, INIT_CWD through a link", [], linkedHome, home, /your home directory/],
      ["no --root, from above $HOME", [], users, home, /contains your home directory/],
      ["--root . from /", ["--root", "."], "/", home, /whole file system/],
      ["--root . from $HOME", ["--root", "."], home, home, /home directory/],
      ["--root .. from a project", ["--root", ".."], project, home, /home directory/],
      ["--root=./ from above $HOME", ["--root=./"], users, home, /contains your home directory/],
      ["--root . from above $HOME", ["--root", "."], users, home, /contains your home/],
      ["--root with .. parts", ["--root", `${home}/project/..`], "/", home, /home directory/],
      // Every root is checked: a relative one after a literal one, a --read-only-root alike.
      [
        "--root PROJECT --read-only-root . from $HOME",
        ["--root", project, "--read-only-root", "."],
        home,
        home,
        /home directory/,
        "--read-only-root",
      ],
      [
        "--read-only-root . from /",
        ["--read-only-root", "."],
        "/",
        home,
        /whole file system/,
        "--read-only-root",
      ],
    ];
    for (const [what, args, cwd, h, refusal, flag] of cases) {
      const o = { cwd, home: h };
      assertRefused(await launcherIn("stdio", args, o), refusal, `launcher stdio, ${what}`, flag);
      for (const kind of ["stdio", "http"] as const) {
        assertRefused(await entry(kind, args, o), refusal, `serve_${kind}.ts, ${what}`, flag);
      }
    }
    assertRefused(
      await launcherIn("http", ["--port", "0"], { cwd: "/", home }),
      /whole file system \(\/\)/,
      "launcher http, no --root, from /",
    );
    // Given literally, the same directories serve on purpose; a relative root below $HOME serves.
    // [what, args, cwd, root served, the launcher's server arguments]
    const served: [string, string[], string, string, string[]][] = [
      ["--root /", ["--root", "/"], home, "/", ["--root", "/"]],
      ["--root <above $HOME>", ["--root", users], "/", users, ["--root", users]],
      ["--root $HOME", ["--root", home], "/", home, ["--root", home]],
      ["--root $HOME/", ["--root", `${home}/`], "/", home, ["--root", `${home}/`]],
      ["--root project from $HOME", ["--root", "project"], home, project, ["--root", "project"]],
      ["no --root, in a project below $HOME", [], project, project, ["--root", project]],
      // A --read-only-root alone is a root given: no --root is added.
      [
        "--read-only-root project from $HOME",
        ["--read-only-root", "project"],
        home,
        project,
        ["--read-only-root", "project"],
      ],
    ];
    for (const [what, args, cwd, root, serverArgs] of served) {
      const o = { cwd, home };
      assert.deepEqual(await launcherRoot(args, o), serverArgs, `launcher, ${what}`);
      // Opening / itself is left to the real child below (the sandbox cannot mark it).
      if (root === "/") continue;
      const s = await entry("stdio", args, o);
      assert.equal(s.code, 0, `serve_stdio.ts, ${what}: ${s.stderr}`);
      assert.equal(s.stderr, `wmcp: serving ${root}\n`, `serve_stdio.ts, ${what}`);
    }
  } finally {
    await L.cleanup();
  }
});

Deno.test("in process: an empty or blank --root or --read-only-root is a usage error (exit 2) naming its flag in every entry, never the start directory", async () => {
  const L = await layout();
  try {
    for (const value of ["", "  "]) {
      for (const flag of ["--root", "--read-only-root"]) {
        // From a harmless directory too: the empty value must not fall back to it.
        for (const cwd of ["/", L.home]) {
          const o = { cwd, home: L.home };
          const c = (ctx: string) => `${ctx} ${flag} ${JSON.stringify(value)} from ${cwd}`;
          assertEmpty(await launcherIn("stdio", [flag, value], o), c("launcher stdio"), true, flag);
          assertEmpty(
            await launcherIn("http", ["--port", "0", `${flag}=${value}`], o),
            c("launcher http"),
            true,
            flag,
          );
          for (const kind of ["stdio", "http"] as const) {
            assertEmpty(await entry(kind, [flag, value], o), c(`serve_${kind}.ts`), true, flag);
          }
          const args = opArgs(value).map((a) => (a === "--root" ? flag : a));
          const r = await runInProcess(args, { cwd, env: { HOME: L.home } });
          assertEmpty(r, c("op"), false, flag);
        }
      }
    }
  } finally {
    await L.cleanup();
  }
});

/** The op and client cases' assertions: each command's own error shape, exit 2, one message. */
function assertRuleError(o: Outcome, isOp: boolean, what: RegExp, ctx: string): void {
  assert.equal(o.code, 2, `${ctx}: exit ${o.code}, stderr ${o.stderr}`);
  assert.equal(o.stdout, "", `${ctx}: nothing ran`);
  const { error } = JSON.parse(o.stderr);
  // Each command's own error shape (op: the library's code; the client: its class), exit 2.
  if (isOp) assert.equal(error.code, "USAGE", ctx);
  else assert.deepEqual([error.class, error.exitCode], ["usage", 2], ctx);
  assert.match(error.message, /^refusing to serve /, ctx);
  assert.match(error.message, what, ctx);
  assert.match(error.message, /no --root was given|is relative to the directory/, ctx);
  assert.match(error.message, /serves this one on purpose/, ctx);
}

Deno.test("in process: op and the client's bundled server follow the servers' one rule: same exit code, same message", async () => {
  const L = await layout();
  try {
    const { home, project } = L;
    const info = ["op", "get_file_info", "path=."];
    const cases: [string, string[], string, RegExp][] = [
      ["op, no --root, from /", info, "/", /whole file system \(\/\)/],
      ["op, no --root, from $HOME", info, home, /your home directory/],
      ["op --root .. from a project", [...info, "--root", ".."], project, /home/],
      // Each root is checked, a --read-only-root after a literal --root too (decision 0064).
      [
        "op --root PROJECT --read-only-root .. from a project",
        [...info, "--root", project, "--read-only-root", ".."],
        project,
        /home/,
      ],
      ["tools list, no --root, from $HOME", ["tools", "list"], home, /your home directory/],
      ["server-info, no --root, from /", ["server-info"], "/", /whole file system/],
    ];
    for (const [ctx, args, cwd, what] of cases) {
      const o = await runInProcess(args, { cwd, env: { HOME: home } });
      assertRuleError(o, args[0] === "op", what, ctx);
    }
    // Named literally, or below $HOME, they run.
    const ok = await runInProcess([...info, "--root", home], { cwd: "/", env: { HOME: home } });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).type, "directory");
    const below = await runInProcess(["tools", "list", "--output", "json"], {
      cwd: project,
      env: { HOME: home },
    });
    assert.equal(below.code, 0, below.stderr);
    assert.ok(JSON.parse(below.stdout).tools.length > 0);
  } finally {
    await L.cleanup();
  }
});

Deno.test("the `cli` task starts cli.ts with at least the launcher's grants (so `task cli serve` is the launcher)", () => {
  // The serve:* tasks' flags are exactly launcherFlags() (server_flags_test.ts); the cli task
  // may grant more environment variables, never less, and the same run permission.
  const words = denoConfig.tasks.cli.split(/\s+/);
  assert.equal(words.at(-1), "cli.ts");
  const flag = (list: string[], name: string) =>
    new Set(list.find((w) => w.startsWith(`${name}=`))?.slice(name.length + 1).split(","));
  const mine = launcherFlags();
  for (const name of ["--allow-env", "--allow-run"]) {
    const cli = flag(words, name);
    for (const v of flag(mine, name)) assert.ok(cli.has(v), `${name} ${v}`);
  }
  assert.deepEqual(
    words.filter((w) => w.startsWith("--") && !/^--allow-(env|run)=/.test(w)),
    mine.filter((w) => !/^--allow-(env|run)=/.test(w)),
  );
});

Deno.test("real children: each way a server starts refuses each class once; --root names them on purpose", async () => {
  const L = await layout();
  try {
    const { home, users, project, linkedHome } = L;
    const e = env(home);
    // [what, args, cwd, environment, http, refusal]
    const refused: [string, string[], string, Record<string, string>, boolean, RegExp][] = [
      ["task serve:http from /", task("serve:http", "--port", "0"), "/", e, true, /whole file/],
      [
        "task serve:stdio from $HOME, HOME through a link",
        task("serve:stdio"),
        home,
        env(linkedHome),
        false,
        /your home directory/,
      ],
      [
        "task serve:stdio from above $HOME",
        task("serve:stdio"),
        users,
        e,
        false,
        /contains your home directory/,
      ],
      ["launcher stdio from $HOME", launcher("stdio"), home, e, false, /your home directory/],
      ["launcher stdio from above $HOME", launcher("stdio"), users, e, false, /contains your home/],
      ["serve_stdio.ts from /", direct("stdio", "/"), "/", e, false, /whole file system \(\/\)/],
      [
        "serve_stdio.ts from $HOME, HOME through a link",
        direct("stdio", `${home},${linkedHome}`),
        home,
        env(linkedHome),
        false,
        /your home directory/,
      ],
      [
        "serve_stdio.ts --root . from above $HOME",
        direct("stdio", "/", "--root", "."),
        users,
        e,
        false,
        /contains your home/,
      ],
      ["serve_http.ts from /", direct("http", "/"), "/", e, true, /whole file system \(\/\)/],
    ];
    const empty: [string, string[], string, boolean][] = [
      ["launcher http --root=", launcher("http", "--port", "0", "--root="), "/", true],
      ["serve_stdio.ts --root '  '", direct("stdio", "/", "--root", "  "), home, false],
      ["serve_http.ts --root ''", direct("http", "/", "--root", ""), "/", true],
      ["op --root ''", op(""), home, false],
    ];
    const served: [string, string[], string, string][] = [
      // --root / is explicit: it serves (under --sandbox auto, without the sandbox, which cannot
      // place its marker when / is the workspace).
      ["launcher --root /", launcher("stdio", "--root", "/"), home, "/"],
      ["task serve:stdio in a project below $HOME", task("serve:stdio"), project, project],
      ["serve_stdio.ts --root <above $HOME>", direct("stdio", "/", "--root", users), "/", users],
    ];
    // The launcher from / once in process too: the same bytes and exit code.
    const anchorReal = run(launcher("stdio"), { cwd: "/", env: e });
    const anchorEmpty = run(launcher("stdio", "--root", ""), { cwd: home, env: e });
    await Promise.all([
      ...refused.map(async ([ctx, args, cwd, env, http, what]) =>
        assertRefused(await run(args, { cwd, env, http }), what, ctx)
      ),
      ...empty.map(async ([ctx, args, cwd, http]) =>
        assertEmpty(await run(args, { cwd, env: e, http }), ctx, !ctx.startsWith("op"))
      ),
      ...served.map(async ([ctx, args, cwd, root]) =>
        assertServed(await run(args, { cwd, env: e }), root, ctx)
      ),
    ]);
    const real = await anchorReal;
    assertRefused(real, /whole file system \(\/\)/, "launcher stdio from /");
    const inProcess = await launcherIn("stdio", [], { cwd: "/", home });
    assert.deepStrictEqual(
      { code: inProcess.code, stdout: inProcess.stdout, stderr: inProcess.stderr },
      real,
      "launcher stdio from /: in process as in a real child",
    );
    const realEmpty = await anchorEmpty;
    assertEmpty(realEmpty, "launcher stdio --root '' from $HOME");
    const inProcessEmpty = await launcherIn("stdio", ["--root", ""], { cwd: home, home });
    assert.deepStrictEqual(
      { code: inProcessEmpty.code, stdout: inProcessEmpty.stdout, stderr: inProcessEmpty.stderr },
      realEmpty,
      "launcher stdio --root '': in process as in a real child",
    );
  } finally {
    await L.cleanup();
  }
});

Deno.test("real children: op and the client through the router refuse with their own error shape", async () => {
  const L = await layout();
  try {
    const e = env(L.home);
    const info = ["op", "get_file_info", "path=."];
    const cases: [string, string[], string, RegExp][] = [
      ["op, no --root, from $HOME", routed(...info), L.home, /your home directory/],
      ["tools list, no --root, from $HOME", routed("tools", "list"), L.home, /your home directory/],
      ["server-info, no --root, from /", routed("server-info"), "/", /whole file system/],
    ];
    await Promise.all(cases.map(async ([ctx, args, cwd, what]) => {
      assertRuleError(await run(args, { cwd, env: e }), args.includes("op"), what, ctx);
    }));
  } finally {
    await L.cleanup();
  }
});
