/**
 * Issue 10 §2 as a user meets it: --help on every command and subcommand (under WMCP_PROG), `op
 * NAME --help` from the schema, -V everywhere, did-you-mean for commands, subcommands, flags,
 * operations, tools and argument keys (the same class and exit code in `op` and `tools call`), and
 * the key=value / key:=json shorthand.
 *
 * What a command answers is checked with `main` run in this process (`inProcess`,
 * tests/_support/in_process.ts) where no server is involved; each test that does so also runs one
 * of its cases through a real child of cli.ts and asserts the same output, and what involves a
 * server, the top-level -V of cli.ts, a broad root or a closed pipe runs real children only.
 */
import assert from "node:assert/strict";
import denoConfig from "../../deno.json" with { type: "json" };
import { type ClientResult, describe, runClient } from "../client/_client.ts";
import { makeTree, withTempDir } from "../workspace/_helpers.ts";
import { parseShorthand } from "../../src/cli/arguments.ts";
import { closest, didYouMean } from "../../src/cli/suggest.ts";
import { UsageError } from "../../src/config.ts";
import { pool } from "../_support/pool.ts";
import { cliArgv, shellQuote } from "../_support/cli.ts";
import { runInProcess } from "../_support/in_process.ts";

/** A run of main in this process, with runClient's options (the read list is for real runs). */
const inProcess = (args: string[], options: { env?: Record<string, string>; cwd?: string } = {}) =>
  runInProcess(args, { env: options.env, cwd: options.cwd });

/** The same case through a real child gives the same answer as in process. */
async function sameAsReal(
  args: string[],
  options: { read: string[]; env?: Record<string, string> },
) {
  const [real, here] = [await runClient(args, options), await inProcess(args, options)];
  assert.equal(here.code, real.code, describe(real));
  assert.equal(here.stdout, real.stdout);
  assert.equal(here.stderr, real.stderr);
}

/** The one JSON error object on stderr of a failed run (nothing on stdout). */
// deno-lint-ignore no-explicit-any
function errorOf(r: ClientResult, exit: number): any {
  assert.equal(r.code, exit, describe(r));
  assert.equal(r.stdout, "", describe(r));
  const parsed = JSON.parse(r.stderr);
  assert.deepStrictEqual(Object.keys(parsed), ["error"], describe(r));
  return parsed.error;
}

const HELP_PATHS = [
  [],
  ["op"],
  ["op", "list"],
  ["serve"],
  ["serve", "stop"],
  ["config"],
  ["config", "print"],
  ["server-info"],
  ["tools"],
  ["tools", "list"],
  ["tools", "show"],
  ["tools", "call"],
  ["tools", "run"],
  ["resources"],
  ["resources", "list"],
  ["resources", "templates"],
  ["resources", "read"],
  ["prompts"],
  ["prompts", "list"],
  ["prompts", "get"],
  ["ping"],
  ["auth"],
  ["auth", "login"],
  ["auth", "status"],
  ["auth", "logout"],
  ["completion"],
];

Deno.test("help: every command and subcommand answers --help and -h on stdout, exit 0, under WMCP_PROG", async () => {
  await withTempDir(async (dir) => {
    const runs = HELP_PATHS.flatMap((p) => [[...p, "--help"], [...p, "-h"]]);
    const results = await pool(
      runs,
      1,
      (args) => inProcess(args, { env: { WMCP_PROG: "mywmcp" } }),
    );
    await sameAsReal(["tools", "call", "--help"], { read: [dir], env: { WMCP_PROG: "mywmcp" } });
    for (const [i, args] of runs.entries()) {
      const r = results[i];
      const label = args.join(" ");
      assert.equal(r.code, 0, `${label}: ${describe(r)}`);
      assert.equal(r.stderr, "", label);
      assert.match(r.stdout, /Usage:/, label);
      assert.match(r.stdout, /Examples?:\n {2}(mywmcp|printf)/, label);
      // The name the user typed, never cli.ts.
      assert.ok(!r.stdout.includes("cli.ts"), label);
      const path = args.slice(0, -1).join(" ");
      if (path !== "") assert.ok(r.stdout.includes(`mywmcp ${path}`), label);
    }
    // Each subcommand's help is its own, not its parent's.
    const at = (p: string[]) =>
      results[runs.findIndex((a) => a.join(" ") === [...p, "--help"].join(" "))];
    assert.notEqual(at(["tools", "call"]).stdout, at(["tools"]).stdout);
    assert.match(at(["tools", "call"]).stdout, /key:=json/);
    assert.match(at(["serve", "stop"]).stdout, /--pid-file FILE/);
    assert.match(at(["config", "print"]).stdout, /claude-desktop/);
    assert.match(at(["auth", "logout"]).stdout, /--all/);
    assert.notEqual(at(["resources", "read"]).stdout, at(["resources"]).stdout);
    assert.match(at(["resources", "read"]).stdout, /binary ones as a note/);
    assert.match(at(["prompts", "get"]).stdout, /--skip-local-validation/);
    assert.match(at(["resources", "templates"]).stdout, /--single-page/);
    assert.match(at(["ping"]).stdout, /server\/discover/);
    // `help COMMAND` is the same text; the program name defaults to wmcp.
    const [viaWord, plain] = await Promise.all([
      inProcess(["help", "tools"], { env: { WMCP_PROG: "mywmcp" } }),
      inProcess(["op", "--help"]),
    ]);
    assert.equal(viaWord.stdout, at(["tools"]).stdout);
    assert.match(plain.stdout, /^ {2}wmcp op read_file path=README\.md/m);
  });
});

