/**
 * Where this project's own files are, named once: the project directory (the entry scripts,
 * src/, deno.json, node_modules), a file in it, and whether it runs from the npm package. The
 * router, the serve launcher, the installer, host entries and child Denos take it from here.
 */

const PROJECT_URL = new URL("../../", import.meta.url);

/** A file of this project by its path from the project directory (`cli.ts`, `deno.json`). */
export function projectFile(path: string): URL {
  return new URL(path, PROJECT_URL);
}

/** A file of this project as a path on disk; undefined when the project is not local. */
export function projectPath(path: string): string | undefined {
  const url = projectFile(path);
  return url.protocol === "file:" ? decodeURIComponent(url.pathname) : undefined;
}

/**
 * The project directory on disk, absolute and without a trailing slash; undefined when the
 * project is not on a local file system (run from a URL).
 */
export function projectDir(): string | undefined {
  if (PROJECT_URL.protocol !== "file:") return undefined;
  const parts = decodeURIComponent(PROJECT_URL.pathname).split("/").filter((p) => p !== "");
  return `/${parts.join("/")}`;
}

/**
 * Whether this project runs from the npm package (npm/wmcp.cjs): its directory is somewhere
 * under a node_modules directory, where Deno discovers no deno.json by itself (decision 0046).
 */
export function isNpmPackage(): boolean {
  return decodeURIComponent(PROJECT_URL.pathname).includes("/node_modules/");
}
