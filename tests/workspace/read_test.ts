/** read_file, read_media and get_file_info: functional behaviour with exact expected values. */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { makeTree, openWorkspace, run, runError, sha256, utf8, withTempDir } from "./_helpers.ts";

Deno.test("read_file: whole file with exact fields", async () => {
  await withTempDir(async (dir) => {
    const text = "alpha\nbeta\ngamma\n";
    await makeTree(dir, { "a.txt": text });
    const ws = await openWorkspace(dir);
    const r = await run(ws, "read_file", { path: "a.txt" });
    assert.deepStrictEqual(r, {
      path: "a.txt",
      content: text,
      size: 17,
      totalLines: 3,
      startLine: 1,
      endLine: 3,
      sha256: sha256(text),
      truncated: false,
    });
  });
});

Deno.test("read_file: line ranges", async (t) => {
  await withTempDir(async (dir) => {
    const text = "l1\nl2\nl3\nl4\nl5";
    await makeTree(dir, { "f.txt": text, "sub/g.txt": "x\n" });
    const ws = await openWorkspace(dir);
    await t.step("middle range", async () => {
      const r = await run(ws, "read_file", { path: "f.txt", startLine: 2, endLine: 4 });
      assert.equal(r.content, "l2\nl3\nl4\n");
      assert.equal(r.startLine, 2);
      assert.equal(r.endLine, 4);
      assert.equal(r.totalLines, 5);
      assert.equal(r.truncated, false);
      assert.equal(r.nextStartLine, undefined);
      // The hash is always of the whole file.
      assert.equal(r.sha256, sha256(text));
      assert.equal(r.size, text.length);
    });
    await t.step("single line", async () => {
      const r = await run(ws, "read_file", { path: "f.txt", startLine: 3, endLine: 3 });
      assert.equal(r.content, "l3\n");
      assert.equal(r.endLine, 3);
    });
    await t.step("start only, to the end (no final newline)", async () => {
      const r = await run(ws, "read_file", { path: "f.txt", startLine: 4 });
      assert.equal(r.content, "l4\nl5");
      assert.equal(r.startLine, 4);
      assert.equal(r.endLine, 5);
    });
    await t.step("end only", async () => {
      const r = await run(ws, "read_file", { path: "f.txt", endLine: 2 });
      assert.equal(r.content, "l1\nl2\n");
      assert.equal(r.startLine, 1);
      assert.equal(r.endLine, 2);
    });
    await t.step("endLine past the end is clamped", async () => {
      const r = await run(ws, "read_file", { path: "f.txt", startLine: 5, endLine: 99 });
      assert.equal(r.content, "l5");
      assert.equal(r.endLine, 5);
    });
    await t.step("nested path", async () => {
      const r = await run(ws, "read_file", { path: "sub/g.txt" });
      assert.equal(r.path, "sub/g.txt");
      assert.equal(r.content, "x\n");
    });
    await t.step("endLine < startLine is INVALID_ARGUMENT on endLine", async () => {
      await runError(
        ws,
        "read_file",
        { path: "f.txt", startLine: 3, endLine: 2 },
        "INVALID_ARGUMENT",
        "endLine",
      );
    });
    await t.step("startLine past the end is INVALID_ARGUMENT on startLine", async () => {
      const e = await runError(
        ws,
        "read_file",
        { path: "f.txt", startLine: 6 },
        "INVALID_ARGUMENT",
        "startLine",
      );
      assert.deepStrictEqual(e.details, { totalLines: 5 });
      await runError(
        ws,
        "read_file",
        { path: "sub/g.txt", startLine: 2 },
        "INVALID_ARGUMENT",
        "startLine",
      );
    });
    await t.step("startLine 0 and non-integers are refused by the schema", async () => {
      await runError(
        ws,
        "read_file",
        { path: "f.txt", startLine: 0 },
        "INVALID_ARGUMENT",
        "startLine",
      );
      await runError(
        ws,
        "read_file",
        { path: "f.txt", endLine: 1.5 },
        "INVALID_ARGUMENT",
        "endLine",
      );
    });
  });
});

