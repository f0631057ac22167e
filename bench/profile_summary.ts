/**
 * Summarises V8 .cpuprofile files (from `deno run --cpu-prof`): self time per function and per
 * module, as shares of the non-idle samples. `deno run --allow-read bench/profile_summary.ts
 * [--top N] FILE_OR_DIR...`; bench/bench.ts --profile calls summarizeProfiles for each row.
 */
import { parseArgs } from "node:util";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

/** One line of a summary: a function or module, its self time and share. */
export interface SelfTime {
  name: string;
  ms: number;
  share: number;
}

/** Self time per function and per module over one or more profiles. */
export interface ProfileSummary {
  files: number;
  totalMs: number;
  /** Time in "(idle)" (waiting for I/O), left out of the shares. */
  idleMs: number;
  functions: SelfTime[];
  modules: SelfTime[];
}

const PSEUDO = new Set(["(program)", "(garbage collector)", "(root)"]);

/** A short module name: project-relative path, npm package, or the runtime's internal area. */
export function moduleOf(url: string, functionName: string, projectDir: string): string {
  if (url === "") return PSEUDO.has(functionName) ? functionName : "(native/builtin)";
  const npm = /node_modules\/(?:\.deno\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (npm) return `npm:${npm[1]}`;
  if (url.startsWith("ext:") || url.startsWith("node:")) return url.replace(/\/[^/]*$/, "");
  const path = url.startsWith("file://") ? decodeURIComponent(url.slice(7)) : url;
  return path.startsWith(projectDir) ? path.slice(projectDir.length) : path;
}

/** Adds up self time by function and module across profiles; the top entries of each. */
export function summarizeProfiles(
  profiles: CpuProfile[],
  options: { projectDir: string; top?: number },
): ProfileSummary {
  const byFn = new Map<string, number>();
  const byMod = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const p of profiles) {
    const nodes = new Map(p.nodes.map((n) => [n.id, n]));
    const add = (node: ProfileNode, us: number) => {
      const f = node.callFrame;
      if (f.functionName === "(idle)") {
        idle += us;
        return;
      }
      total += us;
      const mod = moduleOf(f.url, f.functionName, options.projectDir);
      const fn = `${f.functionName || "(anonymous)"} ${mod}${f.url ? `:${f.lineNumber + 1}` : ""}`;
      byFn.set(fn, (byFn.get(fn) ?? 0) + us);
      byMod.set(mod, (byMod.get(mod) ?? 0) + us);
    };
    if (p.samples && p.timeDeltas && p.samples.length === p.timeDeltas.length) {
      // The time delta before sample i+1 is the time spent in sample i.
      for (let i = 0; i < p.samples.length; i++) {
        const node = nodes.get(p.samples[i]);
        const us = p.timeDeltas[i + 1] ?? 0;
        if (node) add(node, Math.max(0, us));
      }
    } else {
      for (const n of p.nodes) add(n, (n.hitCount ?? 0) * 1000);
    }
  }
  const top = options.top ?? 15;
  const rank = (m: Map<string, number>) =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, us]) => ({
      name,
      ms: us / 1000,
      share: total > 0 ? us / total : 0,
    }));
  return {
    files: profiles.length,
    totalMs: total / 1000,
    idleMs: idle / 1000,
    functions: rank(byFn),
    modules: rank(byMod),
  };
}

/** A profile read from disk, with its file name (`CPU.<time>.<pid>[.worker-N].cpuprofile`). */
export interface ProfileFile {
  file: string;
  profile: CpuProfile;
}

/** Reads every .cpuprofile in the given files and directories. */
export async function readProfiles(paths: string[]): Promise<ProfileFile[]> {
  const out: ProfileFile[] = [];
  for (const p of paths) {
    const info = await Deno.stat(p);
    const files = info.isDirectory
      ? [...Deno.readDirSync(p)].filter((e) => e.name.endsWith(".cpuprofile")).map((e) =>
        `${p}/${e.name}`
      )
      : [p];
    for (const f of files) out.push({ file: f, profile: JSON.parse(await Deno.readTextFile(f)) });
  }
  return out;
}

/**
 * Profiles grouped by thread kind: "main thread" and "engine workers" (a worker writes
 * `*.worker-N.cpuprofile`; the same kind of several processes, e.g. repeated starts, is summed).
 * A worker's profile counts its waits for work as "(program)", not "(idle)".
 */
export function byThreadKind(files: ProfileFile[]): Record<string, CpuProfile[]> {
  const out: Record<string, CpuProfile[]> = {};
  for (const f of files) {
    const kind = /\.worker-\d+\.cpuprofile$/.test(f.file) ? "engine workers" : "main thread";
    (out[kind] ??= []).push(f.profile);
  }
  return out;
}

/** A summary as text: busy time, then the top modules and functions with their shares. */
export function formatProfileSummary(s: ProfileSummary, title: string): string {
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)}%`;
  const lines = [
    `${title}: ${s.files} profile(s), ${s.totalMs.toFixed(0)} ms busy (${
      s.idleMs.toFixed(0)
    } ms idle, not counted)`,
    "  top modules (self time):",
    ...s.modules.map((m) => `    ${pct(m.share)} ${m.ms.toFixed(0).padStart(7)} ms  ${m.name}`),
    "  top functions (self time):",
    ...s.functions.map((f) => `    ${pct(f.share)} ${f.ms.toFixed(0).padStart(7)} ms  ${f.name}`),
  ];
  return lines.join("\n");
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { top: { type: "string" } },
    allowPositionals: true,
  });
  if (positionals.length === 0) {
    console.error("usage: profile_summary.ts [--top N] FILE_OR_DIR...");
    Deno.exit(2);
  }
  const projectDir = decodeURIComponent(new URL("../", import.meta.url).pathname);
  const files = await readProfiles(positionals);
  for (const [kind, group] of Object.entries(byThreadKind(files))) {
    const s = summarizeProfiles(group, { projectDir, top: Number(values.top ?? 15) || 15 });
    console.log(formatProfileSummary(s, `${positionals.join(", ")}, ${kind}`));
  }
}
