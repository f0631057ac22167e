/**
 * Authorization over HTTP with real servers: read-only and read-write bearer tokens on both eras
 * (tool lists, paging, calls), `--token-file` and `--read-token-file` against the environment,
 * the token checked on every request of a reused keep-alive connection and inside legacy sessions.
 */
import assert from "node:assert/strict";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1HttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  envelope,
  type HttpServerProcess,
  makeWorkspace,
  messagesOf,
  MODERN,
  modernRequest,
  READ_TOOLS,
  startHttpServer,
} from "./_harness.ts";
import { exists } from "../_support/fs.ts";

const WRITE_A = "rw-token-alpha-0123456789";
const WRITE_B = "rw-token-bravo-0123456789";
const READ_A = "ro-token-alpha-0123456789";
const WRITE_TOOLS = [
  "write_file",
  "edit_file",
  "create_directory",
  "move_path",
  "copy_path",
  "delete_path",
];

/** Writes the token files into a fresh directory outside the workspace. */
async function tokenFiles(): Promise<{ dir: string; write: string; read: string }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "wmcp-tokens-" }));
  await Deno.writeTextFile(`${dir}/write.tokens`, `${WRITE_A}\n\n  ${WRITE_B}  \n`);
  await Deno.writeTextFile(`${dir}/read.tokens`, `${READ_A}\n`);
  return { dir, write: `${dir}/write.tokens`, read: `${dir}/read.tokens` };
}

/** A write-enabled server with two read-write tokens and one read-only token (page size 3). */
async function startTokenServer(
  root: string,
  files: { dir: string; write: string; read: string },
  env: Record<string, string> = {},
): Promise<HttpServerProcess> {
  return await startHttpServer(root, {
    write: true,
    args: ["--token-file", files.write, "--read-token-file", files.read, "--page-size", "3"],
    env,
    extraFlags: [`--allow-read=${files.dir}`, "--allow-env=WMCP_READ_TOKEN"],
  });
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** Every tool name of a modern tools/list, page by page; the number of pages too. */
async function modernNames(
  url: string,
  token: string,
): Promise<{ names: string[]; pages: number }> {
  const names: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const r = await modernRequest(url, "tools/list", cursor ? { cursor } : {}, {
      headers: bearer(token),
    });
    assert.equal(r.status, 200);
    const result = r.messages[0].result as { tools: { name: string }[]; nextCursor?: string };
    names.push(...result.tools.map((t) => t.name));
    cursor = result.nextCursor;
    pages++;
  } while (cursor !== undefined && pages < 20);
  return { names, pages };
}

/** A v1 SDK (legacy era) client sending a bearer token on every request. */
async function v1Client(url: string, token: string): Promise<V1Client> {
  const client = new V1Client({ name: "token-test", version: "0" });
  await client.connect(
    new V1HttpTransport(new URL(url), { requestInit: { headers: bearer(token) } }),
  );
  return client;
}

/** Every tool name of a legacy tools/list, page by page. */
async function legacyNames(client: V1Client): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    names.push(...page.tools.map((t: { name: string }) => t.name));
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined && pages < 20);
  return names;
}

