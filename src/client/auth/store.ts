/** The file CredentialStore: OAuth tokens and client registrations in the user's config directory. */
import type { CredentialStore, StoredCredentials } from "./types.ts";

/** Largest credentials file read (a token set and a registration are a few KiB). */
export const MAX_CREDENTIALS_BYTES = 256 * 1024;

/** Most credential files `list()` reads. */
const MAX_ENTRIES = 1000;

/** A credentials file or directory that is unsafe or unreadable (never names a secret). */
export class CredentialStoreError extends Error {
  /** The path concerned. */
  readonly path: string;
  constructor(path: string, message: string) {
    super(message);
    this.name = "CredentialStoreError";
    this.path = path;
  }
}

/**
 * The directory credentials live in: `$WMCP_CONFIG_DIR/auth`, else `$XDG_CONFIG_HOME/wmcp/auth`,
 * else `$HOME/.config/wmcp/auth`. Relative settings are ignored (the XDG rule), never resolved
 * against the working directory (the workspace).
 */
export function credentialsDir(env: (name: string) => string | undefined = Deno.env.get): string {
  const abs = (v: string | undefined) => (v && v.startsWith("/") ? v.replace(/\/+$/, "") : "");
  const override = abs(env("WMCP_CONFIG_DIR"));
  if (override) return `${override}/auth`;
  const xdg = abs(env("XDG_CONFIG_HOME"));
  if (xdg) return `${xdg}/wmcp/auth`;
  const home = abs(env("HOME"));
  if (!home) {
    throw new CredentialStoreError(
      "",
      "cannot find the config directory: set HOME, XDG_CONFIG_HOME or WMCP_CONFIG_DIR to an absolute path",
    );
  }
  return `${home}/.config/wmcp/auth`;
}

/**
 * The key of a server: its resource URL with scheme and host lower-cased, the default port
 * dropped, the path kept, query and fragment removed. Throws on a non-http(s) URL.
 */
