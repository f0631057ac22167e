/**
 * Types and helpers of the contract table: fixtures, snapshots, expectations and the
 * normalisation every adapter's outcome goes through before it is compared.
 */
import { DEFAULT_LIMITS, type Limits } from "../../mod.ts";

/** The five adapters every case runs through. */
export const ADAPTERS = ["library", "cli", "stdio", "httpModern", "httpLegacy"] as const;
/** One adapter's name. */
export type AdapterName = typeof ADAPTERS[number];

/**
 * A server/CLI configuration: read-only, read-write, read-write with small limits, read-only
 * with a small result budget (its read and media limits derived from it), or two roots (the first
 * read-write, the second read-only: decision 0064).
 */
export type ConfigName = "ro" | "rw" | "small" | "tiny" | "roots";

/** Limits of the "small" configuration (CLI `--limit`, servers `--limit name=N`). */
export const SMALL_LIMITS: Partial<Limits> = {
  maxReadBytes: 64,
  maxMediaBytes: 16,
  maxWriteBytes: 16,
  maxVisited: 6,
};

/**
 * Limits of the "tiny" configuration: only maxResultBytes, so maxReadBytes (1024 - 256 = 768) and
 * maxMediaBytes (768 / 4 * 3 = 576) follow it down (decision 0022's caps at small sizes).
 */
export const TINY_LIMITS: Partial<Limits> = { maxResultBytes: 1024 };

/** A configuration: writing enabled or not, its limit overrides, whether it has a second root. */
export interface Configuration {
  write: boolean;
  limits: Partial<Limits>;
  /**
   * A second root after the first, read-only (`--read-only-root`, `{readOnly: true}`): each case
   * gets a directory there too, holding its `second` fixture, addressed by `p.second`.
   */
  readOnlyRoot?: true;
}

/** The configurations. */
export const CONFIGS: Record<ConfigName, Configuration> = {
  ro: { write: false, limits: {} },
  rw: { write: true, limits: {} },
  small: { write: true, limits: SMALL_LIMITS },
  tiny: { write: false, limits: TINY_LIMITS },
  roots: { write: true, limits: {}, readOnlyRoot: true },
};

/** The limits an adapter in a configuration reports. */
export function limitsOf(config: ConfigName): Limits {
  return { ...DEFAULT_LIMITS, ...CONFIGS[config].limits };
}

/** One node of a workspace fixture. */
export type FixtureNode =
  | string
  | Uint8Array
  | { dir: true; mtime?: number }
  | { link: string }
  | { hardlink: string }
  | { fifo: true }
  | { file: string; mode?: number; mtime?: number };

/**
 * Files, directories and links to create, relative to the case directory. Parents are
 * implied. Link targets may contain `{{outside}}` (an absolute directory outside every
 * workspace, holding `secret.txt`) or `{{case}}` (the case directory, absolute); in a `second`
 * fixture also `{{first}}` (the case's directory in the first root, absolute).
 */
export type Fixture = Record<string, FixtureNode>;

/** A directory. */
export const DIR = { dir: true } as const;
/**
 * A text file (or, with `dir: true` as content, a directory) whose mtime is set, in seconds since
 * the epoch, after the whole fixture is made (so creating its contents does not move it).
 */
export const timed = (content: string | { dir: true }, mtime: number): FixtureNode =>
  typeof content === "string" ? { file: content, mtime } : { dir: true, mtime };
/** A FIFO (named pipe). */
export const FIFO = { fifo: true } as const;
/** A symbolic link with this target. */
export const link = (target: string): { link: string } => ({ link: target });
/** A second hard link to an existing fixture file. */
export const hardlink = (of: string): { hardlink: string } => ({ hardlink: of });

/** One node of a snapshot of a case directory. */
export type SnapshotNode =
  | string
  | { bytes: string }
  /** An executable file (an x bit set): its content and permission bits. */
  | { file: string | { bytes: string }; mode: number }
  | { dir: true }
  | { link: string }
  | { fifo: true }
  | { other: true };

/**
 * Whether a snapshot records a file's permission bits: only an executable's (any x bit). Nothing
 * makes one but a fixture's `{file, mode}` or a copy of one, whatever the umask, so a row can
 * assert that a mode was kept while every other file is recorded by its content alone.
 */
