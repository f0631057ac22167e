/**
 * Test helper: installs a pinned npm peer server for the client tests with `npm ci` from a
 * committed package.json + package-lock.json pair in fixtures/, into a temporary directory
 * (or reuses a directory named by an environment variable where that install was already done).
 */
import assert from "node:assert/strict";

const FIXTURES = new URL("./fixtures/", import.meta.url).pathname.replace(/\/$/, "");

/** Which fixture pair to install and what it must yield. */
export interface NpmFixture {
  /** Fixture basename: fixtures/NAME.package.json and fixtures/NAME.package-lock.json. */
  name: string;
  /** The npm package the lock pins (checked after the install). */
  packageName: string;
  /** Its pinned version. */
  version: string;
  /** An environment variable that may name a directory where this install was already done. */
  reuseEnv: string;
  /** Directory holding the pair (default: this folder's fixtures/). */
  fixtures?: string;
}

/** An installed fixture. */
export interface InstalledNpmFixture {
  /** The install prefix (holds node_modules/). */
  dir: string;
  /** node_modules/<packageName>. */
  packageDir: string;
  /** Removes the install (a no-op for a reused directory). */
  cleanup: () => Promise<void>;
}

/** The environment npm gets: ours without npm_* (npx's settings can name the repository) or INIT_CWD. */
export function cleanNpmEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(Deno.env.toObject()).filter(([k]) => !/^npm_/i.test(k) && k !== "INIT_CWD"),
  );
}

/** `npm ci` of the fixture pair (needs Node, npm and the npm registry), checked for the pinned version. */
export async function installNpmFixture(f: NpmFixture): Promise<InstalledNpmFixture> {
  const given = Deno.env.get(f.reuseEnv);
  const dir = given ?? await Deno.makeTempDir({ prefix: `wmcp-${f.name}-` });
  const cleanup = given ? () => Promise.resolve() : () => Deno.remove(dir, { recursive: true });
  const packageDir = `${dir}/node_modules/${f.packageName}`;
  try {
    if (!given) {
      const from = f.fixtures ?? FIXTURES;
      await Deno.copyFile(`${from}/${f.name}.package.json`, `${dir}/package.json`);
      await Deno.copyFile(`${from}/${f.name}.package-lock.json`, `${dir}/package-lock.json`);
      const child = new Deno.Command("npm", {
        args: [
          "ci",
          "--prefix",
          dir,
          "--ignore-scripts",
          "--no-audit",
          "--no-fund",
          "--loglevel=error",
        ],
        cwd: dir,
        env: cleanNpmEnv(),
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
      const npm = await child.output();
      clearTimeout(timer);
      assert.equal(
        npm.code,
        0,
        `npm ci of ${f.packageName} failed (needs Node and npm on PATH and the npm registry):\n${
          new TextDecoder().decode(npm.stderr)
        }`,
      );
    }
    const version = JSON.parse(await Deno.readTextFile(`${packageDir}/package.json`)).version;
    assert.equal(version, f.version, `${packageDir} is not version ${f.version}`);
    return { dir, packageDir, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
