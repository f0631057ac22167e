/**
 * What one config entry needs, for the router (which may read no file): a child granted read on
 * the config file only (and env, for `${VAR}` expansion) loads the entry as the client will and
 * prints `{kind, command?, cwd?, pathEnv?, secretFile?}` or `{error}`. The router then grants
 * the client run on that command only (stdio), or net (HTTP) and read on the entry's OAuth
 * client secret file, instead of both.
 */
import type { Target } from "../client/config_file.ts";
import { askProbe } from "../launch/probe.ts";

/** What the probe learned of a config entry. */
export type EntryFacts =
  | { kind: "stdio"; command: string; cwd?: string; pathEnv: boolean }
  | { kind: "http"; secretFile?: string }
  | { error: string };

const PROBE = new URL("./entry_probe.ts", import.meta.url);

/**
 * Loads entry `server` of config file `config` (absolute paths) in a child granted read on
 * `read` only. Undefined when no child can be run or it says nothing usable.
 */
export async function probeEntry(
  config: { path: string; server: string; read: string[] },
  options: { deno: string; invocationDir: string },
): Promise<EntryFacts | undefined> {
  const facts = await askProbe<EntryFacts>({
    module: PROBE,
    args: [config.path, config.server],
    read: config.read,
    env: "all",
    vars: { INIT_CWD: options.invocationDir },
    deno: options.deno,
  });
  return facts && typeof facts === "object" ? facts : undefined;
}

async function factsOf(path: string, server: string): Promise<EntryFacts> {
  const { targetFromConfig } = await import("../client/config_file.ts");
  try {
    const t: Target = await targetFromConfig(path, server);
    if (t.kind !== "stdio") {
      const secretFile = t.oauth?.clientSecretFile;
      return secretFile === undefined ? { kind: "http" } : { kind: "http", secretFile };
    }
    return {
      kind: "stdio",
      command: t.command,
      cwd: t.cwd,
      pathEnv: t.env !== undefined && Object.keys(t.env).includes("PATH"),
    };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

if (import.meta.main) {
  console.log(JSON.stringify(await factsOf(Deno.args[0], Deno.args[1])));
}
