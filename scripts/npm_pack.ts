/**
 * `deno task -q pack:npm [--out DIR]`: builds the npm package `@wmcp/wmcp` (npm/README.md) and
 * packs it with `npm pack`, printing the tarball's path. The package is this checkout's runtime
 * files (the entries, mod.ts, src/, generated/, deno.json, deno.lock, as git tracks them) under
 * `app/`, the Node launcher npm/wmcp.cjs as its `bin`, and a package.json whose one dependency is
 * the `deno` npm package the quick start runs. Default DIR: dist/.
 */
import denoConfig from "../deno.json" with { type: "json" };
import { routerFlags } from "../src/cli/install.ts";
import { launcherFlags } from "../src/cli/host_config.ts";
import { projectDir } from "../src/launch/project.ts";

/** The npm package's name: a scope wmcp can own (the unscoped `wmcp` is someone else's). */
export const NPM_NAME = "@wmcp/wmcp";
/** The Deno the package depends on: the one the README's quick start runs. */
export const DENO_VERSION = "2.9.6";

const ROOT = projectDir()!;
/** What the package's `app/` holds: the runtime's files, not tests, docs or benchmarks. */
const APP_FILES = [
  "cli.ts",
  "serve.ts",
  "serve_stdio.ts",
  "serve_http.ts",
  "mod.ts",
  "deno.json",
  "deno.lock",
  "LICENSE",
  "src/",
  "generated/",
];

/** The package.json of the npm package. */
export function packageJson(): Record<string, unknown> {
  return {
    name: NPM_NAME,
    version: denoConfig.version,
    description:
      "Safe, fast, typed access to one workspace directory for AI agents: an MCP server (stdio " +
      "and Streamable HTTP), a CLI and an MCP client",
    license: denoConfig.license,
    keywords: ["mcp", "model-context-protocol", "filesystem", "workspace", "server", "cli"],
    bin: { wmcp: "bin/wmcp.cjs" },
    files: ["bin/", "app/", "README.md", "LICENSE"],
    // The servers' containment needs POSIX calls (RUNTIME.md, "Platforms"): npm refuses the rest.
    os: ["linux", "darwin"],
    engines: { node: ">=18" },
    dependencies: { deno: DENO_VERSION },
    scripts: { postinstall: "node bin/wmcp.cjs --wmcp-prepare" },
    wmcp: { routerFlags: routerFlags(), launcherFlags: launcherFlags() },
  };
}

async function run(cmd: string, args: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, stdin: "null", stderr: "inherit" })
    .output();
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} failed (exit ${out.code})`);
  return new TextDecoder().decode(out.stdout);
}

/** Builds the package in `stage` (emptied first); returns nothing, throws on failure. */
export async function stagePackage(stage: string): Promise<void> {
  await Deno.remove(stage, { recursive: true }).catch((err) => {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  });
  const tracked = (await run("git", ["ls-files", "-z", "--", ...APP_FILES], ROOT))
    .split("\0").filter((f) => f !== "");
  if (!tracked.includes("cli.ts")) throw new Error("git ls-files did not list cli.ts");
  for (const file of tracked) {
    const dest = `${stage}/app/${file}`;
    await Deno.mkdir(dest.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.copyFile(`${ROOT}/${file}`, dest);
  }
  await Deno.mkdir(`${stage}/bin`, { recursive: true });
  await Deno.copyFile(`${ROOT}/npm/wmcp.cjs`, `${stage}/bin/wmcp.cjs`);
  await Deno.chmod(`${stage}/bin/wmcp.cjs`, 0o755);
  await Deno.copyFile(`${ROOT}/npm/README.md`, `${stage}/README.md`);
  await Deno.copyFile(`${ROOT}/LICENSE`, `${stage}/LICENSE`);
  await Deno.writeTextFile(`${stage}/package.json`, JSON.stringify(packageJson(), null, 2) + "\n");
}

/** Stages and packs the package into `outDir`; returns the tarball's absolute path. */
export async function packNpm(outDir: string): Promise<string> {
  const stage = `${outDir}/npm-package`;
  await stagePackage(stage);
  const out = await run("npm", ["pack", "--silent", "--pack-destination", outDir], stage);
  const name = out.trim().split("\n").pop() ?? "";
  if (!name.endsWith(".tgz")) throw new Error(`npm pack printed no tarball name: ${out}`);
  return `${outDir}/${name}`;
}

if (import.meta.main) {
  const args = [...Deno.args];
  if (args.includes("--help") || args.includes("-h")) {
    console.log(
      "Usage: deno task -q pack:npm [--out DIR]\n\n" +
        `Builds the npm package ${NPM_NAME} and packs it with npm pack; prints the tarball's ` +
        "path.\nDIR defaults to dist/ in this checkout.",
    );
    Deno.exit(0);
  }
  let out = `${ROOT}/dist`;
  if (args[0] === "--out" && args.length === 2) {
    out = args[1].startsWith("/")
      ? args[1]
      : `${Deno.env.get("INIT_CWD") ?? Deno.cwd()}/${args[1]}`;
  } else if (args.length > 0) {
    console.error(`pack:npm: unexpected ${JSON.stringify(args.join(" "))}; see --help`);
    Deno.exit(2);
  }
  await Deno.mkdir(out, { recursive: true });
  console.log(await packNpm(out));
}
