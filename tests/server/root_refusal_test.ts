/**
 * A server whose root was not given (no --root: the invocation directory) refuses `/` and the
 * home directory (links resolved), exit 2, through every way a server starts: the deno tasks,
 * `cli serve`, the launcher run directly and the server entries run directly; --root names
 * them on purpose. Real child processes, started in / and in a temporary HOME.
 */
import assert from "node:assert/strict";
import { SERVE_HTTP, SERVE_STDIO } from "./_harness.ts";
import { cliArgv } from "../_support/cli.ts";
import { launcherFlags } from "../../src/cli/host_config.ts";

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
 * Runs a server command in cwd. stdio servers get one initialize and then EOF (they exit when
 * stdin closes); an HTTP server that starts is stopped once its ready line is out.
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
const launcher = (kind: "stdio" | "http", ...rest: string[]) =>
  cliArgv(launcherFlags(), ["serve", kind, ...rest]);

function assertRefused(o: Outcome, what: RegExp, ctx: string): void {
  assert.equal(o.code, 2, `${ctx}: exit ${o.code}, stderr ${o.stderr}`);
  assert.match(o.stderr, /refusing to serve/, ctx);
  assert.match(o.stderr, what, ctx);
  assert.match(o.stderr, /--root/, ctx);
  assert.equal(o.stdout, "", `${ctx}: nothing served`);
}

function assertServed(o: Outcome, root: string, ctx: string): void {
  assert.ok(o.stdout.includes("\n"), `${ctx}: no answer; exit ${o.code}, stderr ${o.stderr}`);
  const first = JSON.parse(o.stdout.slice(0, o.stdout.indexOf("\n")));
  if (first.event !== "ready") assert.equal(first.result.serverInfo.name, "wmcp", ctx);
  assert.ok(o.stderr.includes(`serving ${root}`) || first.event === "ready", `${ctx}: ${o.stderr}`);
}

async function tempHome(): Promise<{ home: string; cleanup: () => Promise<void> }> {
  const home = Deno.realPathSync(await Deno.makeTempDir({ prefix: "wmcp-home-" }));
  return { home, cleanup: () => Deno.remove(home, { recursive: true }) };
}

Deno.test("no --root, started in /: every server form refuses the whole file system (exit 2)", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const e = env(home);
    const forms: [string, string[], boolean][] = [
      ["task serve:stdio", ["task", "-q", "--config", DENO_JSON, "serve:stdio"], false],
      ["task serve:http", ["task", "-q", "--config", DENO_JSON, "serve:http", "--port", "0"], true],
      [
        "task cli serve stdio",
        ["task", "-q", "--config", DENO_JSON, "cli", "serve", "stdio"],
        false,
      ],
      ["launcher stdio", launcher("stdio"), false],
      ["launcher http", launcher("http", "--port", "0"), true],
      [
        "serve_stdio.ts",
        ["run", "--no-prompt", "--allow-read=/", "--allow-env=INIT_CWD,HOME", SERVE_STDIO],
        false,
      ],
      [
        "serve_http.ts",
        [
          "run",
          "--no-prompt",
          "--allow-read=/",
          "--allow-env=INIT_CWD,HOME",
          "--allow-net=127.0.0.1",
          SERVE_HTTP,
          "--port",
          "0",
        ],
        true,
      ],
    ];
    for (const [ctx, args, http] of forms) {
      assertRefused(await run(args, { cwd: "/", env: e, http }), /whole file system \(\/\)/, ctx);
    }
    // --root / is explicit: it serves (under --sandbox auto, without the sandbox, which cannot
    // place its marker when / is the workspace).
    const explicit = await run(launcher("stdio", "--root", "/"), { cwd: home, env: e });
    assertServed(explicit, "/", "launcher --root /");
  } finally {
    await cleanup();
  }
});

