/**
 * How a server learns it runs inside the launcher's bubblewrap sandbox: the launcher sets
 * WMCP_SANDBOX to `bubblewrap:MARKER`, where MARKER is a random directory that exists only in
 * that mount namespace (and the only extra path the server may read). The report is informational;
 * it counts only when the marker is really there.
 */

/** The environment variable the launcher sets inside the sandbox. */
export const SANDBOX_ENV = "WMCP_SANDBOX";

/** The marker directories' common prefix (followed by 32 hex digits). */
export const MARKER_PREFIX = "/run/wmcp-sandbox-";

const VALUE = /^bubblewrap:(\/run\/wmcp-sandbox-[0-9a-f]{32})$/;

/** The kernel sandbox this process runs in: "bubblewrap" when announced and its marker exists. */
export async function detectSandbox(): Promise<"bubblewrap" | "none"> {
  // Only the Deno launcher starts a sandbox; on Node and Bun there is no Deno global.
  if (typeof Deno === "undefined" || Deno.build.os !== "linux") return "none";
  const env = await Deno.permissions.query({ name: "env", variable: SANDBOX_ENV });
  if (env.state !== "granted") return "none";
  const m = VALUE.exec(Deno.env.get(SANDBOX_ENV) ?? "");
  if (!m) return "none";
  const read = await Deno.permissions.query({ name: "read", path: m[1] });
  if (read.state !== "granted") return "none";
  try {
    return (await Deno.lstat(m[1])).isDirectory ? "bubblewrap" : "none";
  } catch {
    return "none";
  }
}