Deno.test("help: op NAME --help lists the operation's arguments from its JSON Schema", async () => {
  await withTempDir(async (dir) => {
    const [read, list, write, unknown] = await Promise.all([
      inProcess(["op", "read_file", "--help"]),
      inProcess(["op", "list_directory", "-h", "--root", dir]),
      inProcess(["op", "write_file", "--help"]),
      inProcess(["op", "reed_file", "--help"]),
    ]);
    await sameAsReal(["op", "reed_file", "--help"], { read: [dir] });
    assert.equal(read.code, 0, describe(read));
    assert.match(read.stdout, /^Usage: wmcp op read_file /);
    assert.match(read.stdout, /^ {2}path {7}string {3}required {2}Workspace-relative path/m);
    assert.match(read.stdout, /^ {2}startLine {2}integer {2}optional {2}First line to return/m);
    assert.match(read.stdout, /^ {2}maxBytes /m);
    assert.match(read.stdout, /Annotations: read-only, idempotent/);
    assert.match(read.stdout, /wmcp op read_file path=README\.md startLine:=10 endLine:=20/);
    assert.equal(list.code, 0, describe(list));
    assert.match(list.stdout, /^ {2}depth +integer +default 1 /m);
    assert.match(list.stdout, /^ {2}path +string +default "\." /m);
    assert.equal(write.code, 0, describe(write));
    assert.match(write.stdout, /Annotations: writes, destructive, idempotent, needs --write/);
    assert.match(write.stdout, /^ {2}ifExists +"error"\|"overwrite" +default "error"/m);
    const e = errorOf(unknown, 2);
    assert.equal(e.code, "USAGE");
    assert.match(e.message, /unknown operation "reed_file" \(did you mean read_file\?\)/);
  });
});

Deno.test("help: tools call NAME --help shows the tool's arguments as the server lists them", async () => {
  await withTempDir(async (dir) => {
    const [help, missing] = await Promise.all([
      inProcess(["tools", "call", "read_file", "--help", "--root", dir]),
      inProcess(["tools", "call", "raed_file", "-h", "--root", dir]),
    ]);
    await sameAsReal(["tools", "call", "raed_file", "-h", "--root", dir], { read: [dir] });
    assert.equal(help.code, 0, describe(help));
    assert.match(help.stdout, /^Usage: wmcp tools call read_file /);
    assert.match(help.stdout, /^ {2}path {7}string {3}required {2}Workspace-relative path/m);
    assert.match(help.stdout, /^ {2}endLine {4}integer {2}optional/m);
    assert.match(help.stdout, /Annotations: read-only, idempotent/);
    // The example carries the connection flags given: pasted, it talks to the same server.
    assert.match(
      help.stdout,
      new RegExp(`Example:\\n {2}wmcp tools call read_file --root ${shellQuote(dir)} path=PATH\\n`),
    );
    const e = errorOf(missing, 2);
    assert.equal(
      e.message,
      'no tool named "raed_file" (did you mean read_file?); see `wmcp tools list`',
    );
  });
});

