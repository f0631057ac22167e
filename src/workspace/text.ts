/** Byte and text helpers shared by read, search and edit. */
import { createHash } from "node:crypto";

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

/** How many leading bytes are inspected for NUL to call a file binary. */
export const BINARY_SNIFF_BYTES = 8192;

/** True when the first bytes contain a NUL byte (the rule git and ripgrep use). */
export function looksBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
}

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

/** The 1-based line number of a UTF-16 offset, given sorted line-start offsets. */
export function lineOf(lineStarts: number[], offset: number): number {
  let lo = 0;
  let hi = lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lineStarts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** Offsets where each line starts. */
export function lineStarts(text: string): number[] {
  const out = [0];
  let i = -1;
  while ((i = text.indexOf("\n", i + 1)) !== -1) out.push(i + 1);
  return out;
}

/** ISO string of a date, or null. */
export function iso(d: Date | null): string | null {
  return d ? d.toISOString() : null;
}

/** Entry type as reported everywhere. */
export type EntryType = "file" | "directory" | "symlink" | "other";

/** The entry type of an lstat result. */
export function entryType(info: Deno.FileInfo): EntryType {
  if (info.isSymlink) return "symlink";
  if (info.isDirectory) return "directory";
  if (info.isFile) return "file";
  return "other";
}
