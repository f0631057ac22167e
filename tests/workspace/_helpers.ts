/** Shared helpers of the functional tests: temp workspaces, typed operation calls, error checks. */
import assert from "node:assert/strict";
import {
  type ErrorCode,
  getOperation,
  type Limits,
  runOperation,
  Workspace,
  type WorkspaceError,
} from "../../mod.ts";
import { expectError as expectTypedError } from "../_support/errors.ts";
import type { OperationContext } from "../../mod.ts";
import type { WorkspaceInfoResult } from "../../src/workspace/info.ts";
import type { ListDirectoryResult } from "../../src/workspace/list.ts";
import type { FileInfoResult, ReadFileResult, ReadMediaResult } from "../../src/workspace/read.ts";
import type { ReadFilesResult } from "../../src/workspace/read_many.ts";
import type { FindFilesResult } from "../../src/workspace/find.ts";
import type { SearchTextResult } from "../../src/workspace/search.ts";
import type { WriteFileResult } from "../../src/workspace/write.ts";
import type { CreateDirectoryResult } from "../../src/workspace/directories.ts";
import type { MovePathResult } from "../../src/workspace/move.ts";
import type { CopyPathResult } from "../../src/workspace/copy.ts";
import type { DeletePathResult } from "../../src/workspace/delete.ts";
import type { EditFileResult } from "../../src/workspace/edit.ts";

/** The result type of each operation, by name. */
export interface Results {
  workspace_info: WorkspaceInfoResult;
  list_directory: ListDirectoryResult;
  read_file: ReadFileResult;
  read_files: ReadFilesResult;
  read_media: ReadMediaResult;
  get_file_info: FileInfoResult;
  find_files: FindFilesResult;
  search_text: SearchTextResult;
  write_file: WriteFileResult;
  edit_file: EditFileResult;
  create_directory: CreateDirectoryResult;
  move_path: MovePathResult;
  copy_path: CopyPathResult;
  delete_path: DeletePathResult;
}

export { exists, makeTree, sha256, withTempDir } from "../_support/fs.ts";

/** Prefix of the temporary files atomic writes create. */
export const TEMP_PREFIX = ".wmcp-tmp-";

/** Opens a workspace on root. */
export function openWorkspace(
  root: string,
  options: { writable?: boolean; limits?: Partial<Limits> } = {},
): Promise<Workspace> {
  return Workspace.open({ root, writable: options.writable ?? false, limits: options.limits });
}

/**
 * Runs an operation through runOperation (the path every adapter uses) and checks the
 * result against the operation's output schema: it must parse, the parse must not drop
 * or change anything, and it must survive a JSON round trip unchanged.
 */
export async function run<N extends keyof Results>(
  workspace: Workspace,
  name: N,
  args: Record<string, unknown>,
  ctx: Omit<OperationContext, "workspace"> = {},
): Promise<Results[N]> {
  const result = await runOperation({ workspace, ...ctx }, name, args);
  const op = getOperation(name);
  assert.ok(op, `operation ${name} is registered`);
  const parsed = op.outputSchema.parse(result);
  assert.deepStrictEqual(parsed, result, `${name} result matches its outputSchema exactly`);
  assert.deepStrictEqual(JSON.parse(JSON.stringify(result)), result, `${name} result is JSON`);
  return result as unknown as Results[N];
}

/** Awaits a promise that must reject with a WorkspaceError of the given code (and argument). */
export function expectError(
  promise: Promise<unknown>,
  code: ErrorCode,
  argument?: string,
): Promise<WorkspaceError> {
  return expectTypedError(promise, code, { argument });
}

/** Runs an operation that must fail with the given code (and argument). */
export function runError(
  workspace: Workspace,
  name: string,
  args: Record<string, unknown>,
  code: ErrorCode,
  argument?: string,
): Promise<WorkspaceError> {
  return expectError(runOperation({ workspace }, name, args), code, argument);
}

/** Names of the atomic-write temp files left anywhere below dir. */
export async function tempFilesBelow(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.name.startsWith(TEMP_PREFIX)) out.push(p);
    if (e.isDirectory) out.push(...await tempFilesBelow(p));
  }
  return out;
}

/** Reads a file's bytes, or null when it does not exist. */
export async function bytesOrNull(path: string): Promise<Uint8Array | null> {
  try {
    return await Deno.readFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/** Permission bits of a path as a number. */
export async function modeOf(path: string): Promise<number> {
  const st = await Deno.lstat(path);
  return (st.mode ?? 0) & 0o7777;
}

/** UTF-8 bytes of a string. */
export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