Deno.test("no --root, started in $HOME (or a link to it): refused; --root $HOME serves", async () => {
  const { home, cleanup } = await tempHome();
  const links = Deno.realPathSync(await Deno.makeTempDir({ prefix: "wmcp-links-" }));
  try {
    const linkedHome = `${links}/home`;
    await Deno.symlink(home, linkedHome);
    // HOME spelled through a link while the start directory is its real path, and the reverse
    // (INIT_CWD spelled through the link, as a shell's $PWD would be).
    const variants: [string, Record<string, string>][] = [
      ["HOME real", env(home)],
      ["HOME through a link", env(linkedHome)],
    ];
    for (const [name, e] of variants) {
      const forms: [string, string[], boolean][] = [
        ["task serve:stdio", ["task", "-q", "--config", DENO_JSON, "serve:stdio"], false],
        [
          "task serve:http",
          ["task", "-q", "--config", DENO_JSON, "serve:http", "--port", "0"],
          true,
        ],
        ["launcher stdio", launcher("stdio"), false],
        [
          "serve_stdio.ts",
          [
            "run",
            "--no-prompt",
            `--allow-read=${home},${linkedHome}`,
            "--allow-env=INIT_CWD,HOME",
            SERVE_STDIO,
          ],
          false,
        ],
      ];
      for (const [ctx, args, http] of forms) {
        assertRefused(
          await run(args, { cwd: home, env: e, http }),
          /your home directory/,
          `${name}, ${ctx}`,
        );
      }
    }
    const viaInitCwd = await run(launcher("stdio"), {
      cwd: "/",
      env: env(home, { INIT_CWD: linkedHome }),
    });
    assertRefused(viaInitCwd, /your home directory/, "INIT_CWD through a link");
    // Explicit: --root names the home directory on purpose.
    const explicit = await run(launcher("stdio", "--root", home), { cwd: "/", env: env(home) });
    assertServed(explicit, home, "launcher --root $HOME");
    // Any other directory without --root is still the default workspace.
    const project = `${home}/project`;
    await Deno.mkdir(project);
    const inProject = await run(["task", "-q", "--config", DENO_JSON, "serve:stdio"], {
      cwd: project,
      env: env(home),
    });
    assertServed(inProject, project, "task serve:stdio in a project below $HOME");
  } finally {
    await cleanup();
    await Deno.remove(links, { recursive: true });
  }
});

/** Runs `cli.ts op get_file_info --root VALUE` (a person's command: the broad rule does not apply). */
const op = (root: string) =>
  cliArgv(["--no-prompt", "--allow-read=/", "--allow-env=INIT_CWD,HOME"], [
    "op",
    "get_file_info",
    "--root",
    root,
    "--arguments",
    '{"path":"."}',
  ]);

Deno.test("an empty or blank --root is a usage error (exit 2) everywhere, never the start directory", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const e = env(home);
    for (const value of ["", "  "]) {
      const forms: [string, string[], boolean][] = [
        ["launcher stdio", launcher("stdio", "--root", value), false],
        ["launcher http", launcher("http", "--port", "0", `--root=${value}`), true],
        [
          "serve_stdio.ts",
          [
            "run",
            "--no-prompt",
            "--allow-read=/",
            "--allow-env=INIT_CWD,HOME",
            SERVE_STDIO,
            "--root",
            value,
          ],
          false,
        ],
        [
          "serve_http.ts",
          [
            "run",
            "--no-prompt",
            "--allow-read=/",
            "--allow-env=INIT_CWD,HOME",
            "--allow-net=127.0.0.1",
            SERVE_HTTP,
            "--port",
            "0",
            "--root",
            value,
          ],
          true,
        ],
        ["op", op(value), false],
      ];
      for (const [ctx, args, http] of forms) {
        // From a harmless directory too: the empty value must not fall back to it.
        for (const cwd of ["/", home]) {
          const o = await run(args, { cwd, env: e, http });
          const c = `${ctx} --root ${JSON.stringify(value)} from ${cwd}`;
          assert.equal(o.code, 2, `${c}: exit ${o.code}, stderr ${o.stderr}`);
          assert.match(o.stderr, /--root is empty/, c);
          if (ctx !== "op") assert.equal(o.stdout, "", `${c}: nothing served`);
        }
      }
    }
  } finally {
    await cleanup();
  }
});

