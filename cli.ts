/**
 * wmcp command line (see --help): answers --version at once, then routes the command to a child
 * with exactly the permissions it needs (src/cli/router.ts).
 */
import denoConfig from "./deno.json" with { type: "json" };

if (import.meta.main) {
  const [first] = Deno.args;
  if (first === "--version" || first === "-V") {
    // Before any other import: `wmcp --version` costs little more than Deno's own start.
    await Deno.stdout.write(new TextEncoder().encode(`${denoConfig.version}\n`));
    Deno.exit(0);
  }
  const [, kind] = Deno.args;
  if (first === "serve" && (kind === "stdio" || kind === "http")) {
    // The command MCP hosts run: the launcher alone (the router runs `serve` in process too).
    const { serveFromCli } = await import("./src/cli/serve_launch.ts");
    Deno.exit(await serveFromCli(kind, Deno.args.slice(2)));
  }
  const { route } = await import("./src/cli/router.ts");
  // Exit explicitly: an SDK client can leave handles open after close (see RUNTIME.md).
  Deno.exit(await route(Deno.args));
}
