/**
 * Path facts for processes without read permission: the serve launcher (which holds none) and
 * `config print` (which holds read only on the invocation directory) ask a child running this
 * module, granted read on exactly the paths asked about, for each path's real path (links
 * resolved) and kind. Run as a script it prints `[{path, real?, kind?, error?}, ...]`.
 */

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

/** The running Deno binary, by the name the tasks grant run permission on. */
function selfDeno(): string {
  return Deno.build.os === "linux" ? "/proc/self/exe" : Deno.execPath();
}

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
  if (PROBE.protocol !== "file:") return undefined;
  // A comma would split the grant: such a path is not granted and reports the refusal.
  const grant = paths.filter((p) => p.startsWith("/") && !p.includes(","));
  try {
    const out = await new Deno.Command(options.deno ?? selfDeno(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        ...(grant.length ? [`--allow-read=${grant.join(",")}`] : []),
        decodeURIComponent(PROBE.pathname),
        ...paths,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    const facts = JSON.parse(new TextDecoder().decode(out.stdout)) as PathFacts[];
    return Array.isArray(facts) && facts.length === paths.length ? facts : undefined;
  } catch {
    return undefined;
  }
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
