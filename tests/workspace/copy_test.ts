/**
 * copy_path through the library: files (content, mode, big files in chunks), links (the link
 * itself), directories (recursive, modes, links inside never followed, special and hard-linked
 * files skipped and reported, a FIFO never blocking), overwrite and copying into an existing
 * directory, the refusals, the bounds (maxVisited, maxDepth, the result budget), and a copy
 * stopped part-way (cancelled, out of time, between two chunks of a file): CANCELLED or
 * TIME_BUDGET_EXCEEDED naming what it copied, every file at the destination whole, no temporary
 * file left. Stops are triggered on the copy's own events (progress, a chunk read), never timed.
 */
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import type { Limits, Workspace } from "../../mod.ts";
import {
  exists,
  makeTree,
  modeOf,
  openWorkspace,
  run,
  runError,
  tempFilesBelow,
  withTempDir,
} from "./_helpers.ts";
import { expectError } from "../_support/errors.ts";
import { runOperation } from "../../mod.ts";

/** Every entry below dir: relative path -> "dir", "link:<text>" or the file's text. */
function tree(dir: string, rel = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of Deno.readDirSync(rel ? `${dir}/${rel}` : dir)) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    const st = Deno.lstatSync(`${dir}/${p}`);
    if (st.isSymlink) out[p] = `link:${Deno.readLinkSync(`${dir}/${p}`)}`;
    else if (st.isDirectory) {
      out[p] = "dir";
      Object.assign(out, tree(dir, p));
    } else if (st.isFile) out[p] = Deno.readTextFileSync(`${dir}/${p}`);
    else out[p] = "special";
  }
  return out;
}

/** mkfifo paths (one process). */
async function mkfifo(...paths: string[]): Promise<void> {
  const out = await new Deno.Command("mkfifo", { args: paths }).output();
  assert.ok(out.success, `mkfifo ${paths.join(" ")}`);
}

/**
 * A Unix socket file at path, made by a child process (listening here would need a net grant the
 * suite does not have); it stays when the child exits.
 */
async function makeSocket(path: string): Promise<void> {
  const code = `Deno.listen({ transport: "unix", path: ${JSON.stringify(path)} }); Deno.exit(0);`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-config", code],
    stdout: "null",
    stderr: "null",
  }).output();
  assert.ok(out.success, `a socket at ${path}`);
}

/** Runs fn on a writable workspace over a fresh directory holding files. */
function withWs(
  files: Record<string, string | Uint8Array | null>,
  fn: (ws: Workspace, dir: string) => Promise<void>,
  limits: Partial<Limits> = {},
): Promise<void> {
  return withTempDir(async (dir) => {
    await makeTree(dir, files);
    const ws = await openWorkspace(dir, { writable: true, limits });
    try {
      await fn(ws, dir);
    } finally {
      ws.engine.close();
    }
  });
}

Deno.test("copy_path: a file, its content and permission bits; the source untouched", async () => {
  await withWs({ "a.txt": "alpha\n", "d/": null }, async (ws, dir) => {
    await Deno.chmod(`${dir}/a.txt`, 0o754);
    const r = await run(ws, "copy_path", { source: "a.txt", destination: "d/b.txt" });
    assert.deepStrictEqual(r, {
      source: "a.txt",
      destination: "d/b.txt",
      type: "file",
      overwritten: false,
      files: 1,
      directories: 0,
      symlinks: 0,
      bytes: 6,
      skipped: [],
    });
    assert.equal(await Deno.readTextFile(`${dir}/d/b.txt`), "alpha\n");
    assert.equal(await modeOf(`${dir}/d/b.txt`), 0o754);
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "alpha\n");
    const [a, b] = [await Deno.lstat(`${dir}/a.txt`), await Deno.lstat(`${dir}/d/b.txt`)];
    assert.notEqual(a.ino, b.ino, "a copy, not a second name");
    assert.equal(a.nlink, 1);
    assert.equal(b.nlink, 1);
    assert.deepEqual(await tempFilesBelow(dir), []);
  });
});

