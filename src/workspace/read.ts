/** Read operations: read_file, read_media, get_file_info. */
import { Buffer } from "node:buffer";
import type { Workspace } from "./workspace.ts";
import type { Resolved } from "./path_policy.ts";
import { WorkspaceError } from "./errors.ts";
import {
  type CheckedFile,
  openCheckedFileSync,
  requireExisting,
  retryReplacedRead,
  verifyAfterRead,
} from "./containment.ts";
import { jsonBytes } from "./budget.ts";
import { resultReserve } from "./limits.ts";
import {
  assertFitsBudget,
  type EntryType,
  entryType,
  type HashSkipped,
  iso,
  pacer,
  READ_CHUNK,
  sha256Hex,
  sha256Stream,
} from "./text.ts";
import { LineWindow } from "./read_window.ts";
import { readTail, type Tail } from "./read_tail.ts";

/** Arguments of readFile. */
export interface ReadFileArgs {
  path: string;
  startLine?: number;
  endLine?: number;
  /** The last N lines, read from the file's end (not with startLine or endLine). */
  tailLines?: number;
  maxBytes?: number;
}

/** Why a tail read has no sha256 and totalLines: it did not read the file whole. */
export interface TailHashSkipped {
  reason: "tailLines";
  /** The file's size when it was opened. */
  size: number;
}

/** How a read operation is run: its cancellation signal. */
export interface ReadOptions {
  /** Aborts the read (cancellation, timeout, shutdown): it stops with CANCELLED. */
  signal?: AbortSignal;
  /** The time this read may take (ms); default the workspace's maxOperationMs. */
  maxOperationMs?: number;
  /** The bytes this read's result may take; default the workspace's maxResultBytes (read_file). */
  resultBytes?: number;
}

/** Result of readFile. */
export interface ReadFileResult {
  path: string;
  content: string;
  size: number;
  /** Lines of the whole file; absent when the file is over maxHashBytes (see sha256Skipped). */
  totalLines?: number;
  /** First line returned; absent on a tail read that did not read the file whole. */
  startLine?: number;
  /** Last line returned (0 when none); absent when startLine is. */
  endLine?: number;
  /** On a tailLines read: the lines content holds, the last of them the file's last line. */
  linesFromEnd?: number;
  /** sha256 of the whole file; absent when the file is over maxHashBytes. */
  sha256?: string;
  /** Why sha256 and totalLines are absent: the file is larger than maxHashBytes, or a tail read did not read it whole. */
  sha256Skipped?: HashSkipped | TailHashSkipped;
  truncated: boolean;
  /** What cut the range: the call's maxBytes, or the result byte budget. */
  truncatedReason?: "maxBytes" | "maxResultBytes";
  nextStartLine?: number;
  /** The last line in content was cut at maxBytes (it is longer than maxBytes on its own). */
  lineTruncated?: boolean;
}

/**
 * Reads UTF-8 text, optionally a line range. Reading stops once the range is complete,
 * unless the file is at most maxHashBytes: then the whole file is read, so its sha256 and
 * totalLines can be returned and every byte is checked for NUL and invalid UTF-8. A larger
 * file is judged on the lines it returns (from startLine on), and the result carries
 * sha256Skipped instead of sha256 and totalLines. Cancellable between chunks.
 */
export function readFile(
  ws: Workspace,
  args: ReadFileArgs,
  options: ReadOptions = {},
): Promise<ReadFileResult> {
  return retryReplacedRead(() => readFileOnce(ws, args, options), options.signal);
}

/** The call's maxBytes, refused with INVALID_ARGUMENT when over the workspace's maxReadBytes. */
export function checkedMaxBytes(ws: Workspace, args: Omit<ReadFileArgs, "path">): number {
  const limit = ws.limits.maxReadBytes;
  const maxBytes = args.maxBytes ?? limit;
  if (maxBytes > limit) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `maxBytes ${maxBytes} exceeds this workspace's limit of ${limit}`,
      {
        argument: "maxBytes",
        details: { limit },
      },
    );
  }
  return maxBytes;
}

/** What reading a file's chunks into its window learned: bytes read, the last one, the end. */
interface ReadExtent {
  /** Bytes read. */
  size: number;
  /** The last byte read; -1 when none. */
  lastByte: number;
  /** The end of the file was reached (not only the end of the range). */
  atEof: boolean;
}

/** Smallest read buffer (bytes), for a file whose size says it is empty or tiny. */
const MIN_CHUNK = 4096;

/**
 * The read buffer for a file of this size (its fstat at open): one byte more than the file, so
 * that a small file is read whole by one read and its end found by the next, up to READ_CHUNK.
 * Allocating READ_CHUNK for a 4 KiB file cost about 8 µs of a read_file (zeroing 64 KiB, and
 * garbage collection). A file that grew meanwhile is still read whole, in chunks of this size.
 */
