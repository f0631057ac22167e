/**
 * `deno task bench:startup [--runs N]`: how long the installed `wmcp --version` takes next to bare
 * Deno (`deno eval ''`, the same binary) on a warm cache. It installs into a temporary HOME-free
 * bin and data directory (src/cli/install.ts), warms both commands, then times N interleaved runs
 * of each and prints JSON (medians, difference, ratio) and one line for the README.
 */
import { parseArgs } from "node:util";

const PROJECT = decodeURIComponent(new URL("../", import.meta.url).pathname);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function timed(command: string, args: string[]): Promise<number> {
  const t0 = performance.now();
  const out = await new Deno.Command(command, { args, stdin: "null", stdout: "piped" }).output();
  const ms = performance.now() - t0;
  if (!out.success) throw new Error(`${command} ${args.join(" ")} failed (${out.code})`);
  return ms;
}

const { values } = parseArgs({ args: Deno.args, options: { runs: { type: "string" } } });
const runs = Math.max(3, Math.min(200, Number(values.runs ?? 21) || 21));
const tmp = await Deno.makeTempDir({ prefix: "wmcp_startup_" });
try {
  const install = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-run",
      `${PROJECT}src/cli/install.ts`,
      "--bin-dir",
      `${tmp}/bin`,
      "--data-dir",
      `${tmp}/data`,
    ],
    stdout: "null",
    stdin: "null",
  }).output();
  if (!install.success) throw new Error("install failed");
  const wmcp = `${tmp}/bin/wmcp`;
  const runtime = `${tmp}/data/runtime/deno-${Deno.version.deno}`;
  const cases: [string, string, string[]][] = [
    ["bare_deno", runtime, ["eval", ""]],
    ["wmcp_version", wmcp, ["--version"]],
  ];
  for (const [, cmd, args] of cases) for (let i = 0; i < 3; i++) await timed(cmd, args); // warm
  const samples: Record<string, number[]> = { bare_deno: [], wmcp_version: [] };
  for (let i = 0; i < runs; i++) {
    for (const [name, cmd, args] of i % 2 ? [...cases].reverse() : cases) {
      samples[name].push(await timed(cmd, args));
    }
  }
  const bare = median(samples.bare_deno);
  const version = median(samples.wmcp_version);
  const result = {
    runs,
    deno: Deno.version.deno,
    bareDenoMedianMs: Number(bare.toFixed(1)),
    wmcpVersionMedianMs: Number(version.toFixed(1)),
    differenceMs: Number((version - bare).toFixed(1)),
    ratio: Number((version / bare).toFixed(2)),
  };
  console.log(JSON.stringify(result));
  console.log(
    `wmcp --version: median ${result.wmcpVersionMedianMs} ms vs bare Deno ${result.bareDenoMedianMs} ms ` +
      `(+${result.differenceMs} ms, ${result.ratio}x; ${runs} interleaved runs, warm cache)`,
  );
} finally {
  await Deno.remove(tmp, { recursive: true });
}
