/**
 * The one way to ask a probe child: a process that holds fewer permissions than a question needs
 * (the router and the serve launcher read no file) runs one of this project's fixed probe
 * modules in a child granted read on exactly the paths in question, and reads the one JSON value
 * it prints. Undefined when no child can be run, a path cannot be granted, or the answer is not
 * JSON.
 *
 * The probe modules stay separate (src/cli/path_probe.ts, src/cli/entry_probe.ts,
 * src/sandbox/pid_dir_probe.ts), each importing only what its question needs: Deno loads a child
 * entry's whole module graph, dynamic imports named by a literal included, before it runs, and a
 * child granted read on one file cannot load modules later, so one entry for all three questions
 * would make the router's path probe (on every `op`) load the client's modules (decision 0043).
 */
import { outputOfDeno } from "./child.ts";
import { Grants, UngrantablePathError } from "./grants.ts";

/** One question for a probe child. */
export interface ProbeQuestion {
  /** The probe module (a local file of this project). */
  module: URL;
  /** Its arguments. */
  args: readonly string[];
  /** Read on these paths (each must be grantable), or on everything (`all`). */
  read: readonly string[] | "all";
  /** Env for the child (`all`: every variable, for `${VAR}` expansion), none by default. */
  env?: "all";
  /** Extra environment variables. */
  vars?: Record<string, string>;
  /** The binary to run instead of this Deno's own name. */
  deno?: string;
}

/** Asks a probe child; its printed JSON, or undefined. */
export async function askProbe<T>(q: ProbeQuestion): Promise<T | undefined> {
  if (q.module.protocol !== "file:") return undefined;
  const grants = new Grants();
  try {
    if (q.read === "all") grants.allow("read", "all");
    else for (const p of q.read) grants.read(p, "a probed path");
  } catch (err) {
    if (err instanceof UngrantablePathError) return undefined;
    throw err;
  }
  if (q.env === "all") grants.allow("env", "all");
  const flags = ["--quiet", "--no-prompt", ...grants.flags()];
  try {
    const out = await outputOfDeno({
      flags,
      module: q.module,
      args: q.args,
      env: q.vars,
      deno: q.deno,
    });
    return JSON.parse(new TextDecoder().decode(out.stdout)) as T;
  } catch {
    return undefined;
  }
}
