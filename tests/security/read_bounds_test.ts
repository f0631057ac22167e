/**
 * Issue 8, class 3 (reads and the result byte budget): read_file reads only its range plus
 * what the result promises, hashing is bounded by maxHashBytes and cancellable, the binary
 * check covers every examined byte, and read_media, edit_file, create_directory and read_file
 * results are built under maxResultBytes. Through the library (runOperation), and the CLI.
 */
import assert from "node:assert/strict";
import { runCli } from "../_support/cli.ts";
import { sha256 } from "../_support/fs.ts";
import { DEFAULT_LIMITS, type Limits, runOperation, Workspace } from "../../mod.ts";
import { expectError, run, withTimeout } from "./_helpers.ts";

const GiB = 1024 * 1024 * 1024;

/** A fresh workspace directory (real path), removed afterwards whatever happens. */
async function withWorkspace(
  fn: (dir: string, open: (limits?: Partial<Limits>) => Promise<Workspace>) => Promise<void>,
): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-reads-" }));
  try {
    await fn(dir, (limits) => Workspace.open({ root: dir, writable: true, limits }));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Creates an 8 GiB sparse file with a few lines of text at its start; returns its text. */
async function makeSparse(path: string): Promise<string> {
  const text = "first line\nsecond line\nthird line\n";
  const f = await Deno.open(path, { write: true, create: true, createNew: true });
  try {
    await f.write(new TextEncoder().encode(text));
    await f.truncate(8 * GiB);
  } finally {
    f.close();
  }
  const du = await new Deno.Command("du", { args: ["-k", path], stdout: "piped" }).output();
  const kib = Number(new TextDecoder().decode(du.stdout).split(/\s/)[0]);
  assert.ok(du.success && kib < 1024, `the sparse file uses ${kib} KiB of disk`);
  assert.equal((await Deno.stat(path)).size, 8 * GiB);
  return text;
}

/** The JSON size of a result, as adapters serialise it. */
function jsonSize(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}

Deno.test("read_file of an 8 GiB sparse file with endLine 1: the first line, promptly, hash reported as not computed", async () => {
  await withWorkspace(async (dir, open) => {
    await makeSparse(`${dir}/huge.txt`);
    const ws = await open();
    const r = await withTimeout(
      runOperation({ workspace: ws }, "read_file", { path: "huge.txt", endLine: 1 }),
      5_000,
      "read_file endLine 1",
    );
    assert.deepStrictEqual(r, {
      path: "huge.txt",
      content: "first line\n",
      size: 8 * GiB,
      startLine: 1,
      endLine: 1,
      truncated: false,
      sha256Skipped: { reason: "maxHashBytes", limit: DEFAULT_LIMITS.maxHashBytes, size: 8 * GiB },
    });
    // A range in the middle of the text, and maxBytes paging: nextStartLine without totalLines.
    const page = await withTimeout(
      runOperation({ workspace: ws }, "read_file", {
        path: "huge.txt",
        startLine: 2,
        maxBytes: 12,
      }),
      5_000,
      "read_file paged",
    );
    assert.equal(page.content, "second line\n");
    assert.equal(page.truncated, true);
    assert.equal(page.truncatedReason, "maxBytes");
    assert.equal(page.nextStartLine, 3);
    assert.equal(page.totalLines, undefined);
    assert.equal(page.sha256, undefined);
    // A range that runs into the holes (NUL bytes) is binary, whatever its first 8 KiB said.
    await expectError(
      withTimeout(
        runOperation({ workspace: ws }, "read_file", { path: "huge.txt", startLine: 3 }),
        5_000,
        "read_file into the holes",
      ),
      "BINARY_FILE",
      "path",
    );
  });
});

Deno.test("read_file of the sparse file through the CLI (a real child process, read-only permission)", async () => {
  await withWorkspace(async (dir) => {
    await makeSparse(`${dir}/huge.txt`);
    const out = await runCli(["-q", "--no-prompt", `--allow-read=${dir}`], [
      "op",
      "read_file",
      "--root",
      dir,
      "--arguments",
      JSON.stringify({ path: "huge.txt", endLine: 1 }),
    ]);
    assert.equal(out.code, 0, out.stderr);
    const r = JSON.parse(out.stdout);
    assert.equal(r.content, "first line\n");
    assert.equal(r.sha256, undefined);
    assert.deepStrictEqual(r.sha256Skipped, {
      reason: "maxHashBytes",
      limit: DEFAULT_LIMITS.maxHashBytes,
      size: 8 * GiB,
    });
  });
});

Deno.test("read_file: cancelling a read of a large hashed range is CANCELLED, and the next call works", async () => {
  await withWorkspace(async (dir, open) => {
    // 64 MiB of real text (exactly maxHashBytes, so read and hashed whole: about a thousand chunks).
    const line = "0123456789abcdef".repeat(4).slice(0, 63) + "\n";
    const block = new TextEncoder().encode(line.repeat(16 * 1024)); // 1 MiB
    const f = await Deno.open(`${dir}/big.txt`, { write: true, create: true });
    try {
      for (let i = 0; i < 64; i++) await f.write(block);
    } finally {
      f.close();
    }
    const ws = await open();
    const abort = new AbortController();
    const reading = runOperation({ workspace: ws, signal: abort.signal }, "read_file", {
      path: "big.txt",
      startLine: 1_000_000,
    });
    setTimeout(() => abort.abort(), 5);
    const err = await expectError(
      withTimeout(reading, 5_000, "cancelled read"),
      "CANCELLED",
      undefined,
    );
    assert.equal(err.code, "CANCELLED");
    // The same workspace still answers: a small range of the same file, hashed whole.
    const r = await run(ws, "read_file", { path: "big.txt", endLine: 1 }, 60_000);
    assert.equal(r.content, line);
    assert.equal(r.totalLines, 64 * 16 * 1024);
    assert.equal(r.sha256, sha256(await Deno.readFile(`${dir}/big.txt`)));
  });
});

Deno.test("read_file: a NUL or invalid UTF-8 after the first 8 KiB sniff is BINARY_FILE", async () => {
  await withWorkspace(async (dir, open) => {
    const text = "a line of text\n".repeat(1000); // 15 000 bytes, past the 8 KiB sniff
    const enc = new TextEncoder();
    await Deno.writeFile(`${dir}/nul.txt`, new Uint8Array([...enc.encode(text), 0, 10, 65, 10]));
    await Deno.writeFile(`${dir}/bad.txt`, new Uint8Array([...enc.encode(text), 0xc3, 10]));
    const ws = await open();
    for (const path of ["nul.txt", "bad.txt"]) {
      // Within maxHashBytes the whole file is examined, whatever the range.
      await expectError(run(ws, "read_file", { path }), "BINARY_FILE", "path", path);
      await expectError(run(ws, "read_file", { path, endLine: 1 }), "BINARY_FILE", "path", path);
    }
    // Over maxHashBytes only the returned lines are examined (documented): line 1 is text,
    // the line with the NUL is not.
    const small = await open({ maxHashBytes: 8192 });
    const first = await run(small, "read_file", { path: "nul.txt", endLine: 1 });
    assert.equal(first.content, "a line of text\n");
    assert.deepStrictEqual(first.sha256Skipped, {
      reason: "maxHashBytes",
      limit: 8192,
      size: text.length + 4,
    });
    await expectError(
      run(small, "read_file", { path: "nul.txt", startLine: 990 }),
      "BINARY_FILE",
      "path",
    );
    await expectError(
      run(small, "read_file", { path: "bad.txt", startLine: 1001 }),
      "BINARY_FILE",
      "path",
    );
  });
});

Deno.test("write_file overwrite of a file above maxHashBytes: no hash, said so; expectedSha256 is TOO_LARGE", async () => {
  await withWorkspace(async (dir, open) => {
    const old = "x".repeat(4095) + "\n";
    await Deno.writeTextFile(`${dir}/f.txt`, old);
    const ws = await open({ maxHashBytes: 1024 });
    // maxWriteBytes follows maxHashBytes down (it was not set explicitly).
    assert.equal(ws.limits.maxWriteBytes, 1024);
    const e = await expectError(
      run(ws, "write_file", {
        path: "f.txt",
        content: "new\n",
        ifExists: "overwrite",
        confirm: true,
        expectedSha256: sha256(old),
      }),
      "TOO_LARGE",
      "expectedSha256",
    );
    assert.deepStrictEqual(e.details, { reason: "maxHashBytes", limit: 1024, size: 4096 });
    assert.equal(await Deno.readTextFile(`${dir}/f.txt`), old, "nothing was written");
    const w = await run(ws, "write_file", {
      path: "f.txt",
      content: "new\n",
      ifExists: "overwrite",
      confirm: true,
    });
    assert.deepStrictEqual(w, {
      path: "f.txt",
      created: false,
      size: 4,
      sha256: sha256("new\n"),
      previousSha256Skipped: { reason: "maxHashBytes", limit: 1024, size: 4096 },
    });
    assert.equal(await Deno.readTextFile(`${dir}/f.txt`), "new\n");
    // Within the limit the previous hash is still returned.
    const again = await run(ws, "write_file", {
      path: "f.txt",
      content: "newer\n",
      ifExists: "overwrite",
      confirm: true,
      expectedSha256: sha256("new\n"),
    });
    assert.equal(again.previousSha256, sha256("new\n"));
  });
});

Deno.test("write_file: cancelling the overwrite's hash is CANCELLED and writes nothing", async () => {
  await withWorkspace(async (dir, open) => {
    const block = new Uint8Array(1024 * 1024).fill(0x61);
    const f = await Deno.open(`${dir}/big.txt`, { write: true, create: true });
    try {
      for (let i = 0; i < 64; i++) await f.write(block);
    } finally {
      f.close();
    }
    const before = (await Deno.stat(`${dir}/big.txt`)).mtime?.getTime();
    const ws = await open();
    const abort = new AbortController();
    const writing = runOperation({ workspace: ws, signal: abort.signal }, "write_file", {
      path: "big.txt",
      content: "small\n",
      ifExists: "overwrite",
      confirm: true,
    });
    setTimeout(() => abort.abort(), 5);
    await expectError(withTimeout(writing, 5_000, "cancelled write"), "CANCELLED", undefined);
    const st = await Deno.stat(`${dir}/big.txt`);
    assert.equal(st.size, 64 * 1024 * 1024);
    assert.equal(st.mtime?.getTime(), before);
  });
});

Deno.test("read_media: the largest allowed file fits the budget; above it, or above the budget, TOO_LARGE", async () => {
  await withWorkspace(async (dir, open) => {
    const max = DEFAULT_LIMITS.maxMediaBytes;
    await Deno.writeFile(`${dir}/max.bin`, new Uint8Array(max).fill(7));
    await Deno.writeFile(`${dir}/over.bin`, new Uint8Array(max + 1));
    const ws = await open();
    const ok = await run(ws, "read_media", { path: "max.bin" });
    assert.equal(ok.size, max);
    assert.ok(jsonSize(ok) <= DEFAULT_LIMITS.maxResultBytes, `${jsonSize(ok)} bytes`);
    const e = await expectError(run(ws, "read_media", { path: "over.bin" }), "TOO_LARGE", "path");
    assert.deepStrictEqual(e.details, { size: max + 1, limit: max });
    // A small budget: maxMediaBytes follows it down, and a result whose fixed fields (a long
    // name) push it over the budget is refused before the file is read.
    const small = await open({ maxResultBytes: 1000 });
    assert.equal(small.limits.maxMediaBytes, 561); // floor((1000 - 250) / 4) * 3
    const name = "n".repeat(200) + ".bin";
    await Deno.writeFile(`${dir}/${name}`, new Uint8Array(561));
    const b = await expectError(run(small, "read_media", { path: name }), "TOO_LARGE", "path");
    assert.equal(b.details?.reason, "maxResultBytes");
    assert.equal(b.details?.limit, 1000);
    await Deno.writeFile(`${dir}/m.bin`, new Uint8Array(561));
    assert.equal((await run(small, "read_media", { path: "m.bin" })).size, 561);
  });
});

Deno.test("limits: relations with the budget are checked when the workspace opens", async () => {
  await withWorkspace(async (_dir, open) => {
    for (
      const bad of [
        { maxReadBytes: DEFAULT_LIMITS.maxResultBytes },
        { maxMediaBytes: 4 * 1024 * 1024 },
        { maxResultBytes: 65536, maxReadBytes: 65536 },
        { maxHashBytes: 1000, maxWriteBytes: 2000 },
      ]
    ) {
      const e = await expectError(open(bad), "INVALID_ARGUMENT", "limits", JSON.stringify(bad));
      assert.match(e.message, /must be at most/);
    }
    const ws = await open({ maxResultBytes: 65536 });
    assert.equal(ws.limits.maxReadBytes, 65536 - 4096);
    assert.equal(ws.limits.maxMediaBytes, (65536 - 4096) / 4 * 3);
    const info = await run(ws, "workspace_info", {});
    assert.equal((info.limits as Limits).maxReadBytes, 65536 - 4096);
  });
});

Deno.test("read_file: content that JSON-escapes past the budget is cut with truncatedReason maxResultBytes", async () => {
  await withWorkspace(async (dir, open) => {
    // \x01 is valid UTF-8 text but takes 6 bytes in JSON ("\u0001").
    const line = "\x01".repeat(99) + "\n";
    await Deno.writeTextFile(`${dir}/ctl.txt`, line.repeat(120)); // 12 000 bytes
    const ws = await open({ maxResultBytes: 16384 });
    assert.equal(ws.limits.maxReadBytes, 12288);
    const r = await run(ws, "read_file", { path: "ctl.txt" });
    assert.equal(r.truncated, true);
    assert.equal(r.truncatedReason, "maxResultBytes");
    assert.ok(jsonSize(r) <= 16384, `${jsonSize(r)} bytes`);
    assert.equal(r.content, line.repeat(r.endLine as number));
    assert.equal(r.nextStartLine, (r.endLine as number) + 1);
    assert.equal(r.totalLines, 120);
  });
});

Deno.test("edit_file with a huge diff: the diff is cut at a line boundary and says so", async () => {
  await withWorkspace(async (dir, open) => {
    // Few changed lines (a cheap diff to compute) but long ones: about 200 KB of diff.
    const text = Array.from({ length: 50 }, (_, i) => `line ${i} old ${"x".repeat(2000)}\n`)
      .join("");
    await Deno.writeTextFile(`${dir}/e.txt`, text);
    const edits = [{ oldText: "old", newText: "new", replaceAll: true }];
    const roomy = await open();
    const full = await run(roomy, "edit_file", { path: "e.txt", edits, dryRun: true });
    assert.equal(full.truncated, undefined);
    const ws = await open({ maxResultBytes: 65536 });
    const r = await run(ws, "edit_file", { path: "e.txt", edits });
    assert.equal(r.truncated, true);
    assert.equal(r.truncatedReason, "maxResultBytes");
    assert.ok(jsonSize(r) <= 65536, `${jsonSize(r)} bytes`);
    const diff = r.diff as string;
    assert.ok(diff.length > 1000 && diff.endsWith("\n"));
    assert.ok((full.diff as string).startsWith(diff));
    assert.ok(diff.length < (full.diff as string).length);
    // The edit itself is whole.
    assert.equal(await Deno.readTextFile(`${dir}/e.txt`), text.replaceAll("old", "new"));
    assert.equal(r.sha256After, sha256(text.replaceAll("old", "new")));
  });
});

Deno.test("create_directory: createdPaths is cut to the budget and says so", async () => {
  await withWorkspace(async (dir, open) => {
    const ws = await open({ maxResultBytes: 1024 });
    const path = Array.from({ length: 30 }, (_, i) => `level-${String(i).padStart(2, "0")}`)
      .join("/");
    const r = await run(ws, "create_directory", { path });
    assert.equal(r.created, true);
    assert.equal(r.truncated, true);
    assert.equal(r.truncatedReason, "maxResultBytes");
    assert.ok(jsonSize(r) <= 1024, `${jsonSize(r)} bytes`);
    const paths = r.createdPaths as string[];
    assert.ok(paths.length > 0 && paths.length < 30);
    assert.deepStrictEqual(
      paths,
      path.split("/").slice(0, paths.length).map((_, i, a) => a.slice(0, i + 1).join("/")),
    );
    assert.ok((await Deno.stat(`${dir}/${path}`)).isDirectory);
  });
});
