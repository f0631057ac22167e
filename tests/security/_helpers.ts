/**
 * Shared fixtures of the security suite.
 *
 * Layout of every environment: a fresh temp directory `base` holding
 *   base/ws       W, the workspace root (opened writable through the library)
 *   base/outside  O, a sibling directory outside W with secret files
 * Attacks run every path-taking operation (PATH_OPS) and check the typed error,
 * the argument it names, and that nothing outside W (and, for refusals, nothing in W) changed.
 */
import assert from "node:assert/strict";
import {
  type ErrorCode,
  type Limits,
  runOperation,
  Workspace,
  type WorkspaceError,
} from "../../mod.ts";
import { expectError as expectTypedError } from "../_support/errors.ts";
import { snapshot } from "../_support/fs.ts";

export { type SnapEntry, snapshot } from "../_support/fs.ts";

/** Content of the outside secret file; it must never appear in any result or error. */
export const SECRET = "TOP-SECRET-CONTENT-7f3a9c";
/** Name of a file inside O that must never be revealed by a listing. */
export const SECRET_NAME = "classified-names-e41b.txt";
/** Content of W/inside.txt. */
export const INSIDE = "inside content\n";

/** One temp environment: W (workspace) and O (outside) side by side under base. */
export interface Env {
  /** The temp parent of W and O (real path). */
  base: string;
  /** The workspace root (real path). */
  W: string;
  /** The outside directory (real path). */
  O: string;
  /** The workspace, opened on W. */
  ws: Workspace;
}

/** Options of makeEnv. */
export interface EnvOptions {
  writable?: boolean;
  limits?: Partial<Limits>;
  /** Name of W inside base (default "ws"). */
  wsName?: string;
}

/** Creates W and O with their standard contents and opens the workspace. */
export async function makeEnv(options: EnvOptions = {}): Promise<Env> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-sec-" }));
  const W = `${base}/${options.wsName ?? "ws"}`;
  const O = `${base}/outside`;
  await Deno.mkdir(`${W}/a/b`, { recursive: true });
  await Deno.writeTextFile(`${W}/inside.txt`, INSIDE);
  await Deno.writeTextFile(`${W}/a/keep.txt`, "keep\n");
  await Deno.mkdir(`${O}/secretdir`, { recursive: true });
  await Deno.writeTextFile(`${O}/secret`, SECRET + "\n");
  await Deno.writeTextFile(`${O}/${SECRET_NAME}`, SECRET + " named\n");
  await Deno.writeTextFile(`${O}/secretdir/inner.txt`, SECRET + " inner\n");
  const ws = await Workspace.open({
    root: W,
    writable: options.writable ?? true,
    limits: options.limits,
  });
  return { base, W, O, ws };
}

/** Runs fn with a fresh environment and always removes it. */
export async function withEnv(
  fn: (env: Env) => Promise<void>,
  options: EnvOptions = {},
): Promise<void> {
  const env = await makeEnv(options);
  try {
    await fn(env);
  } finally {
    await Deno.remove(env.base, { recursive: true });
  }
}