Deno.test("tools show for people is the tool's help (arguments table, example) and its result keys", async () => {
  await withTempDir(async (dir) => {
    const [show, help, json] = await Promise.all([
      inProcess(["tools", "show", "read_file", "--root", dir, "--output", "pretty"]),
      inProcess(["tools", "call", "read_file", "--help", "--root", dir]),
      inProcess(["tools", "show", "read_file", "--root", dir, "--output", "json"]),
    ]);
    assert.equal(show.code, 0, describe(show));
    assert.ok(show.stdout.startsWith(help.stdout), show.stdout);
    assert.match(show.stdout, /^ {2}path {7}string {3}required {2}Workspace-relative path/m);
    assert.match(show.stdout, /\nStructured result: .*\bcontent\b.*\bsha256\b/);
    // The JSON outputs are unchanged: one lossless envelope line.
    const envelope = JSON.parse(json.stdout);
    assert.equal(envelope.operation, "tools/show");
    assert.equal(envelope.tool.name, "read_file");
    // A real run prints the same for people.
    await sameAsReal(["tools", "show", "read_file", "--root", dir, "--output", "pretty"], {
      read: [dir],
    });
  });
});

/** The words `sh` reads from a command line (the line as a user pastes it). */
async function shellWords(line: string): Promise<string[]> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", `for w in ${line}; do printf '%s\\0' "$w"; done`],
    stdout: "piped",
  }).output();
  assert.ok(out.success);
  return new TextDecoder().decode(out.stdout).split("\0").slice(0, -1);
}

Deno.test("help: a client command's examples carry the connection flags given (quoted, secrets redacted)", async () => {
  await withTempDir(async (dir) => {
    // A server whose tool name, argument key and default would run as shell code unquoted, and
    // whose description holds a terminal escape; its config in a directory with a space.
    const configDir = `${dir}/my "configs"`;
    await Deno.mkdir(configDir);
    const pages = `${configDir}/pages.json`;
    const evil = "it's;touch pwned";
    await Deno.writeTextFile(
      pages,
      JSON.stringify([{
        requestCursor: null,
        result: {
          tools: [{
            name: evil,
            description: "red \u001b[31mtext",
            inputSchema: {
              type: "object",
              properties: { "a b": { type: "string", default: "$(x) `y`" } },
              required: ["a b"],
            },
          }],
        },
      }]),
    );
    const config = `${configDir}/mcp.json`;
    const fixture = new URL("../client/fixtures/paging_server.ts", import.meta.url).pathname;
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        mcpServers: {
          fake: { command: Deno.execPath(), args: ["run", "-A", fixture, "--pages", pages] },
        },
      }),
    );
    const secretUrl = "http://user:pw0rd@127.0.0.1:9/mcp?token=s3cret#frag";
    const [dynamic, show, call, list] = await Promise.all([
      runClient(["tools", "call", evil, "--help", "--config", config, "--server", "fake"], {
        read: [dir],
      }),
      runClient(["tools", "show", "--help", `--endpoint=${secretUrl}`, "--no-auth"], {
        read: [dir],
      }),
      runClient(["tools", "call", "--help", "--config", config, "--server", "fake"], {
        read: [dir],
      }),
      runClient(["tools", "list", "-h", "--root", dir, "--write", "--output", "json"], {
        read: [dir],
      }),
    ]);
    const examples = (r: ClientResult) => {
      assert.equal(r.code, 0, describe(r));
      assert.equal(r.stderr, "", describe(r));
      const at = r.stdout.search(/^Examples?:$/m);
      assert.ok(at >= 0, describe(r));
      return r.stdout.slice(at).split("\n").slice(1).filter((l) => l !== "").map((l) => l.trim());
    };
    // `tools call NAME --help`: pasted, the example is exactly these words (nothing runs).
    const [derived] = examples(dynamic);
    assert.deepEqual(await shellWords(derived), [
      "wmcp",
      "tools",
      "call",
      evil,
      "--config",
      config,
      "--server",
      "fake",
      "a b=$(x) `y`",
    ]);
    assert.match(dynamic.stdout, /^Usage: wmcp tools call 'it'\\''s;touch pwned' /);
    assert.ok(!dynamic.stdout.includes("\x1b"), "the server's escape reaches no terminal");
    assert.match(dynamic.stdout, /red \\u001b\[31mtext/);
    // The static help of `tools show` / `tools call`: every example with the user's connection,
    // a URL shown as client messages show it (no userinfo, query values ***, no fragment).
    assert.deepEqual(examples(show), [
      "wmcp tools show read_file --endpoint 'http://127.0.0.1:9/mcp?token=***' --no-auth",
    ]);
    assert.ok(!show.stdout.includes("s3cret") && !show.stdout.includes("pw0rd"));
    const callExamples = examples(call);
    assert.equal(callExamples.length, 3);
    for (const e of callExamples) {
      const words = await shellWords(e);
      assert.deepEqual(words.slice(words.indexOf("--config"), words.indexOf("--config") + 4), [
        "--config",
        config,
        "--server",
        "fake",
      ], e);
      assert.ok(!words.includes("--root") && !words.includes("--endpoint"), e);
    }
    assert.ok(callExamples.includes(
      `wmcp tools call read_file --help --config ${shellQuote(config)} --server fake`,
    ));
    // --output is not a connection flag: an example keeps its own.
    assert.deepEqual(examples(list), [
      `wmcp tools list --root ${shellQuote(dir)} --write`,
      `wmcp tools list --root ${shellQuote(dir)} --write --output json`,
    ]);
  });
});