Deno.test("read-only and read-write tokens: tool lists, paging and calls on both eras", async (t) => {
  const root = await makeWorkspace({ "a.txt": "alpha\n" });
  const files = await tokenFiles();
  const server = await startTokenServer(root, files);
  try {
    await t.step("modern: the read token lists only the read tools, on every page", async () => {
      const read = await modernNames(server.url, READ_A);
      assert.deepEqual(read.names, READ_TOOLS);
      assert.equal(read.pages, Math.ceil(READ_TOOLS.length / 3), "the read tools in pages of 3");
      for (const token of [WRITE_A, WRITE_B]) {
        const all = await modernNames(server.url, token);
        assert.deepEqual(all.names, [...READ_TOOLS, ...WRITE_TOOLS]);
        assert.equal(
          all.pages,
          Math.ceil((READ_TOOLS.length + WRITE_TOOLS.length) / 3),
          "every tool in pages of 3",
        );
      }
    });

    await t.step("modern: a write-list cursor is not valid in the read view", async () => {
      const first = await modernRequest(server.url, "tools/list", {}, { headers: bearer(WRITE_A) });
      const cursor = (first.messages[0].result as { nextCursor: string }).nextCursor;
      const wrong = await modernRequest(server.url, "tools/list", { cursor }, {
        headers: bearer(READ_A),
      });
      assert.equal((wrong.messages[0].error as { code: number }).code, -32602);
    });

    await t.step(
      "modern: the read token calls read tools; a write tool is unknown (-32602), nothing written",
      async () => {
        const ok = await modernRequest(server.url, "tools/call", {
          name: "read_file",
          arguments: { path: "a.txt" },
        }, { headers: bearer(READ_A) });
        const result = ok.messages.find((m) => "result" in m)!.result as {
          structuredContent: { content: string };
        };
        assert.equal(result.structuredContent.content, "alpha\n");
        const denied = await modernRequest(server.url, "tools/call", {
          name: "write_file",
          arguments: { path: "ro.txt", content: "no" },
        }, { headers: bearer(READ_A) });
        const error = denied.messages.find((m) => "error" in m)!.error as {
          code: number;
          message: string;
        };
        assert.equal(error.code, -32602);
        assert.match(error.message, /write_file/);
        assert.equal(await exists(`${root}/ro.txt`), false, "nothing was written");
        // The same answer as for a tool that exists nowhere.
        const unknown = await modernRequest(server.url, "tools/call", {
          name: "no_such_tool",
          arguments: {},
        }, { headers: bearer(READ_A) });
        assert.equal(
          (unknown.messages.find((m) => "error" in m)!.error as { code: number }).code,
          -32602,
        );
      },
    );

    await t.step("workspace_info tells each caller its own mode", async () => {
      const modeFor = async (token: string) => {
        const r = await modernRequest(server.url, "tools/call", {
          name: "workspace_info",
          arguments: {},
        }, { headers: bearer(token) });
        return (r.messages.find((m) => "result" in m)!.result as {
          structuredContent: { mode: string };
        }).structuredContent.mode;
      };
      assert.equal(await modeFor(READ_A), "read-only");
      assert.equal(await modeFor(WRITE_A), "read-write");
    });

    await t.step("modern: a read-write token writes", async () => {
      const wrote = await modernRequest(server.url, "tools/call", {
        name: "write_file",
        arguments: { path: "rw.txt", content: "yes\n" },
      }, { headers: bearer(WRITE_B) });
      const result = wrote.messages.find((m) => "result" in m)!.result as { isError?: boolean };
      assert.notEqual(result.isError, true);
      assert.equal(await Deno.readTextFile(`${root}/rw.txt`), "yes\n");
    });

    await t.step(
      "modern: a confirmation's requestState is bound to the token it was minted for",
      async () => {
        await Deno.writeTextFile(`${root}/victim.txt`, "x");
        const caps = { elicitation: { form: {} } };
        const call = (token: string, extra: Record<string, unknown> = {}) =>
          modernRequest(server.url, "tools/call", {
            name: "delete_path",
            arguments: { path: "victim.txt" },
            ...extra,
          }, { capabilities: caps, headers: bearer(token) });
        const first = await call(WRITE_A);
        const state = (first.messages[0].result as { requestState: string }).requestState;
        assert.equal(typeof state, "string");
        const answer = {
          inputResponses: { confirm: { action: "accept", content: { confirm: true } } },
          requestState: state,
        };
        const other = await call(WRITE_B, answer);
        assert.equal((other.messages[0].error as { code: number }).code, -32602);
        await Deno.stat(`${root}/victim.txt`); // still there
        const own = await call(WRITE_A, answer);
        assert.equal((own.messages[0].result as { isError?: boolean }).isError, undefined);
        assert.equal(await exists(`${root}/victim.txt`), false);
      },
    );

    await t.step("legacy (v1 SDK client): the same views and the same refusal", async () => {
      const reader = await v1Client(server.url, READ_A);
      try {
        assert.deepEqual(await legacyNames(reader), READ_TOOLS);
        assert.match(reader.getInstructions() ?? "", /read-only/);
        const read = await reader.callTool({ name: "read_file", arguments: { path: "a.txt" } });
        assert.equal((read.structuredContent as { content: string }).content, "alpha\n");
        await assert.rejects(
          reader.callTool({ name: "write_file", arguments: { path: "ro2.txt", content: "no" } }),
          (err: { code?: number }) => err.code === -32602,
        );
        assert.equal(await exists(`${root}/ro2.txt`), false, "nothing was written");
      } finally {
        await reader.close();
      }
      const writer = await v1Client(server.url, WRITE_A);
      try {
        assert.deepEqual(await legacyNames(writer), [...READ_TOOLS, ...WRITE_TOOLS]);
        assert.match(writer.getInstructions() ?? "", /read-write/);
        const wrote = await writer.callTool({
          name: "write_file",
          arguments: { path: "rw2.txt", content: "legacy\n" },
        });
        assert.notEqual(wrote.isError, true);
        assert.equal(await Deno.readTextFile(`${root}/rw2.txt`), "legacy\n");
      } finally {
        await writer.close();
      }
    });

    await t.step(
      "no token or a wrong token is 401 on both eras; tokens never reach the logs",
      async () => {
        const none = await modernRequest(server.url, "tools/list");
        assert.equal(none.status, 401);
        const wrong = await modernRequest(server.url, "tools/list", {}, {
          headers: bearer("not-a-configured-token-000"),
        });
        assert.equal(wrong.status, 401);
        await assert.rejects(v1Client(server.url, "not-a-configured-token-000"));
        for (const token of [WRITE_A, WRITE_B, READ_A]) {
          assert.ok(!server.stderr().includes(token), "a token appeared in the logs");
        }
      },
    );
  } finally {
    const status = await server.stop();
    assert.equal(status.code, 0, server.stderr());
    await Deno.remove(root, { recursive: true });
    await Deno.remove(files.dir, { recursive: true });
  }
});

