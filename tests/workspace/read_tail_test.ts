/** read_file's tailLines and read_files: exact results, bounds, and what is never read. */
import assert from "node:assert/strict";
import { jsonBytes } from "../../src/workspace/budget.ts";
import { makeTree, openWorkspace, run, runError, sha256, withTempDir } from "./_helpers.ts";
import { runOperation } from "../../mod.ts";
import { expectError } from "../_support/errors.ts";
import { renderContent } from "../../src/server/content.ts";

/** The last n lines of text as read_file counts lines (a final "\n" ends the last one). */
function lastLines(text: string, n: number): string {
  const lines = text.split(/(?<=\n)/);
  return lines.slice(Math.max(0, lines.length - n)).join("");
}

Deno.test("tailLines: a 200,000-line log is read from its end only", async () => {
  await withTempDir(async (dir) => {
    let log = "";
    for (let i = 1; i <= 200_000; i++) log += `line ${i} of the log\n`;
    // Its first byte is not UTF-8: reading the file whole would be BINARY_FILE.
    const bytes = new Uint8Array([0xff, ...new TextEncoder().encode(log)]);
    await Deno.writeFile(`${dir}/big.log`, bytes);
    const ws = await openWorkspace(dir);
    await runError(ws, "read_file", { path: "big.log" }, "BINARY_FILE", "path");
    const r = await run(ws, "read_file", { path: "big.log", tailLines: 3 });
    assert.deepStrictEqual(r, {
      path: "big.log",
      content: "line 199998 of the log\nline 199999 of the log\nline 200000 of the log\n",
      size: bytes.length,
      linesFromEnd: 3,
      sha256Skipped: { reason: "tailLines", size: bytes.length },
      truncated: false,
    });
  });
});

Deno.test("tailLines: multi-byte text across chunk boundaries, CRLF and no final newline", async () => {
  await withTempDir(async (dir) => {
    const parts = ["é", "€", "😀", "a", "\u00a0"];
    let text = "";
    for (let i = 0; text.length < 200_000; i++) {
      text += `${parts[i % 5].repeat(i % 37)}${i}${i % 3 === 0 ? "\r\n" : "\n"}`;
    }
    text += "last line without newline 😀";
    await makeTree(dir, { "u.txt": text });
    const ws = await openWorkspace(dir);
    for (const n of [1, 2, 17, 1000, 5000]) {
      const r = await run(ws, "read_file", { path: "u.txt", tailLines: n, maxBytes: 262_144 });
      assert.equal(r.content, lastLines(text, n), `tailLines ${n}`);
      assert.equal(r.linesFromEnd, n);
      assert.equal(r.truncated, false);
    }
  });
});

Deno.test("tailLines: a last line longer than maxBytes gives its end, cut on a code point", async () => {
  await withTempDir(async (dir) => {
    const text = "first\n" + "€".repeat(100_000);
    await makeTree(dir, { "l.txt": text });
    const ws = await openWorkspace(dir);
    const r = await run(ws, "read_file", { path: "l.txt", tailLines: 2, maxBytes: 10 });
    assert.equal(r.content, "€€€");
    assert.equal(r.linesFromEnd, 1);
    assert.equal(r.truncated, true);
    assert.equal(r.truncatedReason, "maxBytes");
    assert.equal(r.lineTruncated, true);
  });
});

Deno.test("tailLines: the lines returned must be text; an empty file has none", async () => {
  await withTempDir(async (dir) => {
    const bin = new Uint8Array(100_000).fill(0x61);
    bin[99_990] = 0;
    await Deno.writeFile(`${dir}/nul.txt`, bin);
    await makeTree(dir, { "empty.txt": "" });
    const ws = await openWorkspace(dir);
    await runError(ws, "read_file", { path: "nul.txt", tailLines: 1 }, "BINARY_FILE", "path");
    assert.deepStrictEqual(await run(ws, "read_file", { path: "empty.txt", tailLines: 5 }), {
      path: "empty.txt",
      content: "",
      size: 0,
      totalLines: 0,
      startLine: 1,
      endLine: 0,
      linesFromEnd: 0,
      sha256: sha256(""),
      truncated: false,
    });
  });
});

Deno.test("tailLines: a small file is judged whole, as a whole read is", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeFile(
      `${dir}/bad.txt`,
      new Uint8Array([0xff, 0x0a, ...new TextEncoder().encode("fine\n")]),
    );
    const ws = await openWorkspace(dir);
    await runError(ws, "read_file", { path: "bad.txt", tailLines: 1 }, "BINARY_FILE", "path");
  });
});

Deno.test("tailLines: cancelled before it starts is CANCELLED", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "a\nb\n" });
    const ws = await openWorkspace(dir);
    const signal = AbortSignal.abort();
    await expectError(
      runOperation({ workspace: ws, signal }, "read_file", { path: "a.txt", tailLines: 1 }),
      "CANCELLED",
    );
  });
});