Deno.test("read_file: totalLines with and without a final newline, and empty files", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "nl.txt": "a\nb\n",
      "nonl.txt": "a\nb",
      "empty.txt": "",
      "one-nl.txt": "\n",
      "blank-lines.txt": "\n\n\n",
      "crlf.txt": "a\r\nb\r\n",
    });
    const ws = await openWorkspace(dir);
    const expect: Record<string, number> = {
      "nl.txt": 2,
      "nonl.txt": 2,
      "empty.txt": 0,
      "one-nl.txt": 1,
      "blank-lines.txt": 3,
      "crlf.txt": 2,
    };
    for (const [path, totalLines] of Object.entries(expect)) {
      const r = await run(ws, "read_file", { path });
      assert.equal(r.totalLines, totalLines, path);
      assert.equal(r.content, await Deno.readTextFile(`${dir}/${path}`), path);
    }
    const empty = await run(ws, "read_file", { path: "empty.txt" });
    assert.deepStrictEqual(empty, {
      path: "empty.txt",
      content: "",
      size: 0,
      totalLines: 0,
      startLine: 1,
      endLine: 0,
      sha256: sha256(""),
      truncated: false,
    });
    // startLine 1 of an empty file is fine; 2 is past the end.
    await runError(
      ws,
      "read_file",
      { path: "empty.txt", startLine: 2 },
      "INVALID_ARGUMENT",
      "startLine",
    );
    // CRLF is returned as is.
    const crlf = await run(ws, "read_file", { path: "crlf.txt", startLine: 2 });
    assert.equal(crlf.content, "b\r\n");
  });
});

Deno.test("read_file: sha256 matches an independent hash (multi-byte text)", async () => {
  await withTempDir(async (dir) => {
    const text = "héllo wörld ✓ 😀\nzweite Zeile\n";
    await makeTree(dir, { "u.txt": text });
    const ws = await openWorkspace(dir);
    const r = await run(ws, "read_file", { path: "u.txt" });
    assert.equal(r.sha256, sha256(utf8(text)));
    assert.equal(r.size, utf8(text).length);
    assert.equal(r.content, text);
  });
});

Deno.test("read_file: maxBytes pages continue exactly where they stopped", async () => {
  await withTempDir(async (dir) => {
    const lines = Array.from({ length: 50 }, (_, i) => `line ${i + 1} ${"é".repeat(i % 7)}\n`);
    const text = lines.join("");
    await makeTree(dir, { "p.txt": text });
    const ws = await openWorkspace(dir);
    const maxBytes = 64;
    let start = 1;
    let all = "";
    let pages = 0;
    while (true) {
      const r = await run(ws, "read_file", { path: "p.txt", startLine: start, maxBytes });
      pages++;
      assert.ok(utf8(r.content).length <= maxBytes, "page fits in maxBytes");
      assert.ok(r.content.length > 0, "every page makes progress");
      assert.equal(r.startLine, start);
      // endLine is the last line included, whole.
      assert.equal(r.content, lines.slice(start - 1, r.endLine).join(""));
      all += r.content;
      if (!r.truncated) {
        assert.equal(r.nextStartLine, undefined);
        assert.equal(r.endLine, 50);
        break;
      }
      assert.equal(r.nextStartLine, r.endLine! + 1);
      start = r.nextStartLine!;
      assert.ok(pages < 100, "paging terminates");
    }
    assert.equal(all, text);
    assert.ok(pages > 5, `several pages (${pages})`);
  });
});

Deno.test("read_file: maxBytes exactly the size of the range is not truncated", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "p.txt": "abc\ndef\n" });
    const ws = await openWorkspace(dir);
    const r = await run(ws, "read_file", { path: "p.txt", maxBytes: 8 });
    assert.equal(r.truncated, false);
    assert.equal(r.content, "abc\ndef\n");
    const r2 = await run(ws, "read_file", { path: "p.txt", maxBytes: 7 });
    assert.equal(r2.truncated, true);
    assert.equal(r2.content, "abc\n");
    assert.equal(r2.endLine, 1);
    assert.equal(r2.nextStartLine, 2);
  });
});

Deno.test("read_file: a single line longer than maxBytes is cut on a code-point boundary", async () => {
  await withTempDir(async (dir) => {
    // "é" is 2 bytes, "€" 3 bytes, "😀" 4 bytes (a surrogate pair in UTF-16).
    const line = "ab" + "é€😀".repeat(20) + "\n";
    await makeTree(dir, { "long.txt": line + "next\n" });
    const ws = await openWorkspace(dir);
    for (const maxBytes of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]) {
      const r = await run(ws, "read_file", { path: "long.txt", maxBytes });
      assert.equal(r.truncated, true, `maxBytes ${maxBytes}`);
      const bytes = utf8(r.content).length;
      assert.ok(bytes <= maxBytes, `maxBytes ${maxBytes}: ${bytes} bytes`);
      // A prefix of the line, as long as possible without splitting a code point.
      assert.ok(line.startsWith(r.content), `maxBytes ${maxBytes}: prefix`);
      const nextCp = String.fromCodePoint(line.slice(r.content.length).codePointAt(0)!);
      assert.ok(bytes + utf8(nextCp).length > maxBytes, `maxBytes ${maxBytes}: longest prefix`);
      // No lone surrogate at the end.
      assert.equal(r.content, r.content.toWellFormed());
      assert.equal(r.startLine, 1);
      assert.equal(r.endLine, 1);
    }
    const r = await run(ws, "read_file", { path: "long.txt", maxBytes: 9 });
    assert.equal(r.content, "abé€"); // 2 + 2 + 3 = 7 bytes; "😀" would make 11
  });
});

