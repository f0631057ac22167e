/** Fixtures, constants and expectation builders shared by the contract table's sections. */
import { createHash } from "node:crypto";
import { DIR, type Fixture, hardlink, link, timed } from "../_model.ts";

/** Hex sha256, computed independently of the code under test. */
export const sha = (s: string | Uint8Array) => createHash("sha256").update(s).digest("hex");
/** Standard base64 of bytes. */
export const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** Content of the fixtures' a.txt (three lines). */
export const A = "alpha\nbeta\ngamma\n";
/** Content of the fixtures' dir/b.md. */
export const B_MD = "# B\nbeta line\n";
/** Content of the fixtures' dir/sub/c.txt. */
export const C_TXT = "charlie\n";

/** The common read fixture. */
export const BASE: Fixture = {
  "a.txt": A,
  "dir/b.md": B_MD,
  "dir/sub/c.txt": C_TXT,
  ".hidden": "hidden beta\n",
};

/** Seconds since the epoch: the oldest mtime of SORT (the others are minutes later). */
const T0 = 1_700_000_000;

/**
 * Sizes and mtimes that sort differently (list_directory's sortBy): big.txt 9 bytes (oldest),
 * mid.txt 5, tie-a.txt and tie-b.txt 3 each with one mtime (a tie), small.txt 1 (newest); d/
 * (no size key without sizes) with d/x.txt 4 (newer) and d/y.txt 7 (older).
 */
export const SORT: Fixture = {
  "big.txt": timed("x".repeat(9), T0),
  "mid.txt": timed("x".repeat(5), T0 + 60),
  "tie-a.txt": timed("abc", T0 + 120),
  "tie-b.txt": timed("xyz", T0 + 120),
  "d": timed(DIR, T0 + 180),
  "d/x.txt": timed("1234", T0 + 240),
  "d/y.txt": timed("1234567", T0 + 30),
  "small.txt": timed("s", T0 + 300),
};

/**
 * Directory totals (list_directory's sizes): src/ holds 10 + 100 (hidden) + 7 bytes, a hard link
 * to its 10-byte file and a link to big/ (500 bytes), which the sum does not follow.
 */
export const SIZES: Fixture = {
  "src/a.ts": "x".repeat(10),
  "src/.cache/blob": "c".repeat(100),
  "src/deep/z.txt": "z".repeat(7),
  "src/hl": hardlink("src/a.ts"),
  "src/big": link("../big"),
  "big/huge": "h".repeat(500),
  "empty": DIR,
  "f.txt": "fff",
};

/** Directories of 2, 5 and 1 files: at maxVisited 6 (config "small") the sums stop inside b/. */
export const CAPPED: Fixture = {
  "a/1": "1".repeat(40),
  "a/2": "2".repeat(40),
  "b/1": "1",
  "b/2": "2",
  "b/3": "3",
  "b/4": "4",
  "b/5": "5".repeat(100),
  "c/1": "c".repeat(1000),
};

/** A list_directory cursor of the default (name) order at `offset`: `rel`'s listing at depth 1. */
export const nameCursor = (rel: string, offset: number) =>
  btoa(JSON.stringify({ v: 1, o: offset, k: sha(`${rel}\0${1}\0${false}`).slice(0, 16) }))
    .replaceAll("=", "");

/** An executable script (the snapshot records its mode). */
export const RUN_SH = { file: "#!/bin/sh\necho hi\n", mode: 0o750 };

/** A copy_path result: nothing copied, nothing skipped, unless `counts` says otherwise. */
export const copied = (
  source: string,
  destination: string,
  type: string,
  counts: Record<string, unknown> = {},
) => ({
  source,
  destination,
  type,
  overwritten: false,
  files: 0,
  directories: 0,
  symlinks: 0,
  bytes: 0,
  skipped: [],
  ...counts,
});

/** A link leading out of every workspace. */
export const OUT: Fixture = { "a.txt": A, out: link("{{outside}}") };

/** 3000 lines of 100 bytes: larger than the default maxReadBytes (262144). */
export const LINE = "x".repeat(99) + "\n";
/** LINE 3000 times (300000 bytes). */
export const LARGE = LINE.repeat(3000);
/** Content too large for one argv string: the CLI adapter passes it on stdin. */
export const BIG_CONTENT = "0123456789abcdef\n".repeat(9000);

/** The PNG signature and three bytes (a small image file). */
export const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2]);
/** The start of a RIFF/WAVE header (read_media judges by the name, not the bytes). */
export const WAV = new Uint8Array([0x52, 0x49, 0x46, 0x46, 4, 0, 0, 0, 0x57, 0x41, 0x56, 0x45]);
/** 16 characters JSON.stringify writes as \\uXXXX (6 bytes each on the wire). */
export const CONTROL_16 =
  "\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u000b\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015";
/** 576 bytes of media payload (base64 768 bytes). */
export const MEDIA_576 = new Uint8Array(576).fill(7);
/** One 64-byte line. */
export const LINE_64 = "x".repeat(63) + "\n";
/** Text with a NUL byte (read as binary). */
export const NUL_BYTES = new Uint8Array([0x61, 0x00, 0x62, 0x0a]);
/** Bytes that are not UTF-8. */
export const BAD_UTF8 = new Uint8Array([0x41, 0xff, 0xfe, 0x0a]);

/** A list_directory entry (directory sizes and times normalised). */
export const entry = (path: string, type: string, size: number | string) => ({
  path,
  type,
  size: type === "directory" ? "<dir-size>" : size,
  mtime: "<time>",
});

/** A get_file_info result of a regular file (times normalised). */
export const fileInfo = (
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

/** An error expectation: code, argument and details. */
export const err = (code: string, argument?: string, details?: unknown) => ({
  error: { code, argument, details },
});

/** The details of a schema (zod) INVALID_ARGUMENT: one issue. */
export const issue = (path: string, message: string) => ({ issues: [{ path, message }] });

/** What the servers show for a tool they do not list (read-only mode, unknown name). */
export const SERVERS_UNKNOWN_TOOL = {
  stdio: { unknownTool: true },
  httpModern: { unknownTool: true },
  httpLegacy: { unknownTool: true },
} as const;

/** A unified diff of one file as edit_file and write_file report it. */
export const diff = (name: string, hunk: string) =>
  `Index: ${name}\n===================================================================\n--- ${name}\n+++ ${name}\n${hunk}`;

/** The engine's pool size on this machine: the cores, clamped to 1..4. */
export const POOL_SIZE = Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1));
