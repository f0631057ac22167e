/**
 * Renders the nginx configuration for several wmcp instances behind one nginx (decision 0037):
 * modern requests spread over every instance, a legacy session routed by the instance tag of its
 * Mcp-Session-Id. deploy/nginx/wmcp.conf is this rendering for two instances (a test keeps them
 * equal); for another set run
 * `deno run deploy/nginx/config.ts a=127.0.0.1:3001 b=127.0.0.1:3002 c=127.0.0.1:3003 [--listen ADDR]
 * [--server-name NAME] [--endpoint P] [--max-body BYTES] [--access-log PATH|off]` and include its
 * output inside `http { }` (`--help` says so too). A flag it does not take, or one without its
 * value, is a usage error (exit 2) naming it.
 */
import { parseArgs } from "node:util";
import { instanceNameProblem } from "../../src/server/http/instance.ts";
import { requestCapFor } from "../../src/workspace/message_limits.ts";
import { DEFAULT_LIMITS } from "../../src/workspace/limits.ts";
import { needsValueMessage, unknownFlagMessage, withPointer } from "../../src/cli/suggest.ts";

/** One wmcp instance: its `--instance` tag and the address nginx reaches it on. */
export interface NginxInstance {
  /** The instance's `--instance NAME`. */
  name: string;
  /** `host:port` it listens on (loopback when nginx runs on the same machine). */
  address: string;
}

/** What the configuration is rendered for. */
export interface NginxConfigOptions {
  /** The instances, each started with `--instance NAME`. */
  instances: NginxInstance[];
  /** nginx's `listen` parameters. Default `127.0.0.1:8080` (put TLS in front, or `443 ssl`). */
  listen?: string;
  /** nginx's `server_name` (the public name; each instance gets `--allowed-host` for it). */
  serverName?: string;
  /** The MCP endpoint path (`--endpoint`). Default `/mcp`. */
  endpoint?: string;
  /** Largest request body: wmcp's request cap (default 6 x maxWriteBytes + 64 KiB). */
  maxBodyBytes?: number;
  /** The access log's path (format `wmcp`), or `off`. Default /var/log/nginx/wmcp.access.log. */
  accessLog?: string;
}

/** The two instances deploy/nginx/wmcp.conf is rendered for. */
export const EXAMPLE_INSTANCES: readonly NginxInstance[] = [
  { name: "a", address: "127.0.0.1:3001" },
  { name: "b", address: "127.0.0.1:3002" },
];

/** Refuses instances nginx could not route to: bad tags, duplicates, odd addresses. */
function checkInstances(instances: NginxInstance[]): void {
  if (instances.length === 0) throw new RangeError("at least one instance is needed");
  const seen = new Set<string>();
  for (const { name, address } of instances) {
    const why = instanceNameProblem(name);
    if (why !== undefined) throw new RangeError(`instance name must be ${why}, not ${name}`);
    if (seen.has(name)) throw new RangeError(`instance ${name} is listed twice`);
    seen.add(name);
    if (!/^[A-Za-z0-9.\-]+:\d{1,5}$|^\[[0-9a-fA-F:]+\]:\d{1,5}$/.test(address)) {
      throw new RangeError(`instance ${name}: address must be host:port, not ${address}`);
    }
  }
}

