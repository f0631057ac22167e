/**
 * Where a client command connects, from its flags: a `--config` entry, an `--endpoint` URL, or
 * the bundled stdio server on `--root`. Every contradiction of the flags is a usage error (exit 2)
 * before anything connects or starts.
 */
import type { TOOLS_CALL, TOOLS_LIST, TOOLS_RUN } from "./commands.ts";
import type { ValuesOf } from "./declare.ts";
import { refuseBroadDefault, resolveFromInvocation, rootFlag } from "../config.ts";
import { normalized } from "../workspace/roots.ts";
import { serverPermissions } from "./server_permissions.ts";
import { ClientError } from "../client/errors.ts";
import { type Target, targetFromConfig } from "../client/config_file.ts";
import { denoPath } from "../launch/deno.ts";
import { denoArgs } from "../launch/child.ts";
import { warn } from "./client_render.ts";

/** The values of any client command's flags (a flag the command does not take is absent). */
export type ClientValues =
  & ValuesOf<typeof TOOLS_LIST>
  & ValuesOf<typeof TOOLS_CALL>
  & ValuesOf<typeof TOOLS_RUN>;

/** The `--endpoint` value as an http(s) URL, or a usage error. */
export function endpointUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ClientError("usage", `--endpoint ${JSON.stringify(value)} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ClientError("usage", "--endpoint must be http(s)");
  }
  return url;
}

/** The target the flags name: `--config` with `--server`, `--endpoint`, or the bundled server. */
export async function resolveTarget(values: ClientValues): Promise<Target> {
  if (values.transport !== undefined && !["stdio", "http", "sse"].includes(values.transport)) {
    throw new ClientError(
      "usage",
      `--transport must be stdio, http or sse, got ${JSON.stringify(values.transport)}`,
    );
  }
  if (values.config !== undefined || values.server !== undefined) return await configTarget(values);
  if (values.endpoint !== undefined) return endpointTarget(values, values.endpoint);
  if (values.transport === "http" || values.transport === "sse") {
    throw new ClientError("usage", `--transport ${values.transport} needs --endpoint URL`);
  }
  if (values.transport !== undefined && values.transport !== "stdio") {
    throw new ClientError("usage", "--transport must be stdio, http or sse");
  }
  if (values["bearer-token-env"] !== undefined) {
    throw new ClientError("usage", "--bearer-token-env applies to --endpoint only");
  }
  return bundledTarget(values);
}

/** Server `--server` of the `--config` file; `--transport`, when given, must agree with it. */
async function configTarget(values: ClientValues): Promise<Target> {
  if (values.config === undefined || values.server === undefined) {
    throw new ClientError("usage", "--config and --server go together");
  }
  if (values.endpoint !== undefined) {
    throw new ClientError("usage", "give --endpoint or --config, not both");
  }
  if (values["bearer-token-env"] !== undefined) {
    throw new ClientError(
      "usage",
      "--bearer-token-env applies to --endpoint only; a config entry gives its own headers",
    );
  }
  const t = await targetFromConfig(resolveFromInvocation(values.config), values.server, {
    onWarning: warn,
  });
  if (values.transport !== undefined && values.transport !== t.kind) {
    throw new ClientError(
      "usage",
      `--transport ${values.transport} contradicts server ${values.server} (${t.kind})`,
    );
  }
  return t;
}

/** `--endpoint URL`: Streamable HTTP, or HTTP+SSE with `--transport sse`; a bearer token by env. */
function endpointTarget(values: ClientValues, endpoint: string): Target {
  if (
    values.transport !== undefined && values.transport !== "http" && values.transport !== "sse"
  ) {
    throw new ClientError(
      "usage",
      "--endpoint takes --transport http (Streamable HTTP, the default) or sse (HTTP+SSE)",
    );
  }
  const url = endpointUrl(endpoint);
  const headers: Record<string, string> = {};
  if (values["bearer-token-env"] !== undefined) {
    const token = Deno.env.get(values["bearer-token-env"]);
    if (!token) {
      throw new ClientError(
        "usage",
        `environment variable ${values["bearer-token-env"]} is not set`,
      );
    }
    headers.authorization = `Bearer ${token}`;
  }
  const kind = values.transport === "sse" ? "sse" : "http";
  return { kind, url, headers, label: url.origin };
}

/**
 * The bundled stdio server on --root, started through the same launcher as every server entry
 * (`serve.ts stdio`, what `cli.ts serve stdio` runs, without the CLI's module graph; decision
 * 0036): permissions scoped to the root, inside bubblewrap when available.
 */
function bundledTarget(values: ClientValues): Target {
  const given = rootFlag(values.root);
  const root = normalized(resolveFromInvocation(given ?? "."));
  // The servers' broad-root rule, checked here: a usage error (exit 2) before anything starts.
  refuseBroadDefault(given, root);
  const serverArgs = ["--root", root, ...(values.write ? ["--write"] : [])];
  const args = denoArgs({
    // Exactly the launcher's permissions, as in the serve:* tasks.
    flags: serverPermissions("stdio", serverArgs, { via: "launcher" }),
    module: new URL("../../serve.ts", import.meta.url),
    args: ["stdio", ...serverArgs],
  });
  return { kind: "stdio", command: denoPath(), args, label: "bundled" };
}
