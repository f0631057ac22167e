/** edit_file: exact, unambiguous text replacements with a unified diff; line endings kept. */
import type { Workspace } from "./workspace.ts";
import { WorkspaceError } from "./errors.ts";
import { openCheckedFile, verifyAfterRead } from "./containment.ts";
import {
  countLines,
  cutText,
  decodeUtf8Strict,
  kmpFinder,
  pacer,
  sha256Hex,
  textCosts,
} from "./text.ts";
import { jsonBytes } from "./budget.ts";
import { atomicReplace, commitGate, refuseHardLinked } from "./atomic.ts";
import type { Resolved } from "./path_policy.ts";

/** One replacement. */
export interface Edit {
  oldText: string;
  newText: string;
  replaceAll?: boolean;
}

/** Arguments of editFile. */
export interface EditFileArgs {
  path: string;
  edits: Edit[];
  dryRun?: boolean;
  expectedSha256?: string;
}

/** Result of editFile. */
export interface EditFileResult {
  path: string;
  dryRun: boolean;
  changed: boolean;
  replacements: number;
  lineEnding: "lf" | "crlf";
  diff: string;
  sha256Before: string;
  sha256After: string;
  /** The diff was cut at a line boundary to fit the result byte budget. */
  truncated?: boolean;
  truncatedReason?: "maxResultBytes";
}

/** Most candidate line numbers reported in a NO_MATCH or AMBIGUOUS_MATCH error. */
const MAX_CANDIDATES = 20;

/** Where a text occurs: how often (non-overlapping, left to right) and the first offsets. */
interface Occurrences {
  count: number;
  /** The first MAX_CANDIDATES + 1 offsets, or all of them when asked for. */
  first: number[];
}

/** Needles up to this length are searched with indexOf, whose worst case is small for them. */
const SHORT_NEEDLE = 16;
/** Start positions one KMP call covers between checks of cancellation and the time budget. */
const KMP_WINDOW = 256 * 1024;

/**
 * Counts the non-overlapping occurrences of needle in time linear in the text whatever the
 * needle (KMP for long needles; indexOf's worst case is text x needle), checking cancellation
 * and the time budget as it goes and yielding to the event loop.
 */
async function occurrences(
  haystack: string,
  needle: string,
  options: { tick: () => Promise<void>; all: boolean },
): Promise<Occurrences> {
  const { tick } = options;
  const out: Occurrences = { count: 0, first: [] };
  const found = (at: number) => {
    out.count++;
    if (options.all || out.first.length <= MAX_CANDIDATES) out.first.push(at);
  };
  const m = needle.length;
  if (m <= SHORT_NEEDLE) {
    for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + m)) {
      found(i);
      if ((out.count & 0xfff) === 0) await tick();
    }
    return out;
  }
  // In windows of start positions, so cancellation and the time budget are checked between.
  const find = kmpFinder(needle);
  for (let from = 0; from < haystack.length;) {
    await tick();
    const end = from + KMP_WINDOW;
    const at = find(haystack, from, end);
    if (at === -1) {
      from = end;
    } else {
      found(at);
      from = at + m; // non-overlapping: the next match starts after this one
    }
  }
  return out;
}

function lineAt(text: string, offset: number): number {
  return countLines(text.slice(0, offset + 1)) || 1;
}

/** Longest first line of oldText that is also looked for inside lines (cost: text x this). */
const MAX_SIMILAR_PROBE = 256;

/** Lines whose trimmed text equals (or, for a short probe, contains) the trimmed first non-blank line of the search text. */
function similarLines(text: string, oldText: string): number[] {
  const first = oldText.split("\n").map((l) => l.trim()).find((l) => l.length > 0);
  if (!first) return [];
  const contains = first.length <= MAX_SIMILAR_PROBE;
  const out: number[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length && out.length < MAX_CANDIDATES; i++) {
    if (lines[i].trim() === first || (contains && lines[i].includes(first))) out.push(i + 1);
  }
  return out;
}

/**
 * The bytes of the file to edit, read through an identity-checked handle (TOO_LARGE over
 * maxWriteBytes, by the handle's fstat) and verified after the read (decision 0010).
 */
async function readForEdit(ws: Workspace, r: Resolved): Promise<Uint8Array> {
  const h = await openCheckedFile(r, "path");
  let bytes: Uint8Array;
  try {
    const st = await h.stat();
    if (st.size > ws.limits.maxWriteBytes) {
      throw new WorkspaceError(
        "TOO_LARGE",
        `${r.rel} is ${st.size} bytes, over the edit limit of ${ws.limits.maxWriteBytes}`,
        {
          argument: "path",
          details: { size: st.size, limit: ws.limits.maxWriteBytes },
        },
      );
    }
    bytes = await h.readFile();
  } finally {
    await h.close();
  }
  verifyAfterRead(r, "path");
  return bytes;
}

