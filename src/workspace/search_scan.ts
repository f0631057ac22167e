/**
 * search_text's work on one file: read it synchronously with the identity checks (decisions 0008,
 * 0035), then scan it for the query's hits, one match per line: on bytes when the matcher has a
 * byte plan, otherwise on the decoded text (whole text for literals, line by line for regexes).
 *
 * @module
 */
import fs from "node:fs";
import { isUtf8 } from "node:buffer";
import type { Checkpoint } from "./engine/protocol.ts";
import { openClassified, type WalkEntry } from "./walk.ts";
import { BINARY_SNIFF_BYTES } from "./text.ts";
import type { QueryMatcher } from "./query.ts";
import { byteString } from "./byte_scan.ts";
import { byteContent, type Content, stripCr, textContent } from "./search_content.ts";
import type { ShardCollector } from "./search_matches.ts";
import { FILE_KINDS, FILE_TEXT } from "./search_shards.ts";

type Loaded =
  | { kind: "text"; bytes: Uint8Array }
  | { kind: "binary" | "tooLarge" | "unreadable" | "notFile" };

/**
 * Reads one walked file synchronously into a reusable buffer: open without following a
 * final link and without blocking on FIFOs, fstat (it must be the inode the walk
 * classified), read at most maxFileBytes + 1 (one read when it returns the size fstat gave),
 * close. Four system calls and no promise per file (decisions 0008, 0035). The bytes are
 * checked (NUL in the first 8 KiB, valid UTF-8), not decoded.
 */
function loadSync(entry: WalkEntry, o: { maxFileBytes: number; buf: Uint8Array }): Loaded {
  const { maxFileBytes, buf } = o;
  if (entry.info === null) return { kind: "unreadable" };
  const opened = openClassified({ rel: entry.rel, abs: entry.abs, info: entry.info });
  if (opened === null) return { kind: "unreadable" };
  const { fd, stat } = opened;
  try {
    if (!stat.isFile()) return { kind: "notFile" };
    if (stat.size > maxFileBytes) return { kind: "tooLarge" };
    let n = 0;
    while (n <= maxFileBytes) {
      const r = fs.readSync(fd, buf, n, maxFileBytes + 1 - n, null);
      if (r === 0) break;
      n += r;
      // The size fstat gave was read: a file growing after that is read as it was then.
      if (n === stat.size) break;
    }
    if (n > maxFileBytes) return { kind: "tooLarge" };
    const bytes = buf.subarray(0, n);
    // One short byte string answers the NUL sniff faster than a typed array's indexOf.
    if (byteString(bytes.subarray(0, BINARY_SNIFF_BYTES)).indexOf("\0") !== -1) {
      return { kind: "binary" };
    }
    if (!isUtf8(bytes)) return { kind: "binary" };
    return { kind: "text", bytes };
  } catch {
    return { kind: "unreadable" };
  } finally {
    fs.closeSync(fd);
  }
}

const utf8 = new TextDecoder("utf-8");

const encoder = new TextEncoder();

/** Reads and scans the files of one shard's walk into its collector. */
export class FileScanner {
  readonly #matcher: QueryMatcher;
  readonly #out: ShardCollector;
  readonly #cp: Checkpoint;
  readonly #maxFileBytes: number;
  readonly #buf: Uint8Array;
  readonly #check = () => this.#cp.check();
  #filesSearched = 0;

  /** A scanner reading files of at most `maxFileBytes` into one reused buffer. */
  constructor(o: {
    matcher: QueryMatcher;
    out: ShardCollector;
    cp: Checkpoint;
    maxFileBytes: number;
  }) {
    this.#matcher = o.matcher;
    this.#out = o.out;
    this.#cp = o.cp;
    this.#maxFileBytes = o.maxFileBytes;
    this.#buf = new Uint8Array(o.maxFileBytes + 1);
  }

