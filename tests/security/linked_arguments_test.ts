/**
 * Arguments read through a symbolic link never have their keys named (decision 0060). A link a
 * repository ships can point `--arguments-file` (or `tools run FILE`) at a credentials file; the
 * unknown-argument errors of `op`, `tools call`, `tools run` and `prompts get` then say how many
 * keys were unknown and why their names are withheld, and name none of them. The same file reached
 * without a link (no component of its path a link) gets the usual error naming the key. Cases run
 * the CLI's main(argv) in process against real loopback servers; one anchor runs `op` as a real
 * cli.ts child (the router's scoped grants must allow the check) and must answer the same bytes.
 */
import assert from "node:assert/strict";
import { runCli } from "../_support/cli.ts";
import { runInProcess } from "../_support/in_process.ts";
import { withLoopbackServer } from "../_support/handler.ts";
import { withResourcesAndPrompts } from "../_support/resources_prompts.ts";

/** Key names a credentials file might hold: none may appear where the file is linked. */
const KEYS = ["aws_secret_access_key_HIDDEN", "github_token_HIDDEN"];
const CREDENTIALS = JSON.stringify(Object.fromEntries(KEYS.map((k, i) => [k, `value${i}`])));

interface Spellings {
  dir: string;
  /** The file itself. */
  direct: string;
  /** A link to it. */
  leafLink: string;
  /** The file through a linked directory. */
  dirLink: string;
}

/** A directory with the credentials file (`name`), a link to it and a linked directory. */
async function withFiles(
  name: string,
  text: string,
  body: (s: Spellings) => Promise<void>,
): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-linked-args-" }));
  try {
    await Deno.mkdir(`${dir}/secrets`);
    await Deno.writeTextFile(`${dir}/secrets/${name}`, text);
    await Deno.symlink(`${dir}/secrets/${name}`, `${dir}/linked-${name}`);
    await Deno.symlink(`${dir}/secrets`, `${dir}/linked-dir`);
    await body({
      dir,
      direct: `secrets/${name}`,
      leafLink: `linked-${name}`,
      dirLink: `linked-dir/${name}`,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Asserts a run refused the arguments naming no key, and said how many and why. */
function assertWithheld(
  r: { code: number; stdout: string; stderr: string },
  o: { count: number; spelled: string; code: number },
): void {
  const all = r.stdout + r.stderr;
  for (const key of KEYS) assert.ok(!all.includes(key), `names ${key}: ${all}`);
  assert.equal(r.code, o.code, all);
  assert.match(r.stderr, new RegExp(`${o.count} unknown arguments? \\(names withheld: `), all);
  assert.ok(r.stderr.includes(`${o.spelled} is reached through a symbolic link`), all);
}

Deno.test("op --arguments-file through a link: unknown keys counted, not named", async () => {
  await withFiles("args.json", CREDENTIALS, async (s) => {
    for (const spelled of [s.leafLink, s.dirLink]) {
      for (const output of ["json", "pretty"]) {
        const args = ["op", "read_file", "--arguments-file", spelled, "--output", output];
        const r = await runInProcess(args, { cwd: s.dir, env: { NO_COLOR: "1" } });
        assertWithheld(r, { count: 2, spelled: `--arguments-file ${spelled}`, code: 2 });
        if (output === "json") {
          const error = JSON.parse(r.stderr).error;
          assert.equal(error.code, "INVALID_ARGUMENT");
          assert.equal(error.argument, undefined);
          assert.deepEqual(error.details, { unknownArguments: 2 });
        }
      }
    }
    // The file itself, no link on its path: the key is named, as for any other mistake.
    const direct = await runInProcess(["op", "read_file", "--arguments-file", s.direct], {
      cwd: s.dir,
      env: { NO_COLOR: "1" },
    });
    assert.equal(direct.code, 2);
    assert.match(direct.stderr, new RegExp(`unknown argument: \`${KEYS[0]}\``));
  });
});

Deno.test("op --arguments-file through a link: a real cli.ts child answers as in process", async () => {
  await withFiles("args.json", CREDENTIALS, async (s) => {
    const args = ["op", "read_file", "--arguments-file", s.leafLink];
    const real = await runCli(["--quiet", "--no-prompt", "--allow-read", "--allow-env"], args, {
      cwd: s.dir,
      env: { NO_COLOR: "1", INIT_CWD: s.dir },
    });
    const inProcess = await runInProcess(args, { cwd: s.dir, env: { NO_COLOR: "1" } });
    assertWithheld(real, { count: 2, spelled: `--arguments-file ${s.leafLink}`, code: 2 });
    assert.deepEqual(
      { code: real.code, stdout: real.stdout, stderr: real.stderr },
      { code: inProcess.code, stdout: inProcess.stdout, stderr: inProcess.stderr },
    );
  });
});

Deno.test("tools call and tools run through a link: unknown keys counted, not named, nothing sent", async () => {
  await withLoopbackServer({}, async ({ url }) => {
    await withFiles("args.json", CREDENTIALS, async (s) => {
      for (const spelled of [s.leafLink, s.dirLink]) {
        const r = await runInProcess(
          ["tools", "call", "read_file", "--arguments-file", spelled, "--endpoint", url],
          { cwd: s.dir, env: { NO_COLOR: "1" } },
        );
        assertWithheld(r, { count: 2, spelled: `--arguments-file ${spelled}`, code: 2 });
        assert.equal(r.stdout, "");
      }
      const direct = await runInProcess(
        ["tools", "call", "read_file", "--arguments-file", s.direct, "--endpoint", url],
        { cwd: s.dir, env: { NO_COLOR: "1" } },
      );
      assert.equal(direct.code, 2);
      assert.match(direct.stderr, new RegExp(`unknown argument: \`${KEYS[0]}\``));
    });
    const line = JSON.stringify({ name: "read_file", arguments: JSON.parse(CREDENTIALS) });
    await withFiles("calls.jsonl", `${line}\n`, async (s) => {
      const r = await runInProcess(["tools", "run", s.leafLink, "--endpoint", url], {
        cwd: s.dir,
        env: { NO_COLOR: "1" },
      });
      assertWithheld(
        { ...r, stderr: r.stderr + r.stdout },
        { count: 2, spelled: `tools run ${s.leafLink}`, code: 2 },
      );
    });
  });
});

Deno.test("prompts get --arguments-file through a link: unknown keys counted, not named", async () => {
  const definition = withResourcesAndPrompts({
    name: "prompts",
    version: "1.0.0",
    tools: [],
    prompts: [{
      name: "greet",
      arguments: [{ name: "city", required: true }],
      get: (args) => ({
        messages: [{ role: "user", content: { type: "text", text: `Hello ${args.city}` } }],
      }),
    }],
  });
  await withLoopbackServer({ definition }, async ({ url }) => {
    await withFiles("args.json", CREDENTIALS, async (s) => {
      const r = await runInProcess(
        ["prompts", "get", "greet", "--arguments-file", s.leafLink, "--endpoint", url],
        { cwd: s.dir, env: { NO_COLOR: "1" } },
      );
      assertWithheld(r, { count: 2, spelled: `--arguments-file ${s.leafLink}`, code: 2 });
      const direct = await runInProcess(
        ["prompts", "get", "greet", "--arguments-file", s.direct, "--endpoint", url],
        { cwd: s.dir, env: { NO_COLOR: "1" } },
      );
      assert.equal(direct.code, 2);
      assert.match(direct.stderr, new RegExp(`unknown argument: \`${KEYS[0]}\``));
    });
  });
});
