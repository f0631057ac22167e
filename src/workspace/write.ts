/** write_file: a file written whole, atomically, under the confirmation and hash rules. */
import type { Workspace } from "./workspace.ts";
import { WorkspaceError } from "./errors.ts";
import type { Resolved } from "./path_policy.ts";
import { openCheckedFile, refuseSpecial, verifyAfterRead } from "./containment.ts";
import { assertFitsBudget, type HashSkipped, type Pace, sha256Bounded, sha256Hex } from "./text.ts";
import type { FsInfo } from "./fs/types.ts";
import { atomicReplace, commitGate } from "./atomic.ts";
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
  if (info.nlink !== null && info.nlink > 1) {
    throw new WorkspaceError(
      "HARD_LINKED",
      `${argument} ${rel} has ${info.nlink} hard links; wmcp never writes through a hard link`,
      { argument, details: { nlink: info.nlink } },
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
  const bytes = utf8.encode(args.content);
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
  let r = await ws.policy.resolve(args.path, { argument: "path", followLeaf: true });
  let committed = false;
  if (r.rel === ".") {
    throw new WorkspaceError("IS_A_DIRECTORY", "path is the workspace root", { argument: "path" });
  }
  if (!r.parentExists) {
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
    if (made.length > 0) committed = true;
    r = await ws.policy.resolve(args.path, { argument: "path", followLeaf: true });
  }
  const existing = r.info;
  let previousSha256: string | undefined;
  let previousSkipped: HashSkipped | undefined;
  if (existing) {
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
      signal: options.signal,
      maxOperationMs: ws.limits.maxOperationMs,
    });
    if ("skipped" in hashed) {
      previousSkipped = hashed.skipped;
      if (args.expectedSha256 !== undefined) {
        throw new WorkspaceError(
          "TOO_LARGE",
          `${r.rel} is ${hashed.skipped.size} bytes, over maxHashBytes (${hashed.skipped.limit}): its sha256 cannot be checked against expectedSha256; nothing was written`,
          { argument: "expectedSha256", details: { ...hashed.skipped } },
        );
      }
    } else previousSha256 = hashed.sha256;
  }
  if (args.expectedSha256 !== undefined) {
    const expected = args.expectedSha256.toLowerCase();
    if (previousSha256 !== expected) {
      throw new WorkspaceError(
        "CONFLICT",
        existing
          ? `${r.rel} has changed: its sha256 is ${previousSha256}, not the expected ${expected}`
          : `${r.rel} does not exist, but expectedSha256 was given`,
        { argument: "expectedSha256", details: { expected, actual: previousSha256 ?? null } },
      );
    }
  }
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
  if (previousSha256 !== undefined) out.previousSha256 = previousSha256;
  if (previousSkipped !== undefined) out.previousSha256Skipped = previousSkipped;
  assertFitsBudget(out, { limit: ws.limits.maxResultBytes, what: "write_file" });
  await atomicReplace(r, bytes, {
    existing,
    argument: "path",
    gate: committed ? undefined : gate,
  });
  return out;
}
