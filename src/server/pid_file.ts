/**
 * The pid file of an HTTP server, bound to that server by a secret only the two share.
 *
 * The server writes `{pid, url, startedAt, root, secret}` (and `roots` when it serves several;
 * mode 0600, through a temporary file renamed over the pid file) and keeps the secret in memory.
 * Anyone who later trusts the file (`serve stop`, a second server on the same pid file) sends
 * `/healthz` a fresh random challenge; the server answers with an HMAC under the secret of the
 * challenge, its pid, url, root (and roots) and the real path where it wrote the file. The secret never crosses the wire, a replayed answer proves
 * nothing, and a file whose pid, url or root was edited, or that was copied or moved elsewhere,
 * fails the proof. See docs/decisions/0016.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { open } from "node:fs/promises";
import { constants } from "node:fs";

/** What a pid file records. */
export interface PidRecord {
  /** The process to signal. */
  pid: number;
  /** The MCP endpoint URL (its /healthz answers the identity challenge). */
  url: string;
  /** When the server started (ISO 8601). */
  startedAt: string;
  /** The real path of the served workspace (its first root). */
  root: string;
  /**
   * The real path of every root, in order, when the server serves several (decision 0064; the
   * first is `root`). Absent with one root, so such a record reads as it always has.
   */
  roots?: string[];
  /** The shared secret (base64url, 32 random bytes). */
  secret: string;
}

/** Who owns a pid file and its mode bits, from the very handle its contents were read through. */
export interface PidFileOwner {
  /** The owning uid. */
  uid: number;
  /** The permission bits. */
  mode: number;
}

/** A pid file as read: pid and url always; the rest when the writer recorded them. */
export type PidFileContents = Pick<PidRecord, "pid" | "url"> & Partial<PidRecord> & {
  /** The file's owner and mode as read (absent only for records built by hand). */
  file?: PidFileOwner;
};

/** A pid file that cannot be used at all (a link, FIFO, device, directory or oversized file). */
export class PidFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PidFileError";
  }
}

/** Largest pid file read (bytes); a genuine one is about 300. */
export const MAX_PID_FILE_BYTES = 64 * 1024;

/** Why a pid file is not trusted. */
export type PidFileRefusal =
  | "pid-out-of-range"
  | "url-not-loopback"
  | "no-secret"
  | "writable-by-others"
  | "not-owned"
  | "owner-unknown"
  | "unusable"
  | "inside-workspace"
  | "no-net-permission"
  | "unproven";

/** What asking the server named by a pid file established. */
export type PidFileCheck =
  | { status: "proven" }
  | { status: "unreachable" }
  | { status: "refused"; reason: PidFileRefusal; message: string };

const PROOF_LABEL = "wmcp-pid-file/1";
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** Largest /healthz answer read while checking a pid file (bytes). */
const MAX_HEALTH_BYTES = 4096;

/** A new random secret for a pid file. */
export function newPidSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    "",
  );
}

/** The identity proof for a challenge: HMAC-SHA256 (hex) under the secret. */
export function pidFileProof(
  secret: string,
  claim: {
    challenge: string;
    pid: number;
    url: string;
    root: string;
    path: string;
    roots?: readonly string[];
  },
): string {
  const parts = [PROOF_LABEL, claim.challenge, claim.pid, claim.url, claim.root, claim.path];
  // Several roots are proven too (one root: the message as it has always been).
  if (claim.roots !== undefined) parts.push(JSON.stringify(claim.roots));
  const message = parts.join("\n");
  return createHmac("sha256", secret).update(message).digest("hex");
}

/**
 * Reads a pid file's bytes and its owner through one handle, without blocking and without
 * following a link: opened O_NOFOLLOW|O_NONBLOCK, used only when it is a regular file of at most
 * MAX_PID_FILE_BYTES. Null when absent; PidFileError when unusable.
 */