Deno.test("help: -V and --version on every command print the version, exit 0", async () => {
  await withTempDir(async (dir) => {
    const runs = [
      ["-V"],
      ["--version"],
      ["op", "-V"],
      ["op", "read_file", "--version", "--root", dir],
      ["tools", "call", "read_file", "-V"],
      ["server-info", "--version"],
      ["auth", "login", "-V"],
      ["serve", "stop", "--version"],
      ["config", "print", "-V"],
    ];
    // cli.ts answers the first two itself, before the router: real children.
    const results = await pool(
      runs,
      1,
      (args, i) => i < 2 ? runClient(args, { read: [dir] }) : inProcess(args),
    );
    for (const [i, r] of results.entries()) {
      assert.equal(r.code, 0, `${runs[i].join(" ")}: ${describe(r)}`);
      assert.equal(r.stdout, `${denoConfig.version}\n`, runs[i].join(" "));
      assert.equal(r.stderr, "");
    }
  });
});

Deno.test("suggest: misspelled commands, subcommands and flags get did-you-mean and a --help pointer, exit 2", async () => {
  await withTempDir(async (dir) => {
    const cases: [string[], RegExp, string][] = [
      [["tols", "list"], /unknown command "tols" \(did you mean tools\?\)/, "wmcp --help"],
      [
        ["tools", "lst"],
        /unknown subcommand tools "lst" \(did you mean list\?\)/,
        "wmcp tools --help",
      ],
      [
        ["resources", "raed"],
        /unknown subcommand resources "raed" \(did you mean read\?\)/,
        "wmcp resources --help",
      ],
      [
        ["prompts", "gte", "x"],
        /unknown subcommand prompts "gte" \(did you mean get\?\)/,
        "wmcp prompts --help",
      ],
      [["pnig"], /unknown command "pnig" \(did you mean ping\?\)/, "wmcp --help"],
      [
        ["prompts", "list", "--singel-page"],
        /unknown flag --singel-page \(did you mean --single-page\?\)/,
        "wmcp prompts list --help",
      ],
      [
        ["ping", "--timout", "3"],
        /unknown flag --timout \(did you mean --timeout\?\)/,
        "wmcp ping --help",
      ],
      [
        ["auth", "logut"],
        /unknown subcommand auth "logut" \(did you mean logout\?\)/,
        "wmcp auth --help",
      ],
      [
        ["serve", "stp"],
        /unknown subcommand serve "stp" \(did you mean stop\?\)/,
        "wmcp serve --help",
      ],
      [
        ["config", "prnt"],
        /unknown subcommand config "prnt" \(did you mean print\?\)/,
        "wmcp config --help",
      ],
      [
        ["op", "read_file", "--roo", dir],
        /unknown flag --roo \(did you mean --root\?\)/,
        "wmcp op --help",
      ],
      [
        ["op", "list", "--wirte"],
        /unknown flag --wirte \(did you mean --write\?\)/,
        "wmcp op --help",
      ],
      [
        ["tools", "list", "--edpoint", "http://127.0.0.1:9/"],
        /unknown flag --edpoint \(did you mean --endpoint\?\)/,
        "wmcp tools list --help",
      ],
      [
        ["serve", "stop", "--pidfile", "x"],
        /unknown flag --pidfile \(did you mean --pid-file\?\)/,
        "wmcp serve stop --help",
      ],
      [
        ["config", "print", "--hots", "vscode"],
        /unknown flag --hots \(did you mean --host\?\)/,
        "wmcp config print --help",
      ],
      [
        ["auth", "status", "--ouput", "json"],
        /unknown flag --ouput \(did you mean --output\?\)/,
        "wmcp auth status --help",
      ],
      [
        ["op", "serch_text"],
        /unknown operation "serch_text" \(did you mean search_text\?\)/,
        "wmcp op --help",
      ],
      [["op", "lst"], /unknown operation "lst" \(did you mean list\?\)/, "wmcp op --help"],
      // A swap of neighbours is one edit; a prefix of a flag names the flag.
      [
        ["tools", "shwo"],
        /unknown subcommand tools "shwo" \(did you mean show\?\)/,
        "wmcp tools --help",
      ],
      [
        ["tools", "list", "--connect", "5"],
        /^unknown flag --connect \(did you mean --connect-timeout\?\)/,
        "wmcp tools list --help",
      ],
      // The server flags: the same module, the same wording, the command as typed.
      [
        ["serve", "http", "--shutdown", "5"],
        /^unknown flag --shutdown \(did you mean --shutdown-timeout\?\); see/,
        "wmcp serve http --help",
      ],
      [
        ["serve", "stdio", "--prot", "5"],
        /^unknown flag --prot; see/,
        "wmcp serve stdio --help",
      ],
      [
        ["serve", "stdio", "--port", "5"],
        /^--port is a flag of the HTTP server; wmcp serve stdio does not take it; see/,
        "wmcp serve stdio --help",
      ],
      [
        ["config", "print", "--host", "vscdoe", "--root", dir],
        /^unknown --host "vscdoe" \(did you mean vscode\?\); --host takes claude-desktop, /,
        "wmcp config print --help",
      ],
      [["op", "read_file", "--root"], /--root needs a value/, "wmcp op --help"],
    ];
    const results = await pool(cases, 1, ([args]) => inProcess(args));
    await sameAsReal(cases[0][0], { read: [dir] });
    for (const [i, [args, pattern, help]] of cases.entries()) {
      const e = errorOf(results[i], 2);
      assert.ok(e.code === "USAGE" || e.class === "usage", args.join(" "));
      assert.match(e.message, pattern, args.join(" "));
      assert.ok(e.message.endsWith(`; see \`${help}\``), `${args.join(" ")}: ${e.message}`);
    }
    // A sentence ending in a full stop keeps one mark before the pointer (no ".;").
    const home = errorOf(
      await runClient(["serve", "stdio"], { read: [dir], cwd: dir, env: { HOME: dir } }),
      2,
    );
    assert.match(home.message, /serves this one on purpose; see `wmcp serve stdio --help`$/);
    // Nothing close: no suggestion, still the pointer.
    const flag = errorOf(await inProcess(["--hlep"]), 2);
    assert.equal(flag.message, "unknown flag --hlep (did you mean --help?); see `wmcp --help`");
    const far = errorOf(await inProcess(["zzzzzz"]), 2);
    assert.equal(far.message, 'unknown command "zzzzzz"; see `wmcp --help`');
  });
});