const executable = (mode: number): boolean => (mode & 0o111) !== 0;

/** Every entry below a case directory: relative path -> node (text files by content). */
export type Snapshot = Record<string, SnapshotNode>;

/** What a case expects an adapter to report. */
export type Expectation =
  | { result: unknown }
  | { error: { code: string; argument?: string | null; details?: unknown } }
  /** The servers do not list the tool in this mode: the call names an unknown tool. */
  | { unknownTool: true }
  /** The CLI refuses the command line itself (exit 2, `USAGE`). */
  | { usage: true };

/** Paths as one adapter spells them for one case. */
export interface Paths {
  /** A case-relative path as the adapter must pass it ("." is the case directory). */
  (rel: string): string;
  /** The absolute (configured, real) path of a case-relative path. */
  abs(rel: string): string;
  /** The absolute path of an entry of the outside directory (outside every workspace). */
  out(rel: string): string;
  /**
   * The absolute (configured, real) path of an entry of the case's directory in the second root
   * (configurations with `readOnlyRoot`; "." is that directory).
   */
  second(rel: string): string;
}

/** One row of the contract table. */
export interface Case {
  /** Unique, human-readable. */
  name: string;
  /** Operation (tool) name. */
  op: string;
  /** Arguments, with every case-relative path spelled through `p`. */
  args: (p: Paths) => Record<string, unknown>;
  /** Configuration (default: "ro" for read operations, "rw" for write operations). */
  config?: ConfigName;
  /** The workspace fixture (default: none). */
  fixture?: Fixture;
  /** The expected outcome, the same for every adapter unless `byAdapter` says otherwise. */
  expect: Expectation;
  /** Per-adapter expectation where the adapters legitimately present it differently. */
  byAdapter?: Partial<Record<AdapterName, Expectation>>;
  /** Files on disk afterwards (as a fixture); default: the fixture, unchanged. */
  after?: Fixture;
  /** The case's fixture in the second root (configurations with `readOnlyRoot`; default: none). */
  second?: Fixture;
  /** Files in the second root afterwards; default: `second`, unchanged. */
  secondAfter?: Fixture;
  /** Dotted result paths whose values are volatile for this case (replaced by "<masked>"). */
  mask?: string[];
  /** Known disagreements: adapter -> the difference (assertion kept, step ignored). */
  ignore?: Partial<Record<AdapterName, string>>;
}

/** What an adapter actually reported, before normalisation. */
export type Outcome =
  | { kind: "result"; value: unknown }
  | {
    kind: "error";
    error: { code: string; message: string; argument?: string; details?: unknown };
  }
  | { kind: "unknownTool"; detail: string }
  | { kind: "usage"; detail: string }
  /** Anything else (protocol error, crash): always a failure. */
  | { kind: "other"; detail: string };

const decoder = new TextDecoder("utf-8", { fatal: true });

function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** The snapshot a fixture produces when materialised (implied parents included). */
export function fixtureSnapshot(fixture: Fixture): Snapshot {
  const out: Snapshot = {};
  const addParents = (rel: string) => {
    const parts = rel.split("/");
    for (let i = 1; i < parts.length; i++) out[parts.slice(0, i).join("/")] ??= { dir: true };
  };
  for (const [rel, node] of Object.entries(fixture)) {
    addParents(rel);
    if (typeof node === "string") out[rel] = node;
    else if (node instanceof Uint8Array) out[rel] = textOrBytes(node);
    else if ("dir" in node) out[rel] = { dir: true };
    else if ("link" in node) out[rel] = { link: node.link };
    else if ("fifo" in node) out[rel] = { fifo: true };
    else if ("file" in node) out[rel] = fileNode(node);
    else {
      const target = fixture[node.hardlink];
      out[rel] = typeof target === "string"
        ? target
        : target instanceof Uint8Array
        ? textOrBytes(target)
        : fileNode(target as { file: string; mode?: number });
    }
  }
  return sortKeys(out) as Snapshot;
}

/** The snapshot of a fixture's `{file, mode?}`: its content, and its mode when executable. */
function fileNode(node: { file: string; mode?: number }): SnapshotNode {
  return node.mode !== undefined && executable(node.mode)
    ? { file: node.file, mode: node.mode & 0o7777 }
    : node.file;
}

