/** Read operations: read_file, read_media, get_file_info. */
import { Buffer } from "node:buffer";
import mime from "mime";
import type { Workspace } from "./workspace.ts";
import { WorkspaceError } from "./errors.ts";
import { openCheckedFile, requireExisting } from "./path_policy.ts";
import {
  BINARY_SNIFF_BYTES,
  type EntryType,
  entryType,
  iso,
  looksBinary,
  sha256Hex,
  sha256Stream,
} from "./text.ts";

const CHUNK = 64 * 1024;
const utf8 = new TextEncoder();

/** Arguments of readFile. */
export interface ReadFileArgs {
  path: string;
  startLine?: number;
  endLine?: number;
  maxBytes?: number;
}

/** Result of readFile. */
export interface ReadFileResult {
  path: string;
  content: string;
  size: number;
  totalLines: number;
  startLine: number;
  endLine: number;
  sha256: string;
  truncated: boolean;
  nextStartLine?: number;
  /** The last line in content was cut at maxBytes (it is longer than maxBytes on its own). */
  lineTruncated?: boolean;
}

/** Largest prefix of s whose UTF-8 encoding fits in max bytes, never splitting a code point. */
function cutUtf8(s: string, max: number): string {
  let bytes = 0;
  let i = 0;
  for (const ch of s) {
    const b = utf8.encode(ch).length;
    if (bytes + b > max) break;
    bytes += b;
    i += ch.length;
  }
  return s.slice(0, i);
}

/** Reads UTF-8 text, optionally a line range, streaming so the whole file is hashed but only the range is kept. */
export async function readFile(ws: Workspace, args: ReadFileArgs): Promise<ReadFileResult> {
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
  const r = await ws.policy.resolve(args.path, { argument: "path", followLeaf: true });
  const handle = await openCheckedFile(r, "path");
  const hash = sha256Stream();
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let size = 0;
  let lineNo = 1;
  let out = "";
  let outBytes = 0;
  let lineStartInOut = 0;
  let lastIncluded = 0;
  let truncated = false;
  let nextStartLine: number | undefined;
  let lineTruncated = false;
  let endsWithNewline = false;
  const consume = (s: string) => {
    let pos = 0;
    while (pos < s.length) {
      const nl = s.indexOf("\n", pos);
      const segEnd = nl === -1 ? s.length : nl + 1;
      if (!truncated && lineNo >= start && lineNo <= end) {
        const seg = s.slice(pos, segEnd);
        const b = utf8.encode(seg).length;
        if (outBytes + b > maxBytes) {
          truncated = true;
          nextStartLine = lineNo;
          if (lineStartInOut > 0) {
            // Drop the part of this line already taken from an earlier chunk: whole lines only.
            out = out.slice(0, lineStartInOut);
            lastIncluded = lineNo - 1;
          } else {
            // A single line larger than maxBytes: return its first maxBytes, cut on a code
            // point, and say so; continuing means the next line (never the same one again).
            out += cutUtf8(seg, maxBytes - outBytes);
            lastIncluded = lineNo;
            lineTruncated = true;
            nextStartLine = lineNo + 1;
          }
        } else {
          out += seg;
          outBytes += b;
          lastIncluded = lineNo;
        }
      }
      if (nl !== -1) {
        lineNo++;
        lineStartInOut = out.length;
      }
      pos = segEnd;
    }
    if (s.length > 0) endsWithNewline = s.endsWith("\n");
  };
  try {
    const buf = new Uint8Array(CHUNK);
    let first = true;
    while (true) {
      const { bytesRead } = await handle.read(buf, 0, CHUNK, null);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      if (first && looksBinary(chunk.subarray(0, BINARY_SNIFF_BYTES))) throw binaryError(r.rel);
      first = false;
      size += bytesRead;
      hash.update(chunk);
      let text: string;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch {
        throw binaryError(r.rel);
      }
      consume(text);
    }
    try {
      consume(decoder.decode());
    } catch {
      throw binaryError(r.rel);
    }
  } finally {
    await handle.close();
  }
  const totalLines = size === 0 ? 0 : endsWithNewline ? lineNo - 1 : lineNo;
  if (start > Math.max(totalLines, 1)) {
    throw new WorkspaceError(
      "INVALID_ARGUMENT",
      `startLine ${start} is past the end of ${r.rel}, which has ${totalLines} lines`,
      { argument: "startLine", details: { totalLines } },
    );
  }
  const result: ReadFileResult = {
    path: r.rel,
    content: out,
    size,
    totalLines,
    startLine: start,
    endLine: lastIncluded,
    sha256: hash.hex(),
    truncated,
  };
  if (nextStartLine !== undefined && nextStartLine <= totalLines) {
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

/** Reads any file as base64 with a MIME type, under the media size cap. */
export async function readMedia(ws: Workspace, args: { path: string }): Promise<ReadMediaResult> {
  const r = await ws.policy.resolve(args.path, { argument: "path", followLeaf: true });
  const handle = await openCheckedFile(r, "path");
  try {
    const st = await handle.stat();
    const limit = ws.limits.maxMediaBytes;
    if (st.size > limit) {
      throw new WorkspaceError(
        "TOO_LARGE",
        `${r.rel} is ${st.size} bytes, over the media limit of ${limit}`,
        {
          argument: "path",
          details: { size: st.size, limit },
        },
      );
    }
    const bytes = await handle.readFile();
    if (bytes.length > limit) {
      throw new WorkspaceError("TOO_LARGE", `${r.rel} grew past the media limit of ${limit}`, {
        argument: "path",
        details: { size: bytes.length, limit },
      });
    }
    return {
      path: r.rel,
      mimeType: mime.getType(r.name) ?? "application/octet-stream",
      size: bytes.length,
      sha256: sha256Hex(bytes),
      data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64"),
    };
  } finally {
    await handle.close();
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
  const r = await ws.policy.resolve(args.path, { argument: "path", followLeaf: false });
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
  return out;
}

async function describeLink(
  ws: Workspace,
  rel: string,
): Promise<NonNullable<FileInfoResult["symlink"]>> {
  try {
    const t = await ws.policy.resolve(rel, { argument: "path", followLeaf: true });
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