/** The nginx configuration (an `http { }` include) for these instances. */
export function nginxConfig(options: NginxConfigOptions): string {
  const instances = options.instances;
  checkInstances(instances);
  const listen = options.listen ?? "127.0.0.1:8080";
  const serverName = options.serverName ?? "mcp.example.com";
  const endpoint = options.endpoint ?? "/mcp";
  if (!/^\/[A-Za-z0-9._~\/-]*$/.test(endpoint)) {
    throw new RangeError(`endpoint must be a plain path, not ${endpoint}`);
  }
  const maxBody = options.maxBodyBytes ?? requestCapFor(DEFAULT_LIMITS);
  const accessLog = options.accessLog ?? "/var/log/nginx/wmcp.access.log";
  if (!/^[A-Za-z0-9._\/-]+$/.test(accessLog)) {
    throw new RangeError(`access log must be a plain path or off, not ${accessLog}`);
  }
  const bodyKiB = Math.ceil(maxBody / 1024);
  const tags = instances.map((i) => i.name).join("|");
  const lines = [
    "# wmcp behind nginx: several instances, one nginx (docs/deployment.md, decision 0037).",
    "# Rendered by deploy/nginx/config.ts; include it inside http { }. Each instance is",
    "#   wmcp serve http --instance NAME --port PORT --token-file F --state-key-file K \\",
    `#     --allowed-host ${serverName} [--write] --root DIR`,
    "# with the same token file (same order) and the same state key on every instance.",
    "",
    "# Modern requests are stateless: any instance, the least busy first. An instance that",
    "# refuses connections or times out is skipped for fail_timeout.",
    "upstream wmcp_all {",
    "    least_conn;",
    ...instances.map((i) => `    server ${i.address} max_fails=1 fail_timeout=10s;`),
    "    keepalive 64;",
    "    keepalive_timeout 60s;",
    "}",
    "",
    "# One upstream per instance: a legacy session lives on the instance that created it.",
    ...instances.flatMap((i) => [
      `upstream wmcp_${i.name.replaceAll("-", "_")} {`,
      `    server ${i.address};`,
      "    keepalive 16;",
      "    keepalive_timeout 60s;",
      "}",
    ]),
    "",
    "# Legacy session ids are NAME.<uuid> (--instance NAME): route on the tag. No session id",
    "# (modern requests, a legacy initialize) or an unknown tag: any instance (an unknown",
    "# session is 404 there, as the spec asks).",
    "map $http_mcp_session_id $wmcp_upstream {",
    "    default wmcp_all;",
    ...instances.map((i) => `    "~^${i.name}\\." wmcp_${i.name.replaceAll("-", "_")};`),
    "}",
    "map $http_mcp_session_id $wmcp_sticky {",
    "    default 0;",
    `    "~^(${tags})\\." 1;`,
    "}",
    "",
    "# Which instance served each request (the Wmcp-Instance response header and the address).",
    "log_format wmcp '$remote_addr [$time_local] \"$request\" $status $request_time '",
    "                'upstream=$upstream_addr instance=$upstream_http_wmcp_instance';",
    "",
    "server {",
    `    listen ${listen};`,
    "    # TLS terminates here in production: listen 443 ssl; ssl_certificate ...; ssl_certificate_key ...;",
    `    server_name ${serverName};`,
    accessLog === "off" ? "    access_log off;" : `    access_log ${accessLog} wmcp;`,
    "",
    "    # wmcp's request cap (6 x maxWriteBytes + 64 KiB); larger bodies are 413 here already.",
    `    client_max_body_size ${bodyKiB}k;`,
    "    client_body_buffer_size 1m;",
    "    client_header_timeout 30s;",
    "    client_body_timeout 30s;",
    "",
    `    location = ${endpoint} {`,
    "        proxy_pass http://$wmcp_upstream;",
    "        proxy_http_version 1.1;",
    '        proxy_set_header Connection "";',
    "        # The public name: each instance accepts it with --allowed-host (which needs a token).",
    "        proxy_set_header Host $host;",
    "        # Responses are SSE streams: pass every event at once, keep long streams open.",
    "        proxy_buffering off;",
    "        proxy_cache off;",
    "        gzip off;",
    "        proxy_read_timeout 1h;",
    "        proxy_send_timeout 1h;",
    "        proxy_connect_timeout 2s;",
    "        # A refused or timed-out connection is retried on another instance. nginx never",
    "        # resends a POST it has already sent (non_idempotent is not set): no duplicate writes.",
    "        proxy_next_upstream error timeout;",
    `        proxy_next_upstream_tries ${instances.length};`,
    "        proxy_next_upstream_timeout 10s;",
    "        # A client that goes away cancels its request on the instance (connection closed).",
    "        proxy_ignore_client_abort off;",
    "        error_page 502 = @wmcp_unreachable;",
    "    }",
    "",
    "    # No instance answered. For a legacy session its instance is gone and the session with it:",
    "    # 404 tells the client to initialize again (it lands on a live instance).",
    "    location @wmcp_unreachable {",
    "        default_type application/json;",
    "        if ($wmcp_sticky) {",
    '            return 404 \'{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}\';',
    "        }",
    '        return 502 \'{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"No wmcp instance answered"}}\';',
    "    }",
    "",
    "    # Some instance is up; /healthz/NAME asks one instance.",
    "    location = /healthz {",
    "        proxy_pass http://wmcp_all;",
    "        proxy_http_version 1.1;",
    '        proxy_set_header Connection "";',
    "        proxy_set_header Host $host;",
    "    }",
    ...instances.flatMap((i) => [
      `    location = /healthz/${i.name} {`,
      `        proxy_pass http://wmcp_${i.name.replaceAll("-", "_")}/healthz;`,
      "        proxy_http_version 1.1;",
      '        proxy_set_header Connection "";',
      "        proxy_set_header Host $host;",
      "    }",
    ]),
    "",
    "    location / {",
    "        return 404;",
    "    }",
    "}",
    "",
  ];
  return lines.join("\n");
}

/** How the README and docs/deployment.md have the script run. */
const PROG = "deno run deploy/nginx/config.ts";