/** Fails when an operation takes longer than ms (a hang fails the test instead of CI). */
export async function withTimeout<T>(p: Promise<T>, ms: number, label: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs one operation through the library registry, with a timeout. */
export function run(
  ws: Workspace,
  name: string,
  args: Record<string, unknown>,
  ms = 10_000,
): Promise<Record<string, unknown>> {
  return withTimeout(runOperation({ workspace: ws }, name, args), ms, name);
}

/**
 * Awaits p, which must reject with a WorkspaceError of one of the codes naming exactly `argument`
 * (undefined: none) and never revealing SECRET; returns it.
 */
export function expectError(
  p: Promise<unknown>,
  codes: ErrorCode | readonly ErrorCode[],
  argument: string | undefined,
  label = "",
): Promise<WorkspaceError> {
  return expectTypedError(p, codes, { argument, checkArgument: true, label, forbidden: [SECRET] });
}

/** How one path-taking operation is called with an attacker-chosen path. */
export interface PathOp {
  /** Label for the step ("move_path(source)"). */
  label: string;
  /** Operation name. */
  name: string;
  /** The argument the error must name. */
  argument: string;
  /** Whether the operation writes. */
  write: boolean;
  /** Arguments for the given path. */
  args(path: string): Record<string, unknown>;
}

/** Every path-taking operation, each path argument separately. */
export const PATH_OPS: readonly PathOp[] = [
  {
    label: "read_file",
    name: "read_file",
    argument: "path",
    write: false,
    args: (path) => ({ path }),
  },
  {
    label: "read_media",
    name: "read_media",
    argument: "path",
    write: false,
    args: (path) => ({ path }),
  },
  {
    label: "get_file_info",
    name: "get_file_info",
    argument: "path",
    write: false,
    args: (path) => ({ path }),
  },
  {
    label: "list_directory",
    name: "list_directory",
    argument: "path",
    write: false,
    args: (path) => ({ path, depth: 10, includeHidden: true }),
  },
  {
    label: "find_files",
    name: "find_files",
    argument: "path",
    write: false,
    args: (path) => ({ pattern: "**", path, includeHidden: true, respectGitignore: false }),
  },
  {
    label: "search_text",
    name: "search_text",
    argument: "path",
    write: false,
    args: (path) => ({ query: "SECRET", path, includeHidden: true, respectGitignore: false }),
  },
  {
    label: "write_file",
    name: "write_file",
    argument: "path",
    write: true,
    args: (path) => ({ path, content: "pwned\n", ifExists: "overwrite", confirm: true }),
  },
  {
    label: "write_file(createParents)",
    name: "write_file",
    argument: "path",
    write: true,
    args: (path) => ({
      path,
      content: "pwned\n",
      ifExists: "overwrite",
      confirm: true,
      createParents: true,
    }),
  },
  {
    label: "edit_file",
    name: "edit_file",
    argument: "path",
    write: true,
    args: (path) => ({ path, edits: [{ oldText: "SECRET", newText: "pwned" }] }),
  },
  {
    label: "create_directory",
    name: "create_directory",
    argument: "path",
    write: true,
    args: (path) => ({ path }),
  },
  {
    label: "move_path(source)",
    name: "move_path",
    argument: "source",
    write: true,
    args: (path) => ({ source: path, destination: "moved-here" }),
  },
  {
    label: "move_path(destination)",
    name: "move_path",
    argument: "destination",
    write: true,
    args: (path) => ({ source: "inside.txt", destination: path, overwrite: true, confirm: true }),
  },
  {
    label: "copy_path(source)",
    name: "copy_path",
    argument: "source",
    write: true,
    args: (path) => ({ source: path, destination: "copied-here", recursive: true }),
  },
  {
    label: "copy_path(destination)",
    name: "copy_path",
    argument: "destination",
    write: true,
    // Confirmed, as delete_path's: the attack is on the path, not on a missing confirmation.
    args: (path) => ({ source: "inside.txt", destination: path, overwrite: true, confirm: true }),
  },
  {
    label: "delete_path",
    name: "delete_path",
    argument: "path",
    write: true,
    args: (path) => ({ path, confirm: true, recursive: true }),
  },
];

/** Every distinct operation name in PATH_OPS. */
export const PATH_OP_NAMES: readonly string[] = [...new Set(PATH_OPS.map((o) => o.name))];

/**
 * Runs op on path, which must be refused with code (naming op.argument); asserts that
 * neither O, nor base's other entries, nor W changed.
 */
export async function expectRefused(
  env: Env,
  op: PathOp,
  path: string,
  codes: ErrorCode | readonly ErrorCode[],
  watch: readonly string[] = [],
): Promise<WorkspaceError> {
  const dirs = [env.base, ...watch];
  const before = await Promise.all(dirs.map(snapshot));
  const err = await expectError(
    run(env.ws, op.name, op.args(path)),
    codes,
    op.argument,
    `${op.label}(${JSON.stringify(path)})`,
  );
  const after = await Promise.all(dirs.map(snapshot));
  assert.deepEqual(after, before, `${op.label}(${JSON.stringify(path)}) changed the file system`);
  if (!path.includes(env.O)) {
    assert.ok(
      !JSON.stringify(err.toJSON()).includes(env.O),
      `${op.label}(${JSON.stringify(path)}): the error reveals the outside path: ${err.message}`,
    );
  }
  return err;
}

/** Asserts that a JSON-serialised result never mentions anything from O. */
export function assertRevealsNothing(env: Env, value: unknown, label: string): void {
  const json = JSON.stringify(value);
  for (const needle of [SECRET, SECRET_NAME, "secretdir", "inner.txt", env.O]) {
    assert.ok(!json.includes(needle), `${label} reveals ${JSON.stringify(needle)}: ${json}`);
  }
}
