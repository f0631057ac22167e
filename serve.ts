/**
 * `serve.ts stdio|http [--sandbox auto|required|off] [server flags]`: the serve launcher alone,
 * what `cli.ts serve stdio|http` runs, with only the launcher's modules in its graph (Deno loads
 * every statically named import, dynamic ones included, before it runs anything; cli.ts names
 * the whole CLI). The stdio command `config print` gives MCP hosts (decision 0036).
 */
import { serveFromCli } from "./src/cli/serve_launch.ts";

if (import.meta.main) {
  const [kind, ...args] = Deno.args;
  if (kind !== "stdio" && kind !== "http") {
    console.error(
      JSON.stringify({
        error: { code: "USAGE", message: "serve.ts takes stdio or http, then the server's flags" },
      }),
    );
    Deno.exit(2);
  }
  Deno.exit(await serveFromCli(kind, args));
}
