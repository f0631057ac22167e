/**
 * The CLI's output contract (stdout is the operation's structuredContent, errors are one JSON
 * object on stderr), exit codes and argument sources, run as `main(argv)` in process where what a
 * command answers is the point (decision 0052), each test with a real child as its anchor
 * (`anchored`: the same bytes and exit code); and as a real child process with scoped permissions
 * where the process is: stdin, the permission messages, the permissions workspace_info reports,
 * writes through scoped write permission, the working directory, `--version`, and crash safety of
 * write_file under SIGKILL.
 */
import { ENGINE_READ_PATH } from "../../src/workspace/engine/read_path.ts";
import assert from "node:assert/strict";
import { cliArgv, type CliResult, runCli } from "../_support/cli.ts";
import { runInProcess } from "../_support/in_process.ts";
import {
  availableOperations,
  getOperation,
  jsonSchemas,
  runOperation,
  WorkspaceError,
} from "../../mod.ts";
import {
  makeTree,
  openWorkspace,
  run,
  sha256,
  TEMP_PREFIX,
  withTempDir,
} from "../workspace/_helpers.ts";

interface CliOptions {
  /** Directories the child may read. */
  read: string[];
  /** Run a real child (default: main(argv) in this process, where permissions are the test's). */
  real?: boolean;
  /** Directories the child may write. */
  write?: string[];
  /** Text piped to stdin. */
  stdin?: string;
  /** Working directory of the child. */
  cwd?: string;
  /** In the usage-error table: run in process and as a real child (anchored). */
  anchor?: boolean;
}

/** The Deno flags of one run: exactly the given permissions. */
function denoFlags(o: CliOptions): string[] {
  return [
    // -q: no Deno diagnostics (e.g. "Blocking waiting for file lock") mixed into stderr.
    "-q",
    "--no-prompt",
    // The engine's worker modules must be readable, as the `cli` task grants.
    `--allow-read=${[...o.read, ENGINE_READ_PATH].join(",")}`,
    ...(o.write ? [`--allow-write=${o.write.join(",")}`] : []),
  ];
}

/** Runs cli.ts: a real child with exactly the given permissions, or main(argv) in process. */
function cli(args: string[], o: CliOptions): Promise<CliResult> {
  if (o.real || o.stdin !== undefined) {
    return runCli(denoFlags(o), args, { cwd: o.cwd, stdin: o.stdin });
  }
  return runInProcess(args, o.cwd === undefined ? {} : { cwd: o.cwd });
}

/** Runs in process and as a real child; both must answer with the same bytes and exit code. */
async function anchored(args: string[], o: CliOptions): Promise<CliResult> {
  const [inProcess, real] = await Promise.all([cli(args, o), cli(args, { ...o, real: true })]);
  assert.deepStrictEqual(
    { code: inProcess.code, stdout: inProcess.stdout, stderr: inProcess.stderr },
    { code: real.code, stdout: real.stdout, stderr: real.stderr },
    `in process and as a real child: ${args.join(" ")}`,
  );
  return inProcess;
}

/** Parses a usage or operation error from stderr and checks the rest of the contract. */
function errorOf(r: CliResult, exitCode: number):
  & { code: string; message: string }
  & Record<
    string,
    unknown
  > {
  assert.equal(r.code, exitCode, `exit code (stderr: ${r.stderr})`);
  assert.equal(r.stdout, "", "nothing on stdout");
  const parsed = JSON.parse(r.stderr);
  assert.deepStrictEqual(Object.keys(parsed), ["error"]);
  assert.equal(typeof parsed.error.code, "string");
  assert.equal(typeof parsed.error.message, "string");
  return parsed.error;
}

/** Parses a successful result. */
function resultOf(r: CliResult): Record<string, unknown> {
  assert.equal(r.code, 0, `exit code (stderr: ${r.stderr})`);
  assert.equal(r.stderr, "");
  return JSON.parse(r.stdout);
}

