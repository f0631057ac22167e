/**
 * Scale-out throughput (issue 11, decision 0037): wrk drives modern `tools/call get_file_info`
 * through nginx to one wmcp instance, then to two (the same configuration shape, from
 * deploy/nginx/config.ts), interleaved over several repetitions; prints medians with their spread
 * and, with --json, one last stdout line
 * `{"one":{"rps":N,"p50ms":N},"two":{"rps":N,"p50ms":N},"ratio":R}` (ratio = two.rps / one.rps,
 * the median of the per-pair ratios). Run: `deno run -A bench/scale_bench.ts [--json] [--reps N]
 * [--duration S] [--connections N] [--threads N] [--nginx-workers N]`.
 */
import { parseArgs } from "node:util";
import { makeWorkspace, MODERN } from "../tests/server/_harness.ts";
import {
  CLUSTER_TOKEN,
  findNginx,
  type Instance,
  makeSecrets,
  type Nginx,
  startInstances,
  startNginx,
} from "../tests/deploy/_cluster.ts";
import { wrkArgs, type WrkOptions } from "./lib/wrk.ts";

/** One wrk run's figures. */
interface WrkRun {
  rps: number;
  /** wrk's own CPU per call (µs). */
  wrkUs: number;
  /** CPU per call (µs): the wmcp instances, nginx; machine: busy cores during the run. */
  cpu?: { wmcpUs: number; mainUs: number; nginxUs: number; busyCores: number };
  p50ms: number;
  requests: number;
  /** Responses other than 2xx, and socket errors: any makes the run invalid. */
  non2xx: number;
  errors: number;
}

/** The wrk Lua script: a modern tools/call get_file_info with every required header. */
function wrkScript(): string {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: {
      name: "get_file_info",
      arguments: { path: "hello.txt" },
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": { name: "wrk", version: "0" },
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  });
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "Mcp-Protocol-Version": MODERN,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "get_file_info",
    "Mcp-Param-Path": "hello.txt",
    "Authorization": `Bearer ${CLUSTER_TOKEN}`,
  };
  const lua = (s: string) => JSON.stringify(s); // a JSON string is a valid Lua string here
  return [
    `wrk.method = "POST"`,
    `wrk.body = ${lua(body)}`,
    ...Object.entries(headers).map(([k, v]) => `wrk.headers[${lua(k)}] = ${lua(v)}`),
    "done = function(summary, latency, requests)",
    "  local e = summary.errors",
    '  io.write(string.format("WRKJSON {\\"requests\\":%d,\\"duration_us\\":%d,\\"p50_us\\":%d,' +
    '\\"non2xx\\":%d,\\"errors\\":%d}\\n", summary.requests, summary.duration, ' +
    "latency:percentile(50), e.status, e.connect + e.read + e.write + e.timeout))",
    "end",
    "",
  ].join("\n");
}