/** The file's text: BINARY_FILE for any NUL (the rule read_file has for a file read whole) or bad UTF-8. */
function decodeForEdit(bytes: Uint8Array, rel: string): string {
  // Any NUL, not only in the first 8 KiB: the same rule as read_file for a file it reads whole.
  const original = bytes.indexOf(0) !== -1 ? null : decodeUtf8Strict(bytes);
  if (original === null) {
    throw new WorkspaceError("BINARY_FILE", `${rel} is not UTF-8 text and cannot be edited`, {
      argument: "path",
    });
  }
  return original;
}

/** What applying the edits needs besides the text: the line-ending fold, pacing, names, limit. */
interface EditContext {
  /** Folds CRLF to LF when the file is CRLF throughout. */
  norm: (s: string) => string;
  tick: () => Promise<void>;
  rel: string;
  maxWriteBytes: number;
}

/** NO_MATCH for edits[i], naming lines that look similar. */
function noMatch(text: string, oldText: string, i: number, rel: string): WorkspaceError {
  const candidates = similarLines(text, oldText);
  return new WorkspaceError(
    "NO_MATCH",
    `edits[${i}].oldText was not found in ${rel}` +
      (candidates.length ? `; lines that look similar: ${candidates.join(", ")}` : "") +
      (i > 0 ? ` (after applying edits 0..${i - 1})` : ""),
    { argument: `edits[${i}].oldText`, details: { editIndex: i, candidates } },
  );
}

/** AMBIGUOUS_MATCH for edits[i], naming the lines of its first occurrences. */
function ambiguous(text: string, found: Occurrences, i: number, rel: string): WorkspaceError {
  const candidates = found.first.slice(0, MAX_CANDIDATES).map((o) => lineAt(text, o));
  return new WorkspaceError(
    "AMBIGUOUS_MATCH",
    `edits[${i}].oldText occurs ${found.count} times in ${rel} (lines ${candidates.join(", ")}); ` +
      "add surrounding text to make it unique, or pass replaceAll: true",
    {
      argument: `edits[${i}].oldText`,
      details: { editIndex: i, occurrences: found.count, candidates },
    },
  );
}

/** text with every occurrence at the offsets replaced (one pass, no second search). */
function rebuildAt(
  text: string,
  at: readonly number[],
  oldLength: number,
  newText: string,
): string {
  const parts: string[] = [];
  let from = 0;
  for (const o of at) {
    parts.push(text.slice(from, o), newText);
    from = o + oldLength;
  }
  parts.push(text.slice(from));
  return parts.join("");
}

/** Applies edits[i] to text: the text after it and how many replacements it made. */
async function applyEdit(
  text: string,
  edit: Edit,
  i: number,
  ctx: EditContext,
): Promise<{ text: string; count: number }> {
  const oldText = ctx.norm(edit.oldText);
  const newText = ctx.norm(edit.newText);
  if (oldText.length === 0) {
    throw new WorkspaceError("INVALID_ARGUMENT", `edits[${i}].oldText is empty`, {
      argument: `edits[${i}].oldText`,
    });
  }
  // replaceAll with a long oldText rebuilds from the offsets: split() would search again with
  // indexOf, whose worst case is text x oldText.
  const rebuild = edit.replaceAll === true && oldText.length > SHORT_NEEDLE;
  const found = await occurrences(text, oldText, { tick: ctx.tick, all: rebuild });
  const at = found.first;
  if (found.count === 0) throw noMatch(text, oldText, i, ctx.rel);
  if (found.count > 1 && !edit.replaceAll) throw ambiguous(text, found, i, ctx.rel);
  // The size is known before the text is built: an edit that would outgrow the write limit is
  // refused without building it (UTF-16 length bounds nothing exactly, but the UTF-8 size of
  // the result is at least its length, so a result longer than the limit is surely too large).
  const count = edit.replaceAll ? found.count : 1;
  const length = text.length + count * (newText.length - oldText.length);
  if (length > ctx.maxWriteBytes) {
    throw new WorkspaceError(
      "TOO_LARGE",
      `the edited file would be over ${ctx.maxWriteBytes} bytes, the limit`,
      { argument: "edits", details: { size: length, limit: ctx.maxWriteBytes } },
    );
  }
  if (rebuild) return { text: rebuildAt(text, at, oldText.length, newText), count };
  const next = edit.replaceAll
    ? text.split(oldText).join(newText)
    : text.slice(0, at[0]) + newText + text.slice(at[0] + oldText.length);
  return { text: next, count };
}

