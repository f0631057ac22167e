/**
 * The directory a process must be able to read for the engine to run in workers: a worker
 * module needs read permission on its own file and on every local file it imports, and
 * every engine module imports only files under src/workspace/.
 */

function directoryOf(url: URL): string | null {
  if (url.protocol !== "file:") return null;
  const path = decodeURIComponent(url.pathname);
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

/**
 * Absolute path of src/workspace (grant it with --allow-read so walks and matching run in
 * the worker pool); null when the modules were not loaded from local files.
 */
export const ENGINE_READ_PATH: string | null = directoryOf(new URL("..", import.meta.url));