Deno.test("suggest: a write tool of the bundled read-only server says to pass --write, as op does (exit 2)", async () => {
  await withTempDir(async (dir) => {
    const root = ["--root", dir];
    const [op, call, show, help, run, misspelt, written] = await Promise.all([
      inProcess(["op", "write_file", ...root, "path=a.txt", "content=x"]),
      inProcess(["tools", "call", "write_file", ...root, "path=a.txt", "content=x"]),
      inProcess(["tools", "show", "delete_path", ...root]),
      inProcess(["tools", "call", "create_directory", "--help", ...root]),
      // Its request comes on stdin: a real child.
      runClient(["tools", "run", "-", ...root], {
        read: [dir],
        stdin: '{"name":"move_path","arguments":{"source":"a","destination":"b"}}\n',
      }),
      inProcess(["tools", "call", "raed_file", ...root, "path=a.txt"]),
      // A real child (the write goes through the router's grants).
      runClient(["tools", "call", "write_file", ...root, "--write", "path=b.txt", "content=x"], {
        read: [dir],
      }),
    ]);
    // op's sentence (READ_ONLY, exit 1) is the source of the client's hint.
    assert.equal(op.code, 1, describe(op));
    const sentence = JSON.parse(op.stderr).error.message;
    assert.equal(
      sentence,
      "write_file needs writing, which is disabled for this workspace (start with --write)",
    );
    const hinted = (r: ClientResult, name: string) => {
      const e = errorOf(r, 2);
      assert.equal(e.class, "usage");
      assert.equal(
        e.message,
        `no tool named "${name}": ${sentence.replaceAll("write_file", name)}; ` +
          "see `wmcp tools list --write`",
      );
    };
    hinted(call, "write_file");
    hinted(show, "delete_path");
    hinted(help, "create_directory");
    // tools run: the line's envelope says it, exit 2 (the worst line).
    assert.equal(run.code, 2, describe(run));
    assert.equal(
      JSON.parse(run.stdout).clientError.message,
      `no tool named "move_path": ${sentence.replaceAll("write_file", "move_path")}`,
    );
    // Not a write operation: the list is the pointer, as before; with --write it runs.
    assert.equal(
      errorOf(misspelt, 2).message,
      'no tool named "raed_file" (did you mean read_file?); see `wmcp tools list`',
    );
    assert.equal(written.code, 0, describe(written));
    assert.equal(await Deno.readTextFile(`${dir}/b.txt`), "x");
  });
});