Deno.test("read_file: maxBytes above the configured limit is INVALID_ARGUMENT", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "x\n" });
    const ws = await openWorkspace(dir, { limits: { maxReadBytes: 1000 } });
    const e = await runError(
      ws,
      "read_file",
      { path: "a.txt", maxBytes: 1001 },
      "INVALID_ARGUMENT",
      "maxBytes",
    );
    assert.deepStrictEqual(e.details, { limit: 1000 });
    const ok = await run(ws, "read_file", { path: "a.txt", maxBytes: 1000 });
    assert.equal(ok.content, "x\n");
    await runError(ws, "read_file", { path: "a.txt", maxBytes: 0 }, "INVALID_ARGUMENT", "maxBytes");
  });
});

Deno.test("read_file: the default maxBytes is the workspace limit", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "0123456789\n".repeat(10) });
    const ws = await openWorkspace(dir, { limits: { maxReadBytes: 25 } });
    const r = await run(ws, "read_file", { path: "a.txt" });
    assert.equal(r.content, "0123456789\n0123456789\n");
    assert.equal(r.truncated, true);
    assert.equal(r.nextStartLine, 3);
  });
});

Deno.test("read_file: binary and invalid UTF-8 are BINARY_FILE suggesting read_media", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "nul.bin": new Uint8Array([0x68, 0x69, 0x00, 0x0a]),
      "latin1.txt": new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]), // "café" in Latin-1
      "ff.txt": new Uint8Array([0xff, 0xfe, 0x41]),
      // Valid for 70 000 bytes, then a truncated multi-byte sequence at the very end.
      "late.txt": new Uint8Array([...utf8("a\n".repeat(35_000)), 0xe2, 0x82]),
    });
    const ws = await openWorkspace(dir);
    for (const path of ["nul.bin", "latin1.txt", "ff.txt", "late.txt"]) {
      const e = await runError(ws, "read_file", { path }, "BINARY_FILE", "path");
      assert.deepStrictEqual(e.details, { suggestion: "read_media" }, path);
    }
  });
});

Deno.test("read_file: directory, missing file, missing parent", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "d/": null, "f.txt": "x" });
    const ws = await openWorkspace(dir);
    await runError(ws, "read_file", { path: "d" }, "IS_A_DIRECTORY", "path");
    await runError(ws, "read_file", { path: "." }, "IS_A_DIRECTORY", "path");
    await runError(ws, "read_file", { path: "nope.txt" }, "NOT_FOUND", "path");
    await runError(ws, "read_file", { path: "no/such/file.txt" }, "NOT_FOUND", "path");
    await runError(ws, "read_file", { path: "f.txt/child" }, "NOT_A_DIRECTORY", "path");
    await runError(ws, "read_file", { path: "" }, "INVALID_ARGUMENT", "path");
  });
});

Deno.test("read_file: a 5 MB file read in a range (streamed, hashed whole)", async () => {
  await withTempDir(async (dir) => {
    // 100-byte lines: line n is "n" zero-padded to 9 digits, a space, then filler.
    const LINE = 100;
    const N = 52_429; // ~5 MB
    const lineOf = (n: number) =>
      `${String(n).padStart(9, "0")} ${"abcdefghij".repeat(9)}`.slice(0, LINE - 1) + "\n";
    const bytes = new Uint8Array(N * LINE);
    const enc = new TextEncoder();
    for (let n = 1; n <= N; n++) enc.encodeInto(lineOf(n), bytes.subarray((n - 1) * LINE));
    await Deno.writeFile(`${dir}/big.txt`, bytes);
    // maxReadBytes far below the file size: a whole-file read would not fit.
    const ws = await openWorkspace(dir, { limits: { maxReadBytes: 64 * 1024 } });
    const r = await run(ws, "read_file", { path: "big.txt", startLine: 40_000, endLine: 40_002 });
    assert.equal(r.content, lineOf(40_000) + lineOf(40_001) + lineOf(40_002));
    assert.equal(r.totalLines, N);
    assert.equal(r.size, N * LINE);
    assert.equal(r.sha256, sha256(bytes));
    assert.equal(r.truncated, false);
    const last = await run(ws, "read_file", { path: "big.txt", startLine: N });
    assert.equal(last.content, lineOf(N));
    assert.equal(last.endLine, N);
  });
});