Deno.test("copy_path: a file of many chunks is copied whole, setuid dropped", async () => {
  const big = new Uint8Array(1024 * 1024 + 7).map((_, i) => (i * 31) % 251);
  await withWs({ "big.bin": big }, async (ws, dir) => {
    await Deno.chmod(`${dir}/big.bin`, 0o4755);
    const r = await run(ws, "copy_path", { source: "big.bin", destination: "copy.bin" });
    assert.equal(r.bytes, big.length);
    assert.deepEqual(await Deno.readFile(`${dir}/copy.bin`), big);
    assert.equal(await modeOf(`${dir}/copy.bin`), 0o755);
  });
});

Deno.test("copy_path: a file over maxWriteBytes is copied (a copy is not a message)", async () => {
  await withWs({ "a.txt": "0123456789abcdefghij" }, async (ws, dir) => {
    const r = await run(ws, "copy_path", { source: "a.txt", destination: "b.txt" });
    assert.equal(r.bytes, 20);
    assert.equal(await Deno.readTextFile(`${dir}/b.txt`), "0123456789abcdefghij");
  }, { maxWriteBytes: 16 });
});

Deno.test("copy_path: overwrite replaces a file or a link (never its target), refuses the rest", async () => {
  await withWs({ "a.txt": "new\n", "b.txt": "old\n", "t.txt": "target\n", "d/": null }, async (
    ws,
    dir,
  ) => {
    await Deno.symlink("t.txt", `${dir}/l`);
    await runError(ws, "copy_path", { source: "a.txt", destination: "b.txt" }, "ALREADY_EXISTS");
    assert.equal(await Deno.readTextFile(`${dir}/b.txt`), "old\n");
    // Replacing a file needs confirmation, as write_file's overwrite does; nothing changes without.
    const unconfirmed = { source: "a.txt", destination: "b.txt", overwrite: true };
    await runError(ws, "copy_path", unconfirmed, "CONFIRMATION_REQUIRED", "confirm");
    assert.equal(await Deno.readTextFile(`${dir}/b.txt`), "old\n");
    const r = await run(ws, "copy_path", {
      source: "a.txt",
      destination: "b.txt",
      overwrite: true,
      confirm: true,
    });
    assert.equal(r.overwritten, true);
    assert.equal(await Deno.readTextFile(`${dir}/b.txt`), "new\n");
    await run(ws, "copy_path", {
      source: "a.txt",
      destination: "l",
      overwrite: true,
      confirm: true,
    });
    assert.ok((await Deno.lstat(`${dir}/l`)).isFile, "the link itself was replaced");
    assert.equal(await Deno.readTextFile(`${dir}/t.txt`), "target\n");
    const dirOver = { source: "a.txt", destination: "d", overwrite: true };
    await runError(ws, "copy_path", dirOver, "IS_A_DIRECTORY", "destination");
    await Deno.link(`${dir}/t.txt`, `${dir}/t2.txt`);
    const hard = { source: "a.txt", destination: "t2.txt", overwrite: true };
    await runError(ws, "copy_path", hard, "HARD_LINKED", "destination");
    await mkfifo(`${dir}/p`);
    const fifo = { source: "a.txt", destination: "p", overwrite: true };
    await runError(ws, "copy_path", fifo, "SPECIAL_FILE", "destination");
    assert.equal(await Deno.readTextFile(`${dir}/t.txt`), "target\n");
    assert.deepEqual(await tempFilesBelow(dir), []);
  });
});

Deno.test("copy_path: a link is copied as itself, its text unchanged, never followed", async () => {
  await withWs({ "a.txt": "A", "d/": null }, async (ws, dir) => {
    await Deno.symlink("../a.txt", `${dir}/d/rel`);
    await Deno.symlink("/nowhere/at/all", `${dir}/dangling`);
    const r = await run(ws, "copy_path", { source: "d/rel", destination: "d/rel2" });
    assert.equal(r.type, "symlink");
    assert.equal(r.symlinks, 1);
    assert.equal(await Deno.readLink(`${dir}/d/rel2`), "../a.txt");
    await run(ws, "copy_path", { source: "dangling", destination: "dangling2" });
    assert.equal(await Deno.readLink(`${dir}/dangling2`), "/nowhere/at/all");
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "A");
  });
});