Deno.test("suggest: the same argument mistake is the same class and exit code in op and tools call", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "one\ntwo\nthree\n" });
    const op = (extra: string[]) => inProcess(["op", "read_file", "--root", dir, ...extra]);
    const call = (extra: string[]) =>
      inProcess(["tools", "call", "read_file", "--root", dir, "--output", "json", ...extra]);
    const [
      opKey,
      callKey,
      opJsonKey,
      callJsonKey,
      opType,
      callType,
      opRange,
      callRange,
      callNoTool,
    ] = await pool(
      [
        () => op(["pth=a.txt"]),
        () => call(["pth=a.txt"]),
        () => op(["--arguments", '{"path":"a.txt","endLnie":2}']),
        () => call(["--arguments", '{"path":"a.txt","endLnie":2}']),
        () => op(["path:=5"]),
        () => call(["path:=5"]),
        // A refinement JSON Schema cannot express: the operation (or the server) refuses it.
        () => op(["path=a.txt", "startLine:=3", "endLine:=2"]),
        () => call(["path=a.txt", "startLine:=3", "endLine:=2"]),
        () => inProcess(["tools", "call", "raed_file", "--root", dir, "path=a.txt"]),
      ],
      1,
      (f) => f(),
    );

    // Unknown key: exit 2, usage, the key named with its suggestion, in the same words.
    const sentence = "unknown argument: `pth` (did you mean `path`?)";
    const ok = errorOf(opKey, 2);
    assert.equal(ok.code, "INVALID_ARGUMENT");
    assert.equal(ok.argument, "pth");
    assert.equal(ok.message, `${sentence}; see \`wmcp op read_file --help\``);
    const ck = errorOf(callKey, 2);
    assert.equal(ck.class, "usage");
    assert.equal(ck.details.argument, "pth");
    assert.equal(
      ck.message,
      `arguments do not match read_file's inputSchema: ${sentence}; see \`wmcp tools call read_file --help\``,
    );
    assert.equal(errorOf(opJsonKey, 2).argument, "endLnie");
    assert.match(errorOf(opJsonKey, 2).message, /`endLnie` \(did you mean `endLine`\?\)/);
    assert.equal(errorOf(callJsonKey, 2).details.argument, "endLnie");
    assert.match(errorOf(callJsonKey, 2).message, /`endLnie` \(did you mean `endLine`\?\)/);

    // Wrong type: exit 2 in both (nothing was run or sent).
    assert.equal(errorOf(opType, 2).argument, "path");
    const ct = errorOf(callType, 2);
    assert.equal(ct.class, "usage");
    assert.ok(ct.details.errors.some((x: string) => x.includes("/path")), describe(callType));

    // endLine < startLine: exit 1 in both, the operation's own INVALID_ARGUMENT.
    const orr = errorOf(opRange, 1);
    assert.equal(orr.code, "INVALID_ARGUMENT");
    assert.equal(callRange.code, 1, describe(callRange));
    const env = JSON.parse(callRange.stdout);
    assert.equal(env.isError, true);
    assert.equal(env.error.code, "INVALID_ARGUMENT");

    await sameAsReal(
      ["tools", "call", "read_file", "--root", dir, "--output", "json", "pth=a.txt"],
      {
        read: [dir],
      },
    );
    const nt = errorOf(callNoTool, 2);
    assert.equal(
      nt.message,
      'no tool named "raed_file" (did you mean read_file?); see `wmcp tools list`',
    );
  });
});