Deno.test("read_file: truncation at a line that spans a read chunk reports the right endLine", async () => {
  await withTempDir(async (dir) => {
    // 100-byte lines; line 656 covers bytes 65500..65599 and so spans the 64 KiB read chunk.
    const N = 1000;
    const line = (n: number) => `${String(n).padStart(5, "0")}${"x".repeat(94)}\n`;
    const text = Array.from({ length: N }, (_, i) => line(i + 1)).join("");
    await makeTree(dir, { "c.txt": text });
    const ws = await openWorkspace(dir);
    // Lines 1..655 are 65 500 bytes; the first 36 bytes of line 656 fit in 65 550, the rest does not.
    const r = await run(ws, "read_file", { path: "c.txt", maxBytes: 65_550 });
    assert.equal(r.truncated, true);
    assert.equal(r.content, text.slice(0, 65_500));
    assert.equal(r.endLine, 655);
    assert.equal(r.nextStartLine, 656);
    // A page that starts mid-file and ends on a chunk-spanning line.
    const r2 = await run(ws, "read_file", { path: "c.txt", startLine: 600, maxBytes: 5_650 });
    assert.equal(r2.content, text.slice(59_900, 65_500));
    assert.equal(r2.endLine, 655);
    assert.equal(r2.nextStartLine, 656);
    const r3 = await run(ws, "read_file", { path: "c.txt", startLine: 656, endLine: 656 });
    assert.equal(r3.content, line(656));
  });
});

Deno.test("read_media: PNG bytes round-trip through base64 with image/png", async () => {
  await withTempDir(async (dir) => {
    const png = new Uint8Array([
      0x89,
      0x50,
      0x4e,
      0x47,
      0x0d,
      0x0a,
      0x1a,
      0x0a,
      0x00,
      0x00,
      0x00,
      0x0d,
      0x49,
      0x48,
      0x44,
      0x52,
      0x00,
      0x00,
      0x00,
      0x01,
      0x00,
      0x00,
      0x00,
      0x01,
      0x08,
      0x06,
      0x00,
      0x00,
      0x00,
      0x1f,
      0x15,
      0xc4,
      0x89,
      0x00,
      0xff,
      0xfe,
      0x80,
    ]);
    await makeTree(dir, { "img/pixel.png": png });
    const ws = await openWorkspace(dir);
    const r = await run(ws, "read_media", { path: "img/pixel.png" });
    assert.equal(r.path, "img/pixel.png");
    assert.equal(r.mimeType, "image/png");
    assert.equal(r.size, png.length);
    assert.equal(r.sha256, sha256(png));
    assert.deepStrictEqual(new Uint8Array(Buffer.from(r.data, "base64")), png);
    assert.equal(r.data, Buffer.from(png).toString("base64"));
  });
});

Deno.test("read_media: MIME types by extension; unknown is application/octet-stream", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "blob.zzqx": new Uint8Array([1, 2, 3]),
      "Makefile": "all:\n",
      "photo.JPG": new Uint8Array([0xff, 0xd8, 0xff]),
      "doc.pdf": "%PDF-1.4\n",
      "empty.bin": new Uint8Array(0),
      "note.txt": "text is fine too\n",
    });
    const ws = await openWorkspace(dir);
    const expect: Record<string, string> = {
      "blob.zzqx": "application/octet-stream",
      "Makefile": "application/octet-stream",
      "photo.JPG": "image/jpeg",
      "doc.pdf": "application/pdf",
      "empty.bin": "application/octet-stream",
      "note.txt": "text/plain",
    };
    for (const [path, mimeType] of Object.entries(expect)) {
      const r = await run(ws, "read_media", { path });
      assert.equal(r.mimeType, mimeType, path);
      const bytes = await Deno.readFile(`${dir}/${path}`);
      assert.equal(r.size, bytes.length);
      assert.equal(r.data, Buffer.from(bytes).toString("base64"));
    }
  });
});