/** The flags it takes (each once; a second one replaces the first). */
const OPTIONS = {
  listen: { type: "string" },
  "server-name": { type: "string" },
  endpoint: { type: "string" },
  "max-body": { type: "string" },
  "access-log": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** The `--help` text. */
function usage(): string {
  return `Usage: ${PROG} [NAME=HOST:PORT ...] [--listen ADDR] [--server-name NAME]
         [--endpoint PATH] [--max-body BYTES] [--access-log PATH|off]

Prints on stdout the nginx configuration for wmcp instances behind one nginx (include it inside
http { }): modern requests spread over every instance, a legacy session routed to its instance by
the tag of its Mcp-Session-Id. Each NAME=HOST:PORT is one instance, started with --instance NAME
and listening on HOST:PORT; without any, the two of deploy/nginx/wmcp.conf
(${EXAMPLE_INSTANCES.map((i) => `${i.name}=${i.address}`).join(" ")}). See docs/deployment.md.

Options:
  --listen ADDR          nginx's listen parameters (default 127.0.0.1:8080; '443 ssl' for TLS)
  --server-name NAME     the public name (default mcp.example.com; each instance --allowed-host it)
  --endpoint PATH        the MCP endpoint path (default /mcp)
  --max-body BYTES       the largest request body (default ${
    requestCapFor(DEFAULT_LIMITS)
  }, wmcp's request cap)
  --access-log PATH|off  the access log, format wmcp (default /var/log/nginx/wmcp.access.log)
  -h, --help             this help

Exit codes: 0 printed, 2 a bad flag or value (nothing printed on stdout).

Example:
  ${PROG} a=127.0.0.1:3001 b=127.0.0.1:3002 c=127.0.0.1:3003 \\
    --server-name mcp.example.com --listen '443 ssl' > /etc/nginx/conf.d/wmcp.conf
`;
}

/** A mistake on the command line (exit 2). */
class UsageError extends Error {}

/** The flags and words of argv: an unknown flag or a value flag without its value is refused. */
function parse(args: string[]): { values: Record<string, string | true>; positionals: string[] } {
  const { tokens } = parseArgs({
    args,
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: Record<string, string | true> = {};
  const positionals: string[] = [];
  const known = Object.entries(OPTIONS).flatMap(([name, o]) =>
    "short" in o ? [`--${name}`, `-${o.short}`] : [`--${name}`]
  );
  for (const t of tokens) {
    if (t.kind === "positional") positionals.push(t.value);
    if (t.kind !== "option") continue;
    const option = (OPTIONS as Record<string, { type: string }>)[t.name];
    if (option === undefined) throw new UsageError(unknownFlagMessage(t.rawName, known));
    if (option.type === "boolean") {
      values[t.name] = true;
      continue;
    }
    // The lenient read takes the next word whatever it is; a flag-like one is not a value here.
    if (t.value === undefined || (!t.inlineValue && t.value.startsWith("-"))) {
      throw new UsageError(needsValueMessage(t.rawName));
    }
    values[t.name] = t.value;
  }
  return { values, positionals };
}

/** Parses `NAME=host:port` arguments and the options; prints the configuration or the help. */
function main(args: string[]): number {
  const { values, positionals } = parse(args);
  if (values.help === true) {
    Deno.stdout.writeSync(new TextEncoder().encode(usage()));
    return 0;
  }
  const text = (name: string) => values[name] === undefined ? undefined : String(values[name]);
  const instances = positionals.length === 0 ? [...EXAMPLE_INSTANCES] : positionals.map((p) => {
    const eq = p.indexOf("=");
    if (eq < 1) throw new RangeError(`expected NAME=host:port, not ${p}`);
    return { name: p.slice(0, eq), address: p.slice(eq + 1) };
  });
  const maxBody = text("max-body") === undefined ? undefined : Number(text("max-body"));
  if (maxBody !== undefined && !(Number.isSafeInteger(maxBody) && maxBody > 0)) {
    throw new RangeError(`--max-body must be a positive number of bytes`);
  }
  console.log(
    nginxConfig({
      instances,
      listen: text("listen"),
      serverName: text("server-name"),
      endpoint: text("endpoint"),
      maxBodyBytes: maxBody,
      accessLog: text("access-log"),
    }).trimEnd(),
  );
  return 0;
}

if (import.meta.main) {
  try {
    Deno.exit(main(Deno.args));
  } catch (err) {
    // Every failure is the command line's (a flag, an instance, a value): one line, exit 2.
    console.error(`config.ts: ${withPointer((err as Error).message, `see \`${PROG} --help\``)}`);
    Deno.exit(2);
  }
}
