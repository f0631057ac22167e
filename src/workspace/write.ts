/** write_file: a file written whole, atomically, under the confirmation and hash rules. */
import type { Workspace } from "./workspace.ts";
import { WorkspaceError } from "./errors.ts";
import type { Resolved } from "./path_policy.ts";
import { openCheckedFile, refuseSpecial, verifyAfterRead } from "./containment.ts";
import { assertFitsBudget, type HashSkipped, type Pace, sha256Bounded, sha256Hex } from "./text.ts";
import type { FsInfo } from "./fs/types.ts";
import { atomicReplace, type CommitGate, commitGate, refuseHardLinked } from "./atomic.ts";
import { assertDepth, makeDirectories } from "./directories.ts";

const utf8 = new TextEncoder();

/**
 * sha256 of an existing regular file, read through an identity-checked handle: streamed,
 * cancellable, and not computed (the reason returned instead) for a file over maxHashBytes.
 */
export async function hashFile(
  r: Resolved,
  options: Pace & { argument: string; limit: number },
): Promise<{ sha256: string } | { skipped: HashSkipped }> {
  const h = await openCheckedFile(r, options.argument);
  let hashed: { sha256: string } | { skipped: HashSkipped };
  try {
    hashed = await sha256Bounded(h, options);
  } finally {
    await h.close();
  }
  // As for reads: the name still leads to what was hashed (decision 0010).
  verifyAfterRead(r, options.argument);
  return hashed;
}

/** Arguments of writeFile. */
export interface WriteFileArgs {
  path: string;
  content: string;
  ifExists?: "error" | "overwrite";
  expectedSha256?: string;
  createParents?: boolean;
  /** Must be true to replace an existing file (ifExists "overwrite"). */
  confirm?: boolean;
}

/** Result of writeFile. */
export interface WriteFileResult {
  path: string;
  created: boolean;
  size: number;
  sha256: string;
  previousSha256?: string;
  /** Why previousSha256 is absent although a file was replaced: it was larger than maxHashBytes. */
  previousSha256Skipped?: HashSkipped;
}

function assertReplaceable(info: FsInfo, rel: string, argument: string): void {
  if (info.isDirectory) {
    throw new WorkspaceError("IS_A_DIRECTORY", `${argument} ${rel} is a directory`, { argument });
  }
  refuseSpecial(info, rel, argument);
  refuseHardLinked(info, rel, argument);
}

/** The content as UTF-8, refused with TOO_LARGE when it is over maxWriteBytes. */
function encodeContent(ws: Workspace, content: string): Uint8Array {
  const bytes = utf8.encode(content);
  if (bytes.length > ws.limits.maxWriteBytes) {
    throw new WorkspaceError(
      "TOO_LARGE",
      `content is ${bytes.length} bytes, over the write limit of ${ws.limits.maxWriteBytes}`,
      {
        argument: "content",
        details: { size: bytes.length, limit: ws.limits.maxWriteBytes },
      },
    );
  }
  return bytes;
}

/**
 * Creates the missing parents of a resolved path when createParents allows it (NOT_FOUND
 * otherwise) and resolves the path again; committed when a directory was created (the commit
 * point: from there the write completes).
 */
async function withParents(
  ws: Workspace,
  r: Resolved,
  args: WriteFileArgs,
  gate: CommitGate,
): Promise<{ r: Resolved; committed: boolean }> {
  if (r.parentExists) return { r, committed: false };
  if (!args.createParents) {
    throw new WorkspaceError(
      "NOT_FOUND",
      `the parent directory of ${r.rel} does not exist (pass createParents: true to create it)`,
      { argument: "path" },
    );
  }
  const dirs = r.rel.split("/").slice(0, -1);
  assertDepth(ws, dirs.length, "path");
  // Creating the first missing parent is the commit point: from there the write completes.
  const made = await makeDirectories(ws, { chain: r.chain, segs: dirs, gate }, "path");
  const again = await ws.policy.resolve(args.path, { argument: "path", followLeaf: true });
  return { r: again, committed: made.created.length > 0 };
}