function chunkSize(size: number): number {
  return Math.min(READ_CHUNK, Math.max(MIN_CHUNK, size + 1));
}

/**
 * Reads an opened file chunk by chunk into its window until the end, or until the window needs
 * no more; cancellable and paced between chunks. A file hashed whole that grows past hashLimit
 * meanwhile is CHANGED_DURING_OPERATION.
 */
async function readIntoWindow(
  file: CheckedFile,
  window: LineWindow,
  hashing: { hash: ReturnType<typeof sha256Stream> | null; limit: number; rel: string },
  tick: () => Promise<void>,
): Promise<ReadExtent> {
  const { hash, limit: hashLimit } = hashing;
  let size = 0;
  let lastByte = -1;
  const buf = new Uint8Array(chunkSize(file.size));
  while (true) {
    await tick();
    // The first READ_CHUNK bytes (and the read that finds the end after them) synchronously,
    // the rest through the blocking pool: decision 0038.
    const bytesRead = size < READ_CHUNK
      ? file.readSync(buf, 0, buf.length)
      : await file.read(buf, 0, buf.length);
    if (bytesRead === 0) return { size, lastByte, atEof: true };
    const chunk = buf.subarray(0, bytesRead);
    size += bytesRead;
    lastByte = chunk[bytesRead - 1];
    if (hash && size > hashLimit) {
      throw new WorkspaceError(
        "CHANGED_DURING_OPERATION",
        `${hashing.rel} grew past maxHashBytes (${hashLimit}) while it was read; read it again`,
        { argument: "path", details: { limit: hashLimit } },
      );
    }
    hash?.update(chunk);
    if (!window.consume(chunk)) return { size, lastByte, atEof: false };
  }
}

/**
 * The read_file result from a filled window, after the read was verified: INVALID_ARGUMENT when
 * startLine is past the end of a file read to its end; sha256 and totalLines for a file hashed
 * whole, sha256Skipped otherwise.
 */
function readFileResult(
  rel: string,
  w: LineWindow,
  read: ReadExtent,
  file: { start: number; statSize: number; hashLimit: number; sha256: string | null },
): ReadFileResult {
  const { size, lastByte, atEof } = read;
  const { start, statSize } = file;
  const known = atEof ? (size === 0 ? 0 : lastByte === 10 ? w.lineNo - 1 : w.lineNo) : undefined;
  if (known !== undefined && start > Math.max(known, 1)) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `startLine ${start} is past the end of ${rel}, which has ${known} lines`,
      { argument: "startLine", details: { totalLines: known } },
    );
  }
  const result: ReadFileResult = {
    path: rel,
    content: w.out,
    size: atEof ? size : statSize,
    startLine: start,
    endLine: w.lastIncluded,
    truncated: w.cut !== undefined,
  };
  if (file.sha256 !== null) {
    result.totalLines = known;
    result.sha256 = file.sha256;
  } else {
    result.sha256Skipped = { reason: "maxHashBytes", limit: file.hashLimit, size: statSize };
  }
  if (w.cut !== undefined) result.truncatedReason = w.cut;
  if (w.nextStartLine !== undefined && (known === undefined || w.nextStartLine <= known)) {
    result.nextStartLine = w.nextStartLine;
  }
  if (w.lineTruncated) result.lineTruncated = true;
  return result;
}

/**
 * The start of one text read: the path resolved, the file opened checked, and the pacer of its
 * chunks (cancellation and the time budget). Closing the file is the caller's.
 */
async function openTextRead(
  ws: Workspace,
  args: ReadFileArgs,
  options: ReadOptions,
): Promise<{ r: Resolved; file: CheckedFile; tick: () => Promise<void> }> {
  const r = await ws.policy.resolve(args.path, {
    argument: "path",
    followLeaf: true,
    syncMetadata: true,
  });
  const file = openCheckedFileSync(r, "path");
  const maxOperationMs = options.maxOperationMs ?? ws.limits.maxOperationMs;
  return { r, file, tick: pacer({ signal: options.signal, maxOperationMs }) };
}

/** JSON bytes the content of one text read may take: what its fixed fields and path leave. */
function contentRoom(ws: Workspace, options: ReadOptions, rel: string): number {
  const limit = options.resultBytes ?? ws.limits.maxResultBytes;
  return Math.max(0, limit - resultReserve(limit) - jsonBytes(rel) - 1);
}