async function readPidBytes(path: string): Promise<{ text: string; file: PidFileOwner } | null> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (err instanceof Deno.errors.NotFound || code === "ENOENT") return null;
    if (code === "ELOOP" || code === "EMLINK") {
      throw new PidFileError(`the pid file ${path} is a symbolic link; give the file itself`);
    }
    throw err;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) {
      throw new PidFileError(`the pid file ${path} is not a regular file`);
    }
    if (st.size > MAX_PID_FILE_BYTES) {
      throw new PidFileError(`the pid file ${path} is larger than ${MAX_PID_FILE_BYTES} bytes`);
    }
    const buf = new Uint8Array(MAX_PID_FILE_BYTES + 1);
    let n = 0;
    while (n < buf.length) {
      const { bytesRead } = await handle.read(buf, n, buf.length - n, null);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    if (n > MAX_PID_FILE_BYTES) {
      throw new PidFileError(`the pid file ${path} is larger than ${MAX_PID_FILE_BYTES} bytes`);
    }
    const text = new TextDecoder().decode(buf.subarray(0, n));
    return { text, file: { uid: st.uid, mode: st.mode & 0o7777 } };
  } finally {
    await handle.close();
  }
}

/**
 * Reads a pid file (see readPidBytes for how); null when it is absent or unreadable as a record.
 * Throws PidFileError for a link, a non-regular file or an oversized one.
 */
export async function readPidFile(path: string): Promise<PidFileContents | null> {
  const read = await readPidBytes(path);
  if (read === null) return null;
  try {
    const r = JSON.parse(read.text) as Record<string, unknown>;
    if (typeof r !== "object" || r === null) return null;
    if (!Number.isSafeInteger(r.pid) || typeof r.url !== "string") return null;
    const out: PidFileContents = { pid: r.pid as number, url: r.url, file: read.file };
    for (const k of ["startedAt", "root", "secret"] as const) {
      if (typeof r[k] === "string") out[k] = r[k] as string;
    }
    if (Array.isArray(r.roots) && r.roots.every((x) => typeof x === "string")) {
      out.roots = r.roots as string[];
    }
    return out;
  } catch {
    // A damaged pid file is stale.
    return null;
  }
}

