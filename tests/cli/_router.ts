/** Shared by the router tests: cli.ts as the `cli` task starts it, its scoped child, its exit. */
import assert from "node:assert/strict";
import denoConfig from "../../deno.json" with { type: "json" };

/** The checkout's directory, with a trailing slash. */
export const PROJECT = decodeURIComponent(new URL("../../", import.meta.url).pathname);
const dec = new TextDecoder();

/** The Deno flags a deno.json task gives `deno run` (between `run` and its entry, cli.ts or serve.ts). */
export function taskFlags(task: string): string[] {
  const t = task.split(/\s+/);
  const entry = t.findIndex((w) => w === "cli.ts" || w === "serve.ts");
  return t.slice(t.indexOf("run") + 1, entry);
}

/** The Deno flags of the `cli` task: the router's permissions and nothing else. */
export const ROUTER_FLAGS: string[] = taskFlags(denoConfig.tasks.cli);

/** What a command printed and how it ended. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The last JSON error object a command wrote on stderr. */
export function errorOf(r: Run): { code: string; message: string } {
  const line = r.stderr.trim().split("\n").filter((l) => l.startsWith("{")).at(-1);
  assert.ok(line, `no JSON error on stderr: ${r.stderr}`);
  return JSON.parse(line).error;
}

/**
 * Starts the router on `op read_file --arguments-stdin` (it waits on stdin, which the caller
 * holds open) and finds, within 30 s, the scoped child it started.
 */
export async function routerWithChild(L: { A: string; cwd: string }) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...ROUTER_FLAGS,
      `${PROJECT}cli.ts`,
      "op",
      "read_file",
      "--root",
      L.A,
      "--arguments-stdin",
    ],
    cwd: L.cwd,
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let grandchild: number | undefined;
  for (let i = 0; i < 300 && grandchild === undefined; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const ps = await new Deno.Command("ps", {
      args: ["-o", "pid=,args=", "--ppid", String(child.pid)],
      stdout: "piped",
      stderr: "null",
    }).output();
    for (const line of dec.decode(ps.stdout).split("\n")) {
      const m = /^\s*(\d+)\s+(.*)$/.exec(line);
      if (m && m[2].includes("scoped_main.ts")) grandchild = Number(m[1]);
    }
  }
  assert.ok(grandchild !== undefined, "the router started no scoped child");
  return { child, grandchild };
}

/** Whether `pid` is gone (or a zombie nobody will reap) within 10 s. */
export async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    const ps = await new Deno.Command("ps", {
      args: ["-o", "stat=", "-p", String(pid)],
      stdout: "piped",
      stderr: "null",
    }).output();
    if (!ps.success || dec.decode(ps.stdout).trim().startsWith("Z")) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