Deno.test("copy_path: a directory needs recursive; a tree is copied with its modes and links", async () => {
  const files = { "src/a.txt": "a\n", "src/sub/b.txt": "b\n", "src/sub/deep/c.txt": "c\n" };
  await withWs(files, async (ws, dir) => {
    await Deno.symlink("sub/b.txt", `${dir}/src/link`);
    await Deno.chmod(`${dir}/src/sub`, 0o750);
    await Deno.chmod(`${dir}/src/sub/deep`, 0o555); // filled before its mode is set
    await Deno.chmod(`${dir}/src/a.txt`, 0o600);
    const e = await runError(
      ws,
      "copy_path",
      { source: "src", destination: "dst" },
      "IS_A_DIRECTORY",
    );
    assert.equal(e.argument, "recursive");
    const r = await run(ws, "copy_path", { source: "src", destination: "dst", recursive: true });
    assert.deepStrictEqual(r, {
      source: "src",
      destination: "dst",
      type: "directory",
      overwritten: false,
      files: 3,
      directories: 3,
      symlinks: 1,
      bytes: 6,
      skipped: [],
    });
    const src = tree(`${dir}/src`);
    assert.deepEqual(tree(`${dir}/dst`), src);
    for (const p of ["", "/a.txt", "/sub", "/sub/deep", "/sub/deep/c.txt", "/sub/b.txt"]) {
      assert.equal(await modeOf(`${dir}/dst${p}`), await modeOf(`${dir}/src${p}`), p);
    }
    assert.deepEqual(await tempFilesBelow(dir), []);
    await Deno.chmod(`${dir}/src/sub/deep`, 0o755);
    await Deno.chmod(`${dir}/dst/sub/deep`, 0o755);
  });
});

Deno.test("copy_path: FIFOs, sockets and hard-linked files in a tree are skipped and listed, never opened", async () => {
  await withWs({ "src/a.txt": "a\n", "src/h1": "shared\n" }, async (ws, dir) => {
    await Deno.link(`${dir}/src/h1`, `${dir}/src/h2`);
    await mkfifo(`${dir}/src/pipe`);
    await makeSocket(`${dir}/src/sock`);
    const r = await run(ws, "copy_path", { source: "src", destination: "dst", recursive: true });
    assert.deepEqual(r.skipped, [
      { path: "src/h1", reason: "hard-linked" },
      { path: "src/h2", reason: "hard-linked" },
      { path: "src/pipe", reason: "special-file" },
      { path: "src/sock", reason: "special-file" },
    ]);
    assert.deepEqual(tree(`${dir}/dst`), { "a.txt": "a\n" });
    // As the source itself they are refused, and a FIFO never blocks the call.
    await runError(ws, "copy_path", { source: "src/pipe", destination: "p" }, "SPECIAL_FILE");
    await runError(ws, "copy_path", { source: "src/sock", destination: "s" }, "SPECIAL_FILE");
    await runError(ws, "copy_path", { source: "src/h1", destination: "h" }, "HARD_LINKED");
  });
});

Deno.test("copy_path: overwrite copies into an existing directory; conflicts refused before anything is copied", async () => {
  const files = {
    "src/same.txt": "from src\n",
    "src/new.txt": "new\n",
    "src/sub/x.txt": "x\n",
    "dst/same.txt": "old\n",
    "dst/keep.txt": "keep\n",
    "dst/sub/y.txt": "y\n",
  };
  await withWs(files, async (ws, dir) => {
    const args = { source: "src", destination: "dst", recursive: true };
    await runError(ws, "copy_path", args, "ALREADY_EXISTS", "destination");
    const r = await run(ws, "copy_path", { ...args, overwrite: true, confirm: true });
    assert.equal(r.overwritten, true);
    assert.equal(r.files, 3);
    assert.deepEqual(tree(`${dir}/dst`), {
      "keep.txt": "keep\n",
      "new.txt": "new\n",
      "same.txt": "from src\n",
      "sub": "dir",
      "sub/x.txt": "x\n",
      "sub/y.txt": "y\n",
    });
    // A directory where the copy puts a file, deep down: refused, nothing copied.
    await makeTree(dir, { "src/z.txt": "z\n", "src/sub/w/": null, "dst/sub/w": "a file\n" });
    const before = tree(dir);
    const e = await runError(ws, "copy_path", { ...args, overwrite: true }, "NOT_A_DIRECTORY");
    assert.equal(e.argument, "destination");
    assert.deepEqual(tree(dir), before);
    await runError(
      ws,
      "copy_path",
      { source: "src", destination: "dst/keep.txt", recursive: true, overwrite: true },
      "NOT_A_DIRECTORY",
    );
  });
});