/** Runs wrk once against `url`. */
async function wrk(url: string, options: WrkOptions): Promise<WrkRun> {
  // Through bash, whose `times` then prints wrk's CPU time (its children's line).
  const out = await new Deno.Command("bash", {
    args: ["-c", 'wrk "$@"; s=$?; times; exit $s', "wrk", ...wrkArgs(url, options)],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const line = text.split("\n").find((l) => l.startsWith("WRKJSON "));
  if (!out.success || line === undefined) {
    throw new Error(`wrk failed: ${text}${new TextDecoder().decode(out.stderr)}`);
  }
  const r = JSON.parse(line.slice(8));
  const times = text.trim().split("\n").at(-1)!.match(/^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/);
  const wrkCpu = times === null
    ? NaN
    : Number(times[1]) * 60 + Number(times[2]) + Number(times[3]) * 60 + Number(times[4]);
  return {
    wrkUs: (wrkCpu / r.requests) * 1e6,
    rps: r.requests / (r.duration_us / 1e6),
    p50ms: r.p50_us / 1000,
    requests: r.requests,
    non2xx: r.non2xx,
    errors: r.errors,
  };
}

/**
 * CPU seconds (user + system) a process (or only its main thread, where a Deno server's JavaScript
 * runs) has used, from /proc; 0 when it is gone.
 */
function cpuSeconds(pid: number, options: { mainThread?: boolean } = {}): number {
  try {
    const file = options.mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`;
    const stat = Deno.readTextFileSync(file);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ)
  } catch {
    return 0;
  }
}

/** The pids of nginx's master (its pid file) and its workers. */
function nginxPids(dir: string): number[] {
  const master = Number(Deno.readTextFileSync(`${dir}/nginx.pid`).trim());
  const pids = [master];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === master) pids.push(Number(e.name));
    } catch { /* gone */ }
  }
  return pids;
}

/** Busy and total CPU time of the whole machine (/proc/stat), in clock ticks. */
function machineTicks(): { busy: number; total: number } {
  const line = Deno.readTextFileSync("/proc/stat").split("\n")[0];
  const v = line.split(/\s+/).slice(1).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  return { busy: total - v[3] - (v[4] ?? 0), total };
}

/** The median of numbers. */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Rounds for printing. */
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      json: { type: "boolean" },
      reps: { type: "string", default: "5" },
      duration: { type: "string", default: "5" },
      connections: { type: "string", default: "50" },
      threads: { type: "string", default: "1" },
      "nginx-workers": { type: "string", default: "1" },
    },
  });
  const reps = Number(values.reps);
  const seconds = Number(values.duration);
  const connections = Number(values.connections);
  const threads = Number(values.threads);
  const workers = Number(values["nginx-workers"]);
  for (const [k, v] of Object.entries({ reps, seconds, connections, threads, workers })) {
    if (!Number.isSafeInteger(v) || v < 1) {
      throw new RangeError(`--${k} must be a positive integer`);
    }
  }
  if (findNginx() === undefined) throw new Error("nginx is not installed (Debian: nginx-light)");
  const log = (s: string) => console.error(`scale_bench: ${s}`);
  const root = await makeWorkspace({ "hello.txt": "hello\n" });
  const secrets = await makeSecrets();
  const scratch = await Deno.makeTempDir({ prefix: "wmcp-scale-bench-" });
  const script = `${scratch}/call.lua`;
  await Deno.writeTextFile(script, wrkScript());
  let instances: Instance[] = [];
  const proxies: Nginx[] = [];
  try {
    instances = await startInstances(["a", "b"], { root, secrets });
    // The same configuration shape: one upstream of one instance, or of both.
    const one = await startNginx([instances[0]], { workerProcesses: workers, accessLog: false });
    proxies.push(one);
    const two = await startNginx(instances, { workerProcesses: workers, accessLog: false });
    proxies.push(two);
    const shape = { script, threads, connections };
    log(
      `wrk -t${threads} -c${connections} -d${seconds}s, nginx worker_processes ${workers}, ` +
        `${reps} interleaved repetitions, ${navigator.hardwareConcurrency} cores`,
    );
    // Warm both paths (JIT, connection pools) before measuring.
    for (const p of [one, two]) await wrk(p.url, { ...shape, seconds: 2 });
    const runs: { one: WrkRun[]; two: WrkRun[] } = { one: [], two: [] };
    for (let i = 0; i < reps; i++) {
      // Alternate which goes first, so drift in the machine's speed hits both alike.
      const order = i % 2 === 0 ? (["one", "two"] as const) : (["two", "one"] as const);
      for (const which of order) {
        const proxy = which === "one" ? one : two;
        const watched = { wmcp: instances.map((x) => x.server.pid), nginx: nginxPids(proxy.dir) };
        const sum = (pids: number[]) => pids.reduce((a, p) => a + cpuSeconds(p), 0);
        const main = () =>
          watched.wmcp.reduce((a, p) => a + cpuSeconds(p, { mainThread: true }), 0);
        const before = {
          wmcp: sum(watched.wmcp),
          main: main(),
          nginx: sum(watched.nginx),
          m: machineTicks(),
        };
        const r = await wrk(proxy.url, { ...shape, seconds });
        const m = machineTicks();
        r.cpu = {
          wmcpUs: ((sum(watched.wmcp) - before.wmcp) / r.requests) * 1e6,
          mainUs: ((main() - before.main) / r.requests) * 1e6,
          nginxUs: ((sum(watched.nginx) - before.nginx) / r.requests) * 1e6,
          busyCores: ((m.busy - before.m.busy) / (m.total - before.m.total)) *
            navigator.hardwareConcurrency,
        };
        if (r.non2xx > 0 || r.errors > 0) {
          throw new Error(`${which}: ${r.non2xx} non-2xx responses, ${r.errors} socket errors`);
        }
        runs[which].push(r);
        log(
          `rep ${i + 1} ${which}: ${round(r.rps, 0)} calls/s, p50 ${round(r.p50ms)} ms; CPU a ` +
            `call: wmcp ${round(r.cpu.wmcpUs, 0)} µs, nginx ${round(r.cpu.nginxUs, 0)} µs, ` +
            `wrk ${round(r.wrkUs, 0)} µs; ` +
            `machine busy ${round(r.cpu.busyCores, 2)} of ${navigator.hardwareConcurrency} cores`,
        );
      }
    }
    const ratios = runs.two.map((r, i) => r.rps / runs.one[i].rps);
    const summary = (rs: WrkRun[]) => ({
      rps: round(median(rs.map((r) => r.rps)), 0),
      p50ms: round(median(rs.map((r) => r.p50ms))),
    });
    const spread = (xs: number[], d = 0) =>
      `${round(Math.min(...xs), d)}..${round(Math.max(...xs), d)}`;
    const result = {
      one: summary(runs.one),
      two: summary(runs.two),
      ratio: round(median(ratios)),
      ceiling: 0,
      ofCeiling: 0,
    };
    // Cores busy with something other than this benchmark (other programs on the machine).
    const othersCores = (r: WrkRun) =>
      Math.max(0, r.cpu!.busyCores - (r.rps * (r.cpu!.wmcpUs + r.cpu!.nginxUs + r.wrkUs)) / 1e6);
    const busyElsewhere = median([...runs.one, ...runs.two].map(othersCores));
    // One instance: at most one core of wmcp, if nginx and wrk fit in the other core. Two: wmcp,
    // nginx and wrk share both cores. The ratio of those two rates is what this machine allows.
    const all = [...runs.one, ...runs.two];
    // An instance's JavaScript runs on its main thread (the bound of one instance); the process
    // also works on other threads (garbage collection, I/O), which the total counts.
    const w = median(all.map((r) => r.cpu!.wmcpUs));
    const wMain = median(all.map((r) => r.cpu!.mainUs));
    const proxy = median(all.map((r) => r.cpu!.nginxUs)) + median(all.map((r) => r.wrkUs));
    const cores = navigator.hardwareConcurrency;
    const oneRate = Math.min(1e6 / wMain, cores * 1e6 / (w + proxy));
    const twoRate = Math.min(2e6 / wMain, cores * 1e6 / (w + proxy));
    const ceiling = twoRate / oneRate;
    // The 2-vs-1 ratio as a fraction of what these costs allow on this machine's cores: on two
    // cores a bare ratio says little (nginx and wrk share them), the fraction says how close.
    result.ceiling = round(ceiling, 2);
    result.ofCeiling = round(median(ratios) / ceiling, 3);
    console.log(
      [
        "HTTP modern tools/call get_file_info through nginx, wrk " +
        `-t${threads} -c${connections} -d${seconds}s, medians of ${reps} (min..max):`,
        `  one instance : ${result.one.rps} calls/s (${spread(runs.one.map((r) => r.rps))}), ` +
        `p50 ${result.one.p50ms} ms`,
        `  two instances: ${result.two.rps} calls/s (${spread(runs.two.map((r) => r.rps))}), ` +
        `p50 ${result.two.p50ms} ms`,
        `  two / one    : ${result.ratio}x (${spread(ratios, 2)})`,
        ...(["one", "two"] as const).map((w) => {
          const c = runs[w].map((r) => r.cpu!);
          return `  CPU a call (${w}): wmcp ${round(median(c.map((x) => x.wmcpUs)), 0)} µs ` +
            `(main thread ${round(median(c.map((x) => x.mainUs)), 0)} µs), ` +
            `nginx ${round(median(c.map((x) => x.nginxUs)), 0)} µs, wrk ` +
            `${round(median(runs[w].map((r) => r.wrkUs)), 0)} µs; machine busy ` +
            `${round(median(c.map((x) => x.busyCores)), 2)} of ${cores} cores, of which ` +
            `others ${round(median(runs[w].map(othersCores)), 2)}`;
        }),
        `  ceiling on 2 otherwise idle cores from these costs: ${round(ceiling, 2)}x ` +
        "(one instance is bound by its main thread; two share the cores with nginx and wrk)",
        `  two / one as a fraction of the ceiling: ${round(result.ofCeiling * 100, 1)}%; ` +
        "target >= 90%",
        ...(busyElsewhere > 0.25
          ? [
            `  note: other programs kept ${round(busyElsewhere, 2)} cores busy during the runs; ` +
            "the ratio then measures contention for the cores, not how the instances scale",
          ]
          : []),
      ].join("\n"),
    );
    if (values.json) console.log(JSON.stringify(result));
    return 0;
  } finally {
    for (const p of proxies) await p.stop();
    await Promise.all(instances.map((i) => i.server.stop()));
    await Deno.remove(root, { recursive: true });
    await Deno.remove(secrets.dir, { recursive: true });
    await Deno.remove(scratch, { recursive: true });
  }
}

if (import.meta.main) {
  try {
    Deno.exit(await main());
  } catch (err) {
    console.error(`scale_bench: ${(err as Error).message}`);
    Deno.exit(1);
  }
}