Deno.test("read_media: over maxMediaBytes is TOO_LARGE with details; errors", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      "big.bin": new Uint8Array(101),
      "ok.bin": new Uint8Array(100),
      "d/": null,
    });
    const ws = await openWorkspace(dir, { limits: { maxMediaBytes: 100 } });
    const e = await runError(ws, "read_media", { path: "big.bin" }, "TOO_LARGE", "path");
    assert.deepStrictEqual(e.details, { size: 101, limit: 100 });
    const ok = await run(ws, "read_media", { path: "ok.bin" });
    assert.equal(ok.size, 100);
    await runError(ws, "read_media", { path: "d" }, "IS_A_DIRECTORY", "path");
    await runError(ws, "read_media", { path: "missing.png" }, "NOT_FOUND", "path");
  });
});

Deno.test("get_file_info: file type, size, mode, nlink", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "f.txt": "12345", "d/": null });
    await Deno.chmod(`${dir}/f.txt`, 0o640);
    await Deno.chmod(`${dir}/d`, 0o750);
    const ws = await openWorkspace(dir);
    const st = await Deno.lstat(`${dir}/f.txt`);
    const r = await run(ws, "get_file_info", { path: "f.txt" });
    assert.deepStrictEqual(r, {
      path: "f.txt",
      type: "file",
      size: 5,
      mtime: st.mtime!.toISOString(),
      atime: st.atime!.toISOString(),
      birthtime: st.birthtime ? st.birthtime.toISOString() : null,
      ctime: st.ctime ? st.ctime.toISOString() : null,
      mode: "0640",
      nlink: 1,
      isSymlink: false,
    });
    const d = await run(ws, "get_file_info", { path: "d" });
    assert.equal(d.type, "directory");
    assert.equal(d.mode, "0750");
    assert.equal(d.isSymlink, false);
    assert.equal(d.symlink, undefined);
    const root = await run(ws, "get_file_info", { path: "." });
    assert.equal(root.path, ".");
    assert.equal(root.type, "directory");
    // A second hard link raises nlink.
    await Deno.link(`${dir}/f.txt`, `${dir}/f2.txt`);
    const linked = await run(ws, "get_file_info", { path: "f.txt" });
    assert.equal(linked.nlink, 2);
    // setuid-style bits are kept in the 4-digit mode.
    await Deno.chmod(`${dir}/d`, 0o1777);
    assert.equal((await run(ws, "get_file_info", { path: "d" })).mode, "1777");
    await runError(ws, "get_file_info", { path: "missing" }, "NOT_FOUND", "path");
  });
});

Deno.test("get_file_info: symbolic links inside the workspace and dangling ones", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "target.txt": "abc", "sub/inner.txt": "x" });
    await Deno.symlink("target.txt", `${dir}/link`);
    await Deno.symlink("sub", `${dir}/dirlink`);
    await Deno.symlink("../target.txt", `${dir}/sub/up`);
    await Deno.symlink(`${dir}/sub/inner.txt`, `${dir}/abslink`);
    await Deno.symlink("missing.txt", `${dir}/dangling`);
    await Deno.symlink("link", `${dir}/chain`);
    const ws = await openWorkspace(dir);

    const l = await run(ws, "get_file_info", { path: "link" });
    assert.equal(l.type, "symlink");
    assert.equal(l.isSymlink, true);
    assert.equal(l.size, "target.txt".length); // lstat size of a link is its target's length
    assert.deepStrictEqual(l.symlink, {
      status: "inside",
      target: "target.txt",
      targetType: "file",
    });

    assert.deepStrictEqual((await run(ws, "get_file_info", { path: "dirlink" })).symlink, {
      status: "inside",
      target: "sub",
      targetType: "directory",
    });
    assert.deepStrictEqual((await run(ws, "get_file_info", { path: "sub/up" })).symlink, {
      status: "inside",
      target: "target.txt",
      targetType: "file",
    });
    assert.deepStrictEqual((await run(ws, "get_file_info", { path: "abslink" })).symlink, {
      status: "inside",
      target: "sub/inner.txt",
      targetType: "file",
    });
    assert.deepStrictEqual((await run(ws, "get_file_info", { path: "chain" })).symlink, {
      status: "inside",
      target: "target.txt",
      targetType: "file",
    });
    const d = await run(ws, "get_file_info", { path: "dangling" });
    assert.equal(d.type, "symlink");
    assert.deepStrictEqual(d.symlink, { status: "dangling", target: "missing.txt" });
    // read_file follows an inside link.
    const viaLink = await run(ws, "read_file", { path: "link" });
    assert.equal(viaLink.content, "abc");
    assert.equal(viaLink.path, "target.txt");
    await runError(ws, "read_file", { path: "dangling" }, "NOT_FOUND", "path");
  });
});
