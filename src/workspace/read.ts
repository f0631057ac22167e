/** Read operations: read_file, read_media, get_file_info. */
import { Buffer } from "node:buffer";
import type { Workspace } from "./workspace.ts";
import { WorkspaceError } from "./errors.ts";
import {
  openCheckedFileSync,
  requireExisting,
  retryReplacedRead,
  verifyAfterRead,
} from "./containment.ts";
import { jsonBytes, ResultBudget } from "./budget.ts";
import { resultReserve } from "./limits.ts";
import {
  assertFitsBudget,
  cutText,
  type EntryType,
  entryType,
  type HashSkipped,
  iso,
  pacer,
  READ_CHUNK,
  sha256Hex,
  sha256Stream,
  textCosts,
} from "./text.ts";

/** Arguments of readFile. */
export interface ReadFileArgs {
  path: string;
  startLine?: number;
  endLine?: number;
  maxBytes?: number;
}

/** How a read operation is run: its cancellation signal. */
export interface ReadOptions {
  /** Aborts the read (cancellation, timeout, shutdown): it stops with CANCELLED. */
  signal?: AbortSignal;
}

/** Result of readFile. */
export interface ReadFileResult {
  path: string;
  content: string;
  size: number;
  /** Lines of the whole file; absent when the file is over maxHashBytes (see sha256Skipped). */
  totalLines?: number;
  startLine: number;
  endLine: number;
  /** sha256 of the whole file; absent when the file is over maxHashBytes. */
  sha256?: string;
  /** Why sha256 and totalLines are absent: the file is larger than maxHashBytes. */
  sha256Skipped?: HashSkipped;
  truncated: boolean;
  /** What cut the range: the call's maxBytes, or the result byte budget. */
  truncatedReason?: "maxBytes" | "maxResultBytes";
  nextStartLine?: number;
  /** The last line in content was cut at maxBytes (it is longer than maxBytes on its own). */
  lineTruncated?: boolean;
}

/** True when bytes contain a NUL. */
function hasNul(bytes: Uint8Array): boolean {
  return bytes.indexOf(0) !== -1;
}

/** Number of "\n" bytes in bytes. */
function countNewlines(bytes: Uint8Array): number {
  let n = 0;
  let i = -1;
  while ((i = bytes.indexOf(10, i + 1)) !== -1) n++;
  return n;
}