/** One attempt of readFile (retryReplacedRead runs it again when the file is replaced). */
async function readFileOnce(
  ws: Workspace,
  args: ReadFileArgs,
  options: ReadOptions,
): Promise<ReadFileResult> {
  const maxBytes = checkedMaxBytes(ws, args);
  if (args.tailLines !== undefined) return await readTailOnce(ws, args, maxBytes, options);
  const start = args.startLine ?? 1;
  const end = args.endLine ?? Infinity;
  const { r, file, tick } = await openTextRead(ws, args, options);
  const hashLimit = ws.limits.maxHashBytes;
  // The content's share of the result budget: what the fixed fields leave.
  const maxJson = contentRoom(ws, options, r.rel);
  let statSize = 0;
  let hash: ReturnType<typeof sha256Stream> | null = null;
  let window: LineWindow;
  let read: ReadExtent;
  try {
    statSize = file.size;
    if (statSize <= hashLimit) hash = sha256Stream();
    window = new LineWindow({ start, end, maxBytes, maxJson, rel: r.rel, whole: hash !== null });
    read = await readIntoWindow(file, window, { hash, limit: hashLimit, rel: r.rel }, tick);
    window.finish();
  } finally {
    file.close();
  }
  verifyAfterRead(r, "path");
  const sha256 = hash && read.atEof ? hash.hex() : null;
  return readFileResult(r.rel, window, read, { start, statSize, hashLimit, sha256 });
}

/** tailLines with startLine or endLine, or not a positive integer: INVALID_ARGUMENT. */
export function checkTailArgs(args: Omit<ReadFileArgs, "path">): number {
  const n = args.tailLines!;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new WorkspaceError("INVALID_ARGUMENT", `tailLines must be a positive integer, got ${n}`, {
      argument: "tailLines",
    });
  }
  if (args.startLine !== undefined || args.endLine !== undefined) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      "tailLines cannot be combined with startLine or endLine",
      { argument: "tailLines" },
    );
  }
  return n;
}

/** The read_file result of a tail read (fields in read_file's order). */
function tailResult(rel: string, t: Tail): ReadFileResult {
  const { whole } = t;
  const lines = whole
    ? {
      totalLines: whole.totalLines,
      startLine: Math.max(1, whole.totalLines - t.lines + 1),
      endLine: whole.totalLines,
    }
    : {};
  const result: ReadFileResult = {
    path: rel,
    content: t.content,
    size: t.size,
    ...lines,
    linesFromEnd: t.lines,
    ...(whole
      ? { sha256: whole.sha256 }
      : { sha256Skipped: { reason: "tailLines" as const, size: t.size } }),
    truncated: t.cut !== undefined,
  };
  if (t.cut !== undefined) result.truncatedReason = t.cut;
  if (t.lineTruncated) result.lineTruncated = true;
  return result;
}

/** One attempt of a tailLines read: the file's end, read backwards (read_tail.ts). */
async function readTailOnce(
  ws: Workspace,
  args: ReadFileArgs,
  maxBytes: number,
  options: ReadOptions,
): Promise<ReadFileResult> {
  const lines = checkTailArgs(args);
  const { r, file, tick } = await openTextRead(ws, args, options);
  const maxJson = contentRoom(ws, options, r.rel);
  let tail: Tail;
  try {
    tail = await readTail(file, {
      lines,
      maxBytes,
      maxJson,
      hashLimit: ws.limits.maxHashBytes,
      rel: r.rel,
      tick,
    });
  } finally {
    file.close();
  }
  verifyAfterRead(r, "path");
  return tailResult(r.rel, tail);
}

/** Result of readMedia. */
export interface ReadMediaResult {
  path: string;
  mimeType: string;
  size: number;
  sha256: string;
  data: string;
}

/**
 * Reads any file as base64 with a MIME type, under the media size cap; the whole result
 * (base64 and fixed fields) must also fit maxResultBytes, else TOO_LARGE before any read.
 */
export function readMedia(
  ws: Workspace,
  args: { path: string },
  options: ReadOptions = {},
): Promise<ReadMediaResult> {
  return retryReplacedRead(() => readMediaOnce(ws, args, options), options.signal);
}

/**
 * Reads an opened file into bytes from its start until bytes is full or the file ends, paced
 * between chunks; returns the bytes read.
 */
async function readInto(
  file: CheckedFile,
  bytes: Uint8Array,
  tick: () => Promise<void>,
): Promise<number> {
  let n = 0;
  while (n < bytes.length) {
    await tick();
    const len = Math.min(READ_CHUNK, bytes.length - n);
    // Synchronously while under READ_CHUNK read (decision 0038), else through the pool.
    const bytesRead = n < READ_CHUNK
      ? file.readSync(bytes, n, len)
      : await file.read(bytes, n, len);
    if (bytesRead === 0) break;
    n += bytesRead;
  }
  return n;
}