/** What write_file learns of the file it would replace: its sha256, or why it was not taken. */
interface Previous {
  sha256?: string;
  skipped?: HashSkipped;
}

/**
 * The checks on an existing target, in order: replaceable (a regular file, one link), ifExists
 * allows it, its sha256 (TOO_LARGE when expectedSha256 cannot be checked because it is over
 * maxHashBytes).
 */
async function previousOf(
  ws: Workspace,
  r: Resolved,
  existing: FsInfo,
  args: WriteFileArgs,
  signal: AbortSignal | undefined,
): Promise<Previous> {
  assertReplaceable(existing, r.rel, "path");
  if ((args.ifExists ?? "error") === "error") {
    throw new WorkspaceError(
      "ALREADY_EXISTS",
      `${r.rel} already exists (pass ifExists: "overwrite" to replace it)`,
      { argument: "path" },
    );
  }
  const hashed = await hashFile(r, {
    argument: "path",
    limit: ws.limits.maxHashBytes,
    signal,
    maxOperationMs: ws.limits.maxOperationMs,
  });
  if (!("skipped" in hashed)) return { sha256: hashed.sha256 };
  if (args.expectedSha256 !== undefined) {
    throw new WorkspaceError(
      "TOO_LARGE",
      `${r.rel} is ${hashed.skipped.size} bytes, over maxHashBytes (${hashed.skipped.limit}): its sha256 cannot be checked against expectedSha256; nothing was written`,
      { argument: "expectedSha256", details: { ...hashed.skipped } },
    );
  }
  return { skipped: hashed.skipped };
}

/** CONFLICT unless expectedSha256, when given, is the replaced file's sha256 (none: no file). */
function assertExpected(
  args: WriteFileArgs,
  rel: string,
  existing: FsInfo | null,
  previousSha256: string | undefined,
): void {
  if (args.expectedSha256 === undefined) return;
  const expected = args.expectedSha256.toLowerCase();
  if (previousSha256 !== expected) {
    throw new WorkspaceError(
      "CONFLICT",
      existing
        ? `${rel} has changed: its sha256 is ${previousSha256}, not the expected ${expected}`
        : `${rel} does not exist, but expectedSha256 was given`,
      { argument: "expectedSha256", details: { expected, actual: previousSha256 ?? null } },
    );
  }
}

/** Writes a whole UTF-8 file atomically; refuses to clobber unless asked, and checks expectedSha256. */
export async function writeFile(
  ws: Workspace,
  args: WriteFileArgs,
  options: { signal?: AbortSignal } = {},
): Promise<WriteFileResult> {
  ws.assertWritable("write_file");
  const gate = commitGate(ws, options.signal);
  const bytes = encodeContent(ws, args.content);
  const first = await ws.policy.resolve(args.path, { argument: "path", followLeaf: true });
  if (first.rel === ".") {
    throw new WorkspaceError("IS_A_DIRECTORY", "path is the workspace root", { argument: "path" });
  }
  const { r, committed } = await withParents(ws, first, args, gate);
  const existing = r.info;
  const previous = existing ? await previousOf(ws, r, existing, args, options.signal) : {};
  assertExpected(args, r.rel, existing, previous.sha256);
  if (existing && args.confirm !== true) {
    throw new WorkspaceError(
      "CONFIRMATION_REQUIRED",
      `overwriting ${r.rel} needs explicit confirmation: pass confirm: true`,
      { argument: "confirm" },
    );
  }
  const out: WriteFileResult = {
    path: r.rel,
    created: !existing,
    size: bytes.length,
    sha256: sha256Hex(bytes),
  };
  if (previous.sha256 !== undefined) out.previousSha256 = previous.sha256;
  if (previous.skipped !== undefined) out.previousSha256Skipped = previous.skipped;
  assertFitsBudget(out, { limit: ws.limits.maxResultBytes, what: "write_file" });
  await atomicReplace(r, bytes, {
    existing,
    argument: "path",
    gate: committed ? undefined : gate,
  });
  return out;
}
