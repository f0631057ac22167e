/**
 * Several real wmcp HTTP instances behind a real nginx on 127.0.0.1 (decision 0037), started as
 * docs/deployment.md says: shared token file and state key, `--instance NAME`, the configuration
 * from deploy/nginx/config.ts, nginx under a private prefix (its own pid file, logs and temporary
 * directories, its own port), as root or not. Used by tests/deploy/ and bench/scale_bench.ts.
 */
import { nginxConfig } from "../../deploy/nginx/config.ts";
import { type HttpServerProcess, startHttpServer } from "../server/_harness.ts";
import { serverRuntimeFlags } from "../../src/cli/serve_launch.ts";

/** The bearer token every instance accepts (the shared token file). */
export const CLUSTER_TOKEN = "cluster-token-0123456789abcdef";
/** The name the instances accept as Host besides loopback (`--allowed-host`). */
export const PUBLIC_NAME = "mcp.example.test";

/** The nginx binary, or undefined when there is none. */
export function findNginx(): string | undefined {
  const path = Deno.env.get("PATH") ?? "";
  for (const dir of [...path.split(":"), "/usr/sbin", "/sbin", "/usr/local/sbin"]) {
    if (dir === "") continue;
    try {
      const info = Deno.statSync(`${dir}/nginx`);
      if (info.isFile && ((info.mode ?? 0) & 0o111) !== 0) return `${dir}/nginx`;
    } catch { /* not there */ }
  }
  return undefined;
}

/** Why the nginx tests cannot run here (nginx missing and not required), or undefined. */
export function nginxSkipReason(): string | undefined {
  if (findNginx() !== undefined) return undefined;
  if (Deno.env.get("WMCP_REQUIRE_NGINX_TESTS") === "1") {
    throw new Error("WMCP_REQUIRE_NGINX_TESTS=1 but nginx is not installed (Debian: nginx-light)");
  }
  return "nginx is not installed (Debian package nginx-light); WMCP_REQUIRE_NGINX_TESTS=1 fails instead";
}

/** Whether this nginx takes `-e FILE` (1.19.5 and later). */
function supportsErrorLogFlag(bin: string): boolean {
  const out = new Deno.Command(bin, { args: ["-v"], stdout: "piped", stderr: "piped" })
    .outputSync();
  const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
  const m = text.match(/nginx\/(\d+)\.(\d+)\.(\d+)/);
  if (m === null) return false;
  const [major, minor, patch] = m.slice(1).map(Number);
  return major > 1 || (major === 1 && (minor > 19 || (minor === 19 && patch >= 5)));
}

/** A port free a moment ago on 127.0.0.1. */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** The shared secrets of a cluster: one token file and one state key file. */
export interface ClusterSecrets {
  dir: string;
  tokenFile: string;
  keyFile: string;
}

/** Writes the token file and the state key every instance is started with. */
export async function makeSecrets(): Promise<ClusterSecrets> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-cluster-secrets-" }));
  const tokenFile = `${dir}/tokens`;
  const keyFile = `${dir}/state-key`;
  await Deno.writeTextFile(tokenFile, `${CLUSTER_TOKEN}\n`);
  const key = crypto.getRandomValues(new Uint8Array(32));
  await Deno.writeTextFile(
    keyFile,
    Array.from(key, (b) => b.toString(16).padStart(2, "0")).join(""),
  );
  return { dir, tokenFile, keyFile };
}

/** One running instance. */
export interface Instance {
  name: string;
  port: number;
  server: HttpServerProcess;
}

/** Starts one instance per name on a free loopback port, as docs/deployment.md says. */
export async function startInstances(
  names: string[],
  options: { root: string; secrets: ClusterSecrets; write?: boolean },
): Promise<Instance[]> {
  const started = await Promise.allSettled(names.map((name) =>
    startHttpServer(options.root, {
      write: options.write,
      args: [
        "--instance",
        name,
        "--token-file",
        options.secrets.tokenFile,
        "--state-key-file",
        options.secrets.keyFile,
        "--allowed-host",
        PUBLIC_NAME,
      ],
      // As `wmcp serve http` starts an instance: with the launcher's V8 heap sizing.
      extraFlags: serverRuntimeFlags("http"),
    })
  ));
  const ok = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failed = started.find((s) => s.status === "rejected");
  if (failed !== undefined) {
    await Promise.all(ok.map((s) => s.stop()));
    throw (failed as PromiseRejectedResult).reason;
  }
  return ok.map((server, i) => ({
    name: names[i],
    port: Number(new URL(server.url).port),
    server,
  }));
}