Deno.test("--token-file and --read-token-file replace WMCP_TOKEN and WMCP_READ_TOKEN", async () => {
  const root = await makeWorkspace();
  const files = await tokenFiles();
  const envWrite = "env-write-token-0123456789";
  const envRead = "env-read-token-0123456789";
  const server = await startTokenServer(root, files, {
    WMCP_TOKEN: envWrite,
    WMCP_READ_TOKEN: envRead,
  });
  try {
    for (const token of [envWrite, envRead]) {
      const r = await modernRequest(server.url, "tools/list", {}, { headers: bearer(token) });
      assert.equal(r.status, 401, "the environment's token is not accepted next to a file");
    }
    assert.equal(
      (await modernNames(server.url, WRITE_B)).names.length,
      READ_TOOLS.length + WRITE_TOOLS.length,
    );
  } finally {
    await server.stop();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(files.dir, { recursive: true });
  }
});

Deno.test("WMCP_READ_TOKEN alone: a write-enabled server that only reads for everyone", async () => {
  const root = await makeWorkspace();
  const envRead = "env-read-token-0123456789";
  const server = await startHttpServer(root, {
    write: true,
    env: { WMCP_READ_TOKEN: envRead },
    extraFlags: ["--allow-env=WMCP_READ_TOKEN"],
  });
  try {
    assert.deepEqual((await modernNames(server.url, envRead)).names, READ_TOOLS);
    assert.equal((await modernRequest(server.url, "tools/list")).status, 401);
  } finally {
    await server.stop();
    await Deno.remove(root, { recursive: true });
  }
});

/** One HTTP/1.1 response read off a raw socket: status, headers and body (length or chunked). */
interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends raw HTTP/1.1 requests one after another on ONE TCP connection (bounded waits). */
async function onOneConnection(port: number, requests: string[]): Promise<RawResponse[]> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const reader = conn.readable.getReader();
  const writer = conn.writable.getWriter();
  const out: RawResponse[] = [];
  let buf = new Uint8Array(0);
  const dec = new TextDecoder();
  const more = async () => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, rej) => {
      timer = setTimeout(() => rej(new Error("no response in 30 s")), 30_000);
    });
    try {
      const { value, done } = await Promise.race([reader.read(), timeout]);
      if (done) throw new Error("connection closed early");
      const next = new Uint8Array(buf.length + value.length);
      next.set(buf);
      next.set(value, buf.length);
      buf = next;
    } finally {
      clearTimeout(timer);
    }
  };
  const indexOf = (needle: string, from = 0) => dec.decode(buf).indexOf(needle, from);
  try {
    for (const r of requests) {
      await writer.write(new TextEncoder().encode(r));
      while (indexOf("\r\n\r\n") === -1) await more();
      const text = dec.decode(buf);
      const headEnd = text.indexOf("\r\n\r\n");
      const lines = text.slice(0, headEnd).split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(":");
        headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      buf = buf.slice(new TextEncoder().encode(text.slice(0, headEnd + 4)).length);
      let body = "";
      if (headers["transfer-encoding"]?.includes("chunked")) {
        while (true) {
          while (indexOf("\r\n") === -1) await more();
          const sizeLine = dec.decode(buf).slice(0, indexOf("\r\n"));
          const size = parseInt(sizeLine, 16);
          const start = sizeLine.length + 2;
          while (buf.length < start + size + 2) await more();
          body += dec.decode(buf.slice(start, start + size));
          buf = buf.slice(start + size + 2);
          if (size === 0) break;
        }
      } else {
        const len = Number(headers["content-length"] ?? "0");
        while (buf.length < len) await more();
        body = dec.decode(buf.slice(0, len));
        buf = buf.slice(len);
      }
      out.push({ status: Number(lines[0].split(" ")[1]), headers, body });
    }
  } finally {
    reader.releaseLock();
    writer.releaseLock();
    conn.close();
  }
  return out;
}

