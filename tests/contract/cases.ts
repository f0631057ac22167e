/**
 * THE contract table: every row is run through all five adapters (library, CLI, stdio
 * server, HTTP modern, HTTP legacy) by contract_test.ts, each on a fresh copy of its
 * fixture, and must mean the same everywhere: the same structured result (after
 * normalising timestamps, cursors and directory sizes), the same error code, argument
 * and details, and the same files on disk afterwards.
 *
 * Paths in `args` go through `p` (case-relative, prefixed for shared-root servers) or
 * `p.abs`; literal paths ("." , "../outside/...", "/etc/passwd") are workspace-relative
 * on purpose (the workspace root, or an escape from it).
 */
import { createHash } from "node:crypto";
import { type Case, DIR, FIFO, type Fixture, hardlink, limitsOf, link } from "./_model.ts";

/** Hex sha256, computed independently of the code under test. */
const sha = (s: string | Uint8Array) => createHash("sha256").update(s).digest("hex");
const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

const A = "alpha\nbeta\ngamma\n";
const B_MD = "# B\nbeta line\n";
const C_TXT = "charlie\n";

/** The common read fixture. */
const BASE: Fixture = {
  "a.txt": A,
  "dir/b.md": B_MD,
  "dir/sub/c.txt": C_TXT,
  ".hidden": "hidden beta\n",
};

/** A link leading out of every workspace. */
const OUT: Fixture = { "a.txt": A, out: link("{{outside}}") };

/** 3000 lines of 100 bytes: larger than the default maxReadBytes (262144). */
const LINE = "x".repeat(99) + "\n";
const LARGE = LINE.repeat(3000);
/** Content too large for one argv string: the CLI adapter passes it on stdin. */
const BIG_CONTENT = "0123456789abcdef\n".repeat(9000);

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2]);
/** The start of a RIFF/WAVE header (read_media judges by the name, not the bytes). */
const WAV = new Uint8Array([0x52, 0x49, 0x46, 0x46, 4, 0, 0, 0, 0x57, 0x41, 0x56, 0x45]);
/** 16 characters JSON.stringify writes as \\uXXXX (6 bytes each on the wire). */
const CONTROL_16 =
  "\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u000b\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015";
const MEDIA_576 = new Uint8Array(576).fill(7);
const LINE_64 = "x".repeat(63) + "\n";
const NUL_BYTES = new Uint8Array([0x61, 0x00, 0x62, 0x0a]);
const BAD_UTF8 = new Uint8Array([0x41, 0xff, 0xfe, 0x0a]);

const entry = (path: string, type: string, size: number | string) => ({
  path,
  type,
  size: type === "directory" ? "<dir-size>" : size,
  mtime: "<time>",
});

const fileInfo = (
  path: string,
  size: number,
  mode: string,
  extra: Record<string, unknown> = {},
) => ({
  path,
  type: "file",
  size,
  mtime: "<time>",
  atime: "<time>",
  birthtime: "<time>",
  ctime: "<time>",
  mode,
  nlink: 1,
  isSymlink: false,
  ...extra,
});

const err = (code: string, argument?: string, details?: unknown) => ({
  error: { code, argument, details },
});

/** The details of a schema (zod) INVALID_ARGUMENT: one issue. */
const issue = (path: string, message: string) => ({ issues: [{ path, message }] });

/** What the servers show for a tool they do not list (read-only mode, unknown name). */
const SERVERS_UNKNOWN_TOOL = {
  stdio: { unknownTool: true },
  httpModern: { unknownTool: true },
  httpLegacy: { unknownTool: true },
} as const;

const diff = (name: string, hunk: string) =>
  `Index: ${name}\n===================================================================\n--- ${name}\n+++ ${name}\n${hunk}`;

/** The engine's pool size on this machine: the cores, clamped to 1..4. */
const POOL_SIZE = Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1));