Deno.test("suggest: a key=value string where the schema wants a number says to write key:=", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "one\ntwo\nthree\n" });
    const [op, call, text] = await pool(
      [
        ["op", "read_file", "--root", dir, "path=a.txt", "endLine=3"],
        ["tools", "call", "read_file", "--root", dir, "path=a.txt", "endLine=3"],
        // Not JSON: no hint (there is nothing := would make of it).
        ["op", "read_file", "--root", dir, "path=a.txt", "endLine=three"],
      ],
      1,
      (args) => inProcess(args),
    );
    const o = errorOf(op, 2);
    assert.equal(
      o.message,
      "`endLine` must be a number (write endLine:=3 for a JSON value); see `wmcp op read_file --help`",
    );
    const c = errorOf(call, 2);
    assert.match(
      c.message,
      /endLine must be integer \(write endLine:=3 for a JSON value\); see `wmcp tools call read_file --help`$/,
    );
    assert.doesNotMatch(errorOf(text, 2).message, /:=/);
    await sameAsReal(["op", "read_file", "--root", dir, "path=a.txt", "endLine=3"], {
      read: [dir],
    });
  });
});

Deno.test("serve http|stdio --help: the command as typed (WMCP_PROG), examples that run under it", async () => {
  await withTempDir(async (dir) => {
    const env = { WMCP_PROG: "mywmcp" };
    const [http, stdio] = await pool(
      [
        ["serve", "http", "--help"],
        ["serve", "stdio", "-h"],
      ],
      1,
      (args) => inProcess(args, { env }),
    );
    await sameAsReal(["serve", "http", "--help"], { read: [dir], env });
    for (const [kind, r] of [["http", http], ["stdio", stdio]] as const) {
      assert.equal(r.code, 0, describe(r));
      assert.match(r.stdout, new RegExp(`^mywmcp serve ${kind} \\S+: `));
      assert.match(r.stdout, new RegExp(`Usage:\n  mywmcp serve ${kind} \\[--sandbox`));
      assert.match(r.stdout, new RegExp(`Examples:\n  mywmcp serve ${kind} --root ~/project`));
      assert.ok(!r.stdout.includes("cli.ts"), r.stdout);
      assert.ok(!r.stdout.includes("deno task"), r.stdout);
    }
  });
});

Deno.test("a closed stdout (| head) ends op and tools call quietly: exit 0, nothing on stderr", async () => {
  await withTempDir(async (dir) => {
    // Far more than a pipe holds: the writer meets the closed pipe.
    await makeTree(dir, { "big.txt": "0123456789abcdef\n".repeat(15_000) });
    const flags = ["-q", "--no-prompt", `--allow-read=${dir}`, "--allow-env", "--allow-run"];
    const piped = (args: string[]) => {
      const cli = [Deno.execPath(), ...cliArgv(flags, args)].map(shellQuote).join(" ");
      // bash's PIPESTATUS: the exit code of wmcp itself, not head's.
      return new Deno.Command("bash", {
        args: ["-c", `${cli} 2>"$0" | head -c 10; echo " $\{PIPESTATUS[0]}"`, `${dir}/stderr`],
        stdout: "piped",
        stderr: "piped",
      }).output();
    };
    for (
      const args of [
        ["op", "read_file", "--root", dir, "path=big.txt"],
        ["tools", "call", "read_file", "--root", dir, "path=big.txt", "--output", "json"],
      ]
    ) {
      const out = await piped(args);
      const [head, code] = new TextDecoder().decode(out.stdout).split(" ");
      assert.equal(head.length, 10, head);
      assert.equal(code.trim(), "0", `${args.join(" ")}: exit ${code}`);
      assert.equal(await Deno.readTextFile(`${dir}/stderr`), "", args.join(" "));
    }
  });
});

Deno.test("shorthand: key=value and key:=json in op and tools call", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "one\ntwo\nthree\n", "b.txt": "x=1\ny=2\n" });
    const op = (extra: string[]) => inProcess(["op", "--root", dir, ...extra]);
    const runs = await pool(
      [
        () => op(["read_file", "--arguments", '{"path":"a.txt","startLine":2}']),
        () => op(["read_file", "path=a.txt", "startLine:=2"]),
        // Merged with --arguments (no key in both).
        () => op(["read_file", "--arguments", '{"path":"a.txt"}', "startLine:=2"]),
        () =>
          inProcess([
            "tools",
            "call",
            "read_file",
            "path=a.txt",
            "startLine:=2",
            "--root",
            dir,
            "--output",
            "json",
          ]),
        // A value holding `=` (split at the first one) and a JSON array.
        () => op(["search_text", "query=x=1", 'include:=["*.txt"]']),
      ],
      3,
      (f) => f(),
    );
    const [viaJson, viaShort, merged, viaCall, withEq] = runs;
    assert.equal(viaJson.code, 0, describe(viaJson));
    assert.deepStrictEqual(JSON.parse(viaShort.stdout), JSON.parse(viaJson.stdout));
    assert.deepStrictEqual(JSON.parse(merged.stdout), JSON.parse(viaJson.stdout));
    assert.equal(JSON.parse(viaJson.stdout).content, "two\nthree\n");
    assert.equal(viaCall.code, 0, describe(viaCall));
    assert.deepStrictEqual(
      JSON.parse(viaCall.stdout).structuredContent,
      JSON.parse(viaJson.stdout),
    );
    assert.equal(withEq.code, 0, describe(withEq));
    const hits = JSON.parse(withEq.stdout);
    assert.equal(hits.matches.length, 1, withEq.stdout);
    assert.equal(hits.matches[0].path, "b.txt");
    await sameAsReal(["op", "--root", dir, "read_file", "path=a.txt", "startLine:=2"], {
      read: [dir],
    });
  });
});

