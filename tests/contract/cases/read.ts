/**
 * Contract table, section "success: read".
 * Successful reads: workspace_info, list_directory, read_file, read_media, get_file_info,
 * find_files, search_text.
 */
import { type Case, FIFO, limitsOf, link } from "../_model.ts";
import {
  A,
  b64,
  BASE,
  C_TXT,
  CAPPED,
  entry,
  fileInfo,
  LARGE,
  LINE,
  nameCursor,
  NUL_BYTES,
  OUT,
  PNG,
  POOL_SIZE,
  sha,
  SIZES,
  SORT,
  WAV,
} from "./_shared.ts";

/** The rows of section "success: read", in table order. */
export const READ_CASES: Case[] = [
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
        // Every adapter's process may read the engine's modules, so every one runs the pool; none
        // runs through the launcher, so search_text is built-in (decision 0054).
        engine: { mode: "workers", workers: POOL_SIZE, search: "builtin" },
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
        // Every adapter's process may read the engine's modules, so every one runs the pool; none
        // runs through the launcher, so search_text is built-in (decision 0054).
        engine: { mode: "workers", workers: POOL_SIZE, search: "builtin" },
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
    name:
      "list_directory: sortBy size, largest first by default, ties by name, a directory without sizes last",
    op: "list_directory",
    fixture: SORT,
    args: (p) => ({ path: p("."), sortBy: "size" }),
    expect: {
      result: {
        path: ".",
        entries: [
          entry("big.txt", "file", 9),
          entry("mid.txt", "file", 5),
          entry("tie-a.txt", "file", 3),
          entry("tie-b.txt", "file", 3),
          entry("small.txt", "file", 1),
          entry("d", "directory", 0),
        ],
        total: 6,
        truncated: false,
      },
    },
  },
  {
    name: "list_directory: sortBy size asc with depth 2 sorts siblings within each directory",
    op: "list_directory",
    fixture: SORT,
    args: (p) => ({ path: p("."), depth: 2, sortBy: "size", order: "asc" }),
    expect: {
      result: {
        path: ".",
        entries: [
          entry("small.txt", "file", 1),
          entry("tie-a.txt", "file", 3),
          entry("tie-b.txt", "file", 3),
          entry("mid.txt", "file", 5),
          entry("big.txt", "file", 9),
          entry("d", "directory", 0),
          entry("d/x.txt", "file", 4),
          entry("d/y.txt", "file", 7),
        ],
        total: 8,
        truncated: false,
      },
    },
  },
  {
    name: "list_directory: sortBy mtime, newest first by default, parents before contents",
    op: "list_directory",
    fixture: SORT,
    args: (p) => ({ path: p("."), depth: 2, sortBy: "mtime" }),
    expect: {
      result: {
        path: ".",
        entries: [
          entry("small.txt", "file", 1),
          entry("d", "directory", 0),
          entry("d/x.txt", "file", 4),
          entry("d/y.txt", "file", 7),
          entry("tie-a.txt", "file", 3),
          entry("tie-b.txt", "file", 3),
          entry("mid.txt", "file", 5),
          entry("big.txt", "file", 9),
        ],
        total: 8,
        truncated: false,
      },
    },
  },
  {
    name: "list_directory: sortBy mtime order asc, oldest first",
    op: "list_directory",
    fixture: SORT,
    args: (p) => ({ path: p("."), depth: 2, sortBy: "mtime", order: "asc" }),
    expect: {
      result: {
        path: ".",
        entries: [
          entry("big.txt", "file", 9),
          entry("mid.txt", "file", 5),
          entry("tie-a.txt", "file", 3),
          entry("tie-b.txt", "file", 3),
          entry("d", "directory", 0),
          entry("d/y.txt", "file", 7),
          entry("d/x.txt", "file", 4),
          entry("small.txt", "file", 1),
        ],
        total: 8,
        truncated: false,
      },
    },
  },
  {
    name: "list_directory: sortBy name order desc",
    op: "list_directory",
    fixture: SORT,
    args: (p) => ({ path: p("."), depth: 2, sortBy: "name", order: "desc" }),
    expect: {
      result: {
        path: ".",
        entries: [
          entry("tie-b.txt", "file", 3),
          entry("tie-a.txt", "file", 3),
          entry("small.txt", "file", 1),
          entry("mid.txt", "file", 5),
          entry("d", "directory", 0),
          entry("d/y.txt", "file", 7),
          entry("d/x.txt", "file", 4),
          entry("big.txt", "file", 9),
        ],
        total: 8,
        truncated: false,
      },
    },
  },
  {
    name:
      "list_directory: sizes with sortBy size: directory totals (hidden files counted, links not followed, a hard link once)",
    op: "list_directory",
    fixture: SIZES,
    args: (p) => ({ path: p("."), sortBy: "size", sizes: true }),
    expect: {
      result: {
        path: ".",
        entries: [
          { ...entry("big", "directory", 0), totalSize: 500 },
          { ...entry("src", "directory", 0), totalSize: 117 },
          entry("f.txt", "file", 3),
          { ...entry("empty", "directory", 0), totalSize: 0 },
        ],
        total: 4,
        truncated: false,
        sizesPartial: false,
      },
    },
  },
  {
    name: "list_directory: sizes cut by --limit maxVisited say so per directory and on the page",
    op: "list_directory",
    config: "small",
    fixture: CAPPED,
    args: (p) => ({ path: p("."), sizes: true }),
    expect: {
      result: {
        path: ".",
        entries: [
          { ...entry("a", "directory", 0), totalSize: 80 },
          { ...entry("b", "directory", 0), totalSize: 4, totalSizePartial: "maxVisited" },
          { ...entry("c", "directory", 0), totalSize: null, totalSizePartial: "maxVisited" },
        ],
        total: 3,
        truncated: false,
        sizesPartial: true,
      },
    },
  },
  {
    name: "list_directory: a cursor of the name order continues it",
    op: "list_directory",
    fixture: SORT,
    args: (p) => ({ path: p("."), limit: 2, cursor: nameCursor(p("."), 4) }),
    expect: {
      result: {
        path: ".",
        entries: [entry("tie-a.txt", "file", 3), entry("tie-b.txt", "file", 3)],
        total: 6,
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
];
