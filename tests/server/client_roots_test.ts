/**
 * The client's roots (decision 0065), through a real host-like client: the v1 SDK client offering
 * `roots` to a stdio server started without a root flag, in the directory it would otherwise serve.
 * The server asks roots/list after initialize and again on list_changed, serves what the client
 * names (never the start directory once the client has named roots), skips what cannot be served
 * (not file://, missing, a file, `/` through a link, overlapping) with warnings, answers NO_ROOT
 * when nothing usable is left, and ignores the client's roots when --root is given.
 */
import assert from "node:assert/strict";
import { serverPermissions } from "../../src/cli/server_permissions.ts";
import { LAUNCHER_FLAGS, skipWithoutBwrap } from "../security/_sandbox.ts";
import { denoCacheDir } from "../../src/sandbox/bwrap.ts";
import { GrowingText } from "../_support/wait.ts";

const SERVER = new URL("../../serve_stdio.ts", import.meta.url).pathname;
const CLI = new URL("../../cli.ts", import.meta.url).pathname;

type V1Client = InstanceType<
  typeof import("@modelcontextprotocol/sdk/client/index.js")["Client"]
>;

/** A fixture: `start` (the server's directory), `one` and `two` (roots), `outside`. */
async function fixture(): Promise<Record<"base" | "start" | "one" | "two", string>> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-client-roots-" }));
  const paths = { base, start: `${base}/start`, one: `${base}/one`, two: `${base}/two` };
  for (const [name, dir] of Object.entries(paths)) {
    if (name === "base") continue;
    await Deno.mkdir(dir);
    await Deno.writeTextFile(`${dir}/which.txt`, `${name}\n`);
  }
  return paths;
}

interface Session {
  client: V1Client;
  /** Every roots/list the server sent, in order. */
  asked: number;
  /** The roots the client answers with (changed by the test). */
  roots: { uri: string; name?: string }[];
  /**
   * The server's stderr as read so far. It is a pipe of its own (relayed by the launcher when there
   * is one), so a warning may arrive after answers the server wrote later: wait for it.
   */
  stderr: GrowingText;
}

/** Asserts that the server's stderr comes to match every pattern (waited for, 30 s at most). */
async function assertWarned(s: Session, ...patterns: RegExp[]): Promise<void> {
  await s.stderr.waitFor((text) => patterns.every((p) => p.test(text)), 30_000);
  for (const p of patterns) assert.match(s.stderr.text, p);
}

/**
 * The v1 SDK client connected to serve_stdio.ts run in `cwd`, declaring `roots` (unless
 * `declareRoots` is false), its roots/list answered from `session.roots`.
 */
async function connect(
  cwd: string,
  readable: string,
  options: {
    declareRoots?: boolean;
    args?: string[];
    roots: { uri: string }[];
    home?: string;
    /** Start `cli.ts serve stdio` (the launcher, as a host does) instead of serve_stdio.ts. */
    launcher?: boolean;
  },
): Promise<Session> {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const { ListRootsRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
  const perms = serverPermissions("stdio", ["--root", readable]).filter((f) =>
    f.startsWith("--allow-read=")
  );
  const declare = options.declareRoots !== false;
  const client = new Client(
    { name: "roots-host", version: "0" },
    { capabilities: declare ? { roots: { listChanged: true } } : {} },
  );
  const session: Session = { client, asked: 0, roots: options.roots, stderr: new GrowingText() };
  if (declare) {
    client.setRequestHandler(ListRootsRequestSchema, () => {
      session.asked++;
      return { roots: session.roots };
    });
  }
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: options.launcher
      ? [...LAUNCHER_FLAGS, CLI, "serve", "stdio", "--engine", "builtin", ...(options.args ?? [])]
      : ["run", "--allow-env=HOME", ...perms, SERVER, ...(options.args ?? [])],
    cwd,
    stderr: "pipe",
    env: {
      HOME: options.home ?? Deno.env.get("HOME") ?? "/root",
      PATH: Deno.env.get("PATH") ?? "",
      // Deno's cache where this process has it (another HOME would otherwise mean an empty one).
      DENO_DIR: denoCacheDir((name) => Deno.env.get(name)) ?? "",
    },
  });
  const dec = new TextDecoder();
  transport.stderr?.on(
    "data",
    (b: Uint8Array) => session.stderr.append(dec.decode(b, { stream: true })),
  );
  await client.connect(transport);
  return session;
}

async function call(session: Session, name: string, args: Record<string, unknown>) {
  const r = await session.client.callTool({ name, arguments: args });
  if (r.isError) return { error: r._meta?.["wmcp/error"] as { code: string; message: string } };
  return { result: r.structuredContent as Record<string, unknown> };
}

const uri = (path: string) => new URL(`file://${path}`).href;