/** A raw modern POST of tools/list (keep-alive), with the given Authorization header if any. */
function rawToolsList(port: number, authorization?: string): string {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/list",
    params: { _meta: envelope() },
  });
  return `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: keep-alive\r\n` +
    "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
    `MCP-Protocol-Version: ${MODERN}\r\nMcp-Method: tools/list\r\n` +
    (authorization === undefined ? "" : `Authorization: ${authorization}\r\n`) +
    `Content-Length: ${new TextEncoder().encode(body).length}\r\n\r\n${body}`;
}

function toolNamesOf(res: RawResponse): string[] {
  const data = res.body.split("\n").find((l) => l.startsWith("data: "));
  const message = JSON.parse(data === undefined ? res.body : data.slice(6)) as {
    result: { tools: { name: string }[] };
  };
  return message.result.tools.map((t) => t.name);
}

Deno.test("the token is checked on every request of one keep-alive connection", async () => {
  const root = await makeWorkspace();
  const files = await tokenFiles();
  const server = await startTokenServer(root, files);
  const port = Number(new URL(server.url).port);
  try {
    const res = await onOneConnection(port, [
      rawToolsList(port, `Bearer ${WRITE_A}`),
      rawToolsList(port),
      rawToolsList(port, `Bearer ${READ_A}`),
      rawToolsList(port, "Bearer not-a-configured-token-000"),
      rawToolsList(port, `Bearer ${WRITE_B}`),
    ]);
    assert.deepEqual(res.map((r) => r.status), [200, 401, 200, 401, 200]);
    assert.deepEqual(toolNamesOf(res[0]), ["workspace_info", "list_directory", "read_file"]);
    assert.equal(res[1].headers["www-authenticate"], 'Bearer realm="wmcp"');
    assert.deepEqual(toolNamesOf(res[2]), ["workspace_info", "list_directory", "read_file"]);
    assert.match(res[3].headers["www-authenticate"], /invalid_token/);
  } finally {
    await server.stop();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(files.dir, { recursive: true });
  }
});

/** Opens a legacy session with `token`; returns its id. */
async function openSession(url: string, token: string): Promise<string> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...bearer(token),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "session-test", version: "0" },
      },
    }),
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  const id = res.headers.get("mcp-session-id");
  assert.ok(id !== null);
  return id;
}

/** A legacy tools/list (page size 3, first page) inside a session, with these headers. */
async function sessionToolsList(
  url: string,
  session: string,
  headers: Record<string, string>,
): Promise<{ status: number; names?: string[] }> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      "mcp-session-id": session,
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }),
  });
  if (res.status !== 200) {
    await res.body?.cancel();
    return { status: res.status };
  }
  const messages = await messagesOf(res);
  const result = messages[0].result as { tools: { name: string }[] };
  return { status: res.status, names: result.tools.map((t) => t.name) };
}

Deno.test("a legacy session is usable only with the token that opened it", async () => {
  const root = await makeWorkspace();
  const files = await tokenFiles();
  const server = await startTokenServer(root, files);
  try {
    const readSession = await openSession(server.url, READ_A);
    const writeSession = await openSession(server.url, WRITE_A);
    // Its own token: served, each with its own view.
    assert.equal((await sessionToolsList(server.url, readSession, bearer(READ_A))).status, 200);
    assert.equal((await sessionToolsList(server.url, writeSession, bearer(WRITE_A))).status, 200);
    // No token, a wrong token: 401 before the session is looked at.
    for (const session of [readSession, writeSession]) {
      assert.equal((await sessionToolsList(server.url, session, {})).status, 401);
      const wrong = await sessionToolsList(
        server.url,
        session,
        bearer("not-a-configured-token-000"),
      );
      assert.equal(wrong.status, 401);
    }
    // Another valid token: the session does not exist for it (404), whichever the direction.
    assert.equal((await sessionToolsList(server.url, readSession, bearer(WRITE_A))).status, 404);
    assert.equal((await sessionToolsList(server.url, readSession, bearer(WRITE_B))).status, 404);
    assert.equal((await sessionToolsList(server.url, writeSession, bearer(READ_A))).status, 404);
    assert.equal((await sessionToolsList(server.url, writeSession, bearer(WRITE_B))).status, 404);
    // And the sessions still serve their own token afterwards.
    const again = await sessionToolsList(server.url, readSession, bearer(READ_A));
    assert.deepEqual(again.names, ["workspace_info", "list_directory", "read_file"]);
  } finally {
    await server.stop();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(files.dir, { recursive: true });
  }
});
