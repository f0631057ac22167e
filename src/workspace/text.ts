/** Byte and text helpers shared by read, search and edit, and the bounded, cancellable file hash. */
import { createHash } from "node:crypto";
import { WorkspaceError } from "./errors.ts";
import { jsonBytes, jsonBytesAtMost } from "./budget.ts";
import type { FsInfo } from "./fs/types.ts";

/** Hex sha256 of bytes or text. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Incremental sha256 (for streamed reads). */
export function sha256Stream(): { update(b: Uint8Array): void; hex(): string } {
  const h = createHash("sha256");
  return {
    update: (b) => void h.update(b),
    hex: () => h.digest("hex"),
  };
}

/** Why a sha256 (and what needs the whole file) was not computed. */
export interface HashSkipped {
  reason: "maxHashBytes";
  /** The maxHashBytes limit in force. */
  limit: number;
  /** The file's size when it was checked. */
  size: number;
}

/** Cooperative pacing of a long loop: cancellation, the time budget, and turns for the event loop. */
export interface Pace {
  /** Aborts the work (the operation's signal). */
  signal?: AbortSignal;
  /** The workspace's maxOperationMs. */
  maxOperationMs: number;
}

/** Checks cancellation and the time budget between chunks, and yields to the event loop every 10 ms. */
export function pacer(pace: Pace): () => Promise<void> {
  const started = performance.now();
  let lastYield = started;
  return async () => {
    if (pace.signal?.aborted) {
      throw new WorkspaceError("CANCELLED", "the operation was cancelled");
    }
    const now = performance.now();
    if (now - started > pace.maxOperationMs) {
      throw new WorkspaceError(
        "TIME_BUDGET_EXCEEDED",
        `the operation ran longer than maxOperationMs (${pace.maxOperationMs} ms) and was stopped`,
        { details: { limit: pace.maxOperationMs } },
      );
    }
    if (now - lastYield >= 10) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      lastYield = performance.now();
      if (pace.signal?.aborted) {
        throw new WorkspaceError("CANCELLED", "the operation was cancelled");
      }
    }
  };
}

/** What reading a file in chunks needs of a handle (node:fs/promises FileHandle). */
export interface ChunkReader {
  read(
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: null,
  ): Promise<{ bytesRead: number }>;
  stat(): Promise<{ size: number }>;
}

/** Size of one read while hashing or reading text. */
export const READ_CHUNK = 64 * 1024;

/**
 * sha256 of an open file, streamed in chunks, cancellable and bounded: a file larger than
 * `limit` (by fstat, or grown past it while read) is not hashed and the reason is returned.
 */
export async function sha256Bounded(
  handle: ChunkReader,
  options: Pace & { limit: number },
): Promise<{ sha256: string } | { skipped: HashSkipped }> {
  const { limit } = options;
  const { size } = await handle.stat();
  if (size > limit) return { skipped: { reason: "maxHashBytes", limit, size } };
  const tick = pacer(options);
  const hash = createHash("sha256");
  const buf = new Uint8Array(READ_CHUNK);
  let total = 0;
  while (true) {
    await tick();
    const { bytesRead } = await handle.read(buf, 0, buf.length, null);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > limit) return { skipped: { reason: "maxHashBytes", limit, size: total } };
    hash.update(buf.subarray(0, bytesRead));
  }
  return { sha256: hash.digest("hex") };
}

/**
 * Costs of the code point at s[i]: UTF-16 units it takes, its UTF-8 bytes, and its bytes in
 * a JSON string: `"` and `\\` take 2, \\b \\f \\n \\r \\t take 2, other controls and lone
 * surrogates 6 (as JSON.stringify writes them).
 */
function costAt(s: string, i: number, out: { units: number; utf8: number; json: number }): void {
  const c = s.charCodeAt(i);
  out.units = 1;
  if (c < 0x80) {
    out.utf8 = 1;
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c) out.json = 1;
    else if (c === 0x22 || c === 0x5c || (c >= 8 && c <= 13 && c !== 11)) out.json = 2;
    else out.json = 6;
  } else if (c < 0x800) {
    out.utf8 = 2;
    out.json = 2;
  } else if (c >= 0xd800 && c <= 0xdfff) {
    const d = c <= 0xdbff && i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
    if (d >= 0xdc00 && d <= 0xdfff) {
      out.units = 2;
      out.utf8 = 4;
      out.json = 4;
    } else {
      out.utf8 = 3;
      out.json = 6;
    }
  } else {
    out.utf8 = 3;
    out.json = 3;
  }
}

/** Printable ASCII with tab, newline and carriage return: what most source text is. */
const PLAIN_ASCII = /^[\x20-\x7e\t\n\r]*$/;
/** The characters of PLAIN_ASCII text that JSON writes as two bytes. */
const JSON_ESCAPED = ['"', "\\", "\t", "\n", "\r"];

/** Occurrences of one character in s. */
function occurrences(s: string, c: string): number {
  let n = 0;
  for (let i = s.indexOf(c); i !== -1; i = s.indexOf(c, i + 1)) n++;
  return n;
}

