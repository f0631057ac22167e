/**
 * `serve.ts stdio|http [--sandbox auto|required|off] [server flags]`: the serve launcher alone,
 * what `cli.ts serve stdio|http` runs, with only the launcher's modules in its graph (Deno loads
 * every statically named import, dynamic ones included, before it runs anything; cli.ts names
 * the whole CLI). The stdio command `config print` gives MCP hosts (decision 0036).
 * `serve.ts --help` and `--version` answer without starting anything.
 */
import { serveFromCli } from "./src/cli/serve_launch.ts";
import { VERSION } from "./src/cli/server_flags.ts";
import { didYouMean } from "./src/cli/suggest.ts";

const KINDS = ["stdio", "http"];

/** serve.ts's own help (each server's flags: `serve.ts stdio --help`, `serve.ts http --help`). */
const SERVE_HELP =
  `serve.ts ${VERSION}: the serve launcher (what \`wmcp serve\` and host configs run)

Usage:
  deno run PERMISSIONS serve.ts stdio [--sandbox auto|required|off] [flags]
  deno run PERMISSIONS serve.ts http [--sandbox auto|required|off] [flags]

It computes the server's permissions from its flags and starts it (in bubblewrap where it can).
PERMISSIONS: what \`wmcp config print\` writes (env INIT_CWD,DENO_DIR,XDG_CACHE_HOME,HOME; run
bwrap,kill,/proc/self/exe).

  serve.ts stdio --help    the stdio server's flags
  serve.ts http --help     the HTTP server's flags
  serve.ts -V, --version   the version
`;

if (import.meta.main) {
  const [kind, ...args] = Deno.args;
  if (kind === "--help" || kind === "-h") {
    await Deno.stdout.write(new TextEncoder().encode(SERVE_HELP));
    Deno.exit(0);
  }
  if (kind === "--version" || kind === "-V") {
    await Deno.stdout.write(new TextEncoder().encode(`${VERSION}\n`));
    Deno.exit(0);
  }
  if (!KINDS.includes(kind)) {
    const given = kind === undefined ? "nothing" : JSON.stringify(kind);
    console.error(
      JSON.stringify({
        error: {
          code: "USAGE",
          message: `serve.ts takes stdio or http, then the server's flags, not ${given}${
            kind === undefined ? "" : didYouMean(kind, KINDS)
          }; see \`serve.ts --help\``,
        },
      }),
    );
    Deno.exit(2);
  }
  Deno.exit(await serveFromCli(kind as "stdio" | "http", args));
}