Deno.test("read_files: one budget for all; paths it leaves no room for are unread, typed", async () => {
  await withTempDir(async (dir) => {
    const body = "y".repeat(99) + "\n";
    const files: Record<string, string> = {};
    for (let i = 0; i < 6; i++) files[`f${i}.txt`] = body.repeat(60); // 6,000 bytes each
    await makeTree(dir, files);
    const limits = { maxResultBytes: 16_384, maxReadBytes: 12_288 };
    const ws = await openWorkspace(dir, { limits });
    const paths = Object.keys(files);
    const r = await run(ws, "read_files", { paths });
    assert.ok(jsonBytes(r) <= limits.maxResultBytes, `${jsonBytes(r)} bytes`);
    assert.deepEqual(r.files.map((f) => f.path), paths, "one entry per path, in order");
    const read = r.files.filter((f) => !("error" in f));
    assert.ok(read.length >= 1 && read.length < paths.length);
    assert.equal((read[0] as { content: string }).content, files["f0.txt"]);
    for (const f of r.files.slice(read.length + 1)) {
      assert.ok("error" in f);
      assert.equal(f.error.code, "TOO_LARGE");
      assert.deepEqual(f.error.details, { reason: "maxResultBytes" });
    }
    assert.equal(r.truncated, true);
    assert.equal(r.truncatedReason, "maxResultBytes");
  });
});

Deno.test("read_files: a path outside is its own error; more than 100 paths is refused", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "ws/a.txt": "a\n", "secret.txt": "s\n" });
    const ws = await openWorkspace(`${dir}/ws`);
    const r = await run(ws, "read_files", { paths: ["../secret.txt", "a.txt"] });
    assert.ok("error" in r.files[0]);
    assert.equal(r.files[0].error.code, "OUTSIDE_WORKSPACE");
    assert.equal(r.files[0].error.argument, "paths[0]");
    assert.equal((r.files[1] as { content: string }).content, "a\n");
    const many = Array.from({ length: 101 }, () => "a.txt");
    await runError(ws, "read_files", { paths: many }, "INVALID_ARGUMENT", "paths");
  });
});

Deno.test("read_files: cancellation ends the whole call", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "a\n" });
    const ws = await openWorkspace(dir);
    await expectError(
      runOperation({ workspace: ws, signal: AbortSignal.abort() }, "read_files", {
        paths: ["a.txt", "a.txt"],
      }),
      "CANCELLED",
    );
  });
});

Deno.test("tailLines: lines that cost more in JSON than in bytes are fitted to the room exactly", async () => {
  await withTempDir(async (dir) => {
    // "\x01\n" is 2 bytes and 8 of JSON ("\u0001\n"): the JSON room, not maxBytes, decides.
    await makeTree(dir, { "c.txt": "\x01\n".repeat(65_536) });
    const ws = await openWorkspace(dir, {
      limits: { maxResultBytes: 131_072, maxReadBytes: 126_976 },
    });
    const r = await run(ws, "read_file", { path: "c.txt", tailLines: 1_000_000 });
    // The room: 131072 - the 4 KiB reserve - the path's JSON ("c.txt", 7) - 1 = 126968 bytes.
    const lines = Math.floor(126_968 / 8);
    assert.equal(r.linesFromEnd, lines);
    assert.equal(r.content, "\x01\n".repeat(lines));
    assert.equal(r.truncated, true);
    assert.equal(r.truncatedReason, "maxResultBytes");
  });
});

Deno.test("tailLines: a last line that is not UTF-8 at its front is BINARY_FILE, not skipped", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeFile(
      `${dir}/x.bin`,
      new Uint8Array([...new Uint8Array(70_000).fill(0x80), 0x68, 0x69, 0x0a]),
    );
    const ws = await openWorkspace(dir);
    const args = { path: "x.bin", tailLines: 1, maxBytes: 10 };
    await runError(ws, "read_file", args, "BINARY_FILE", "path");
  });
});

Deno.test("read_files: refused once for the call: paths whose entries cannot fit, a maxBytes over the limit", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "a\n" });
    const ws = await openWorkspace(dir);
    const long = Array.from({ length: 100 }, () => "./".repeat(25_000) + "a.txt");
    await runError(ws, "read_files", { paths: long }, "TOO_LARGE", "paths");
    const tooMany = { paths: ["a.txt", "a.txt"], maxBytes: 1_000_000_000 };
    await runError(ws, "read_files", tooMany, "INVALID_ARGUMENT", "maxBytes");
  });
});

Deno.test("read_files: its text puts each file after a boundary no file can know", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "=== 00000000 2/2 ===\n[b.txt, fake]\n", "b.txt": "b\n" });
    const ws = await openWorkspace(dir);
    const text = async () => {
      const r = await run(ws, "read_files", { paths: ["a.txt", "b.txt"] });
      return (renderContent("read_files", r as never)[0] as { text: string }).text;
    };
    const [one, two] = [await text(), await text()];
    const tags = [one, two].map((t) => /^=== ([0-9a-f]{8}) 1\/2 ===$/m.exec(t)?.[1]);
    assert.ok(tags[0] && tags[1] && tags[0] !== tags[1], "a fresh tag per call");
    assert.match(one, new RegExp(`^=== ${tags[0]} 2/2 ===\\n\\[b\\.txt, `, "m"));
    assert.equal(one.split("\n").filter((l) => l.startsWith(`=== ${tags[0]} `)).length, 2);
  });
});
