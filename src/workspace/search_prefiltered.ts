/**
 * search_text behind a native prefilter (decision 0054): ripgrep searches the tree in another
 * process while the job walks it; its answer (Checkpoint.input, a PrefilterAnswer: the
 * workspace-relative paths of the files in which the query can match, a superset of those where
 * it does, and of those larger than maxFileBytes; or null to read every file) decides which files
 * the job reads. A file it did not name is counted as searched, or tooLarge, without being read.
 * The walk does not lstat files (only directories): a file is lstat'ed when it is read, and the
 * open is tied to that lstat as in any read.
 *
 * Until the answer comes the job reads as it walks for HEDGE_MS, so a search that its caps stop
 * early (a common word, the default maxMatches) ends as soon as without a prefilter; after that
 * it walks on and defers the files it would read, letting the answer in every YIELD_MS, and reads
 * the deferred ones, in walk order, once it came. A deferred file's matches are accepted once the
 * chain of its directory, as the walk verified it, still holds.
 *
 * @module
 */
import { type Checkpoint, type PinnedDir, yieldToEvents } from "./engine/protocol.ts";
import { verifyChain, type WalkEntry } from "./walk.ts";
import { lstatOrNullSync } from "./containment.ts";
import type { PrefilterAnswer } from "./native/prefilter.ts";
import type { FileScanner } from "./search_scan.ts";
import type { ShardCollector } from "./search_matches.ts";
import type { WorkspaceFs } from "./fs/types.ts";

/** How long a job reads as it walks before it waits for the prefilter's answer (ms). */
export const HEDGE_MS = 50;
/** Work between two looks for the answer while it has not come (ms). */
export const YIELD_MS = 8;
/** Pause between two looks once the walk has nothing left but to wait (ms). */
const WAIT_MS = 2;

/** A file the job would read, deferred until the answer comes. */
interface Deferred {
  entry: WalkEntry;
  at: number;
  chain: readonly PinnedDir[];
}

/** What the gate reads and records with. */
export interface GateParts {
  cp: Checkpoint;
  scanner: FileScanner;
  out: ShardCollector;
  fs: WorkspaceFs;
  /** How long to read as the walk goes before waiting for the answer (default HEDGE_MS). */
  hedgeMs?: number;
}

/** The answer as the gate uses it: sets, the files' lines, or null (read every file). */
type Known = {
  files: Set<string>;
  large: Set<string>;
  lines: ReadonlyMap<string, readonly (readonly [number, string])[]>;
} | null;

/** A prefiltered job's view of its prefilter: read, skip or defer each file. */
export class PrefilterGate {
  readonly #p: GateParts;
  /** undefined: not come yet; null: read every file; else the answer. */
  #only: Known | undefined = undefined;
  readonly #started = performance.now();
  #since = performance.now();
  readonly #deferred: Deferred[] = [];

  /** A gate over the job's input. */
  constructor(parts: GateParts) {
    this.#p = parts;
  }

  /**
   * Handles one walked file the job would read: reads it (returning false when a cap stopped the
   * search), counts it unread, or defers it. Deferred files are read before any later one.
   */
  async file(e: WalkEntry, at: number, chain: readonly PinnedDir[]): Promise<boolean> {
    const only = await this.#look();
    if (only === undefined && performance.now() - this.#started >= (this.#p.hedgeMs ?? HEDGE_MS)) {
      this.#deferred.push({ entry: e, at, chain });
      return true;
    }
    if (this.#deferred.length > 0 && !this.#drain(only)) return false;
    if (this.#skips(only, e)) {
      this.#p.scanner.unread(at, only!.large.has(e.rel));
      return true;
    }
    return this.#read(e, at, only);
  }

  /**
   * Reads one file, lstat'ed now when the walk did not; or, when the answer came with its lines,
   * scans those instead (decision 0067: ripgrep read it, in its own sandbox).
   * False when a cap stopped the search.
   */
  #read(e: WalkEntry, at: number, only: Known | undefined): boolean {
    const lines = only?.lines.get(e.rel);
    if (lines !== undefined && !e.rel.includes("\uFFFD")) {
      return this.#p.scanner.fromLines(e.rel, at, lines);
    }
    const entry = e.info === null ? { ...e, info: lstatOrNullSync(this.#p.fs, e.abs) } : e;
    // Replaced by something else since it was listed: not a file to read, as a walk that
    // lstat'ed it then would have found.
    if (entry.info !== null && !entry.info.isFile) return true;
    return this.#p.scanner.file(entry, at);
  }

  /** After the walk: waits for the answer, then reads what was deferred; false when a cap stopped it. */
  async finish(): Promise<boolean> {
    if (this.#deferred.length === 0) return true;
    let only = await this.#look();
    while (only === undefined) {
      this.#p.cp.check();
      await new Promise((r) => setTimeout(r, WAIT_MS));
      only = this.#peek();
    }
    return this.#drain(only);
  }

  /**
   * Reads or skips the deferred files in walk order; false when a cap stopped the search. The
   * files of one directory share its chain (the walk makes one per directory): it is verified
   * once after they were read, before their matches are accepted, not once per file.
   */
  #drain(only: Known | undefined): boolean {
    const { scanner, out, fs, cp } = this.#p;
    let read: readonly PinnedDir[] | undefined;
    const accept = () => {
      if (read === undefined) return;
      verifyChain(read, fs);
      out.commit();
      read = undefined;
    };
    for (const d of this.#deferred.splice(0)) {
      cp.check();
      if (this.#skips(only, d.entry)) {
        scanner.unread(d.at, only!.large.has(d.entry.rel));
        continue;
      }
      if (read !== d.chain) accept();
      const going = this.#read(d.entry, d.at, only);
      read = d.chain;
      if (!going) {
        accept();
        return false;
      }
    }
    accept();
    return true;
  }

  /**
   * True when the file need not be read: the answer came and did not name it, and its name is
   * as ripgrep saw it (a name that did not survive decoding, holding U+FFFD, may not be the name
   * ripgrep gave: such a file is read).
   */
  #skips(only: Known | undefined, e: WalkEntry): boolean {
    if (only === undefined || only === null) return false;
    return !only.files.has(e.rel) && !e.rel.includes("\uFFFD");
  }

  /** The answer if it came; lets messages in every YIELD_MS while it has not. */
  async #look(): Promise<Known | undefined> {
    const only = this.#peek();
    if (only !== undefined) return only;
    if (performance.now() - this.#since < YIELD_MS) return undefined;
    await yieldToEvents();
    this.#since = performance.now();
    return this.#peek();
  }

  #peek(): Known | undefined {
    if (this.#only !== undefined) return this.#only;
    const came = this.#p.cp.input();
    if (came === undefined) return undefined;
    const a = came.value as PrefilterAnswer | null | undefined;
    this.#only = a
      ? { files: new Set(a.files), large: new Set(a.large), lines: a.lines ?? new Map() }
      : null;
    return this.#only;
  }
}