function textOrBytes(bytes: Uint8Array): string | { bytes: string } {
  try {
    const s = decoder.decode(bytes);
    if (!s.includes("\0")) return s;
  } catch {
    // binary
  }
  return { bytes: toBase64(bytes) };
}

/**
 * Creates a fixture below dir (which must exist); `first`, for a second root's fixture, is what
 * `{{first}}` stands for.
 */
export async function materialize(
  dir: string,
  fixture: Fixture,
  outside: string,
  first?: string,
): Promise<void> {
  const subst = (t: string) => {
    const s = t.replaceAll("{{outside}}", outside).replaceAll("{{case}}", dir);
    return first === undefined ? s : s.replaceAll("{{first}}", first);
  };
  const entries = Object.entries(fixture);
  // Plain nodes first, then links (a hard link needs its file).
  const rank = (n: FixtureNode) =>
    typeof n === "object" && !(n instanceof Uint8Array) && ("hardlink" in n || "link" in n) ? 1 : 0;
  entries.sort((a, b) => rank(a[1]) - rank(b[1]));
  for (const [rel, node] of entries) {
    const abs = `${dir}/${rel}`;
    await Deno.mkdir(abs.slice(0, abs.lastIndexOf("/")), { recursive: true });
    if (typeof node === "string") await Deno.writeTextFile(abs, node);
    else if (node instanceof Uint8Array) await Deno.writeFile(abs, node);
    else if ("dir" in node) await Deno.mkdir(abs, { recursive: true });
    else if ("link" in node) await Deno.symlink(subst(node.link), abs);
    else if ("hardlink" in node) await Deno.link(`${dir}/${node.hardlink}`, abs);
    else if ("file" in node) {
      await Deno.writeTextFile(abs, node.file);
      if (node.mode !== undefined) await Deno.chmod(abs, node.mode);
    } else {
      const out = await new Deno.Command("mkfifo", { args: [abs], stderr: "piped" }).output();
      if (!out.success) throw new Error(`mkfifo ${abs}: ${new TextDecoder().decode(out.stderr)}`);
    }
  }
  // Times last: making a directory's contents moves its mtime.
  for (const [rel, node] of entries) {
    if (typeof node === "object" && "mtime" in node && node.mtime !== undefined) {
      await Deno.utime(`${dir}/${rel}`, node.mtime, node.mtime);
    }
  }
}

/**
 * Snapshots everything below dir (links not followed; link targets de-substituted, `first` too
 * when given; an executable file with its permission bits).
 */
export async function snapshot(dir: string, outside: string, first?: string): Promise<Snapshot> {
  const out: Snapshot = {};
  const walk = async (abs: string, rel: string) => {
    for await (const e of Deno.readDir(abs)) {
      const a = `${abs}/${e.name}`;
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      const st = await Deno.lstat(a);
      if (st.isSymlink) {
        let t = (await Deno.readLink(a)).replaceAll(outside, "{{outside}}");
        if (first !== undefined) t = t.replaceAll(first, "{{first}}");
        out[r] = { link: t.replaceAll(dir, "{{case}}") };
      } else if (st.isDirectory) {
        out[r] = { dir: true };
        await walk(a, r);
      } else if (st.isFile) {
        const content = textOrBytes(await Deno.readFile(a));
        const mode = (st.mode ?? 0) & 0o7777;
        out[r] = executable(mode) ? { file: content, mode } : content;
      } else if (st.isFifo) out[r] = { fifo: true };
      else out[r] = { other: true };
    }
  };
  await walk(dir, "");
  return sortKeys(out) as Snapshot;
}

/** A copy of a JSON value with object keys sorted (for stable comparison and messages). */
export function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object" && !(v instanceof Uint8Array)) {
    return Object.fromEntries(
      Object.keys(v as Record<string, unknown>).sort().map((k) => [
        k,
        sortKeys((v as Record<string, unknown>)[k]),
      ]),
    );
  }
  return v;
}

const TIME_KEYS = new Set(["mtime", "atime", "ctime", "birthtime"]);