Deno.test("cli: op list shows 8 operations read-only and 14 with --write", async () => {
  await withTempDir(async (dir) => {
    const ro = resultOf(await anchored(["op", "list"], { read: [dir] }));
    const ops = ro.operations as Record<string, unknown>[];
    assert.deepStrictEqual(ops.map((o) => o.name), availableOperations(false).map((o) => o.name));
    assert.equal(ops.length, 8);
    for (const o of ops) {
      const def = getOperation(o.name as string)!;
      assert.deepStrictEqual(o, {
        name: def.name,
        title: def.title,
        description: def.description,
        annotations: def.annotations,
        needsWrite: def.needsWrite,
        inputSchema: jsonSchemas(def).input,
        outputSchema: jsonSchemas(def).output,
      });
    }
    const rw = resultOf(await cli(["op", "list", "--write"], { read: [dir] }));
    assert.equal((rw.operations as unknown[]).length, availableOperations(true).length);
    // Compact JSON by default when stdout is not a terminal.
    const raw = (await cli(["op", "list"], { read: [dir] })).stdout;
    assert.ok(raw.endsWith("}\n") && !raw.slice(0, -1).includes("\n"), "one line of JSON");
  });
});

Deno.test("cli: read_file via --arguments, --arguments-file and --arguments-stdin", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "a.txt": "one\ntwo\nthree\n",
      "args.json": JSON.stringify({ path: "a.txt", startLine: 2 }),
    });
    const ws = await openWorkspace(dir);
    const lib = await run(ws, "read_file", { path: "a.txt", startLine: 2 });
    const base = ["op", "read_file", "--root", dir];
    const viaFlag = resultOf(
      await cli([...base, "--arguments", '{"path":"a.txt","startLine":2}'], { read: [dir] }),
    );
    assert.deepStrictEqual(viaFlag, lib);
    const viaFile = resultOf(
      await cli([...base, "--arguments-file", `${dir}/args.json`], { read: [dir] }),
    );
    assert.deepStrictEqual(viaFile, lib);
    const viaStdin = resultOf(
      await cli([...base, "--arguments-stdin"], {
        read: [dir],
        stdin: '{"path":"a.txt","startLine":2}',
      }),
    );
    assert.deepStrictEqual(viaStdin, lib);
    assert.equal(viaFlag.content, "two\nthree\n");
  });
});

Deno.test("cli: usage errors exit 2 with a USAGE error on stderr", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "a", "args.json": '{"path":"a.txt"}' });
    const o = { read: [dir] };
    const base = ["op", "read_file", "--root", dir];
    const cases: [string, string[], CliOptions][] = [
      ["two sources", [...base, "--arguments", "{}", "--arguments-file", `${dir}/args.json`], o],
      ["three sources", [
        ...base,
        "--arguments",
        "{}",
        "--arguments-file",
        `${dir}/args.json`,
        "--arguments-stdin",
      ], { ...o, stdin: "{}" }],
      ["invalid JSON", [...base, "--arguments", "{path:"], { ...o, anchor: true }],
      ["JSON array", [...base, "--arguments", "[1]"], o],
      ["JSON null", [...base, "--arguments", "null"], o],
      ["invalid JSON on stdin", [...base, "--arguments-stdin"], { ...o, stdin: "nope" }],
      ["missing arguments file", [...base, "--arguments-file", `${dir}/nope.json`], o],
      ["unknown operation", ["op", "frobnicate", "--root", dir], o],
      ["unknown flag", [...base, "--bogus"], o],
      ["no operation", ["op"], o],
      ["two operations", ["op", "read_file", "list_directory"], o],
      ["unknown command", ["frob"], o],
      ["bad --output", [...base, "--output", "xml"], o],
      ["bad --limit", [...base, "--limit", "maxReadBytes=abc"], o],
      ["unknown --limit", [...base, "--limit", "noSuchLimit=5"], o],
      ["zero --limit", [...base, "--limit", "maxReadBytes=0"], o],
      ["missing root", ["op", "read_file", "--root", `${dir}/missing`, "--arguments", "{}"], o],
      // The permission messages are the real child's (its scoped grants).
      ["--write without write permission", [
        "op",
        "write_file",
        "--write",
        "--root",
        dir,
        "--arguments",
        '{"path":"b.txt","content":"b"}',
      ], { ...o, real: true }],
      ["root without read permission", [
        "op",
        "list_directory",
        "--root",
        dir,
      ], { read: [`${dir}/args.json`], real: true }],
    ];
    const results = await Promise.all(
      cases.map(([, args, opts]) => (opts.anchor ? anchored(args, opts) : cli(args, opts))),
    );
    for (const [i, [label]] of cases.entries()) {
      const e = errorOf(results[i], 2);
      assert.equal(e.code, "USAGE", label);
      assert.ok(e.message.length > 0, label);
    }
    // The permission messages name the flag to add.
    assert.match(results[17].stderr, /--allow-write=/);
    assert.match(results[18].stderr, /--allow-read=/);
    // Nothing was written.
    const names: string[] = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepStrictEqual(names.sort(), ["a.txt", "args.json"]);
  });
});

