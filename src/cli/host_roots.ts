/**
 * `config print`'s roots (decision 0064): each `--root` and `--read-only-root` checked (absolute,
 * links resolved, an existing directory; roots that overlap refused, as the server would), warned
 * about when broad, described in a note, and written back as flags, in order, into an entry.
 */
import {
  envIfGranted,
  resolveFromInvocation,
  rootFlag,
  rootFlagName,
  UsageError,
} from "../config.ts";
import { assertDisjoint, broadness, type RootSpec } from "../workspace/roots.ts";
import { probePaths } from "./path_probe.ts";

/** The roots of an entry: one `root`, or `roots` in order (decision 0064). */
export type EntryRoots = { root: string; roots?: undefined } | {
  root?: undefined;
  roots: readonly RootSpec[];
};

/** `--root DIR` / `--read-only-root DIR` for each root, in order. */
export function rootArgs(options: EntryRoots): string[] {
  const roots = options.roots ?? [{ path: options.root }];
  return roots.flatMap((r) => [r.readOnly ? "--read-only-root" : "--root", r.path]);
}

/**
 * A root: absolute (relative to the invocation directory), links resolved, an existing directory;
 * errors name its flag.
 */
async function checkedRoot(r: RootSpec): Promise<RootSpec> {
  const given = r.path;
  const flag = rootFlagName(r);
  rootFlag(given, flag);
  const abs = resolveFromInvocation(given);
  const [facts] = (await probePaths([abs])) ?? [inProcessFacts(abs)];
  if (facts.real === undefined) {
    throw new UsageError(`${flag} ${given}: cannot use ${abs}: ${facts.error ?? "unknown error"}`);
  }
  if (facts.kind !== "directory") {
    throw new UsageError(`${flag} ${given}: ${facts.real} is not a directory`);
  }
  return { path: facts.real, ...(r.readOnly ? { readOnly: true } : {}) };
}

/** Every root checked (checkedRoot), in order; roots that overlap are refused as the server would. */
export async function checkedRoots(given: readonly RootSpec[]): Promise<RootSpec[]> {
  const roots: RootSpec[] = [];
  for (const r of given) roots.push(await checkedRoot(r));
  try {
    assertDisjoint(roots.map((r, i) => ({ rootGiven: given[i].path, rootReal: r.path })));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return roots;
}

function inProcessFacts(path: string): { real?: string; kind?: string; error?: string } {
  try {
    return {
      real: Deno.realPathSync(path),
      kind: Deno.statSync(path).isDirectory ? "directory" : "file",
    };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** The warning for a root that serves the whole file system or the home directory, if any. */
export async function broadRootNote(r: RootSpec): Promise<string | undefined> {
  const root = r.path;
  const home = envIfGranted("HOME");
  const homeReal = home === undefined || !home.startsWith("/")
    ? undefined
    : (await probePaths([home]))?.[0]?.real ?? home;
  const kind = broadness([root], [homeReal]);
  const what = kind === "file-system"
    ? "the whole file system"
    : kind === "home"
    ? "your whole home directory"
    : kind === "contains-home"
    ? "a directory containing your home directory"
    : undefined;
  return what === undefined ? undefined : `warning: ${rootFlagName(r)} ${root} serves ${what}`;
}

/** What the server serves, for a note: the root and its mode, or each root with its own. */
export function servedNote(roots: readonly RootSpec[], write: boolean): string {
  if (roots.length === 1 && !roots[0].readOnly) {
    return `the server serves ${roots[0].path} ${
      write ? "read-write (the write tools are on)" : "read-only"
    }`;
  }
  const each = roots.map((r) =>
    `${r.path} (${write && !r.readOnly ? "read-write" : "read-only"}${
      r.readOnly ? ", --read-only-root" : ""
    })`
  );
  return `the server serves ${each.join(", ")}; relative paths address the first`;
}