Deno.test("copy_path: into itself, into a directory that holds it, the root, the same path: refused", async () => {
  await withWs({ "a/b/c.txt": "c" }, async (ws, dir) => {
    const before = tree(dir);
    const refuse = (args: Record<string, unknown>, code: "INVALID_ARGUMENT" | "ALREADY_EXISTS") =>
      runError(ws, "copy_path", { recursive: true, overwrite: true, ...args }, code);
    await refuse({ source: "a", destination: "a/b/copy" }, "INVALID_ARGUMENT");
    await refuse({ source: "a", destination: "a/copy" }, "INVALID_ARGUMENT");
    await refuse({ source: "a/b", destination: "a" }, "INVALID_ARGUMENT");
    await refuse({ source: ".", destination: "copy" }, "INVALID_ARGUMENT");
    await refuse({ source: "a", destination: "a" }, "INVALID_ARGUMENT");
    await refuse({ source: "a", destination: "." }, "ALREADY_EXISTS");
    await runError(ws, "copy_path", { source: "a/b/c.txt", destination: "x/y" }, "NOT_FOUND");
    assert.deepEqual(tree(dir), before);
  });
});

Deno.test("copy_path: a tree over maxVisited or deeper than maxDepth is refused before anything is copied", async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 12; i++) files[`src/f${i}.txt`] = `${i}\n`;
  await withWs(files, async (ws, dir) => {
    const e = await runError(
      ws,
      "copy_path",
      { source: "src", destination: "dst", recursive: true },
      "TOO_LARGE",
    );
    assert.deepEqual(e.details, { reason: "maxVisited", limit: 10 });
    assert.equal(await exists(`${dir}/dst`), false);
  }, { maxVisited: 10 });
  await withWs({ "a/b/c/d.txt": "d" }, async (ws, dir) => {
    await Deno.mkdir(`${dir}/x/y`, { recursive: true });
    const e = await runError(
      ws,
      "copy_path",
      { source: "a", destination: "x/y/a", recursive: true },
      "INVALID_ARGUMENT",
    );
    assert.equal(e.details?.limit, "maxDepth");
    assert.equal(await exists(`${dir}/x/y/a`), false);
    // Within the bound it is copied.
    await run(ws, "copy_path", { source: "a", destination: "x/a", recursive: true });
    assert.equal(await Deno.readTextFile(`${dir}/x/a/b/c/d.txt`), "d");
  }, { maxDepth: 4 });
});

Deno.test("copy_path: skipped is cut to the result byte budget, and says so", async () => {
  await withWs({ "src/a.txt": "a" }, async (ws, dir) => {
    await mkfifo(...Array.from({ length: 200 }, (_, i) => `${dir}/src/${"p".repeat(40)}${i}`));
    const r = await run(ws, "copy_path", { source: "src", destination: "dst", recursive: true });
    assert.equal(r.truncated, true);
    assert.equal(r.truncatedReason, "maxResultBytes");
    assert.ok(r.skipped.length > 0 && r.skipped.length < 200, `${r.skipped.length}`);
    assert.ok(new TextEncoder().encode(JSON.stringify(r)).length <= 4096);
    assert.equal(r.files, 1);
  }, { maxResultBytes: 4096 });
});

/** A source tree of 10 files in two directories. */
const TEN: Record<string, string> = Object.fromEntries(
  Array.from({ length: 10 }, (_, i) => [`src/${i < 5 ? "a" : "b"}/f${i}.txt`, `file ${i}\n`]),
);

/**
 * Asserts that a copy that stopped part-way names exactly the destination entries it wrote, that
 * every file there is whole (the source's content), and that no temporary file is left.
 */
async function assertStoppedCopy(dir: string, details: Record<string, unknown>): Promise<void> {
  const copied = details.copied as string[];
  assert.equal(details.committed, true);
  assert.equal(details.copiedCount, copied.length);
  const there = Object.keys(tree(`${dir}/dst`)).map((p) => `dst/${p}`);
  assert.deepEqual([...copied].sort(), ["dst", ...there].sort(), "copied names what is there");
  for (const [p, v] of Object.entries(tree(`${dir}/dst`))) {
    if (v !== "dir") assert.equal(v, await Deno.readTextFile(`${dir}/src/${p}`), `${p} is whole`);
  }
  assert.deepEqual(await tempFilesBelow(dir), []);
}