export function normaliseServerUrl(serverUrl: string | URL): string {
  let u: URL;
  try {
    u = new URL(String(serverUrl));
  } catch {
    throw new TypeError(`not a URL: ${JSON.stringify(String(serverUrl))}`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new TypeError(`a server URL must be http(s), got ${u.protocol}`);
  }
  // URL already lower-cases scheme and host and drops a default port.
  return `${u.protocol}//${u.host}${u.pathname}`;
}

/** The file name of a server's credentials: a hash of its key (no URL text in file names). */
async function fileNameOf(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 40)}.json`;
}

/** This process's user id: Deno.uid() (sys permission uid), else the owner of a new temp file. */
function ownUid(): number {
  try {
    const uid = Deno.uid();
    if (uid !== null) return uid;
  } catch { /* no sys permission: try a file of our own below */ }
  try {
    const probe = Deno.makeTempFileSync({ prefix: "wmcp-uid-" });
    try {
      const uid = Deno.lstatSync(probe).uid;
      if (uid !== null) return uid;
    } finally {
      Deno.removeSync(probe);
    }
  } catch { /* fall through */ }
  throw new CredentialStoreError(
    "",
    "cannot tell this process's user id (needs --allow-sys=uid) to check who owns the credentials",
  );
}

function octal(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, "0");
}

/** Refuses a symlink, a non-directory, another owner or group/other permission bits. */
function checkDir(path: string, info: Deno.FileInfo, uid: number): void {
  if (info.isSymlink) {
    throw new CredentialStoreError(path, `refusing ${path}: it is a symbolic link`);
  }
  if (!info.isDirectory) throw new CredentialStoreError(path, `${path} is not a directory`);
  if (info.uid !== null && info.uid !== uid) {
    throw new CredentialStoreError(path, `refusing ${path}: owned by uid ${info.uid}, not ${uid}`);
  }
}

function checkPrivate(path: string, info: Deno.FileInfo, want: number): void {
  if (info.mode !== null && (info.mode & 0o077) !== 0) {
    throw new CredentialStoreError(
      path,
      `refusing ${path}: permissions ${octal(info.mode)} let others read it (want ${
        octal(want)
      }; fix with chmod ${octal(want)} ${path} after checking it)`,
    );
  }
}

function checkFile(path: string, info: Deno.FileInfo, uid: number): void {
  if (info.isSymlink) {
    throw new CredentialStoreError(path, `refusing ${path}: it is a symbolic link`);
  }
  if (!info.isFile) throw new CredentialStoreError(path, `${path} is not a regular file`);
  if (info.uid !== null && info.uid !== uid) {
    throw new CredentialStoreError(path, `refusing ${path}: owned by uid ${info.uid}, not ${uid}`);
  }
  checkPrivate(path, info, 0o600);
}

async function lstatOrUndefined(path: string): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.lstat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

/** Options of fileStore. */
export interface FileStoreOptions {
  /** The directory (default: credentialsDir()). */
  dir?: string;
}

/** Parses and shape-checks one credentials file. */
function parseCredentials(path: string, text: string): StoredCredentials {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new CredentialStoreError(path, `${path} is not valid JSON (remove it and sign in again)`);
  }
  const o = v as Record<string, unknown>;
  const isObj = (x: unknown) => x === undefined || (typeof x === "object" && x !== null);
  if (
    typeof v !== "object" || v === null || typeof o.serverUrl !== "string" ||
    (o.issuer !== undefined && typeof o.issuer !== "string") ||
    !isObj(o.clientInformation) || !isObj(o.tokens) || !isObj(o.discoveryState) ||
    (o.tokensSavedAt !== undefined && typeof o.tokensSavedAt !== "number")
  ) {
    throw new CredentialStoreError(path, `${path} is not a wmcp credentials file`);
  }
  return v as StoredCredentials;
}

/** A random name for a temporary file in `dir` (a dot file, never a credentials file name). */
function tempName(dir: string): string {
  const rand = crypto.getRandomValues(new Uint8Array(8));
  return `${dir}/.${[...rand].map((b) => b.toString(16).padStart(2, "0")).join("")}.tmp`;
}

/** Writes `text` to `path` through a new 0600 temporary file in `dir`, then a rename. */
async function writeAtomically(dir: string, path: string, text: string): Promise<void> {
  const tmp = tempName(dir);
  // createNew (O_EXCL) never follows a link planted at the temporary name.
  try {
    using f = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
    await Deno.chmod(tmp, 0o600); // the umask may have narrowed it; never widened
    const bytes = new TextEncoder().encode(text);
    let off = 0;
    while (off < bytes.length) off += await f.write(bytes.subarray(off));
    await f.sync();
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
  // rename replaces a directory entry; it never writes through a link at `path`.
  await Deno.rename(tmp, path).catch(async (err) => {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  });
}

/** Reads an open file to its end, at most MAX_CREDENTIALS_BYTES + 1 bytes ("too big" if so). */
async function readBounded(f: Deno.FsFile): Promise<Uint8Array> {
  const buf = new Uint8Array(MAX_CREDENTIALS_BYTES + 1);
  let n = 0;
  while (n < buf.length) {
    const r = await f.read(buf.subarray(n));
    if (r === null) break;
    n += r;
  }
  return buf.subarray(0, n);
}

/** Reads one file: refuses links and loose files, bounded, and tied to the checked identity. */
async function readChecked(path: string): Promise<StoredCredentials | undefined> {
  const before = await lstatOrUndefined(path);
  if (before === undefined) return undefined;
  checkFile(path, before, ownUid());
  if (before.size > MAX_CREDENTIALS_BYTES) {
    throw new CredentialStoreError(
      path,
      `${path} is larger than ${MAX_CREDENTIALS_BYTES} bytes; not a wmcp credentials file`,
    );
  }
  using f = await Deno.open(path, { read: true });
  const after = await f.stat();
  if (after.ino !== before.ino || after.dev !== before.dev) {
    throw new CredentialStoreError(path, `${path} changed while it was being opened`);
  }
  const bytes = await readBounded(f);
  if (bytes.length > MAX_CREDENTIALS_BYTES) {
    throw new CredentialStoreError(path, `${path} grew past ${MAX_CREDENTIALS_BYTES} bytes`);
  }
  return parseCredentials(path, new TextDecoder().decode(bytes));
}

/** The file store: one directory, checked before every use (see fileStore). */
class FileStore implements CredentialStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** The path of a server's file in this directory. */
  async #pathOf(key: string): Promise<string> {
    return `${this.dir}/${await fileNameOf(key)}`;
  }

  /** Checks the directory (and its parent, the wmcp config dir); creates them when asked. */
  async #ensureDir(create: boolean): Promise<boolean> {
    const uid = ownUid();
    const parent = this.dir.replace(/\/[^/]+$/, "") || "/";
    for (const [path, strict] of [[parent, false], [this.dir, true]] as const) {
      let info = await lstatOrUndefined(path);
      if (info === undefined) {
        if (!create) return false;
        await Deno.mkdir(path, { recursive: true, mode: 0o700 });
        await Deno.chmod(path, 0o700); // the umask may have narrowed or the mode been ignored
        info = await Deno.lstat(path);
      }
      checkDir(path, info, uid);
      if (strict) checkPrivate(path, info, 0o700);
    }
    return true;
  }

  async load(serverUrl: string): Promise<StoredCredentials | undefined> {
    const key = normaliseServerUrl(serverUrl);
    if (!await this.#ensureDir(false)) return undefined;
    const found = await readChecked(await this.#pathOf(key));
    // A hash collision or a hand-edited file: never hand one server's tokens to another.
    if (found && normaliseServerUrl(found.serverUrl) !== key) return undefined;
    return found;
  }

  async save(creds: StoredCredentials): Promise<void> {
    const key = normaliseServerUrl(creds.serverUrl);
    await this.#ensureDir(true);
    const path = await this.#pathOf(key);
    const existing = await lstatOrUndefined(path);
    if (existing) checkFile(path, existing, ownUid());
    const text = JSON.stringify({ ...creds, serverUrl: key }, null, 2) + "\n";
    if (text.length > MAX_CREDENTIALS_BYTES) {
      throw new CredentialStoreError(
        path,
        `credentials for ${key} exceed ${MAX_CREDENTIALS_BYTES} bytes`,
      );
    }
    await writeAtomically(this.dir, path, text);
  }

  async remove(serverUrl: string): Promise<boolean> {
    const key = normaliseServerUrl(serverUrl);
    if (!await this.#ensureDir(false)) return false;
    const path = await this.#pathOf(key);
    const info = await lstatOrUndefined(path);
    if (info === undefined) return false;
    // A link or a foreign file is refused, not deleted (unlink would only drop the link, but
    // its presence means someone tampered with the directory: say so).
    checkFile(path, info, ownUid());
    await Deno.remove(path);
    return true;
  }

  async list(): Promise<StoredCredentials[]> {
    if (!await this.#ensureDir(false)) return [];
    const out: StoredCredentials[] = [];
    for await (const entry of Deno.readDir(this.dir)) {
      if (!/^[0-9a-f]{40}\.json$/.test(entry.name)) continue;
      if (out.length >= MAX_ENTRIES) break;
      const found = await readChecked(`${this.dir}/${entry.name}`);
      if (found) out.push(found);
    }
    return out.sort((a, b) => a.serverUrl.localeCompare(b.serverUrl));
  }
}

/**
 * A CredentialStore of one JSON file per server (0600, in a 0700 directory owned by this user),
 * written atomically (a new temporary file, then rename). Symbolic links, other owners and
 * looser permissions are refused with a CredentialStoreError.
 */
export function fileStore(
  options: FileStoreOptions = {},
): CredentialStore & { readonly dir: string } {
  return new FileStore(options.dir ?? credentialsDir());
}