Deno.test("cli: --help and --version", async () => {
  await withTempDir(async (dir) => {
    const help = await cli(["--help"], { read: [dir] });
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage:/);
    const opHelp = await cli(["op", "--help"], { read: [dir] });
    assert.equal(opHelp.code, 0);
    const none = await cli([], { read: [dir] });
    assert.equal(none.code, 2);
    // cli.ts answers --version itself, before main: a real child.
    const version = await cli(["--version"], { read: [dir], real: true });
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  });
});

Deno.test("cli: operation errors exit 1 with the library's error object on stderr", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "a\n", "d/": null });
    const ws = await openWorkspace(dir);
    const cases: [string, Record<string, unknown>][] = [
      ["read_file", { path: "missing.txt" }],
      ["read_file", { path: "d" }],
      ["read_file", { path: "a.txt", startLine: 3, endLine: 2 }],
      // An unknown key is refused by the input schema before anything runs: exit 2 since
      // decision 0028 (tests/cli/help_test.ts), as `tools call` refuses it.
      ["list_directory", { path: "a.txt" }],
      ["search_text", { query: "(", regex: true }],
      ["write_file", { path: "b.txt", content: "b" }],
    ];
    for (const [i, [name, args]] of cases.entries()) {
      const argv = ["op", name, "--root", dir, "--arguments", JSON.stringify(args)];
      const r = await (i === 0 ? anchored : cli)(argv, { read: [dir] });
      const e = errorOf(r, 1);
      let libError: WorkspaceError | undefined;
      try {
        await runOperation({ workspace: ws }, name, args);
      } catch (err) {
        libError = err as WorkspaceError;
      }
      assert.ok(libError instanceof WorkspaceError, name);
      assert.deepStrictEqual(e, JSON.parse(JSON.stringify(libError.toJSON())), name);
    }
    const nf = await cli(["op", "read_file", "--root", dir, "--arguments", '{"path":"x"}'], {
      read: [dir],
    });
    assert.deepStrictEqual(JSON.parse(nf.stderr).error.code, "NOT_FOUND");
    assert.deepStrictEqual(JSON.parse(nf.stderr).error.argument, "path");
  });
});

Deno.test("cli: --output pretty is text for people (piped: no colour); json is unchanged", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "a\n" });
    const ws = await openWorkspace(dir);
    const lib = await run(ws, "read_file", { path: "a.txt" });
    const r = await anchored(
      ["op", "read_file", "--root", dir, "--output", "pretty", "--arguments", '{"path":"a.txt"}'],
      { read: [dir] },
    );
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `[a.txt, lines 1-1 of 1, 2 bytes, sha256 ${lib.sha256}]\na\n`);
    assert.equal(r.stderr, "");
    const err = await cli(
      ["op", "read_file", "--root", dir, "--output", "pretty", "--arguments", '{"path":"x"}'],
      { read: [dir] },
    );
    assert.equal(err.code, 1);
    assert.equal(err.stderr, "error (NOT_FOUND): path x does not exist.\n");
    const json = await cli(
      ["op", "read_file", "--root", dir, "--output", "json", "--arguments", '{"path":"a.txt"}'],
      { read: [dir] },
    );
    assert.equal(json.stdout, JSON.stringify(lib) + "\n");
  });
});