/** Number of "\n" in text. */
function countNewlinesText(text: string): number {
  let n = 0;
  let i = -1;
  while ((i = text.indexOf("\n", i + 1)) !== -1) n++;
  return n;
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

/** One attempt of readFile (retryReplacedRead runs it again when the file is replaced). */
async function readFileOnce(
  ws: Workspace,
  args: ReadFileArgs,
  options: ReadOptions,
): Promise<ReadFileResult> {
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
  const start = args.startLine ?? 1;
  const end = args.endLine ?? Infinity;
  const r = await ws.policy.resolve(args.path, {
    argument: "path",
    followLeaf: true,
    syncMetadata: true,
  });
  const file = openCheckedFileSync(r, "path");
  const tick = pacer({ signal: options.signal, maxOperationMs: ws.limits.maxOperationMs });
  const hashLimit = ws.limits.maxHashBytes;
  // The content's share of the result budget: what the fixed fields leave.
  const budget = new ResultBudget(ws.limits.maxResultBytes, 0);
  budget.take(resultReserve(ws.limits.maxResultBytes) + jsonBytes(r.rel));
  const maxJson = budget.remaining;
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const decode = (bytes: Uint8Array): string => {
    if (hasNul(bytes)) throw binaryError(r.rel);
    try {
      return decoder.decode(bytes, { stream: true });
    } catch {
      throw binaryError(r.rel);
    }
  };
  let size = 0; // bytes read
  let statSize = 0;
  let lineNo = 1; // line of the next byte
  let lastByte = -1;
  let out = "";
  let outBytes = 0;
  let outJson = 0;
  let lineStartInOut = 0;
  let lastIncluded = 0;
  let cut: "maxBytes" | "maxResultBytes" | undefined;
  let nextStartLine: number | undefined;
  let lineTruncated = false;
  let atEof = false;
  let hash: ReturnType<typeof sha256Stream> | null = null;
  /** Takes one decoded segment of line lineNo (the range's line), or cuts the range. */
  const take = (text: string) => {
    const { utf8: b, json: j } = textCosts(text);
    if (outBytes + b <= maxBytes && outJson + j <= maxJson) {
      out += text;
      outBytes += b;
      outJson += j;
      lastIncluded = lineNo;
      return;
    }
    cut = outBytes + b > maxBytes ? "maxBytes" : "maxResultBytes";
    nextStartLine = lineNo;
    if (lineStartInOut > 0) {
      // Drop the part of this line already taken from an earlier chunk: whole lines only.
      out = out.slice(0, lineStartInOut);
      lastIncluded = lineNo - 1;
    } else {
      // A single line larger than the room: return its first bytes, cut on a code point,
      // and say so; continuing means the next line (never the same one again).
      out += cutText(text, maxBytes - outBytes, maxJson - outJson);
      lastIncluded = lineNo;
      lineTruncated = true;
      nextStartLine = lineNo + 1;
    }
  };
  try {
    statSize = file.size;
    if (statSize <= hashLimit) hash = sha256Stream();
    const buf = new Uint8Array(READ_CHUNK);
    reading: while (true) {
      await tick();
      // The first READ_CHUNK bytes (and the read that finds the end after them) synchronously,
      // the rest through the blocking pool: decision 0038.
      const bytesRead = size < READ_CHUNK
        ? file.readSync(buf, 0, READ_CHUNK)
        : await file.read(buf, 0, READ_CHUNK);
      if (bytesRead === 0) {
        atEof = true;
        break;
      }
      const chunk = buf.subarray(0, bytesRead);
      size += bytesRead;
      lastByte = chunk[bytesRead - 1];
      if (hash && size > hashLimit) {
        throw new WorkspaceError(
          "CHANGED_DURING_OPERATION",
          `${r.rel} grew past maxHashBytes (${hashLimit}) while it was read; read it again`,
          { argument: "path", details: { limit: hashLimit } },
        );
      }
      hash?.update(chunk);
      let pos = 0;
      while (pos < bytesRead) {
        if (lineNo < start) {
          // Before the range: skip to the first byte of line `start`, examining only what
          // the whole-file check needs.
          let p = pos;
          while (lineNo < start) {
            const nl = chunk.indexOf(10, p);
            if (nl === -1) {
              p = bytesRead;
              break;
            }
            lineNo++;
            p = nl + 1;
          }
          if (hash) decode(chunk.subarray(pos, p));
          pos = p;
        } else if (cut === undefined && lineNo <= end && hash) {
          // In the range of a file that is checked whole anyway: the lines of this chunk up to
          // the range's end decoded in one call, then taken in one piece when they fit (else
          // line by line, as below). The same bytes are decoded either way.
          let p = pos;
          for (let l = lineNo; l <= end; l++) {
            const nl = chunk.indexOf(10, p);
            if (nl === -1) {
              p = bytesRead;
              break;
            }
            p = nl + 1;
          }
          const text = decode(chunk.subarray(pos, p));
          pos = p;
          const { utf8: b, json: j } = textCosts(text);
          if (outBytes + b <= maxBytes && outJson + j <= maxJson) {
            const lastNl = text.lastIndexOf("\n");
            const k = lastNl === -1 ? 0 : countNewlinesText(text);
            out += text;
            outBytes += b;
            outJson += j;
            lastIncluded = lastNl === text.length - 1 ? lineNo + k - 1 : lineNo + k;
            lineNo += k;
            if (lastNl !== -1) lineStartInOut = out.length - (text.length - lastNl - 1);
          } else {
            for (let i = 0; i < text.length;) {
              const nl = text.indexOf("\n", i);
              const e = nl === -1 ? text.length : nl + 1;
              if (cut === undefined) take(text.slice(i, e));
              i = e;
              if (nl !== -1) {
                lineNo++;
                lineStartInOut = out.length;
              }
            }
          }
        } else if (cut === undefined && lineNo <= end) {
          // In the range: one segment of the current line.
          const nl = chunk.indexOf(10, pos);
          const segEnd = nl === -1 ? bytesRead : nl + 1;
          take(decode(chunk.subarray(pos, segEnd)));
          pos = segEnd;
          if (nl !== -1) {
            lineNo++;
            lineStartInOut = out.length;
          }
        } else if (hash) {
          // After the range of a file that is hashed whole: check and count the rest.
          const rest = chunk.subarray(pos);
          decode(rest);
          lineNo += countNewlines(rest);
          pos = bytesRead;
        } else if (nextStartLine !== undefined && lineNo < nextStartLine) {
          // The rest of a line cut short: skip it to learn whether another line follows.
          const nl = chunk.indexOf(10, pos);
          if (nl === -1) pos = bytesRead;
          else {
            lineNo++;
            pos = nl + 1;
          }
        } else {
          // Done: the range is complete and, if cut, the next line exists.
          break reading;
        }
      }
    }
    if (hash) {
      try {
        decoder.decode();
      } catch {
        throw binaryError(r.rel);
      }
    }
  } finally {
    file.close();
  }
  verifyAfterRead(r, "path");
  const known = atEof ? (size === 0 ? 0 : lastByte === 10 ? lineNo - 1 : lineNo) : undefined;
  if (known !== undefined && start > Math.max(known, 1)) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `startLine ${start} is past the end of ${r.rel}, which has ${known} lines`,
      { argument: "startLine", details: { totalLines: known } },
    );
  }
  const result: ReadFileResult = {
    path: r.rel,
    content: out,
    size: atEof ? size : statSize,
    startLine: start,
    endLine: lastIncluded,
    truncated: cut !== undefined,
  };
  if (hash && atEof) {
    result.totalLines = known;
    result.sha256 = hash.hex();
  } else {
    result.sha256Skipped = { reason: "maxHashBytes", limit: hashLimit, size: statSize };
  }
  if (cut !== undefined) result.truncatedReason = cut;
  if (nextStartLine !== undefined && (known === undefined || nextStartLine <= known)) {
    result.nextStartLine = nextStartLine;
  }
  if (lineTruncated) result.lineTruncated = true;
  return result;
}

function binaryError(rel: string): WorkspaceError {
  return new WorkspaceError(
    "BINARY_FILE",
    `${rel} is not UTF-8 text; use read_media to read it as base64`,
    { argument: "path", details: { suggestion: "read_media" } },
  );
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