/** UTF-8 bytes of a string and bytes of its JSON string form (without the quotes), in one pass. */
export function textCosts(s: string): { utf8: number; json: number } {
  if (PLAIN_ASCII.test(s)) {
    // One byte each; `"`, `\`, tab, newline and carriage return take two in JSON (as costAt says).
    let json = s.length;
    for (const c of JSON_ESCAPED) json += occurrences(s, c);
    return { utf8: s.length, json };
  }
  let utf8 = 0;
  let json = 0;
  const c = { units: 0, utf8: 0, json: 0 };
  for (let i = 0; i < s.length; i += c.units) {
    costAt(s, i, c);
    utf8 += c.utf8;
    json += c.json;
  }
  return { utf8, json };
}

/**
 * Longest prefix of s, never splitting a code point, whose UTF-8 size is at most maxUtf8
 * and whose JSON string size is at most maxJson.
 */
export function cutText(s: string, maxUtf8: number, maxJson: number): string {
  let u = 0;
  let j = 0;
  let i = 0;
  const c = { units: 0, utf8: 0, json: 0 };
  while (i < s.length) {
    costAt(s, i, c);
    if (u + c.utf8 > maxUtf8 || j + c.json > maxJson) break;
    u += c.utf8;
    j += c.json;
    i += c.units;
  }
  return s.slice(0, i);
}

/**
 * Longest suffix of s, never splitting a code point, whose UTF-8 size is at most maxUtf8 and
 * whose JSON string size is at most maxJson (cutText from the other end).
 */
export function cutTextEnd(s: string, maxUtf8: number, maxJson: number): string {
  let u = 0;
  let j = 0;
  let i = s.length;
  const c = { units: 0, utf8: 0, json: 0 };
  while (i > 0) {
    const low = s.charCodeAt(i - 1);
    const high = i >= 2 ? s.charCodeAt(i - 2) : 0;
    const at = low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff ? i - 2 : i - 1;
    costAt(s, at, c);
    if (u + c.utf8 > maxUtf8 || j + c.json > maxJson) break;
    u += c.utf8;
    j += c.json;
    i = at;
  }
  return s.slice(i);
}

/**
 * Throws TOO_LARGE (details size, limit, reason "maxResultBytes") unless the JSON of a
 * fixed-shape result (nothing in it can be cut) fits the result byte budget.
 */
export function assertFitsBudget(value: unknown, options: { limit: number; what: string }): void {
  // The bound is cheap and nearly always far below the limit: serialize only when it is not.
  if (jsonBytesAtMost(value) <= options.limit) return;
  const size = jsonBytes(value);
  if (size > options.limit) {
    throw new WorkspaceError(
      "TOO_LARGE",
      `the result of ${options.what} would be ${size} bytes, over maxResultBytes (${options.limit})`,
      { details: { size, limit: options.limit, reason: "maxResultBytes" } },
    );
  }
}

/** How many leading bytes are inspected for NUL to call a file binary. */
export const BINARY_SNIFF_BYTES = 8192;

/** Decodes UTF-8 strictly; returns null if the bytes are not valid UTF-8. */
export function decodeUtf8Strict(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** Number of lines in a text: a final line without newline counts; "" has 0 lines. */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 0;
  let i = -1;
  while ((i = text.indexOf("\n", i + 1)) !== -1) n++;
  return text.endsWith("\n") ? n : n + 1;
}

/** ISO string of a date, or null. */
export function iso(d: Date | null): string | null {
  return d ? d.toISOString() : null;
}

/** Entry type as reported everywhere. */
export type EntryType = "file" | "directory" | "symlink" | "other";

/** The entry type of an lstat result. */
export function entryType(info: FsInfo): EntryType {
  if (info.isSymlink) return "symlink";
  if (info.isDirectory) return "directory";
  if (info.isFile) return "file";
  return "other";
}

/**
 * A KMP finder for a literal: the first match starting in [from, end) (end defaults to the
 * text's length; a match may extend past end), or -1; linear in the scanned text whatever the
 * literal (indexOf's worst case is text x literal).
 */
export function kmpFinder(q: string): (text: string, from: number, end?: number) => number {
  const fail = new Int32Array(q.length);
  for (let i = 1, k = 0; i < q.length; i++) {
    while (k > 0 && q.charCodeAt(i) !== q.charCodeAt(k)) k = fail[k - 1];
    if (q.charCodeAt(i) === q.charCodeAt(k)) k++;
    fail[i] = k;
  }
  return (text, from, end = text.length) => {
    const stop = Math.min(text.length, end + q.length - 1);
    for (let i = from, k = 0; i < stop; i++) {
      const c = text.charCodeAt(i);
      while (k > 0 && c !== q.charCodeAt(k)) k = fail[k - 1];
      if (c === q.charCodeAt(k)) k++;
      if (k === q.length) return i - q.length + 1;
    }
    return -1;
  };
}