/** A running nginx under a private prefix. */
export interface Nginx {
  /** The MCP endpoint through nginx. */
  url: string;
  port: number;
  dir: string;
  /** nginx's error log so far. */
  errorLog: () => Promise<string>;
  /** The access log (format `wmcp`) so far, one line a request. */
  accessLog: () => Promise<string>;
  /** Stops nginx (SIGQUIT, then SIGKILL after 5 s) and removes its prefix. */
  stop: () => Promise<void>;
}

/** Starts nginx for these instances with deploy/nginx/config.ts's configuration. */
export async function startNginx(
  instances: { name: string; port: number }[],
  options: { workerProcesses?: number; accessLog?: boolean } = {},
): Promise<Nginx> {
  const bin = findNginx();
  if (bin === undefined) throw new Error("nginx is not installed");
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-nginx-" }));
  // Run as root, nginx's workers are nobody: they must reach the prefix (temporary files). It
  // holds no secret (the configuration and logs only).
  await Deno.chmod(dir, 0o755);
  let lastError = "";
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = freePort();
    await Deno.writeTextFile(
      `${dir}/wmcp.conf`,
      nginxConfig({
        instances: instances.map((i) => ({ name: i.name, address: `127.0.0.1:${i.port}` })),
        listen: `127.0.0.1:${port}`,
        serverName: PUBLIC_NAME,
        accessLog: options.accessLog === false ? "off" : `${dir}/access.log`,
      }),
    );
    const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
      .map((t) => `    ${t}_temp_path ${dir}/${t}_temp;`);
    await Deno.writeTextFile(
      `${dir}/nginx.conf`,
      [
        `pid ${dir}/nginx.pid;`,
        `error_log ${dir}/error.log warn;`,
        `worker_processes ${options.workerProcesses ?? 1};`,
        "events { worker_connections 1024; }",
        "http {",
        ...temp,
        "    access_log off;",
        `    include ${dir}/wmcp.conf;`,
        "}",
        "",
      ].join("\n"),
    );
    // -e (nginx >= 1.19.5): the log nginx opens before reading the configuration, in the prefix.
    const early = supportsErrorLogFlag(bin) ? ["-e", `${dir}/error.log`] : [];
    const child = new Deno.Command(bin, {
      args: ["-p", dir, "-c", `${dir}/nginx.conf`, ...early, "-g", "daemon off;"],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(child.stderr).text();
    let exited = false;
    const status = child.status.then((s) => {
      exited = true;
      return s;
    });
    const url = `http://127.0.0.1:${port}/mcp`;
    const deadline = Date.now() + 10_000;
    let up = false;
    for (let i = 0; i < 200 && !exited && Date.now() < deadline; i++) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        await res.body?.cancel();
        if (res.status === 200) {
          up = true;
          break;
        }
      } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 50));
    }
    const readLog = async (name: string) => {
      try {
        return await Deno.readTextFile(`${dir}/${name}`);
      } catch {
        return "";
      }
    };
    const stop = async () => {
      if (!exited) {
        try {
          child.kill("SIGQUIT");
        } catch { /* gone */ }
        const timer = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch { /* gone */ }
        }, 5000);
        await status;
        clearTimeout(timer);
      }
      await stderr;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    };
    if (up) {
      return {
        url,
        port,
        dir,
        errorLog: () => readLog("error.log"),
        accessLog: () => readLog("access.log"),
        stop,
      };
    }
    if (!exited) child.kill("SIGKILL");
    await status;
    lastError = `${await stderr}${await readLog("error.log")}`;
    if (!/Address already in use/.test(lastError)) break;
  }
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  throw new Error(`nginx did not start: ${lastError}`);
}