function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`);
}

function tmpPathOf(path: string): string {
  return `${path}.tmp`;
}

async function removeIfPresent(path: string): Promise<void> {
  try {
    await Deno.remove(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

/**
 * Where a pid file will really be (its directory's links resolved), refusing a place inside the
 * workspace, any of its roots (an agent could read the secret there, or write a forged file).
 * Creates and removes `PATH.tmp` to learn it, so it needs only the permissions writePidFile needs.
 */
export async function placePidFile(
  path: string,
  workspaceRoots: string | readonly string[],
): Promise<string> {
  const tmp = tmpPathOf(path);
  await removeIfPresent(tmp);
  const f = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
  f.close();
  let real: string;
  try {
    real = await Deno.realPath(tmp);
  } finally {
    await removeIfPresent(tmp);
  }
  const place = `${real.slice(0, real.lastIndexOf("/"))}/${path.slice(path.lastIndexOf("/") + 1)}`;
  for (const root of typeof workspaceRoots === "string" ? [workspaceRoots] : workspaceRoots) {
    if (inside(place, root)) {
      throw new Error(
        `the pid file ${path} lies inside the served workspace ${root}; put it elsewhere`,
      );
    }
  }
  return place;
}

/**
 * Writes a pid file atomically, mode 0600: the record goes to `PATH.tmp` (created new, never
 * through an existing file or link) and is renamed over PATH, so a reader sees the old file or
 * the whole new one. Needs write permission on PATH and PATH.tmp.
 */
export async function writePidFile(path: string, record: PidRecord): Promise<void> {
  const tmp = tmpPathOf(path);
  await removeIfPresent(tmp);
  const f = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
  try {
    const bytes = new TextEncoder().encode(JSON.stringify(record) + "\n");
    let o = 0;
    while (o < bytes.length) o += await f.write(bytes.subarray(o));
  } finally {
    f.close();
  }
  await Deno.rename(tmp, path);
}

/** Removes a pid file if it still names this process (and is a regular file). */
export async function removePidFile(path: string, pid: number): Promise<void> {
  const r = await readPidFile(path).catch(() => null);
  if (r?.pid === pid) await Deno.remove(path).catch(() => {});
}

function isLoopbackUrl(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol !== "http:" || u.username !== "" || u.password !== "") return false;
  const h = u.hostname;
  return h === "localhost" || h === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

function refused(reason: PidFileRefusal, message: string): PidFileCheck {
  return { status: "refused", reason, message };
}

/**
 * The checks that need no server: a file owned by this user (needs --allow-sys=uid; refused
 * when that cannot be checked) that no one else may write, a pid above 1, a loopback http URL,
 * a secret, and a file outside every root of the workspace it names. Undefined when all pass.
 */
export async function pidFileRefusal(
  path: string,
  record: PidFileContents,
): Promise<PidFileCheck | undefined> {
  const file = record.file ?? await readPidBytes(path).then((r) => r?.file);
  if (file === undefined) return refused("unusable", "the pid file disappeared while checked");
  if (Deno.permissions.querySync({ name: "sys", kind: "uid" }).state !== "granted") {
    return refused(
      "owner-unknown",
      "cannot check who owns the pid file: this process needs --allow-sys=uid",
    );
  }
  const me = Deno.uid();
  if (me === null || file.uid !== me) {
    return refused(
      "not-owned",
      `the pid file is owned by uid ${file.uid}, not by this user (uid ${me})`,
    );
  }
  if ((file.mode & 0o022) !== 0) {
    return refused("writable-by-others", "the pid file is writable by group or others");
  }
  if (!(record.pid > 1)) {
    return refused("pid-out-of-range", `pid ${record.pid} is not a single process (must be > 1)`);
  }
  if (!isLoopbackUrl(record.url)) {
    return refused("url-not-loopback", `url ${JSON.stringify(record.url)} is not loopback http`);
  }
  if (record.secret === undefined || !SECRET_PATTERN.test(record.secret)) {
    return refused("no-secret", "the pid file carries no secret (forged, or from an older wmcp)");
  }
  const real = await Deno.realPath(path);
  for (const root of [record.root, ...(record.roots ?? [])]) {
    if (root !== undefined && inside(real, root)) {
      return refused("inside-workspace", `the pid file lies inside the workspace ${root}`);
    }
  }
  return undefined;
}

async function readCapped(res: Response, max: number): Promise<string | null> {
  if (res.body === null) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) {
    all.set(c, o);
    o += c.length;
  }
  return new TextDecoder().decode(all);
}

/**
 * Establishes whether the server a pid file names is the one that wrote it: the static checks,
 * then a fresh challenge to its /healthz whose answer must be the HMAC under the file's secret
 * of the challenge, the file's pid, url and root and the file's real path. "unreachable" when
 * nothing answers there (the file is stale).
 */
export async function checkPidFile(
  path: string,
  record: PidFileContents,
  options: { timeoutMs?: number } = {},
): Promise<PidFileCheck> {
  const early = await pidFileRefusal(path, record);
  if (early !== undefined) return early;
  const real = await Deno.realPath(path);
  const target = new URL(record.url);
  const netHost = `${target.hostname}:${target.port || "80"}`;
  if (Deno.permissions.querySync({ name: "net", host: netHost }).state !== "granted") {
    // Without it the fetch fails as if nothing answered, and a live server would pass for stale.
    return refused(
      "no-net-permission",
      `cannot ask ${record.url} whether it still serves: this process has no net permission for ${netHost}`,
    );
  }
  const challenge = Array.from(crypto.getRandomValues(new Uint8Array(32)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  let text: string | null;
  let status: number;
  try {
    const health = new URL("/healthz", record.url);
    health.searchParams.set("challenge", challenge);
    const res = await fetch(health, {
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs ?? 1500),
    });
    status = res.status;
    text = await readCapped(res, MAX_HEALTH_BYTES);
  } catch {
    return { status: "unreachable" };
  }
  if (status !== 200 || text === null) {
    return refused("unproven", `${record.url} did not answer the identity challenge`);
  }
  let body: { pid?: unknown; proof?: unknown };
  try {
    body = JSON.parse(text);
  } catch {
    return refused("unproven", `${record.url} did not answer the identity challenge`);
  }
  const expected = pidFileProof(record.secret!, {
    challenge,
    pid: record.pid,
    url: record.url,
    root: record.root ?? "",
    path: real,
    roots: record.roots,
  });
  const ok = body.pid === record.pid && typeof body.proof === "string" &&
    body.proof.length === expected.length &&
    timingSafeEqual(new TextEncoder().encode(body.proof), new TextEncoder().encode(expected));
  if (!ok) {
    return refused(
      "unproven",
      `the server at ${record.url} did not prove it wrote this pid file (pid, url, root, place or secret differ)`,
    );
  }
  return { status: "proven" };
}