Deno.test("a relative --root resolving to /, $HOME or above $HOME is refused; the literal absolute path serves", async () => {
  // HOME is <base>/users/you: <base>/users contains it, as /home or /Users does.
  const { home: base, cleanup } = await tempHome();
  try {
    const users = `${base}/users`;
    const home = `${users}/you`;
    await Deno.mkdir(`${home}/project`, { recursive: true });
    const e = env(home);
    const direct = (root: string) => [
      "run",
      "--no-prompt",
      "--allow-read=/",
      "--allow-env=INIT_CWD,HOME",
      SERVE_STDIO,
      "--root",
      root,
    ];
    const refused: [string, string[], string, RegExp][] = [
      ["launcher --root . from /", launcher("stdio", "--root", "."), "/", /whole file system/],
      ["serve_stdio.ts --root . from /", direct("."), "/", /whole file system/],
      ["launcher --root . from $HOME", launcher("stdio", "--root", "."), home, /home directory/],
      [
        "launcher --root .. from a project",
        launcher("stdio", "--root", ".."),
        `${home}/project`,
        /home directory/,
      ],
      [
        "launcher --root=./ from above $HOME",
        launcher("stdio", "--root=./"),
        users,
        /contains your home directory/,
      ],
      ["serve_stdio.ts --root . from above $HOME", direct("."), users, /contains your home/],
      [
        "launcher --root with .. parts",
        launcher("stdio", "--root", `${home}/project/..`),
        "/",
        /home directory/,
      ],
      [
        "task serve:stdio from above $HOME, no --root",
        ["task", "-q", "--config", DENO_JSON, "serve:stdio"],
        users,
        /contains your home directory/,
      ],
      ["launcher, no --root, from above $HOME", launcher("stdio"), users, /contains your home/],
    ];
    for (const [ctx, args, cwd, what] of refused) {
      const o = await run(args, { cwd, env: e });
      assertRefused(o, what, ctx);
      assert.match(o.stderr, /absolute path/, ctx);
    }
    // Given literally, the same directories serve on purpose; a relative root below $HOME serves.
    const served: [string, string[], string, string][] = [
      ["launcher --root /", launcher("stdio", "--root", "/"), home, "/"],
      ["launcher --root <above $HOME>", launcher("stdio", "--root", users), "/", users],
      ["launcher --root $HOME/", launcher("stdio", "--root", `${home}/`), "/", home],
      ["serve_stdio.ts --root <above $HOME>", direct(users), "/", users],
      [
        "launcher --root project from $HOME",
        launcher("stdio", "--root", "project"),
        home,
        `${home}/project`,
      ],
    ];
    for (const [ctx, args, cwd, root] of served) {
      assertServed(await run(args, { cwd, env: e }), root, ctx);
    }
  } finally {
    await cleanup();
  }
});

Deno.test("op and the client's bundled server follow the servers' one rule: same exit code, same message", async () => {
  const { home, cleanup } = await tempHome();
  try {
    await Deno.mkdir(`${home}/project`);
    const e = env(home);
    // The router as the `cli` task starts it: the command runs in its scoped child.
    const routed = (...args: string[]) => cliArgv(["--no-prompt", "--allow-all"], args);
    const info = ["op", "get_file_info", "path=."];
    const cases: [string, string[], string, RegExp][] = [
      ["op, no --root, from /", routed(...info), "/", /whole file system \(\/\)/],
      ["op, no --root, from $HOME", routed(...info), home, /your home directory/],
      ["op --root .. from a project", routed(...info, "--root", ".."), `${home}/project`, /home/],
      ["tools list, no --root, from $HOME", routed("tools", "list"), home, /your home directory/],
      ["server-info, no --root, from /", routed("server-info"), "/", /whole file system/],
    ];
    for (const [ctx, args, cwd, what] of cases) {
      const o = await run(args, { cwd, env: e });
      assert.equal(o.code, 2, `${ctx}: exit ${o.code}, stderr ${o.stderr}`);
      assert.equal(o.stdout, "", `${ctx}: nothing ran`);
      const { error } = JSON.parse(o.stderr);
      // Each command's own error shape (op: the library's code; the client: its class), exit 2.
      if (args.includes("op")) assert.equal(error.code, "USAGE", ctx);
      else assert.deepEqual([error.class, error.exitCode], ["usage", 2], ctx);
      assert.match(error.message, /^refusing to serve /, ctx);
      assert.match(error.message, what, ctx);
      assert.match(error.message, /no --root was given|is relative to the directory/, ctx);
      assert.match(error.message, /serves this one on purpose/, ctx);
    }
    // Named literally, or below $HOME, they run.
    const ok = await run(routed("op", "get_file_info", "path=.", "--root", home), {
      cwd: "/",
      env: e,
    });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).type, "directory");
    const below = await run(routed("tools", "list", "--output", "json"), {
      cwd: `${home}/project`,
      env: e,
    });
    assert.equal(below.code, 0, below.stderr);
    assert.ok(JSON.parse(below.stdout).tools.length > 0);
  } finally {
    await cleanup();
  }
});
