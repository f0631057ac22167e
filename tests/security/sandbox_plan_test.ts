/**
 * The launcher's sandbox plan for several roots (decision 0064), in process: planSandbox mounts
 * every --root and --read-only-root at its own absolute path, in order, read-write only for a
 * --root under --write; relative values are rewritten to those paths; no root flag means
 * `--root` the invocation directory. bwrapArgs binds each root (--ro-bind or --bind) and starts in
 * the first. The real sandbox with two roots is proven in sandbox_test.ts.
 */
import assert from "node:assert/strict";
import { planSandbox } from "../../src/cli/serve_launch.ts";
import { bwrapArgs } from "../../src/sandbox/bwrap.ts";

const OPTIONS = { denoPath: "/opt/deno", projectDir: "/opt/wmcp", marker: "/tmp/.wmcp-sandbox-x" };

/** planSandbox with INIT_CWD set to `cwd` for the call (the invocation directory). */
function plan(kind: "stdio" | "http", args: string[], cwd = "/work/here") {
  const before = Deno.env.get("INIT_CWD");
  Deno.env.set("INIT_CWD", cwd);
  try {
    return planSandbox(kind, args, OPTIONS);
  } finally {
    if (before === undefined) Deno.env.delete("INIT_CWD");
    else Deno.env.set("INIT_CWD", before);
  }
}

/** The (flag, source, dest) triples of bwrap's bind mounts for the roots' destinations. */
function binds(args: string[], dests: string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < args.length - 2; i++) {
    if ((args[i] === "--bind" || args[i] === "--ro-bind") && dests.includes(args[i + 2])) {
      out.push(args.slice(i, i + 3));
    }
  }
  return out;
}

Deno.test("planSandbox: each root at its own path, in order; --ro-bind for read-only roots and without --write", () => {
  const args = ["--root", "a", "--read-only-root=/data/b/", "--root", "/srv/c/../c2", "--write"];
  const { plan: p, serverArgs } = plan("stdio", args);
  assert.deepEqual(p.workspaces, [
    { source: "/work/here/a", dest: "/work/here/a", writable: true },
    { source: "/data/b/", dest: "/data/b", writable: false },
    { source: "/srv/c/../c2", dest: "/srv/c2", writable: true },
  ]);
  // Each value rewritten in place to the path it is mounted at, `--flag=V` kept in its form.
  assert.deepEqual(serverArgs, [
    "--root",
    "/work/here/a",
    "--read-only-root=/data/b",
    "--root",
    "/srv/c2",
    "--write",
  ]);
  const bwrap = bwrapArgs(p, ["deno", "run"]);
  assert.deepEqual(binds(bwrap, ["/work/here/a", "/data/b", "/srv/c2"]), [
    ["--ro-bind", "/data/b/", "/data/b"],
    ["--bind", "/srv/c/../c2", "/srv/c2"],
    ["--bind", "/work/here/a", "/work/here/a"],
  ]);
  // The server starts in the first root.
  assert.deepEqual(bwrap.slice(bwrap.indexOf("--chdir"), bwrap.indexOf("--chdir") + 4), [
    "--chdir",
    "/work/here/a",
    "deno",
    "run",
  ]);
  // Without --write every root is read-only.
  const ro = plan("http", ["--read-only-root", "/data/b", "--root", "/srv/a", "--port", "0"]);
  assert.deepEqual(ro.plan.workspaces.map((w) => [w.dest, w.writable]), [
    ["/data/b", false],
    ["/srv/a", false],
  ]);
  assert.deepEqual(binds(bwrapArgs(ro.plan, ["x"]), ["/data/b", "/srv/a"]), [
    ["--ro-bind", "/data/b", "/data/b"],
    ["--ro-bind", "/srv/a", "/srv/a"],
  ]);
  assert.equal(bwrapArgs(ro.plan, ["x"]).at(-2), "/data/b");
});

Deno.test("planSandbox: no root flag adds --root for the invocation directory; a read-only root alone adds none", () => {
  const none = plan("stdio", ["--write"], "/work/here");
  assert.deepEqual(none.serverArgs, ["--write", "--root", "/work/here"]);
  assert.deepEqual(none.plan.workspaces, [
    { source: "/work/here/.", dest: "/work/here", writable: true },
  ]);
  const ro = plan("stdio", ["--read-only-root", ".", "--write"], "/work/here");
  assert.deepEqual(ro.serverArgs, ["--read-only-root", "/work/here", "--write"]);
  assert.deepEqual(ro.plan.workspaces, [
    { source: "/work/here/.", dest: "/work/here", writable: false },
  ]);
  // After `--` nothing is a flag: not mounted, not rewritten.
  const end = plan("stdio", ["--root", "/srv/a", "--", "--root", "b"]);
  assert.deepEqual(end.plan.workspaces.map((w) => w.dest), ["/srv/a"]);
  assert.deepEqual(end.serverArgs, ["--root", "/srv/a", "--", "--root", "b"]);
});

Deno.test("bwrapArgs: the server runs with TZ=UTC and without the host's /etc/localtime (decision 0069)", () => {
  const bwrap = bwrapArgs(plan("stdio", ["--root", "a"]).plan, ["deno", "run"]);
  const tz = bwrap.findIndex((a, i) => a === "--setenv" && bwrap[i + 1] === "TZ");
  assert.notEqual(tz, -1, "TZ is set");
  assert.equal(bwrap[tz + 2], "UTC");
  assert.ok(!bwrap.includes("/etc/localtime"), "/etc/localtime is not bound");
  // Set before the command, which starts after --chdir DIR.
  assert.ok(tz < bwrap.indexOf("--chdir"));
});
