/**
 * `deno task compile`: builds the single `wmcp` binary (deno compile of cli.ts) into dist/.
 * Where Deno's runtime (denort) cannot be downloaded, it says so in one line and exits 3.
 * `--output PATH` writes elsewhere; `--probe` only says whether the runtime can be had.
 */
import { parseArgs } from "node:util";

/** Exit code when the runtime cannot be downloaded. */
export const RUNTIME_UNREACHABLE_EXIT = 3;

/** Where deno compile downloads the runtime it embeds (for this Deno and platform). */
export function runtimeUrl(): string {
  return `https://dl.deno.land/release/v${Deno.version.deno}/denort-${Deno.build.target}.zip`;
}

/** Whether a downloaded runtime is already in Deno's cache (then no download is needed). */
function runtimeCached(): boolean {
  const home = Deno.env.get("HOME");
  const denoDir = Deno.env.get("DENO_DIR") ??
    (Deno.env.get("XDG_CACHE_HOME") ?? (home ? `${home}/.cache` : ".")) + "/deno";
  const path = `${denoDir}/dl/${new URL(runtimeUrl()).pathname.slice(1)}`;
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/**
 * Why the runtime cannot be had, or null when it can: DENORT_BIN is set, it is cached, or its
 * download server answers (any HTTP status) within timeoutMs.
 */
export async function runtimeUnavailable(timeoutMs = 15_000): Promise<string | null> {
  if (Deno.env.get("DENORT_BIN")) return null;
  if (runtimeCached()) return null;
  try {
    const res = await fetch(runtimeUrl(), {
      method: "HEAD",
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel();
    return null;
  } catch (err) {
    const causes: string[] = [];
    for (let c: unknown = err; c instanceof Error && causes.length < 4; c = c.cause) {
      causes.push(c.message);
    }
    const text = causes.join(": ");
    return /dns error|lookup/i.test(text)
      ? "the host name dl.deno.land does not resolve here"
      : /timed? ?out|abort/i.test(text)
      ? `no answer from dl.deno.land within ${timeoutMs / 1000} s`
      : text.split("\n")[0];
  }
}

/** The one line printed when the runtime cannot be downloaded. */
export function unreachableMessage(reason: string): string {
  return `wmcp compile: cannot download Deno's runtime (${runtimeUrl()}): ${reason}. ` +
    "Run `deno task compile` on a machine that reaches dl.deno.land, or set DENORT_BIN to " +
    `a denort ${Deno.version.deno} binary for ${Deno.build.target}.`;
}

/** The deno compile arguments for the wmcp binary written to output. */
export function compileArgs(output: string): string[] {
  const root = new URL("../", import.meta.url);
  return [
    "compile",
    "--quiet",
    "--no-prompt",
    // Baked into the binary: what the `cli` task holds (read, write and run scoped per command
    // at start by the CLI itself; the workspace's own containment check applies regardless).
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-net",
    "--allow-run",
    "--allow-sys=uid",
    // The engine's worker modules are loaded by URL at run time: embed them.
    "--include",
    new URL("src/workspace/engine/", root).pathname,
    "--output",
    output,
    new URL("cli.ts", root).pathname,
  ];
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: { output: { type: "string", default: "dist/wmcp" }, probe: { type: "boolean" } },
    strict: true,
  });
  const output = values.output!;
  const reason = await runtimeUnavailable();
  if (values.probe) {
    // Only find out (for the tests): "available", or the reason on stderr and exit 3.
    if (reason === null) console.log("available");
    else console.error(reason);
    return reason === null ? 0 : RUNTIME_UNREACHABLE_EXIT;
  }
  if (reason !== null) {
    console.error(unreachableMessage(reason));
    return RUNTIME_UNREACHABLE_EXIT;
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: compileArgs(output),
    stdout: "inherit",
    stderr: "piped",
  }).spawn();
  const { code, stderr } = await child.output();
  const text = new TextDecoder().decode(stderr);
  if (code !== 0 && /dl\.deno\.land|denort/.test(text)) {
    // The probe passed but the download failed after all (a proxy, a partial answer).
    const line = text.split("\n").find((l) => /dl\.deno\.land/.test(l)) ?? "download failed";
    console.error(unreachableMessage(line.trim().slice(0, 300)));
    return RUNTIME_UNREACHABLE_EXIT;
  }
  await Deno.stderr.write(stderr);
  if (code === 0) console.error(`wmcp compile: wrote ${output}`);
  return code;
}

if (import.meta.main) Deno.exit(await main());