Deno.test("shorthand: bad words are usage errors naming the problem, in op and tools call", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "a\n" });
    const cases: [string[], RegExp][] = [
      [["path=a.txt", "path=b.txt"], /argument `path` is given twice/],
      [
        ["--arguments", '{"path":"a.txt"}', "path=b.txt"],
        /argument `path` is given twice \(in --arguments and as path=\)/,
      ],
      [["=a.txt"], /"=a\.txt" has an empty key/],
      [[":=1"], /":=1" has an empty key/],
      [
        ["path=a.txt", "startLine:=two"],
        /startLine:= is not valid JSON at line 1 column \d+; write startLine=TEXT for a string/,
      ],
      [["a.txt"], /unexpected argument "a\.txt": arguments are key=value or key:=json/],
      [["path=a.txt", "a.b:=1"], /unknown argument: `a\.b`/],
    ];
    const runs = cases.flatMap(([words]) => [
      ["op", "read_file", "--root", dir, ...words],
      ["tools", "call", "read_file", "--root", dir, ...words],
    ]);
    const results = await pool(
      runs,
      1,
      (args) => inProcess(args),
    );
    for (const [i, [words, pattern]] of cases.entries()) {
      const o = errorOf(results[2 * i], 2);
      const c = errorOf(results[2 * i + 1], 2);
      assert.match(o.message, pattern, `op ${words.join(" ")}`);
      assert.match(c.message, pattern, `tools call ${words.join(" ")}`);
      assert.equal(c.class, "usage");
    }
    await sameAsReal(runs[1], { read: [dir] });
  });
});

Deno.test("shorthand parser and suggestions (in process)", () => {
  assert.deepStrictEqual(parseShorthand(["a=1", "b:=1", "c:=null", "d=x:=y", "e=", 'f:="s"']), {
    a: "1",
    b: 1,
    c: null,
    d: "x:=y",
    e: "",
    f: "s",
  });
  assert.deepStrictEqual(parseShorthand(["url=http://h/?q=1&r=2"]), { url: "http://h/?q=1&r=2" });
  // An own __proto__ key stays a key (the schema refuses it as unknown), never a prototype.
  const proto = parseShorthand(['__proto__:={"polluted":true}']);
  assert.ok(Object.hasOwn(proto, "__proto__"));
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  for (const bad of [["x"], ["=1"], [":=1"], ["a=1", "a:=2"], ["n:=nope"]]) {
    assert.throws(() => parseShorthand(bad), UsageError, bad.join(" "));
  }
  assert.equal(closest("pth", ["path", "startLine"]), "path");
  assert.equal(closest("READ_FILE", ["read_file", "read_media"]), "read_file");
  assert.equal(closest("zzz", ["path"]), undefined);
  assert.equal(didYouMean("--wirte", ["--write", "--root"]), " (did you mean --write?)");
  assert.equal(didYouMean("x", ["path"]), "");
  // Swaps count one; a prefix (3+ characters) names the shortest flag it begins; dashes matter.
  assert.equal(closest("shwo", ["list", "show", "call", "run"]), "show");
  assert.equal(closest("--shutdown", ["--shutdown-timeout", "--host"]), "--shutdown-timeout");
  assert.equal(closest("--pid", ["--pid-file", "--port"]), "--pid-file");
  assert.equal(closest("--x", ["--x-long-flag"]), undefined, "a prefix needs 3 characters");
  assert.equal(closest("-hlep", ["--help"]), undefined);
  assert.equal(closest("lst", ["list", "read_file"]), "list");
});