  /** Reads and scans one walked file met at walk position `at`; false when a cap stopped the search. */
  file(e: WalkEntry, at: number): boolean {
    const out = this.#out;
    out.at = at;
    const loaded = loadSync(e, { maxFileBytes: this.#maxFileBytes, buf: this.#buf });
    switch (loaded.kind) {
      case "text":
        out.result.files.push(at, FILE_TEXT);
        this.#cp.counters.filesSearched = ++this.#filesSearched;
        return this.#scan(e.rel, loaded.bytes);
      case "binary":
      case "tooLarge":
      case "unreadable":
        out.result.files.push(at, FILE_KINDS[loaded.kind]);
        break;
    }
    return true;
  }

  /**
   * Counts a file met at walk position `at` without reading it (decision 0054): a native
   * prefilter searched it and found no line that can match, or found it larger than maxFileBytes
   * (`tooLarge`), as a read would have.
   */
  unread(at: number, tooLarge: boolean): void {
    this.#out.result.files.push(at, tooLarge ? FILE_KINDS.tooLarge : FILE_TEXT);
    if (!tooLarge) this.#cp.counters.filesSearched = ++this.#filesSearched;
  }

  /**
   * Scans a file met at walk position `at` from its candidate lines instead of reading it
   * (decision 0067): each run of consecutive lines is scanned as a file of its own whose first
   * line is numbered as in the file. A plain ASCII file without NUL (the prefilter's promise) is
   * text; its matches are in those runs, with their context. False when a cap stopped the search.
   */
  fromLines(rel: string, at: number, groups: readonly (readonly [number, string])[]): boolean {
    const out = this.#out;
    out.at = at;
    out.result.files.push(at, FILE_TEXT);
    this.#cp.counters.filesSearched = ++this.#filesSearched;
    // A matcher with a byte plan scans bytes; any other scans the text as it came (no round trip).
    const bytes = this.#matcher.bytes !== undefined;
    for (const [first, text] of groups) {
      const going = bytes
        ? this.#scan(rel, encoder.encode(text), first - 1)
        : this.#scanText(rel, text, first - 1);
      if (!going) return false;
    }
    return true;
  }

  /**
   * Scans one file's bytes, its lines numbered from `lineOffset` + 1; returns false when a cap
   * stopped the search.
   */
  #scan(rel: string, bytes: Uint8Array, lineOffset = 0): boolean {
    const matcher = this.#matcher;
    const check = this.#check;
    const bf = matcher.bytes;
    if (bf) {
      // Bytes decide: search them, decode only the lines around hits (decision 0035).
      return this.#scanHits(
        rel,
        byteContent(bytes, { find: bf.find, pad: bf.pad, check }),
        bf.exact,
        lineOffset,
      );
    }
    return this.#scanText(rel, utf8.decode(bytes), lineOffset);
  }

  /** Scans one file's decoded text, its lines numbered from `lineOffset` + 1 (see #scan). */
  #scanText(rel: string, text: string, lineOffset: number): boolean {
    const matcher = this.#matcher;
    const check = this.#check;
    const c = textContent(text, (from) => matcher.find(text, from, check));
    // A literal (escaped) query cannot span lines: scan the whole text and map hits to lines.
    if (matcher.wholeText) return this.#scanHits(rel, c, true, lineOffset);
    return this.#scanLines(rel, text, c, lineOffset);
  }

  /** A regex may use anchors and classes that see line ends: match line by line. */
  #scanLines(rel: string, text: string, c: Content, lineOffset: number): boolean {
    let going = true;
    let lineNo = lineOffset;
    let start = 0;
    while (going && start < text.length) {
      if ((lineNo & 15) === 0) this.#cp.check();
      lineNo++;
      let end = text.indexOf("\n", start);
      if (end === -1) end = text.length;
      const at = this.#matcher.find(stripCr(text.slice(start, end)), 0);
      if (at !== -1) {
        going = this.#out.record(rel, c, { lineNo, lineStart: start, lineEnd: end, col: at });
      }
      start = end + 1;
    }
    return going;
  }

  /**
   * Scans one file for hits of `c.find` (whole-text positions), one per line: each hit's line
   * is the match (`exact`, at the hit's column) or a candidate `findInLine` decides. Returns
   * false when a cap stopped the search.
   */
  #scanHits(rel: string, c: Content, exact: boolean, lineOffset: number): boolean {
    let going = true;
    let lineNo = 1 + lineOffset;
    let counted = c.base; // newlines counted up to this offset
    let from = c.base;
    while (going) {
      this.#cp.check();
      const pos = c.find(from);
      if (pos === -1) break;
      const lineStart = Math.max(c.base, c.lastNl(pos - 1) + 1);
      for (let i = c.nl(counted); i !== -1 && i < lineStart; i = c.nl(i + 1)) {
        lineNo++;
        counted = i + 1;
      }
      counted = Math.max(counted, lineStart);
      let lineEnd = c.nl(pos);
      if (lineEnd === -1) lineEnd = c.length;
      const col = exact
        ? c.units(lineStart, pos)
        : this.#matcher.findInLine(c.line(lineStart, lineEnd), this.#check);
      if (col !== -1) {
        going = this.#out.record(rel, c, { lineNo, lineStart, lineEnd, col });
      }
      from = lineEnd + 1; // one match per line
      if (from > c.length) break;
    }
    return going;
  }
}