/** Applies the edits in order, all or nothing; the text after them and the replacements made. */
async function applyEdits(
  before: string,
  edits: readonly Edit[],
  ctx: EditContext,
): Promise<{ text: string; replacements: number }> {
  let text = before;
  let replacements = 0;
  for (const [i, edit] of edits.entries()) {
    const applied = await applyEdit(text, edit, i, ctx);
    text = applied.text;
    replacements += applied.count;
    await ctx.tick();
  }
  // Keep the final newline as it was.
  if (before.endsWith("\n") && !text.endsWith("\n") && text.length > 0) text += "\n";
  if (!before.endsWith("\n") && text.endsWith("\n")) text = text.slice(0, -1);
  return { text, replacements };
}

/** The edited file as UTF-8 in its own line endings; TOO_LARGE over maxWriteBytes. */
function encodeEdited(
  text: string,
  crlf: boolean,
  maxWriteBytes: number,
): { after: string; afterBytes: Uint8Array } {
  const after = crlf ? text.replaceAll("\n", "\r\n") : text;
  const afterBytes = new TextEncoder().encode(after);
  if (afterBytes.length > maxWriteBytes) {
    throw new WorkspaceError(
      "TOO_LARGE",
      `the edited file would be ${afterBytes.length} bytes, over the limit`,
      {
        argument: "edits",
        details: { size: afterBytes.length, limit: maxWriteBytes },
      },
    );
  }
  return { after, afterBytes };
}

/** Sets the result's unified diff, cut on whole lines (and said so) to fit maxResultBytes. */
async function attachDiff(
  out: EditFileResult,
  texts: { rel: string; before: string; after: string },
  maxResultBytes: number,
): Promise<void> {
  // Loaded on the first edit: jsdiff is not needed before a server's first answer (0036).
  const { unifiedDiff } = await import("./patch.ts");
  const { diff } = unifiedDiff(texts.rel, texts.before, texts.after);
  const fixed = jsonBytes({ ...out, truncated: true, truncatedReason: "maxResultBytes" });
  const room = maxResultBytes - fixed;
  if (textCosts(diff).json <= room) out.diff = diff;
  else {
    out.diff = cutDiff(diff, Math.max(0, room));
    out.truncated = true;
    out.truncatedReason = "maxResultBytes";
  }
}

/** Applies edits in order; each oldText must occur exactly once unless replaceAll; all or nothing. */
export async function editFile(
  ws: Workspace,
  args: EditFileArgs,
  options: { signal?: AbortSignal } = {},
): Promise<EditFileResult> {
  ws.assertWritable("edit_file");
  const gate = commitGate(ws, options.signal);
  const r = await ws.policy.resolve(args.path, { argument: "path", followLeaf: true });
  const bytes = await readForEdit(ws, r);
  const info = r.info!;
  if (!args.dryRun) refuseHardLinked(info, r.rel, "path");
  const original = decodeForEdit(bytes, r.rel);
  const sha256Before = sha256Hex(bytes);
  if (args.expectedSha256 !== undefined && args.expectedSha256.toLowerCase() !== sha256Before) {
    throw new WorkspaceError(
      "CONFLICT",
      `${r.rel} has changed: its sha256 is ${sha256Before}, not the expected ${args.expectedSha256}`,
      {
        argument: "expectedSha256",
        details: { expected: args.expectedSha256, actual: sha256Before },
      },
    );
  }
  const crlf = original.includes("\r\n") && !/(^|[^\r])\n/.test(original);
  const norm = (s: string) => (crlf ? s.replaceAll("\r\n", "\n") : s);
  const before = norm(original);
  const tick = pacer({ signal: options.signal, maxOperationMs: ws.limits.maxOperationMs });
  const maxWriteBytes = ws.limits.maxWriteBytes;
  const { text, replacements } = await applyEdits(before, args.edits, {
    norm,
    tick,
    rel: r.rel,
    maxWriteBytes,
  });
  const { after, afterBytes } = encodeEdited(text, crlf, maxWriteBytes);
  const changed = after !== original;
  const dryRun = args.dryRun === true;
  // The rename inside atomicReplace is the commit point: cancellation and the time budget are
  // checked right before it; after it the edit completes and its result is returned.
  if (changed && !dryRun) {
    await atomicReplace(r, afterBytes, { existing: info, argument: "path", gate });
  }
  const out: EditFileResult = {
    path: r.rel,
    dryRun,
    changed,
    replacements,
    lineEnding: crlf ? "crlf" : "lf",
    diff: "",
    sha256Before,
    sha256After: changed ? sha256Hex(afterBytes) : sha256Before,
  };
  if (changed) {
    await attachDiff(out, { rel: r.rel, before, after: text }, ws.limits.maxResultBytes);
  }
  return out;
}

/** The longest run of whole lines of a diff whose JSON string form fits in room bytes. */
function cutDiff(diff: string, room: number): string {
  const head = cutText(diff, Infinity, room);
  const nl = head.lastIndexOf("\n");
  return nl === -1 ? "" : head.slice(0, nl + 1);
}