export const CASES: Case[] = [
  // ------------------------------------------------------------------ success: read
  {
    name: "workspace_info: read-only, default limits",
    op: "workspace_info",
    args: () => ({}),
    expect: {
      result: {
        root: "ws",
        mode: "read-only",
        limits: limitsOf("ro"),
        permissions: "<process-dependent>",
        // Every adapter's process may read the engine's modules, so every one runs the pool.
        engine: { mode: "workers", workers: POOL_SIZE },
        containment: "<process-dependent>",
      },
    },
  },
  {
    name: "workspace_info: read-write with --limit overrides",
    op: "workspace_info",
    config: "small",
    args: () => ({}),
    expect: {
      result: {
        root: "ws",
        mode: "read-write",
        limits: limitsOf("small"),
        permissions: "<process-dependent>",
        // Every adapter's process may read the engine's modules, so every one runs the pool.
        engine: { mode: "workers", workers: POOL_SIZE },
        containment: "<process-dependent>",
      },
    },
  },
  {
    name: "list_directory: depth 2, sorted, directories before contents, hidden left out",
    op: "list_directory",
    fixture: BASE,
    args: (p) => ({ path: p("."), depth: 2 }),
    expect: {
      result: {
        path: ".",
        entries: [
          entry("a.txt", "file", 17),
          entry("dir", "directory", 0),
          entry("dir/b.md", "file", 14),
          entry("dir/sub", "directory", 0),
        ],
        total: 4,
        truncated: false,
      },
    },
  },
  {
    name: "list_directory: includeHidden, symlink listed not followed",
    op: "list_directory",
    fixture: { ...BASE, "l": link("dir") },
    args: (p) => ({ path: p("."), includeHidden: true }),
    expect: {
      result: {
        path: ".",
        entries: [
          entry(".hidden", "file", 12),
          entry("a.txt", "file", 17),
          entry("dir", "directory", 0),
          entry("l", "symlink", 3),
        ],
        total: 4,
        truncated: false,
      },
    },
  },
  {
    name: "list_directory: a page of 1 has nextCursor",
    op: "list_directory",
    fixture: BASE,
    args: (p) => ({ path: p("dir"), limit: 1 }),
    expect: {
      result: {
        path: "dir",
        entries: [entry("dir/b.md", "file", 14)],
        total: 2,
        nextCursor: "<cursor>",
        truncated: false,
      },
    },
  },
  {
    name: "read_file: whole file",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt") }),
    expect: {
      result: {
        path: "a.txt",
        content: A,
        size: 17,
        totalLines: 3,
        startLine: 1,
        endLine: 3,
        sha256: sha(A),
        truncated: false,
      },
    },
  },
  {
    name: "read_file: line range",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt"), startLine: 2, endLine: 2 }),
    expect: {
      result: {
        path: "a.txt",
        content: "beta\n",
        size: 17,
        totalLines: 3,
        startLine: 2,
        endLine: 2,
        sha256: sha(A),
        truncated: false,
      },
    },
  },
  {
    name: "read_file: maxBytes cuts at a line boundary with nextStartLine",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt"), maxBytes: 8 }),
    expect: {
      result: {
        path: "a.txt",
        content: "alpha\n",
        size: 17,
        totalLines: 3,
        startLine: 1,
        endLine: 1,
        sha256: sha(A),
        truncated: true,
        truncatedReason: "maxBytes",
        nextStartLine: 2,
      },
    },
  },
  {
    name: "read_file: absolute path inside the workspace",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p.abs("dir/sub/c.txt") }),
    expect: {
      result: {
        path: "dir/sub/c.txt",
        content: C_TXT,
        size: 8,
        totalLines: 1,
        startLine: 1,
        endLine: 1,
        sha256: sha(C_TXT),
        truncated: false,
      },
    },
  },
  {
    name: "read_file: through a symlink inside, result names the real path",
    op: "read_file",
    fixture: { ...BASE, "l": link("dir/sub") },
    args: (p) => ({ path: p("l/c.txt") }),
    expect: {
      result: {
        path: "dir/sub/c.txt",
        content: C_TXT,
        size: 8,
        totalLines: 1,
        startLine: 1,
        endLine: 1,
        sha256: sha(C_TXT),
        truncated: false,
      },
    },
  },
  {
    name: "read_file: an NFC request finds the NFD name on disk",
    op: "read_file",
    fixture: { "cafe\u0301.txt": "caf\u00e9\n" },
    args: (p) => ({ path: p("caf\u00e9.txt") }),
    expect: {
      result: {
        path: "cafe\u0301.txt",
        content: "caf\u00e9\n",
        size: 6,
        totalLines: 1,
        startLine: 1,
        endLine: 1,
        sha256: sha("caf\u00e9\n"),
        truncated: false,
      },
    },
  },
  {
    name: "read_file: spaces, percent signs and quotes are ordinary characters",
    op: "read_file",
    fixture: { "my file %20 'q'.txt": "odd\n" },
    args: (p) => ({ path: p("my file %20 'q'.txt") }),
    expect: {
      result: {
        path: "my file %20 'q'.txt",
        content: "odd\n",
        size: 4,
        totalLines: 1,
        startLine: 1,
        endLine: 1,
        sha256: sha("odd\n"),
        truncated: false,
      },
    },
  },
  {
    name: "read_file: empty file",
    op: "read_file",
    fixture: { "empty.txt": "" },
    args: (p) => ({ path: p("empty.txt") }),
    expect: {
      result: {
        path: "empty.txt",
        content: "",
        size: 0,
        totalLines: 0,
        startLine: 1,
        endLine: 0,
        sha256: sha(""),
        truncated: false,
      },
    },
  },
  {
    name: "read_file: one line longer than maxBytes is cut on a code point boundary",
    op: "read_file",
    fixture: { "long.txt": "\u00e9\u00e9\u00e9\u00e9\u00e9\nnext\n" },
    args: (p) => ({ path: p("long.txt"), maxBytes: 5 }),
    expect: {
      result: {
        path: "long.txt",
        content: "\u00e9\u00e9",
        size: 16,
        totalLines: 2,
        startLine: 1,
        endLine: 1,
        sha256: sha("\u00e9\u00e9\u00e9\u00e9\u00e9\nnext\n"),
        truncated: true,
        truncatedReason: "maxBytes",
        nextStartLine: 2,
        lineTruncated: true,
      },
    },
  },
  {
    name: "read_file: a large file is cut at the default maxBytes (256 KiB)",
    op: "read_file",
    fixture: { "large.txt": LARGE },
    args: (p) => ({ path: p("large.txt") }),
    expect: {
      result: {
        path: "large.txt",
        content: LINE.repeat(2621),
        size: 300_000,
        totalLines: 3000,
        startLine: 1,
        endLine: 2621,
        sha256: sha(LARGE),
        truncated: true,
        truncatedReason: "maxBytes",
        nextStartLine: 2622,
      },
    },
  },
  {
    name: "read_media: PNG bytes as base64 with MIME type",
    op: "read_media",
    fixture: { "img.png": PNG },
    args: (p) => ({ path: p("img.png") }),
    expect: {
      result: {
        path: "img.png",
        mimeType: "image/png",
        size: PNG.length,
        sha256: sha(PNG),
        data: b64(PNG),
      },
    },
  },
  {
    name: "read_media: WAV bytes (an audio block over MCP)",
    op: "read_media",
    fixture: { "s.wav": WAV },
    args: (p) => ({ path: p("s.wav") }),
    expect: {
      result: {
        path: "s.wav",
        mimeType: "audio/wav",
        size: WAV.length,
        sha256: sha(WAV),
        data: b64(WAV),
      },
    },
  },
  {
    name: "read_media: other binary (an embedded resource blob over MCP), a name to encode",
    op: "read_media",
    fixture: { "a dir/x #1.bin": NUL_BYTES },
    args: (p) => ({ path: p("a dir/x #1.bin") }),
    expect: {
      result: {
        path: "a dir/x #1.bin",
        mimeType: "application/octet-stream",
        size: NUL_BYTES.length,
        sha256: sha(NUL_BYTES),
        data: b64(NUL_BYTES),
      },
    },
  },
  {
    name: "get_file_info: regular file",
    op: "get_file_info",
    fixture: { "f.txt": { file: "hello\n", mode: 0o640 } },
    args: (p) => ({ path: p("f.txt") }),
    expect: { result: fileInfo("f.txt", 6, "0640") },
  },
  {
    name: "get_file_info: symlink inside (not followed, target described)",
    op: "get_file_info",
    fixture: { ...BASE, "l": link("dir/b.md") },
    args: (p) => ({ path: p("l") }),
    expect: {
      result: fileInfo("l", 8, "0777", {
        type: "symlink",
        isSymlink: true,
        symlink: { status: "inside", target: "dir/b.md", targetType: "file" },
      }),
    },
  },
  {
    name: "get_file_info: symlink leading outside (target not shown)",
    op: "get_file_info",
    fixture: OUT,
    args: (p) => ({ path: p("out") }),
    mask: ["size"],
    expect: {
      result: fileInfo("out", 0, "0777", {
        size: "<masked>",
        type: "symlink",
        isSymlink: true,
        symlink: { status: "outside" },
      }),
    },
  },
  {
    name: "get_file_info: dangling symlink",
    op: "get_file_info",
    fixture: { "d": link("missing.txt") },
    args: (p) => ({ path: p("d") }),
    expect: {
      result: fileInfo("d", 11, "0777", {
        type: "symlink",
        isSymlink: true,
        symlink: { status: "dangling", target: "missing.txt" },
      }),
    },
  },
  {
    name: "get_file_info: a symlink loop is described as a loop",
    op: "get_file_info",
    fixture: { "l1": link("l2"), "l2": link("l1") },
    args: (p) => ({ path: p("l1") }),
    expect: {
      result: fileInfo("l1", 2, "0777", {
        type: "symlink",
        isSymlink: true,
        symlink: { status: "loop" },
      }),
    },
  },
  {
    name: "get_file_info: a FIFO is described, not opened",
    op: "get_file_info",
    fixture: { "p": FIFO },
    args: (p) => ({ path: p("p") }),
    mask: ["mode"],
    expect: { result: fileInfo("p", 0, "<masked>", { type: "other" }) },
  },
  {
    name: "find_files: pattern without / matches base names at any depth",
    op: "find_files",
    fixture: BASE,
    args: (p) => ({ pattern: "*.txt", path: p(".") }),
    expect: {
      result: {
        path: ".",
        matches: [{ path: "a.txt", type: "file" }, { path: "dir/sub/c.txt", type: "file" }],
        visited: 5,
        truncated: false,
      },
    },
  },
  {
    name: "find_files: .gitignore honoured, exclude applied, maxResults truncates",
    op: "find_files",
    fixture: {
      ".gitignore": "ignored.txt\n",
      "ignored.txt": "i\n",
      "k1.txt": "k\n",
      "k2.txt": "k\n",
      "k3.txt": "k\n",
      "skip/k4.txt": "k\n",
    },
    args: (p) => ({ pattern: "*.txt", path: p("."), exclude: ["skip"], maxResults: 2 }),
    expect: {
      result: {
        path: ".",
        matches: [{ path: "k1.txt", type: "file" }, { path: "k2.txt", type: "file" }],
        visited: 3,
        truncated: true,
        truncatedReason: "maxResults",
      },
    },
  },
  {
    name: "find_files: a pattern with / matches paths relative to path",
    op: "find_files",
    fixture: { ...BASE, "dir/x.txt": "x\n" },
    args: (p) => ({ pattern: "sub/*.txt", path: p("dir") }),
    expect: {
      result: {
        path: "dir",
        matches: [{ path: "dir/sub/c.txt", type: "file" }],
        visited: 4,
        truncated: false,
      },
    },
  },
  {
    name: "search_text: literal with context lines",
    op: "search_text",
    fixture: BASE,
    args: (p) => ({ query: "beta", path: p("."), contextLines: 1 }),
    expect: {
      result: {
        matches: [
          { path: "a.txt", line: 2, column: 1, text: "beta", before: ["alpha"], after: ["gamma"] },
          { path: "dir/b.md", line: 2, column: 1, text: "beta line", before: ["# B"], after: [] },
        ],
        filesSearched: 3,
        filesMatched: 2,
        filesSkipped: { binary: 0, tooLarge: 0, unreadable: 0 },
        visited: 5,
        truncated: false,
      },
    },
  },
  {
    name: "search_text: regex, case-insensitive, include glob; binary skipped and counted",
    op: "search_text",
    fixture: { ...BASE, "bin.txt": NUL_BYTES, "dir/B.txt": "Bravo beta\n" },
    args: (p) => ({
      query: "^b\\w+",
      regex: true,
      caseSensitive: false,
      path: p("."),
      include: ["*.txt"],
    }),
    expect: {
      result: {
        matches: [
          { path: "a.txt", line: 2, column: 1, text: "beta" },
          { path: "dir/B.txt", line: 1, column: 1, text: "Bravo beta" },
        ],
        filesSearched: 3,
        filesMatched: 2,
        filesSkipped: { binary: 1, tooLarge: 0, unreadable: 0 },
        visited: 7,
        truncated: false,
      },
    },
  },
  {
    name: "search_text: maxMatches truncates, maxFileBytes skips larger files",
    op: "search_text",
    fixture: { "big.txt": `hit ${"x".repeat(40)}\n`, "m.txt": "hit\nhit\nhit\n" },
    args: (p) => ({ query: "hit", path: p("."), maxMatches: 2, maxFileBytes: 20 }),
    expect: {
      result: {
        matches: [
          { path: "m.txt", line: 1, column: 1, text: "hit" },
          { path: "m.txt", line: 2, column: 1, text: "hit" },
        ],
        filesSearched: 1,
        filesMatched: 1,
        filesSkipped: { binary: 0, tooLarge: 1, unreadable: 0 },
        visited: 2,
        truncated: true,
        truncatedReason: "maxMatches",
      },
    },
  },
  {
    name: "search_text: column counts UTF-16 code units",
    op: "search_text",
    fixture: { "u.txt": "\u{1F600} caf\u00e9 beta\n" },
    args: (p) => ({ query: "beta", path: p(".") }),
    expect: {
      result: {
        matches: [{ path: "u.txt", line: 1, column: 9, text: "\u{1F600} caf\u00e9 beta" }],
        filesSearched: 1,
        filesMatched: 1,
        filesSkipped: { binary: 0, tooLarge: 0, unreadable: 0 },
        visited: 1,
        truncated: false,
      },
    },
  },

  // ------------------------------------------------------------------ success: write
  {
    name: "write_file: creates a new file",
    op: "write_file",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("new.txt"), content: "fresh\n" }),
    expect: { result: { path: "new.txt", created: true, size: 6, sha256: sha("fresh\n") } },
    after: { "a.txt": A, "new.txt": "fresh\n" },
  },
  {
    name: "write_file: large content (over one argv string; CLI gets it on stdin)",
    op: "write_file",
    fixture: {},
    args: (p) => ({ path: p("big.txt"), content: BIG_CONTENT }),
    expect: {
      result: { path: "big.txt", created: true, size: 153_000, sha256: sha(BIG_CONTENT) },
    },
    after: { "big.txt": BIG_CONTENT },
  },
  {
    name: "write_file: createParents creates the missing directories",
    op: "write_file",
    fixture: {},
    args: (p) => ({ path: p("x/y/z.txt"), content: "z\u00e9", createParents: true }),
    expect: {
      result: { path: "x/y/z.txt", created: true, size: 3, sha256: sha("z\u00e9") },
    },
    after: { "x/y/z.txt": "z\u00e9" },
  },
  {
    name: "write_file: overwrite with confirm and a matching expectedSha256",
    op: "write_file",
    fixture: { "a.txt": A },
    args: (p) => ({
      path: p("a.txt"),
      content: "replaced\n",
      ifExists: "overwrite",
      expectedSha256: sha(A),
      confirm: true,
    }),
    expect: {
      result: {
        path: "a.txt",
        created: false,
        size: 9,
        sha256: sha("replaced\n"),
        previousSha256: sha(A),
      },
    },
    after: { "a.txt": "replaced\n" },
  },
  {
    name: "write_file: an NFC path replaces the existing NFD entry (no second file)",
    op: "write_file",
    fixture: { "cafe\u0301.txt": "old\n" },
    args: (p) => ({
      path: p("caf\u00e9.txt"),
      content: "new\n",
      ifExists: "overwrite",
      confirm: true,
    }),
    expect: {
      result: {
        path: "cafe\u0301.txt",
        created: false,
        size: 4,
        sha256: sha("new\n"),
        previousSha256: sha("old\n"),
      },
    },
    after: { "cafe\u0301.txt": "new\n" },
  },
  {
    name: "edit_file: one replacement, unified diff",
    op: "edit_file",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("a.txt"), edits: [{ oldText: "beta", newText: "BETA" }] }),
    expect: {
      result: {
        path: "a.txt",
        dryRun: false,
        changed: true,
        replacements: 1,
        lineEnding: "lf",
        diff: diff("a.txt", "@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n"),
        sha256Before: sha(A),
        sha256After: sha("alpha\nBETA\ngamma\n"),
      },
    },
    after: { "a.txt": "alpha\nBETA\ngamma\n" },
  },
  {
    name: "edit_file: dryRun reports the diff and writes nothing",
    op: "edit_file",
    fixture: { "a.txt": A },
    args: (p) => ({
      path: p("a.txt"),
      edits: [{ oldText: "gamma", newText: "delta" }],
      dryRun: true,
    }),
    expect: {
      result: {
        path: "a.txt",
        dryRun: true,
        changed: true,
        replacements: 1,
        lineEnding: "lf",
        diff: diff("a.txt", "@@ -1,3 +1,3 @@\n alpha\n beta\n-gamma\n+delta\n"),
        sha256Before: sha(A),
        sha256After: sha("alpha\nbeta\ndelta\n"),
      },
    },
  },
  {
    name: "edit_file: CRLF kept, LF oldText matches, replaceAll, no final newline kept",
    op: "edit_file",
    fixture: { "w.txt": "x one\r\nx two\r\nend" },
    args: (p) => ({
      path: p("w.txt"),
      edits: [
        { oldText: "x", newText: "y", replaceAll: true },
        { oldText: "one\ny two", newText: "1\ny 2" },
      ],
    }),
    expect: {
      result: {
        path: "w.txt",
        dryRun: false,
        changed: true,
        replacements: 3,
        lineEnding: "crlf",
        diff: diff(
          "w.txt",
          "@@ -1,3 +1,3 @@\n-x one\n-x two\n+y 1\n+y 2\n end\n\\ No newline at end of file\n",
        ),
        sha256Before: sha("x one\r\nx two\r\nend"),
        sha256After: sha("y 1\r\ny 2\r\nend"),
      },
    },
    after: { "w.txt": "y 1\r\ny 2\r\nend" },
  },
  {
    name: "edit_file: a no-op edit reports changed false and an empty diff",
    op: "edit_file",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("a.txt"), edits: [{ oldText: "beta", newText: "beta" }] }),
    expect: {
      result: {
        path: "a.txt",
        dryRun: false,
        changed: false,
        replacements: 1,
        lineEnding: "lf",
        diff: "",
        sha256Before: sha(A),
        sha256After: sha(A),
      },
    },
  },
  {
    name: "create_directory: missing parents created",
    op: "create_directory",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("n/m") }),
    expect: { result: { path: "n/m", created: true, createdPaths: ["n", "n/m"] } },
    after: { "a.txt": A, "n/m": DIR },
  },
  {
    name: "create_directory: an existing directory is success, created false",
    op: "create_directory",
    fixture: BASE,
    args: (p) => ({ path: p("dir/sub") }),
    expect: { result: { path: "dir/sub", created: false, createdPaths: [] } },
  },
  {
    name: "create_directory: through a symlink inside, result names the real path",
    op: "create_directory",
    fixture: { "d/": DIR, "l": link("d") },
    args: (p) => ({ path: p("l/new") }),
    expect: { result: { path: "d/new", created: true, createdPaths: ["d/new"] } },
    after: { "d/new": DIR, "l": link("d") },
  },
  {
    name: "move_path: rename a file into another directory",
    op: "move_path",
    fixture: BASE,
    args: (p) => ({ source: p("a.txt"), destination: p("dir/sub/moved.txt") }),
    expect: {
      result: {
        source: "a.txt",
        destination: "dir/sub/moved.txt",
        type: "file",
        overwritten: false,
      },
    },
    after: {
      "dir/b.md": B_MD,
      "dir/sub/c.txt": C_TXT,
      "dir/sub/moved.txt": A,
      ".hidden": "hidden beta\n",
    },
  },
  {
    name: "move_path: a symlink moves as a link (target text unchanged)",
    op: "move_path",
    fixture: { "a.txt": A, "l": link("a.txt"), "d/": DIR },
    args: (p) => ({ source: p("l"), destination: p("d/l2") }),
    expect: {
      result: { source: "l", destination: "d/l2", type: "symlink", overwritten: false },
    },
    after: { "a.txt": A, "d/l2": link("a.txt") },
  },
  {
    name: "move_path: overwrite replaces an empty directory with a directory",
    op: "move_path",
    fixture: { "src/f.txt": "f\n", "empty": DIR },
    args: (p) => ({ source: p("src"), destination: p("empty"), overwrite: true }),
    expect: {
      result: { source: "src", destination: "empty", type: "directory", overwritten: true },
    },
    after: { "empty/f.txt": "f\n" },
  },
  {
    name: "move_path: overwrite replaces an existing file",
    op: "move_path",
    fixture: BASE,
    args: (p) => ({ source: p("a.txt"), destination: p("dir/b.md"), overwrite: true }),
    expect: {
      result: { source: "a.txt", destination: "dir/b.md", type: "file", overwritten: true },
    },
    after: { "dir/b.md": A, "dir/sub/c.txt": C_TXT, ".hidden": "hidden beta\n" },
  },
  {
    name: "delete_path: a file, confirmed",
    op: "delete_path",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt"), confirm: true }),
    expect: { result: { path: "a.txt", type: "file", deleted: true } },
    after: { "dir/b.md": B_MD, "dir/sub/c.txt": C_TXT, ".hidden": "hidden beta\n" },
  },
  {
    name: "delete_path: a non-empty directory with recursive",
    op: "delete_path",
    fixture: BASE,
    args: (p) => ({ path: p("dir"), recursive: true, confirm: true }),
    expect: { result: { path: "dir", type: "directory", deleted: true } },
    after: { "a.txt": A, ".hidden": "hidden beta\n" },
  },
  {
    name: "delete_path: an empty directory needs no recursive",
    op: "delete_path",
    fixture: { "a.txt": A, "e/": DIR },
    args: (p) => ({ path: p("e"), confirm: true }),
    expect: { result: { path: "e", type: "directory", deleted: true } },
    after: { "a.txt": A },
  },
  {
    name: "delete_path: a symlink to a directory, never its target",
    op: "delete_path",
    fixture: { ...BASE, "l": link("dir") },
    args: (p) => ({ path: p("l"), confirm: true }),
    expect: { result: { path: "l", type: "symlink", deleted: true } },
    after: BASE,
  },

  // ------------------------------------------------------------------ INVALID_ARGUMENT
  {
    name: "INVALID_ARGUMENT: unknown argument",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt"), bogus: 1 }),
    expect: err("INVALID_ARGUMENT", "bogus", issue("", 'Unrecognized key: "bogus"')),
  },
  {
    name: "INVALID_ARGUMENT: path of the wrong type",
    op: "get_file_info",
    fixture: BASE,
    args: () => ({ path: 7 }),
    expect: err(
      "INVALID_ARGUMENT",
      "path",
      issue("path", "Invalid input: expected string, received number"),
    ),
  },
  {
    name: "INVALID_ARGUMENT: null path",
    op: "read_file",
    fixture: BASE,
    args: () => ({ path: null }),
    expect: err(
      "INVALID_ARGUMENT",
      "path",
      issue("path", "Invalid input: expected string, received null"),
    ),
  },
  {
    name: "INVALID_ARGUMENT: empty path",
    op: "list_directory",
    fixture: BASE,
    args: () => ({ path: "" }),
    expect: err(
      "INVALID_ARGUMENT",
      "path",
      issue("path", "Too small: expected string to have >=1 characters"),
    ),
  },
  {
    name: "INVALID_ARGUMENT: NUL byte in a path",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt\u0000.png") }),
    expect: err("INVALID_ARGUMENT", "path"),
  },
  {
    name: "INVALID_ARGUMENT: depth out of range",
    op: "list_directory",
    fixture: BASE,
    args: (p) => ({ path: p("."), depth: 11 }),
    expect: err("INVALID_ARGUMENT", "depth", issue("depth", "Too big: expected number to be <=10")),
  },
  {
    name: "INVALID_ARGUMENT: limit above the configured maxListEntries",
    op: "list_directory",
    fixture: BASE,
    args: (p) => ({ path: p("."), limit: 1001 }),
    expect: err("INVALID_ARGUMENT", "limit", { limit: 1000 }),
  },
  {
    name: "INVALID_ARGUMENT: foreign cursor",
    op: "list_directory",
    fixture: BASE,
    args: (p) => ({ path: p("."), cursor: btoa(JSON.stringify({ v: 1, o: 1, k: "nope" })) }),
    expect: err("INVALID_ARGUMENT", "cursor"),
  },
  {
    name: "INVALID_ARGUMENT: endLine before startLine",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt"), startLine: 3, endLine: 2 }),
    expect: err(
      "INVALID_ARGUMENT",
      "endLine",
      issue("endLine", "endLine must not be less than startLine"),
    ),
  },
  {
    name: "INVALID_ARGUMENT: startLine past the end",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt"), startLine: 9 }),
    expect: err("INVALID_ARGUMENT", "startLine", { totalLines: 3 }),
  },
  {
    name: "INVALID_ARGUMENT: maxBytes above a --limit maxReadBytes",
    op: "read_file",
    config: "small",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt"), maxBytes: 65 }),
    expect: err("INVALID_ARGUMENT", "maxBytes", { limit: 64 }),
  },
  {
    name: "INVALID_ARGUMENT: multi-line literal query",
    op: "search_text",
    fixture: BASE,
    args: (p) => ({ query: "alpha\nbeta", path: p(".") }),
    expect: err("INVALID_ARGUMENT", "query"),
  },
  {
    name: "INVALID_ARGUMENT: edits empty",
    op: "edit_file",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("a.txt"), edits: [] }),
    expect: err(
      "INVALID_ARGUMENT",
      "edits",
      issue("edits", "Too small: expected array to have >=1 items"),
    ),
  },
  {
    name: "INVALID_ARGUMENT: expectedSha256 not 64 hex digits",
    op: "write_file",
    fixture: { "a.txt": A },
    args: (p) => ({
      path: p("a.txt"),
      content: "x",
      ifExists: "overwrite",
      expectedSha256: "abc",
      confirm: true,
    }),
    expect: err(
      "INVALID_ARGUMENT",
      "expectedSha256",
      issue("expectedSha256", "must be 64 hex digits"),
    ),
  },
  {
    name: "INVALID_ARGUMENT: the workspace root cannot be deleted",
    op: "delete_path",
    fixture: { "a.txt": A },
    args: () => ({ path: ".", recursive: true, confirm: true }),
    expect: err("INVALID_ARGUMENT", "path"),
  },
  {
    name: "INVALID_ARGUMENT: the workspace root cannot be moved",
    op: "move_path",
    fixture: { "a.txt": A },
    args: (p) => ({ source: ".", destination: p("x") }),
    expect: err("INVALID_ARGUMENT", "source"),
  },
  {
    name: "INVALID_ARGUMENT: a directory cannot move into itself",
    op: "move_path",
    fixture: BASE,
    args: (p) => ({ source: p("dir"), destination: p("dir/sub/dir") }),
    expect: err("INVALID_ARGUMENT", "destination"),
  },
  {
    name: "INVALID_ARGUMENT: source and destination are the same path",
    op: "move_path",
    fixture: { "a.txt": A },
    args: (p) => ({ source: p("a.txt"), destination: p("./a.txt") }),
    expect: err("INVALID_ARGUMENT", "destination"),
  },
  {
    name: "INVALID_ARGUMENT: a lone UTF-16 surrogate in a path",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a\ud800.txt") }),
    expect: err("INVALID_ARGUMENT", "path"),
    ignore: {
      httpModern:
        "a transport-level refusal before the tool runs: the v2 client mirrors the path into " +
        "Mcp-Param-Path as UTF-8 (the lone surrogate becomes U+FFFD), so the server's header/body " +
        "check answers HTTP 400 / JSON-RPC -32020; every other adapter reaches the tool",
    },
  },

  // ------------------------------------------------------------------ containment
  {
    name: "OUTSIDE_WORKSPACE: .. escapes the root",
    op: "read_file",
    fixture: BASE,
    args: () => ({ path: "../outside/secret.txt" }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: .. after descending still escapes",
    op: "get_file_info",
    fixture: BASE,
    args: (p) => ({ path: p("dir/../../../../../../../../outside/secret.txt") }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: absolute path elsewhere",
    op: "read_file",
    fixture: BASE,
    args: () => ({ path: "/etc/passwd" }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: absolute path that starts inside and climbs out",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p.abs("../../../outside/secret.txt") }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: write_file to an absolute path outside creates nothing",
    op: "write_file",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p.out("new.txt"), content: "x" }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: through a symlink that leads outside",
    op: "read_file",
    fixture: OUT,
    args: (p) => ({ path: p("out/secret.txt") }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: through a link out even when .. would come back in",
    op: "read_file",
    fixture: OUT,
    args: (p) => ({ path: p("out/../ws/a.txt") }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: list_directory of a link to outside",
    op: "list_directory",
    fixture: OUT,
    args: (p) => ({ path: p("out") }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: search_text path through a link out",
    op: "search_text",
    fixture: OUT,
    args: (p) => ({ query: "secret", path: p("out") }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: write_file through a link out creates nothing outside",
    op: "write_file",
    fixture: OUT,
    args: (p) => ({ path: p("out/new.txt"), content: "x" }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: edit_file through a link out",
    op: "edit_file",
    fixture: OUT,
    args: (p) => ({ path: p("out/secret.txt"), edits: [{ oldText: "secret", newText: "x" }] }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: create_directory below a link out",
    op: "create_directory",
    fixture: OUT,
    args: (p) => ({ path: p("out/newdir") }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: move_path source behind a link out",
    op: "move_path",
    fixture: OUT,
    args: (p) => ({ source: p("out/secret.txt"), destination: p("stolen.txt") }),
    expect: err("OUTSIDE_WORKSPACE", "source"),
  },
  {
    name: "OUTSIDE_WORKSPACE: move_path destination outside",
    op: "move_path",
    fixture: { "a.txt": A },
    args: (p) => ({ source: p("a.txt"), destination: "../outside/a.txt" }),
    expect: err("OUTSIDE_WORKSPACE", "destination"),
  },
  {
    name: "OUTSIDE_WORKSPACE: delete_path of a file behind a link out",
    op: "delete_path",
    fixture: OUT,
    args: (p) => ({ path: p("out/secret.txt"), confirm: true }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },

  // ------------------------------------------------------------------ other typed errors
  {
    name: "NOT_FOUND: read_file of a missing file",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("missing.txt") }),
    expect: err("NOT_FOUND", "path"),
  },
  {
    name: "NOT_FOUND: write_file with a missing parent and no createParents",
    op: "write_file",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("no/such/f.txt"), content: "x" }),
    expect: err("NOT_FOUND", "path"),
  },
  {
    name: "NOT_FOUND: move_path of a missing source",
    op: "move_path",
    fixture: { "a.txt": A },
    args: (p) => ({ source: p("missing"), destination: p("b") }),
    expect: err("NOT_FOUND", "source"),
  },
  {
    name: "NOT_FOUND: create_directory without parents",
    op: "create_directory",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("n/m"), parents: false }),
    expect: err("NOT_FOUND", "path"),
  },
  {
    name: "NOT_FOUND: delete_path of a missing path",
    op: "delete_path",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("missing"), confirm: true }),
    expect: err("NOT_FOUND", "path"),
  },
  {
    name: "INVALID_ARGUMENT: a name longer than NAME_MAX",
    op: "get_file_info",
    fixture: BASE,
    args: (p) => ({ path: p("n".repeat(300)) }),
    expect: err("INVALID_ARGUMENT", "path"),
  },
  {
    name: "ALREADY_EXISTS: write_file onto an existing file (ifExists error)",
    op: "write_file",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("a.txt"), content: "x" }),
    expect: err("ALREADY_EXISTS", "path"),
  },
  {
    name: "ALREADY_EXISTS: create_directory where a file is",
    op: "create_directory",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("a.txt") }),
    expect: err("ALREADY_EXISTS", "path"),
  },
  {
    name: "ALREADY_EXISTS: move_path onto an existing file without overwrite",
    op: "move_path",
    fixture: BASE,
    args: (p) => ({ source: p("a.txt"), destination: p("dir/b.md") }),
    expect: err("ALREADY_EXISTS", "destination"),
  },
  {
    name: "ALREADY_EXISTS: move_path onto the workspace root",
    op: "move_path",
    fixture: { "a.txt": A },
    args: (p) => ({ source: p("a.txt"), destination: ".", overwrite: true }),
    expect: err("ALREADY_EXISTS", "destination"),
  },
  {
    name: "NOT_A_DIRECTORY: list_directory of a file",
    op: "list_directory",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt") }),
    expect: err("NOT_A_DIRECTORY", "path"),
  },
  {
    name: "NOT_A_DIRECTORY: a path through a file",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt/x") }),
    expect: err("NOT_A_DIRECTORY", "path"),
  },
  {
    name: "NOT_A_DIRECTORY: search_text path is a file",
    op: "search_text",
    fixture: BASE,
    args: (p) => ({ query: "beta", path: p("a.txt") }),
    expect: err("NOT_A_DIRECTORY", "path"),
  },
  {
    name: "NOT_A_DIRECTORY: move a directory onto a file with overwrite",
    op: "move_path",
    fixture: BASE,
    args: (p) => ({ source: p("dir/sub"), destination: p("a.txt"), overwrite: true }),
    expect: err("NOT_A_DIRECTORY", "destination"),
  },
  {
    name: "IS_A_DIRECTORY: read_file of a directory",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("dir") }),
    expect: err("IS_A_DIRECTORY", "path"),
  },
  {
    name: "IS_A_DIRECTORY: write_file onto a directory",
    op: "write_file",
    fixture: BASE,
    args: (p) => ({ path: p("dir"), content: "x", ifExists: "overwrite", confirm: true }),
    expect: err("IS_A_DIRECTORY", "path"),
  },
  {
    name: "IS_A_DIRECTORY: write_file onto the workspace root",
    op: "write_file",
    fixture: { "a.txt": A },
    args: () => ({ path: ".", content: "x", ifExists: "overwrite", confirm: true }),
    expect: err("IS_A_DIRECTORY", "path"),
  },
  {
    name: "IS_A_DIRECTORY: move a file onto a directory with overwrite",
    op: "move_path",
    fixture: BASE,
    args: (p) => ({ source: p("a.txt"), destination: p("dir"), overwrite: true }),
    expect: err("IS_A_DIRECTORY", "destination"),
  },
  {
    name: "DIRECTORY_NOT_EMPTY: delete_path without recursive",
    op: "delete_path",
    fixture: BASE,
    args: (p) => ({ path: p("dir"), confirm: true }),
    expect: err("DIRECTORY_NOT_EMPTY", "recursive"),
  },
  {
    name: "DIRECTORY_NOT_EMPTY: move a directory onto a non-empty directory",
    op: "move_path",
    fixture: { "s/x.txt": "x\n", "t/y.txt": "y\n" },
    args: (p) => ({ source: p("s"), destination: p("t"), overwrite: true }),
    expect: err("DIRECTORY_NOT_EMPTY", "destination"),
  },
  {
    name: "SPECIAL_FILE: read_file of a FIFO (never blocks)",
    op: "read_file",
    fixture: { "p": FIFO },
    args: (p) => ({ path: p("p") }),
    expect: err("SPECIAL_FILE", "path"),
  },
  {
    name: "SPECIAL_FILE: write_file over a FIFO",
    op: "write_file",
    fixture: { "p": FIFO },
    args: (p) => ({ path: p("p"), content: "x", ifExists: "overwrite", confirm: true }),
    expect: err("SPECIAL_FILE", "path"),
  },
  {
    name: "SPECIAL_FILE: read_media of a FIFO",
    op: "read_media",
    fixture: { "p": FIFO },
    args: (p) => ({ path: p("p") }),
    expect: err("SPECIAL_FILE", "path"),
  },
  {
    name: "HARD_LINKED: write_file overwrite of a file with two links",
    op: "write_file",
    fixture: { "a.txt": A, "twin.txt": hardlink("a.txt") },
    args: (p) => ({ path: p("a.txt"), content: "x", ifExists: "overwrite", confirm: true }),
    expect: err("HARD_LINKED", "path", { nlink: 2 }),
  },
  {
    name: "HARD_LINKED: edit_file of a file with two links",
    op: "edit_file",
    fixture: { "a.txt": A, "twin.txt": hardlink("a.txt") },
    args: (p) => ({ path: p("a.txt"), edits: [{ oldText: "beta", newText: "b" }] }),
    expect: err("HARD_LINKED", "path", { nlink: 2 }),
  },
  {
    name: "SYMLINK_LOOP: two links pointing at each other",
    op: "read_file",
    fixture: { "l1": link("l2"), "l2": link("l1") },
    args: (p) => ({ path: p("l1") }),
    expect: err("SYMLINK_LOOP", "path"),
  },
  {
    name: "SYMLINK_LOOP: write_file below a looping link",
    op: "write_file",
    fixture: { "l1": link("l2"), "l2": link("l1") },
    args: (p) => ({ path: p("l1/x.txt"), content: "x", createParents: true }),
    expect: err("SYMLINK_LOOP", "path"),
  },
  {
    name: "AMBIGUOUS_PATH: two canonically equivalent names, a third spelling asked",
    op: "get_file_info",
    fixture: { "e\u0323\u0302.txt": "nfd\n", "\u00ea\u0323.txt": "mixed\n" },
    args: (p) => ({ path: p("\u1ec7.txt") }),
    expect: err("AMBIGUOUS_PATH", "path", {
      candidates: ["e\u0323\u0302.txt", "\u00ea\u0323.txt"].sort(),
    }),
  },
  {
    name: "BINARY_FILE: read_file of a file with a NUL byte suggests read_media",
    op: "read_file",
    fixture: { "bin.dat": NUL_BYTES },
    args: (p) => ({ path: p("bin.dat") }),
    expect: err("BINARY_FILE", "path", { suggestion: "read_media" }),
  },
  {
    name: "BINARY_FILE: read_file of invalid UTF-8",
    op: "read_file",
    fixture: { "bad.txt": BAD_UTF8 },
    args: (p) => ({ path: p("bad.txt") }),
    expect: err("BINARY_FILE", "path", { suggestion: "read_media" }),
  },
  {
    name: "BINARY_FILE: edit_file of a binary file",
    op: "edit_file",
    fixture: { "bin.dat": NUL_BYTES },
    args: (p) => ({ path: p("bin.dat"), edits: [{ oldText: "a", newText: "c" }] }),
    expect: err("BINARY_FILE", "path"),
  },
  {
    name: "TOO_LARGE: read_media over --limit maxMediaBytes",
    op: "read_media",
    config: "small",
    fixture: { "big.bin": new Uint8Array(17).fill(7) },
    args: (p) => ({ path: p("big.bin") }),
    expect: err("TOO_LARGE", "path", { size: 17, limit: 16 }),
  },
  {
    name: "TOO_LARGE: write_file content over --limit maxWriteBytes",
    op: "write_file",
    config: "small",
    fixture: {},
    args: (p) => ({ path: p("new.txt"), content: "x".repeat(17) }),
    expect: err("TOO_LARGE", "content", { size: 17, limit: 16 }),
  },
  {
    name: "limits: write_file content at --limit maxWriteBytes succeeds",
    op: "write_file",
    config: "small",
    fixture: {},
    args: (p) => ({ path: p("new.txt"), content: "x".repeat(16) }),
    expect: { result: { path: "new.txt", created: true, size: 16, sha256: sha("x".repeat(16)) } },
    after: { "new.txt": "x".repeat(16) },
  },
  {
    name: "limits: write_file at --limit maxWriteBytes of characters JSON escapes as \\uXXXX",
    op: "write_file",
    config: "small",
    fixture: {},
    args: (p) => ({ path: p("ctl.txt"), content: CONTROL_16 }),
    expect: { result: { path: "ctl.txt", created: true, size: 16, sha256: sha(CONTROL_16) } },
    after: { "ctl.txt": CONTROL_16 },
  },
  {
    name: "limits: read_media at the derived maxMediaBytes (maxResultBytes 1024 -> 576) succeeds",
    op: "read_media",
    config: "tiny",
    fixture: { "m.bin": MEDIA_576 },
    args: (p) => ({ path: p("m.bin") }),
    expect: {
      result: {
        path: "m.bin",
        mimeType: "application/octet-stream",
        size: 576,
        sha256: sha(MEDIA_576),
        data: b64(MEDIA_576),
      },
    },
  },
  {
    name: "limits: read_media one byte over the derived maxMediaBytes is TOO_LARGE",
    op: "read_media",
    config: "tiny",
    fixture: { "m.bin": new Uint8Array(577).fill(7) },
    args: (p) => ({ path: p("m.bin") }),
    expect: err("TOO_LARGE", "path", { size: 577, limit: 576 }),
  },
  {
    name: "limits: read_file of maxReadBytes under maxResultBytes 1024 is cut by the result budget",
    op: "read_file",
    config: "tiny",
    fixture: { "at.txt": LINE_64.repeat(12) },
    args: (p) => ({ path: p("at.txt") }),
    expect: {
      result: {
        path: "at.txt",
        content: LINE_64.repeat(11),
        size: 768,
        startLine: 1,
        endLine: 11,
        totalLines: 12,
        sha256: sha(LINE_64.repeat(12)),
        truncated: true,
        truncatedReason: "maxResultBytes",
        nextStartLine: 12,
      },
    },
  },
  {
    name: "limits: read_file maxBytes one over the derived maxReadBytes is INVALID_ARGUMENT",
    op: "read_file",
    config: "tiny",
    fixture: { "at.txt": LINE_64.repeat(12) },
    args: (p) => ({ path: p("at.txt"), maxBytes: 769 }),
    expect: err("INVALID_ARGUMENT", "maxBytes", { limit: 768 }),
  },
  {
    name: "TOO_LARGE: edit_file of a file over --limit maxWriteBytes",
    op: "edit_file",
    config: "small",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("a.txt"), edits: [{ oldText: "beta", newText: "b" }] }),
    expect: err("TOO_LARGE", "path", { size: 17, limit: 16 }),
  },
  {
    name: "TOO_LARGE: edit_file whose result would exceed --limit maxWriteBytes",
    op: "edit_file",
    config: "small",
    fixture: { "s.txt": "abc\n" },
    args: (p) => ({ path: p("s.txt"), edits: [{ oldText: "abc", newText: "x".repeat(20) }] }),
    expect: err("TOO_LARGE", "edits", { size: 21, limit: 16 }),
  },
  {
    name: "CONFLICT: write_file with a stale expectedSha256",
    op: "write_file",
    fixture: { "a.txt": A },
    args: (p) => ({
      path: p("a.txt"),
      content: "x",
      ifExists: "overwrite",
      expectedSha256: sha("older"),
      confirm: true,
    }),
    expect: err("CONFLICT", "expectedSha256", { expected: sha("older"), actual: sha(A) }),
  },
  {
    name: "CONFLICT: edit_file with a stale expectedSha256",
    op: "edit_file",
    fixture: { "a.txt": A },
    args: (p) => ({
      path: p("a.txt"),
      edits: [{ oldText: "beta", newText: "b" }],
      expectedSha256: sha("older"),
    }),
    expect: err("CONFLICT", "expectedSha256", { expected: sha("older"), actual: sha(A) }),
  },
  {
    name: "NO_MATCH: the second edit does not match; nothing is written",
    op: "edit_file",
    fixture: { "a.txt": A },
    args: (p) => ({
      path: p("a.txt"),
      edits: [{ oldText: "alpha", newText: "ALPHA" }, { oldText: "gamma ray", newText: "x" }],
    }),
    expect: err("NO_MATCH", "edits[1].oldText", { editIndex: 1, candidates: [] }),
  },
  {
    name: "AMBIGUOUS_MATCH: oldText occurs twice",
    op: "edit_file",
    fixture: { "t.txt": "same\nother\nsame\n" },
    args: (p) => ({ path: p("t.txt"), edits: [{ oldText: "same", newText: "x" }] }),
    expect: err("AMBIGUOUS_MATCH", "edits[0].oldText", {
      editIndex: 0,
      occurrences: 2,
      candidates: [1, 3],
    }),
  },
  {
    name: "CONFIRMATION_REQUIRED: delete_path without confirm",
    op: "delete_path",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("a.txt") }),
    expect: err("CONFIRMATION_REQUIRED", "confirm"),
  },
  {
    name: "CONFIRMATION_REQUIRED: delete_path with confirm false",
    op: "delete_path",
    fixture: { "d/x.txt": "x\n" },
    args: (p) => ({ path: p("d"), recursive: true, confirm: false }),
    expect: err("CONFIRMATION_REQUIRED", "confirm"),
  },
  {
    name: "CONFIRMATION_REQUIRED: write_file overwrite without confirm",
    op: "write_file",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("a.txt"), content: "x", ifExists: "overwrite" }),
    expect: err("CONFIRMATION_REQUIRED", "confirm"),
  },

  // ------------------------------------------------------------------ read-only mode, unknown
  {
    name: "READ_ONLY: write_file in read-only mode (servers do not list it: unknown tool)",
    op: "write_file",
    config: "ro",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("new.txt"), content: "x" }),
    expect: err("READ_ONLY"),
    byAdapter: SERVERS_UNKNOWN_TOOL,
  },
  {
    name: "READ_ONLY: delete_path in read-only mode (servers do not list it: unknown tool)",
    op: "delete_path",
    config: "ro",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("a.txt"), confirm: true }),
    expect: err("READ_ONLY"),
    byAdapter: SERVERS_UNKNOWN_TOOL,
  },
  {
    name: "UNKNOWN_OPERATION: no such operation (CLI: usage error; servers: unknown tool)",
    op: "no_such_operation",
    fixture: {},
    args: () => ({}),
    expect: err("UNKNOWN_OPERATION", undefined, {
      available: [
        "workspace_info",
        "list_directory",
        "read_file",
        "read_media",
        "get_file_info",
        "find_files",
        "search_text",
      ],
    }),
    byAdapter: { cli: { usage: true }, ...SERVERS_UNKNOWN_TOOL },
  },
];