/** One attempt of readMedia (retryReplacedRead runs it again when the file is replaced). */
async function readMediaOnce(
  ws: Workspace,
  args: { path: string },
  options: ReadOptions,
): Promise<ReadMediaResult> {
  const r = await ws.policy.resolve(args.path, {
    argument: "path",
    followLeaf: true,
    syncMetadata: true,
  });
  const file = openCheckedFileSync(r, "path");
  try {
    const st = { size: file.size };
    const limit = ws.limits.maxMediaBytes;
    const tooLarge = (size: number) =>
      new WorkspaceError(
        "TOO_LARGE",
        `${r.rel} is ${size} bytes, over the media limit of ${limit}`,
        { argument: "path", details: { size, limit } },
      );
    if (st.size > limit) throw tooLarge(st.size);
    // Loaded on the first read_media: its table is not needed before a server's first answer.
    const { default: mime } = await import("mime");
    const mimeType = mime.getType(r.name) ?? "application/octet-stream";
    const skeleton: ReadMediaResult = {
      path: r.rel,
      mimeType,
      size: st.size,
      sha256: "0".repeat(64),
      data: "",
    };
    const budget = ws.limits.maxResultBytes;
    const resultBytes = jsonBytes(skeleton) + 4 * Math.ceil(st.size / 3);
    if (resultBytes > budget) {
      throw new WorkspaceError(
        "TOO_LARGE",
        `${r.rel} is ${st.size} bytes; as base64 its result would be ${resultBytes} bytes, over maxResultBytes (${budget})`,
        { argument: "path", details: { size: st.size, limit: budget, reason: "maxResultBytes" } },
      );
    }
    // Read at most limit + 1 bytes in chunks (a file that grew is refused, never read on).
    const tick = pacer({ signal: options.signal, maxOperationMs: ws.limits.maxOperationMs });
    const bytes = new Uint8Array(Math.min(st.size, limit) + 1);
    const n = await readInto(file, bytes, tick);
    if (n > limit) throw tooLarge(n);
    if (n !== st.size) {
      throw new WorkspaceError(
        "CHANGED_DURING_OPERATION",
        `${r.rel} changed size while it was read; read it again`,
        { argument: "path" },
      );
    }
    const data = bytes.subarray(0, n);
    verifyAfterRead(r, "path");
    return {
      path: r.rel,
      mimeType,
      size: n,
      sha256: sha256Hex(data),
      data: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64"),
    };
  } finally {
    file.close();
  }
}

/** Result of getFileInfo. */
export interface FileInfoResult {
  path: string;
  type: EntryType;
  size: number;
  mtime: string | null;
  atime: string | null;
  birthtime: string | null;
  ctime: string | null;
  mode: string | null;
  nlink: number | null;
  isSymlink: boolean;
  symlink?: {
    status: "inside" | "outside" | "dangling" | "loop";
    target?: string;
    targetType?: EntryType;
  };
}

/** Stats a path without following a final link; a link's target is shown only when inside. */
export async function getFileInfo(ws: Workspace, args: { path: string }): Promise<FileInfoResult> {
  const r = await ws.policy.resolve(args.path, {
    argument: "path",
    followLeaf: false,
    syncMetadata: true,
  });
  const info = requireExisting(r, "path");
  const out: FileInfoResult = {
    path: r.rel,
    type: entryType(info),
    size: info.size,
    mtime: iso(info.mtime),
    atime: iso(info.atime),
    birthtime: iso(info.birthtime),
    ctime: iso(info.ctime),
    mode: info.mode === null ? null : (info.mode & 0o7777).toString(8).padStart(4, "0"),
    nlink: info.nlink,
    isSymlink: info.isSymlink,
  };
  if (info.isSymlink) out.symlink = await describeLink(ws, r.rel);
  assertFitsBudget(out, { limit: ws.limits.maxResultBytes, what: "get_file_info" });
  return out;
}

async function describeLink(
  ws: Workspace,
  rel: string,
): Promise<NonNullable<FileInfoResult["symlink"]>> {
  try {
    const t = await ws.policy.resolve(rel, {
      argument: "path",
      followLeaf: true,
      syncMetadata: true,
    });
    if (t.info === null) return { status: "dangling", target: t.rel };
    return { status: "inside", target: t.rel, targetType: entryType(t.info) };
  } catch (err) {
    if (err instanceof WorkspaceError && err.code === "SYMLINK_LOOP") return { status: "loop" };
    if (err instanceof WorkspaceError && err.code === "OUTSIDE_WORKSPACE") {
      return { status: "outside" };
    }
    throw err;
  }
}