Deno.test("cli: stdout deep-equals the library result for the same call", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "src/a.ts": "export const a = 1;\n// TODO one\n",
      "src/b.ts": "// TODO two\n",
      "docs/readme.md": "# Title\n\nTODO three\n",
      ".gitignore": "out/\n",
      "out/gen.ts": "// TODO ignored\n",
      "img.png": new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]),
    });
    const ws = await openWorkspace(dir);
    const calls: [string, Record<string, unknown>][] = [
      ["list_directory", { depth: 3, includeHidden: true }],
      ["list_directory", { depth: 2, limit: 2 }],
      ["read_file", { path: "src/a.ts" }],
      ["read_media", { path: "img.png" }],
      // A file no other call reads (gitignored, so search_text skips it): its atime is stable.
      ["get_file_info", { path: "out/gen.ts" }],
      ["find_files", { pattern: "**/*.ts" }],
      ["search_text", { query: "TODO", contextLines: 1 }],
    ];
    const cliResults = await Promise.all(
      calls.map(([name, args]) =>
        cli(["op", name, "--root", dir, "--arguments", JSON.stringify(args)], { read: [dir] })
      ),
    );
    for (const [i, [name, args]] of calls.entries()) {
      const lib = await run(ws, name as "read_file", args);
      const out = resultOf(cliResults[i]);
      assert.deepStrictEqual(out, lib, name);
      // And the CLI output satisfies the output schema as is.
      assert.deepStrictEqual(getOperation(name)!.outputSchema.parse(out), out, name);
    }
    // workspace_info: same except the permissions, which are this child's own.
    const info = resultOf(
      await cli(["op", "workspace_info", "--root", dir], { read: [dir], real: true }),
    );
    const libInfo = await run(ws, "workspace_info", {});
    // Permissions, and so whether they are scoped, belong to the process (this test's are broad).
    const processFree = (i: object) => ({
      ...i,
      permissions: null,
      containment: { ...(i as { containment: object }).containment, denoPermissions: null },
    });
    assert.deepStrictEqual(processFree(info), processFree(libInfo));
    assert.equal((info.containment as { denoPermissions: string }).denoPermissions, "scoped");
    const perms = info.permissions as Record<string, string>;
    assert.equal(perms.readWorkspace, "granted");
    assert.notEqual(perms.writeWorkspace, "granted");
    assert.notEqual(perms.readAnywhere, "granted");
    assert.notEqual(perms.net, "granted");
    assert.notEqual(perms.run, "granted");
  });
});

Deno.test("cli: the default root is the working directory", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "here.txt": "here\n" });
    const out = resultOf(
      await cli(["op", "read_file", "--arguments", '{"path":"here.txt"}'], {
        read: [dir],
        cwd: dir,
        real: true,
      }),
    );
    assert.equal(out.content, "here\n");
  });
});

Deno.test("cli: write operations with --write and scoped write permission", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "old\n" });
    const w = { read: [dir], write: [dir], real: true };
    const ro = errorOf(
      await cli([
        "op",
        "write_file",
        "--root",
        dir,
        "--arguments",
        '{"path":"b.txt","content":"b"}',
      ], w),
      1,
    );
    assert.equal(ro.code, "READ_ONLY");
    const created = resultOf(
      await cli([
        "op",
        "write_file",
        "--write",
        "--root",
        dir,
        "--arguments",
        '{"path":"b.txt","content":"b\\n"}',
      ], w),
    );
    assert.deepStrictEqual(created, {
      path: "b.txt",
      created: true,
      size: 2,
      sha256: sha256("b\n"),
    });
    assert.equal(await Deno.readTextFile(`${dir}/b.txt`), "b\n");
    const edited = resultOf(
      await cli([
        "op",
        "edit_file",
        "--write",
        "--root",
        dir,
        "--arguments",
        JSON.stringify({ path: "a.txt", edits: [{ oldText: "old", newText: "new" }] }),
      ], w),
    );
    assert.equal(edited.sha256After, sha256("new\n"));
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "new\n");
    // --limit applies.
    const big = errorOf(
      await cli([
        "op",
        "write_file",
        "--write",
        "--limit",
        "maxWriteBytes=3",
        "--root",
        dir,
        "--arguments",
        '{"path":"c.txt","content":"four"}',
      ], w),
      1,
    );
    assert.equal(big.code, "TOO_LARGE");
    assert.deepStrictEqual(big.details, { size: 4, limit: 3 });
  });
});

