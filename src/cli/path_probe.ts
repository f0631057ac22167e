/**
 * Path facts for processes without read permission: the serve launcher (which holds none) and
 * `config print` (which holds read only on the invocation directory) ask a child running this
 * module, granted read on exactly the paths asked about, for each path's real path (links
 * resolved) and kind. Run as a script it prints `[{path, real?, kind?, error?}, ...]`.
 */
import { askProbe } from "../launch/probe.ts";
import { isGrantable } from "../launch/grants.ts";

/** What the probe learned of one path. */
export interface PathFacts {
  /** The path as asked. */
  path: string;
  /** The path with every link resolved (absent when it cannot be resolved). */
  real?: string;
  /** What the resolved path is. */
  kind?: "directory" | "file" | "other";
  /** Why it could not be resolved. */
  error?: string;
}

const PROBE = new URL("./path_probe.ts", import.meta.url);

/**
 * Resolves absolute paths in a child granted read on exactly those paths (resolving a link
 * needs read permission on the path only, not on its target). Returns undefined when no child
 * can be run (no run permission, or the module is not local): callers fall back to the spelled
 * paths.
 */
export async function probePaths(
  paths: string[],
  options: { deno?: string } = {},
): Promise<PathFacts[] | undefined> {
  if (paths.length === 0) return [];
  // A path a flag cannot name is not granted: the probe reports the refusal for it.
  const read = paths.filter((p) => p.startsWith("/") && isGrantable(p));
  const facts = await askProbe<PathFacts[]>({
    module: PROBE,
    args: paths,
    read,
    deno: options.deno,
  });
  return Array.isArray(facts) && facts.length === paths.length ? facts : undefined;
}

function factsOf(path: string): PathFacts {
  try {
    const real = Deno.realPathSync(path);
    // stat follows links; permission is checked on the path as asked.
    const info = Deno.statSync(path);
    const kind = info.isDirectory ? "directory" : info.isFile ? "file" : "other";
    return { path, real, kind };
  } catch (err) {
    return { path, error: (err as Error).message };
  }
}

if (import.meta.main) {
  console.log(JSON.stringify(Deno.args.map(factsOf)));
}
