/**
 * `deno run deploy/nginx/config.ts` as docs/deployment.md has it run, through real child
 * processes: `--help` answers (usage, flags, an example), a flag it does not take or one without
 * its value is a usage error (exit 2, nothing on stdout). No nginx: this file is in the default
 * suite (scripts/test.ts SECOND_SUITE names only the nginx test of tests/deploy/).
 */
import assert from "node:assert/strict";

const REPO = new URL("../../", import.meta.url).pathname;

async function config(args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-prompt", "deploy/nginx/config.ts", ...args],
    cwd: REPO,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("deploy/nginx/config.ts --help: usage, every flag and an example on stdout, exit 0", async () => {
  const [help, short] = await Promise.all([config(["--help"]), config(["-h"])]);
  assert.equal(help.code, 0, help.stderr);
  assert.equal(help.stderr, "");
  assert.match(help.stdout, /^Usage: deno run deploy\/nginx\/config\.ts \[NAME=HOST:PORT \.\.\.\]/);
  for (const flag of ["--listen", "--server-name", "--endpoint", "--max-body", "--access-log"]) {
    assert.match(help.stdout, new RegExp(`^ {2}${flag} `, "m"), flag);
  }
  assert.match(
    help.stdout,
    /^Example:\n {2}deno run deploy\/nginx\/config\.ts a=127\.0\.0\.1:3001 /m,
  );
  assert.equal(short.stdout, help.stdout);
});

Deno.test("deploy/nginx/config.ts: an unknown flag or a missing value is a usage error, exit 2", async () => {
  const see = "; see `deno run deploy/nginx/config.ts --help`\n";
  const cases: [string[], string][] = [
    [["--bogus"], "config.ts: unknown flag --bogus"],
    [["--listn", "443"], "config.ts: unknown flag --listn (did you mean --listen?)"],
    [
      ["a=127.0.0.1:3001", "--listen"],
      "config.ts: --listen needs a value (write --listen=VALUE for a value starting with '-')",
    ],
    [
      ["--server-name", "--endpoint", "/mcp"],
      "config.ts: --server-name needs a value (write --server-name=VALUE for a value starting with '-')",
    ],
    [["a=1"], "config.ts: instance a: address must be host:port, not 1"],
  ];
  const runs = await Promise.all(cases.map(([args]) => config(args)));
  for (const [i, [args, message]] of cases.entries()) {
    const r = runs[i];
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stdout, "", args.join(" "));
    assert.equal(r.stderr, message + see, args.join(" "));
  }
});

Deno.test("deploy/nginx/config.ts: its flags still render (wmcp.conf for no instances)", async () => {
  const [plain, custom] = await Promise.all([
    config([]),
    config(["x=127.0.0.1:4001", "--listen", "443 ssl", "--access-log=off", "--max-body", "1024"]),
  ]);
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(plain.stdout, await Deno.readTextFile(`${REPO}deploy/nginx/wmcp.conf`));
  assert.equal(custom.code, 0, custom.stderr);
  assert.match(custom.stdout, /^ {4}listen 443 ssl;$/m);
  assert.match(custom.stdout, /^ {4}access_log off;$/m);
  assert.match(custom.stdout, /^ {4}client_max_body_size 1k;$/m);
  assert.match(custom.stdout, /^ {4}server 127\.0\.0\.1:4001;$/m);
});