Deno.test("client roots: the v1 SDK client's roots replace the start directory, and follow list_changed", async () => {
  const f = await fixture();
  const s = await connect(f.start, f.base, { roots: [{ uri: uri(f.one) }] });
  try {
    const first = await call(s, "read_file", { path: "which.txt" });
    assert.equal(first.result?.content, "one\n", "the client's root, not the start directory");
    assert.equal(s.asked, 1);
    const info = (await call(s, "workspace_info", {})).result!;
    assert.equal(info.rootsFrom, "client");
    assert.deepEqual(info.roots, [{ name: "one", path: ".", mode: "read-only" }]);
    // The start directory is no longer reachable, by any spelling.
    const start = await call(s, "read_file", { path: `${f.start}/which.txt` });
    assert.equal(start.error?.code, "OUTSIDE_WORKSPACE");

    // Two roots now: the first is addressed relatively, the second by its absolute path.
    s.roots = [{ uri: uri(f.two) }, { uri: uri(f.one) }];
    await s.client.sendRootsListChanged();
    const second = await call(s, "read_file", { path: "which.txt" });
    assert.equal(second.result?.content, "two\n");
    assert.equal(s.asked, 2, "asked again on list_changed, before the next call ran");
    const other = await call(s, "read_file", { path: `${f.one}/which.txt` });
    assert.equal(other.result?.content, "one\n");
    assert.equal(other.result?.path, `${f.one}/which.txt`);
    await assertWarned(s, /serving the client's roots/);
  } finally {
    await s.client.close();
    await Deno.remove(f.base, { recursive: true });
  }
});

Deno.test("client roots: roots that cannot be served are skipped with warnings; none left is NO_ROOT", async () => {
  const f = await fixture();
  await Deno.symlink("/", `${f.base}/link-to-slash`);
  await Deno.symlink(f.one, `${f.base}/link-to-one`);
  const s = await connect(f.start, f.base, {
    home: f.base,
    roots: [
      { uri: "https://example.com/repo" },
      { uri: uri(`${f.base}/missing`) },
      { uri: uri(`${f.one}/which.txt`) },
      { uri: uri(`${f.base}/link-to-slash`) },
      { uri: uri(f.base) },
      { uri: "file:///" },
      { uri: "file://otherhost/srv" },
    ],
  });
  try {
    const r = await call(s, "read_file", { path: "which.txt" });
    assert.equal(r.error?.code, "NO_ROOT");
    assert.match(r.error!.message, /none of the client's roots can be served/);
    await assertWarned(
      s,
      /https:\/\/example.com\/repo.*not a file:\/\/ URI/,
      /missing.*cannot be opened/,
      /which.txt.*not a directory/,
      /link-to-slash/,
      new RegExp(`"${uri(f.base)}".*your home directory`),
      /"file:\/\/\/".*whole file system/,
      /otherhost.*another host/,
    );
    // A root reached through a link is served as the directory it names; an overlapping one is
    // skipped, the first kept.
    s.roots = [{ uri: uri(`${f.base}/link-to-one`) }, { uri: uri(f.one) }];
    await s.client.sendRootsListChanged();
    const linked = await call(s, "read_file", { path: "which.txt" });
    assert.equal(linked.result?.content, "one\n");
    await assertWarned(s, /same directory/);
    // An empty list leaves nothing to serve, and never the start directory.
    s.roots = [];
    await s.client.sendRootsListChanged();
    const none = await call(s, "read_file", { path: "which.txt" });
    assert.equal(none.error?.code, "NO_ROOT");
    assert.match(none.error!.message, /the client lists no roots/);
  } finally {
    await s.client.close();
    await Deno.remove(f.base, { recursive: true });
  }
});

Deno.test("client roots: a client without the capability gets the start directory; --root wins over roots", async () => {
  const f = await fixture();
  const plain = await connect(f.start, f.base, { declareRoots: false, roots: [] });
  try {
    assert.equal(
      (await call(plain, "read_file", { path: "which.txt" })).result?.content,
      "start\n",
    );
    assert.equal((await call(plain, "workspace_info", {})).result?.rootsFrom, "start-directory");
  } finally {
    await plain.client.close();
  }
  const pinned = await connect(f.start, f.base, {
    args: ["--root", f.two],
    roots: [{ uri: uri(f.one) }],
  });
  try {
    assert.equal((await call(pinned, "read_file", { path: "which.txt" })).result?.content, "two\n");
    assert.equal((await call(pinned, "workspace_info", {})).result?.rootsFrom, "configured");
    assert.equal(pinned.asked, 0, "a server given --root never asks for roots");
  } finally {
    await pinned.client.close();
    await Deno.remove(f.base, { recursive: true });
  }
});

Deno.test({
  name:
    "client roots: through the launcher and its sandbox, the client's roots inside the start directory are served, others skipped",
  ignore: skipWithoutBwrap("client roots through the launcher"),
  fn: async () => {
    const f = await fixture();
    await Deno.mkdir(`${f.start}/sub`);
    await Deno.writeTextFile(`${f.start}/sub/which.txt`, "sub\n");
    const s = await connect(f.start, f.base, {
      launcher: true,
      args: ["--sandbox", "required"],
      roots: [{ uri: uri(`${f.start}/sub`) }, { uri: uri(f.one) }],
    });
    try {
      const r = await call(s, "read_file", { path: "which.txt" });
      assert.equal(r.result?.content, "sub\n", "the client's root inside the start directory");
      const info = (await call(s, "workspace_info", {})).result!;
      assert.equal(info.rootsFrom, "client");
      assert.deepEqual((info.containment as { sandbox: string }).sandbox, "bubblewrap");
      assert.deepEqual(info.roots, [{ name: "sub", path: ".", mode: "read-only" }]);
      // Outside the start directory nothing exists in the sandbox: skipped, and said why.
      await assertWarned(s, new RegExp(`${f.one}.*reaches only ${f.start}`));
      const outside = await call(s, "read_file", { path: `${f.one}/which.txt` });
      assert.equal(outside.error?.code, "OUTSIDE_WORKSPACE");
    } finally {
      await s.client.close();
      await Deno.remove(f.base, { recursive: true });
    }
  },
});
