/**
 * `cli serve stdio|http [flags]`: launches a server entry as a child whose Deno permissions
 * are computed from its flags (read on the root, write only with --write, net only on the
 * bound host, env only for the variables it reads, no run), with stdio passed through.
 */
import { parseArgs } from "node:util";
import { resolveFromInvocation, UsageError } from "../config.ts";

/** The permission flags a server entry needs for its arguments. */
export function serverPermissions(kind: "stdio" | "http", args: string[]): string[] {
  const { values } = parseArgs({
    args,
    options: {
      root: { type: "string" },
      write: { type: "boolean" },
      host: { type: "string" },
      "pid-file": { type: "string" },
      "token-file": { type: "string" },
      "state-key-file": { type: "string" },
    },
    strict: false,
    allowPositionals: true,
  });
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  const root = resolveFromInvocation(str(values.root) ?? ".");
  const read = [root];
  const write: string[] = values.write === true ? [root] : [];
  const flags = ["--quiet", "--no-prompt"];
  if (kind === "http") {
    flags.push("--unstable-no-legacy-abort");
    const pidFile = str(values["pid-file"]);
    if (pidFile !== undefined) {
      // The pid file and the temporary file it is written through (renamed over it).
      const p = resolveFromInvocation(pidFile);
      read.push(p, `${p}.tmp`);
      write.push(p, `${p}.tmp`);
    }
    for (const f of ["token-file", "state-key-file"] as const) {
      const v = str(values[f]);
      if (v !== undefined) read.push(resolveFromInvocation(v));
    }
    const host = str(values.host) ?? "127.0.0.1";
    const net = host === "127.0.0.1" || host === "localhost" ? "127.0.0.1,localhost,[::1]" : host;
    flags.push(`--allow-net=${net}`, "--allow-env=INIT_CWD,WMCP_TOKEN,WMCP_STATE_KEY");
  } else {
    flags.push("--allow-env=INIT_CWD");
  }
  for (const p of [...read, ...write]) {
    if (p.includes(",")) {
      throw new UsageError(`cannot grant a permission on a path with a comma: ${p}`);
    }
  }
  flags.push(`--allow-read=${read.join(",")}`);
  if (write.length) flags.push(`--allow-write=${write.join(",")}`);
  return flags;
}

/** Runs the server as a child with scoped permissions; forwards SIGINT/SIGTERM; returns its exit code. */
export async function serveLaunch(kind: "stdio" | "http", args: string[]): Promise<number> {
  const entry = new URL(
    kind === "http" ? "../../serve_http.ts" : "../../serve_stdio.ts",
    import.meta.url,
  );
  const script = entry.protocol === "file:" ? entry.pathname : entry.href;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...serverPermissions(kind, args), script, ...args],
    env: { INIT_CWD: resolveFromInvocation(".") },
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const forward = (sig: Deno.Signal) => () => {
    try {
      child.kill(sig);
    } catch {
      // already exited
    }
  };
  const onInt = forward("SIGINT");
  const onTerm = forward("SIGTERM");
  Deno.addSignalListener("SIGINT", onInt);
  Deno.addSignalListener("SIGTERM", onTerm);
  try {
    return (await child.status).code;
  } finally {
    Deno.removeSignalListener("SIGINT", onInt);
    Deno.removeSignalListener("SIGTERM", onTerm);
  }
}