Deno.test("cli: write_file killed with SIGKILL leaves the old or the new content, never a mix", async () => {
  await withTempDir(async (dir) => {
    const ws = `${dir}/ws`;
    const argsDir = `${dir}/args`;
    await Deno.mkdir(ws);
    await Deno.mkdir(argsDir);
    const oldText = "old content line\n".repeat(64 * 1024); // ~1.1 MB
    const line = (i: number) => `new content ${String(i).padStart(8, "0")} ${"#".repeat(40)}\n`;
    const parts: string[] = [];
    for (let i = 0, size = 0; size < 40 * 1024 * 1024; i++) {
      const l = line(i);
      parts.push(l);
      size += l.length;
    }
    const newText = parts.join("");
    const oldSha = sha256(oldText);
    const newSha = sha256(newText);
    const newBytes = new TextEncoder().encode(newText).length;
    await Deno.writeTextFile(
      `${argsDir}/args.json`,
      JSON.stringify({ path: "big.txt", content: newText, ifExists: "overwrite", confirm: true }),
    );
    const args = cliArgv(denoFlags({ read: [ws, argsDir], write: [ws] }), [
      "op",
      "write_file",
      "--write",
      "--root",
      ws,
      "--limit",
      `maxWriteBytes=${50 * 1024 * 1024}`,
      "--arguments-file",
      `${argsDir}/args.json`,
    ]);

    const spawn = () =>
      new Deno.Command(Deno.execPath(), {
        args,
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
    /** Size of the temp file being written, or -1 while there is none. */
    const tempSize = async () => {
      for await (const e of Deno.readDir(ws)) {
        if (e.name.startsWith(TEMP_PREFIX)) {
          try {
            return (await Deno.lstat(`${ws}/${e.name}`)).size;
          } catch {
            return -1;
          }
        }
      }
      return -1;
    };
    let leftoverTemps = 0;
    const outcomes: string[] = [];
    const check = async (label: string, child: Deno.ChildProcess) => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already finished.
      }
      const status = await child.status;
      const got = sha256(await Deno.readFile(`${ws}/big.txt`));
      assert.ok(
        got === oldSha || got === newSha,
        `after a kill (${label}) the file is neither the old nor the new content`,
      );
      // Count and remove what the killed process left, so every run starts clean.
      for await (const e of Deno.readDir(ws)) {
        if (e.name.startsWith(TEMP_PREFIX)) {
          leftoverTemps++;
          await Deno.remove(`${ws}/${e.name}`);
        }
      }
      outcomes.push(
        `${label}:${got === oldSha ? "old" : "new"}${status.signal ? "" : "(finished first)"}`,
      );
    };
    // Kills at fixed delays after spawning.
    for (const delay of [5, 30, 80, 150, 300]) {
      await Deno.writeTextFile(`${ws}/big.txt`, oldText);
      const child = spawn();
      await new Promise((r) => setTimeout(r, delay));
      await check(`${delay}ms`, child);
    }
    // Kills timed on the write itself: as soon as the temp file exists, when part of the
    // content is in it, and when all of it is (around the fsync and the rename).
    for (
      const [label, minSize] of [["temp created", 0], ["mid-write", 8 << 20], [
        "written",
        newBytes,
      ]] as const
    ) {
      await Deno.writeTextFile(`${ws}/big.txt`, oldText);
      const child = spawn();
      let done = false;
      child.status.then(() => done = true);
      const t0 = performance.now();
      while (!done && performance.now() - t0 < 10_000 && (await tempSize()) < minSize) {
        await new Promise((r) => setTimeout(r, 1));
      }
      await check(label, child);
    }
    // A run left alone completes with the new content.
    await Deno.writeTextFile(`${ws}/big.txt`, oldText);
    const full = await new Deno.Command(Deno.execPath(), {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(full.code, 0, new TextDecoder().decode(full.stderr));
    const result = JSON.parse(new TextDecoder().decode(full.stdout));
    assert.equal(result.sha256, newSha);
    assert.equal(result.previousSha256, oldSha);
    assert.equal(sha256(await Deno.readFile(`${ws}/big.txt`)), newSha);
    // Temp files from killed runs may remain (the process had no chance to clean up); a
    // completed run leaves none.
    const names: string[] = [];
    for await (const e of Deno.readDir(ws)) names.push(e.name);
    assert.deepStrictEqual(names, ["big.txt"]);
    console.log(
      `crash safety: ${outcomes.join(", ")}; ${leftoverTemps} ${TEMP_PREFIX}* file(s) ` +
        `left by killed runs`,
    );
  });
});