Deno.test("copy_path: cancelled part-way -> CANCELLED naming what it copied, each file whole; the same call with overwrite finishes", async () => {
  await withWs(TEN, async (ws, dir) => {
    const ac = new AbortController();
    const args = { source: "src", destination: "dst", recursive: true };
    const e = await expectError(
      runOperation(
        {
          workspace: ws,
          signal: ac.signal,
          onProgress: (p) => {
            if (p.progress === 5) ac.abort();
          },
        },
        "copy_path",
        args,
      ),
      "CANCELLED",
    );
    assert.equal(e.details?.copiedCount, 5);
    await assertStoppedCopy(dir, e.details!);
    const r = await run(ws, "copy_path", { ...args, overwrite: true, confirm: true });
    assert.equal(r.files, 10);
    assert.deepEqual(tree(`${dir}/dst`), tree(`${dir}/src`));
  });
});

Deno.test("copy_path: out of time part-way -> TIME_BUDGET_EXCEEDED naming what it copied", async () => {
  await withWs(TEN, async (ws, dir) => {
    // The operation's clock, moved past maxOperationMs once three entries are done.
    const real = performance.now.bind(performance);
    let skew = 0;
    performance.now = () => real() + skew;
    try {
      const e = await expectError(
        runOperation(
          {
            workspace: ws,
            onProgress: (p) => {
              if (p.progress === 3) skew = ws.limits.maxOperationMs + 1;
            },
          },
          "copy_path",
          { source: "src", destination: "dst", recursive: true },
        ),
        "TIME_BUDGET_EXCEEDED",
      );
      assert.equal(e.details?.copiedCount, 3);
      await assertStoppedCopy(dir, e.details!);
    } finally {
      performance.now = real;
    }
  });
});

/**
 * Runs fn while every handle fsp.open returns for a path ending in `suffix` calls onRead after
 * each of its reads.
 */
async function onReads<T>(suffix: string, onRead: (n: number) => void, fn: () => Promise<T>) {
  const open = fsp.open;
  // deno-lint-ignore no-explicit-any
  (fsp as any).open = async (...a: Parameters<typeof fsp.open>) => {
    const h = await open(...a);
    if (String(a[0]).endsWith(suffix)) {
      const read = h.read.bind(h);
      let n = 0;
      // deno-lint-ignore no-explicit-any
      (h as any).read = async (...r: any[]) => {
        const out = await read(...r);
        onRead(++n);
        return out;
      };
    }
    return h;
  };
  try {
    return await fn();
  } finally {
    // deno-lint-ignore no-explicit-any
    (fsp as any).open = open;
  }
}

Deno.test("copy_path: cancelled between two chunks of a file -> that file is not there, nothing half-written", async () => {
  const big = new Uint8Array(512 * 1024).fill(7);
  await withWs({ "big.bin": big, "src/a.txt": "a\n", "src/z.bin": big }, async (ws, dir) => {
    // A file alone: nothing changed.
    const ac = new AbortController();
    const one = () =>
      runOperation({ workspace: ws, signal: ac.signal }, "copy_path", {
        source: "big.bin",
        destination: "copy.bin",
      });
    await expectError(onReads("/big.bin", (n) => n === 2 && ac.abort(), one), "CANCELLED");
    assert.equal(await exists(`${dir}/copy.bin`), false);
    assert.deepEqual(await tempFilesBelow(dir), []);
    // In a tree: what was copied before it is whole, the file in flight is absent.
    const ac2 = new AbortController();
    const all = () =>
      runOperation({ workspace: ws, signal: ac2.signal }, "copy_path", {
        source: "src",
        destination: "dst",
        recursive: true,
      });
    const e = await expectError(
      onReads("/src/z.bin", (n) => n === 3 && ac2.abort(), all),
      "CANCELLED",
    );
    assert.deepEqual(e.details?.copied, ["dst", "dst/a.txt"]);
    await assertStoppedCopy(dir, e.details!);
    assert.equal(await exists(`${dir}/dst/z.bin`), false);
  });
});