/** How an adapter's outcome is normalised: see normalizeResult. */
export interface NormalizeOptions {
  /** The case directory's prefix to strip (shared-root adapters), else null. */
  prefix: string | null;
  op: string;
  mask?: string[];
  /**
   * Absolute spellings and the placeholders they become, in order, wherever they occur in a
   * string, before the prefix is stripped (several roots: the roots and the case's directories in
   * them, which results and messages may name absolute).
   */
  places?: readonly (readonly [string, string])[];
}

/**
 * Normalises a structured result: replaces the case's absolute places with placeholders and
 * strips the case-directory prefix from every string (shared-root adapters), replaces
 * timestamps, cursors and directory sizes (file-system dependent) with markers, masks the case's
 * volatile paths, and, for workspace_info, replaces the permission states (they describe the
 * process, which differs per adapter) after checking the one that must hold everywhere.
 */
export function normalizeResult(value: unknown, options: NormalizeOptions): unknown {
  const strip = (given: string) => {
    let s = given;
    for (const [abs, placeholder] of options.places ?? []) s = s.replaceAll(abs, placeholder);
    if (options.prefix === null) return s;
    if (s === options.prefix) return ".";
    return s.replaceAll(`${options.prefix}/`, "");
  };
  const walk = (v: unknown, key: string | null): unknown => {
    if (typeof v === "string") {
      if (key !== null && TIME_KEYS.has(key)) return "<time>";
      if (key === "nextCursor") return "<cursor>";
      return strip(v);
    }
    if (Array.isArray(v)) return v.map((x) => walk(x, null));
    if (v && typeof v === "object") {
      const o = v as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(o)) out[k] = walk(x, k);
      if (o.type === "directory" && typeof o.size === "number") out.size = "<dir-size>";
      return out;
    }
    return v;
  };
  let out = walk(value, null) as Record<string, unknown>;
  if (options.op === "workspace_info" && out && typeof out === "object") {
    const perms = out.permissions as Record<string, string> | undefined;
    if (perms?.readWorkspace !== "granted") {
      throw new Error(`workspace_info: readWorkspace is ${perms?.readWorkspace}, not granted`);
    }
    if (out.mode === "read-write" && perms.writeWorkspace !== "granted") {
      throw new Error(`workspace_info: read-write but writeWorkspace is ${perms.writeWorkspace}`);
    }
    out = { ...out, permissions: "<process-dependent>", containment: "<process-dependent>" };
  }
  for (const path of options.mask ?? []) {
    const keys = path.split(".");
    let o: Record<string, unknown> | undefined = out;
    for (const k of keys.slice(0, -1)) o = o?.[k] as Record<string, unknown> | undefined;
    const last = keys[keys.length - 1];
    if (o && last in o) o[last] = "<masked>";
  }
  return sortKeys(out);
}

/** The normalised form of an outcome, comparable to an expectation. */
export function normalizeOutcome(
  outcome: Outcome,
  options: NormalizeOptions,
): Expectation | { other: string } {
  switch (outcome.kind) {
    case "result":
      return { result: normalizeResult(outcome.value, options) };
    case "error": {
      const { code, argument, details } = outcome.error;
      const error: { code: string; argument: string | null; details?: unknown } = {
        code,
        argument: argument ?? null,
      };
      if (details !== undefined) error.details = normalizeResult(details, { ...options, op: "" });
      return { error };
    }
    case "unknownTool":
      return { unknownTool: true };
    case "usage":
      return { usage: true };
    default:
      return { other: outcome.detail };
  }
}

/**
 * The expectation in comparable form: an error's `argument` and `details` default to
 * "absent" (null), so a case states every detail an error carries.
 */
export function comparable(
  expect: Expectation,
  actual: Expectation | { other: string },
): { expected: unknown; actual: unknown } {
  if ("error" in expect && "error" in actual) {
    const e = {
      code: expect.error.code,
      argument: expect.error.argument ?? null,
      details: sortKeys(expect.error.details ?? null),
    };
    const a = {
      code: actual.error.code,
      argument: actual.error.argument ?? null,
      details: actual.error.details ?? null,
    };
    return { expected: { error: e }, actual: { error: a } };
  }
  if ("result" in expect) return { expected: { result: sortKeys(expect.result) }, actual };
  return { expected: expect, actual };
}
