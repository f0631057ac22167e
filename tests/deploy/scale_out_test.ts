/**
 * Scale-out behind a real nginx (decision 0037): two real wmcp instances started as
 * docs/deployment.md says, deploy/nginx/config.ts's configuration, all on 127.0.0.1. Modern
 * requests spread over both; a confirmation's two legs succeed on different instances; a legacy
 * session stays on its instance (and is 404 anywhere else); SIGKILL of one instance under a load of
 * writes loses no acknowledged write and new requests succeed on the other. Which instance served
 * a request is read from its Wmcp-Instance header. Skipped without nginx unless
 * WMCP_REQUIRE_NGINX_TESTS=1 (CI), which fails instead.
 */
import assert from "node:assert/strict";
import { EXAMPLE_INSTANCES, nginxConfig } from "../../deploy/nginx/config.ts";
import { parseServerFlags } from "../../src/cli/server_flags.ts";
import { INSTANCE_HEADER } from "../../src/server/http/instance.ts";
import { makeWorkspace, modernRequest } from "../server/_harness.ts";
import { withHandler } from "../_support/handler.ts";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1HttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createHttpHandler } from "../../src/server/http.ts";
import {
  CLUSTER_TOKEN,
  makeSecrets,
  nginxSkipReason,
  startInstances,
  startNginx,
} from "./_cluster.ts";

const AUTH = { authorization: `Bearer ${CLUSTER_TOKEN}` };
const LEGACY = "2025-11-25";
const SKIP = nginxSkipReason();

Deno.test("deploy/nginx/wmcp.conf is config.ts's rendering for the two example instances", async () => {
  const committed = await Deno.readTextFile(
    new URL("../../deploy/nginx/wmcp.conf", import.meta.url),
  );
  assert.equal(committed, nginxConfig({ instances: [...EXAMPLE_INSTANCES] }));
  assert.throws(() => nginxConfig({ instances: [{ name: "A", address: "127.0.0.1:1" }] }));
  assert.throws(() =>
    nginxConfig({
      instances: [{ name: "a", address: "127.0.0.1:1" }, { name: "a", address: "127.0.0.1:2" }],
    })
  );
});

Deno.test("--instance takes 1 to 32 of a-z, 0-9 and -; anything else is a usage error naming it", async () => {
  assert.equal((await parseServerFlags("http", ["--instance", "eu-1"])).instance, "eu-1");
  assert.equal((await parseServerFlags("http", [])).instance, undefined);
  for (const bad of ["", "A", "a.b", "a_b", "a/b", "x".repeat(33), "é"]) {
    await assert.rejects(
      () => parseServerFlags("http", ["--instance", bad]),
      (err: Error) => err.name === "UsageError" && err.message.startsWith("--instance must be"),
      JSON.stringify(bad),
    );
  }
  await assert.rejects(() => parseServerFlags("stdio", ["--instance", "a"]), /HTTP server/);
});

Deno.test("the instance option: tagged session ids and Wmcp-Instance; none: bare UUIDs, no header", async () => {
  const init = {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "t", version: "0" } },
  };
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  for (const instance of ["eu-1", undefined]) {
    await withHandler({ instance }, async ({ url, fetch }) => {
      const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(init) });
      assert.equal(res.status, 200);
      await res.body?.cancel();
      const id = res.headers.get("mcp-session-id") ?? "";
      const uuid = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
      assert.match(id, new RegExp(instance === undefined ? `^${uuid}$` : `^eu-1\\.${uuid}$`));
      assert.equal(res.headers.get(INSTANCE_HEADER), instance ?? null);
      // Refusals carry it too (the header names who answered, whatever the answer).
      const refused = await fetch(url, { method: "POST", headers, body: "{" });
      await refused.body?.cancel();
      assert.equal(refused.headers.get(INSTANCE_HEADER), instance ?? null);
      // Another instance's id (same UUID, other tag) is unknown here: 404, never served.
      const uuidPart = id.slice(id.length - 36);
      const foreign = await fetch(url, {
        method: "POST",
        headers: {
          ...headers,
          "mcp-session-id": `eu-2.${uuidPart}`,
          "mcp-protocol-version": LEGACY,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      assert.equal(foreign.status, 404);
      await foreign.body?.cancel();
    });
  }
  assert.throws(
    () => createHttpHandler({ definition: { tools: [] } as never, instance: "Bad name" }),
    /^RangeError: instance must be 1 to 32 characters/,
  );
});

/** A modern tools/call through `url`; the result, the status and the instance that served it. */
async function call(
  url: string,
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  capabilities: Record<string, unknown> = {},
) {
  const res = await modernRequest(url, "tools/call", { name, arguments: args, ...extra }, {
    headers: AUTH,
    capabilities,
  });
  const message = res.messages.at(-1) ?? {};
  return {
    status: res.status,
    instance: res.headers.get(INSTANCE_HEADER),
    result: message.result as Record<string, unknown> | undefined,
    error: message.error,
  };
}

/** A legacy POST with the session's headers. */
function legacyPost(url: string, message: unknown, session?: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      ...AUTH,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(session === undefined
        ? {}
        : { "mcp-session-id": session, "mcp-protocol-version": LEGACY }),
    },
    body: JSON.stringify(message),
  });
}

Deno.test({
  name: "two instances behind nginx: spread, confirmation across instances, sticky legacy " +
    "sessions, SIGKILL under write load" + (SKIP === undefined ? "" : ` (skipped: ${SKIP})`),
  ignore: SKIP !== undefined,
  fn: async (t) => {
    const root = await makeWorkspace({ "seen.txt": "hello\n" });
    const secrets = await makeSecrets();
    const instances = await startInstances(["a", "b"], { root, secrets, write: true });
    let nginx;
    try {
      nginx = await startNginx(instances);
      const url = nginx.url;

      await t.step("modern requests spread over both instances", async () => {
        const served = new Map<string, number>();
        for (let i = 0; i < 20; i++) {
          const r = await call(url, "get_file_info", { path: "seen.txt" });
          assert.equal(r.status, 200);
          assert.notEqual(r.result?.isError, true, JSON.stringify(r));
          served.set(String(r.instance), (served.get(String(r.instance)) ?? 0) + 1);
        }
        assert.deepEqual([...served.keys()].sort(), ["a", "b"], JSON.stringify([...served]));
      });

      await t.step("write_file confirmation: the two legs on different instances", async () => {
        const caps = { elicitation: { form: {} } };
        const accept = { confirm: { action: "accept", content: { confirm: true } } };
        let crossed = 0;
        for (let round = 0; round < 12 && crossed < 2; round++) {
          const path = `confirm-${round}.txt`;
          await Deno.writeTextFile(`${root}/${path}`, "old\n");
          const args = { path, content: `new ${round}\n`, ifExists: "overwrite" };
          const first = await call(url, "write_file", args, {}, caps);
          assert.equal(first.result?.resultType, "input_required", JSON.stringify(first));
          assert.equal(await Deno.readTextFile(`${root}/${path}`), "old\n", "asked, not written");
          const second = await call(url, "write_file", args, {
            inputResponses: accept,
            requestState: first.result?.requestState,
          }, caps);
          assert.equal(second.status, 200);
          assert.notEqual(second.result?.isError, true, JSON.stringify(second));
          assert.equal(await Deno.readTextFile(`${root}/${path}`), `new ${round}\n`);
          if (first.instance !== second.instance) crossed++;
        }
        assert.ok(crossed >= 1, "no round had its legs on two instances");
      });

      await t.step("a legacy session stays on its instance; elsewhere it is 404", async () => {
        const opened = await legacyPost(url, {
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: {
            protocolVersion: LEGACY,
            capabilities: {},
            clientInfo: { name: "t", version: "0" },
          },
        });
        assert.equal(opened.status, 200);
        await opened.body?.cancel();
        const id = opened.headers.get("mcp-session-id")!;
        const tag = opened.headers.get(INSTANCE_HEADER)!;
        assert.ok(["a", "b"].includes(tag), tag);
        assert.match(id, new RegExp(`^${tag}\\.[0-9a-f-]{36}$`));
        const initialized = await legacyPost(url, {
          jsonrpc: "2.0",
          method: "notifications/initialized",
        }, id);
        assert.equal(initialized.status, 202);
        await initialized.body?.cancel();
        for (let i = 1; i <= 30; i++) {
          const res = await legacyPost(url, {
            jsonrpc: "2.0",
            id: i,
            method: "tools/call",
            params: { name: "get_file_info", arguments: { path: "seen.txt" } },
          }, id);
          const text = await res.text();
          assert.equal(res.status, 200, text);
          assert.equal(res.headers.get(INSTANCE_HEADER), tag, `call ${i} left its instance`);
          assert.match(text, /"id":\d+/);
          assert.doesNotMatch(text, /"isError":true/);
        }
        const other = instances.find((i) => i.name !== tag)!;
        const own = instances.find((i) => i.name === tag)!;
        const ping = { jsonrpc: "2.0", id: 99, method: "ping" };
        // The id sent straight to the other instance, and re-tagged for it through nginx: unknown.
        for (
          const [where, session] of [
            [other.server.url, id],
            [url, `${other.name}.${id.slice(tag.length + 1)}`],
          ]
        ) {
          const res = await legacyPost(where, ping, session);
          assert.equal(res.status, 404, `${where} ${session}`);
          assert.match(await res.text(), /Session not found/);
        }
        const home = await legacyPost(own.server.url, ping, id);
        assert.equal(home.status, 200);
        await home.body?.cancel();
        // DELETE through nginx reaches its instance and ends the session there.
        const ended = await fetch(url, {
          method: "DELETE",
          headers: { ...AUTH, "mcp-session-id": id, "mcp-protocol-version": LEGACY },
        });
        assert.equal(ended.status, 200);
        await ended.body?.cancel();
        const gone = await legacyPost(url, ping, id);
        assert.equal(gone.status, 404);
        await gone.body?.cancel();
      });

      await t.step(
        "real SDK clients through nginx: v1 (legacy session) and v2 (modern)",
        async () => {
          const requestInit = { headers: AUTH };
          const v1 = new V1Client({ name: "v1-through-nginx", version: "0" });
          const v1Transport = new V1HttpTransport(new URL(url), { requestInit });
          await v1.connect(v1Transport);
          try {
            const tag = v1Transport.sessionId?.split(".")[0];
            assert.ok(tag === "a" || tag === "b", v1Transport.sessionId);
            for (let i = 0; i < 10; i++) {
              const r = await v1.callTool({
                name: "get_file_info",
                arguments: { path: "seen.txt" },
              });
              assert.notEqual(r.isError, true, JSON.stringify(r));
            }
            assert.ok(
              (await v1.listTools()).tools.some((x: { name: string }) => x.name === "write_file"),
            );
          } finally {
            await v1Transport.terminateSession();
            await v1.close();
          }
          const v2 = new Client({ name: "v2-through-nginx", version: "0" });
          await v2.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
          try {
            for (let i = 0; i < 10; i++) {
              const r = await v2.callTool({
                name: "get_file_info",
                arguments: { path: "seen.txt" },
              });
              assert.notEqual(r.isError, true, JSON.stringify(r));
            }
          } finally {
            await v2.close();
          }
        },
      );

      await t.step(
        "SIGKILL of one instance under write load: every acknowledged write is on disk, " +
          "new requests succeed on the other",
        async () => {
          await Deno.mkdir(`${root}/load`);
          const WORKERS = 6;
          const PER_WORKER = 30;
          const KILL_AFTER = 40;
          const victim = instances[0];
          const survivor = instances[1];
          // A legacy session on the instance about to die (initialize until one lands there).
          let doomed: string | undefined;
          for (let i = 0; i < 10 && doomed === undefined; i++) {
            const res = await legacyPost(url, {
              jsonrpc: "2.0",
              id: 0,
              method: "initialize",
              params: {
                protocolVersion: LEGACY,
                capabilities: {},
                clientInfo: { name: "t", version: "0" },
              },
            });
            await res.body?.cancel();
            const id = res.headers.get("mcp-session-id");
            if (id?.startsWith(`${victim.name}.`)) doomed = id;
          }
          assert.ok(doomed !== undefined, "no session landed on the instance to kill");
          const acked: { path: string; content: string }[] = [];
          const unacked: { path: string; content: string; why: string }[] = [];
          let done = 0;
          let killed = false;
          let ackedAfterKill = 0;
          const worker = async (w: number) => {
            for (let i = 0; i < PER_WORKER; i++) {
              const path = `load/w${w}-${i}.txt`;
              const content = `worker ${w} write ${i} ${"x".repeat(64 + i)}\n`;
              const wasKilled = killed;
              try {
                const r = await call(url, "write_file", { path, content });
                if (r.status === 200 && r.result !== undefined && r.result.isError !== true) {
                  acked.push({ path, content });
                  if (wasKilled) ackedAfterKill++;
                } else unacked.push({ path, content, why: JSON.stringify(r) });
              } catch (err) {
                unacked.push({ path, content, why: String(err) });
              }
              if (++done === KILL_AFTER) {
                victim.server.child.kill("SIGKILL");
                killed = true;
              }
            }
          };
          await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
          assert.ok(killed, "the instance was killed under load");
          await victim.server.status;
          for (const { path, content } of acked) {
            assert.equal(await Deno.readTextFile(`${root}/${path}`), content, `acked ${path}`);
          }
          // A write without an answer happened in full or not at all (atomic rename).
          for (const { path, content } of unacked) {
            const now = await Deno.readTextFile(`${root}/${path}`).catch(() => undefined);
            assert.ok(now === undefined || now === content, `unacked ${path} half written`);
          }
          assert.ok(acked.length >= KILL_AFTER / 2, `only ${acked.length} writes acknowledged`);
          // New requests succeed, on the survivor, within a generous bound.
          const deadline = Date.now() + 20_000;
          let served: string | null = null;
          for (let i = 0; i < 100 && Date.now() < deadline && served === null; i++) {
            const r = await call(url, "get_file_info", { path: "seen.txt" }).catch(() => undefined);
            if (r?.status === 200 && r.result?.isError !== true) served = r.instance;
            else await new Promise((res) => setTimeout(res, 100));
          }
          assert.equal(served, survivor.name, "no request succeeded after the kill");
          // The dead instance's session: nginx answers 404 (initialize again), not 502.
          const lost = await legacyPost(url, { jsonrpc: "2.0", id: 5, method: "ping" }, doomed);
          assert.equal(lost.status, 404);
          assert.equal((await lost.json()).error?.code, -32001);
          for (let i = 0; i < 5; i++) {
            const r = await call(url, "write_file", {
              path: `load/after-${i}.txt`,
              content: `${i}`,
            });
            assert.equal(r.status, 200, JSON.stringify(r));
            assert.equal(r.instance, survivor.name);
            assert.equal(await Deno.readTextFile(`${root}/load/after-${i}.txt`), `${i}`);
          }
          console.error(
            `scale-out kill: ${acked.length} acknowledged (${ackedAfterKill} after the kill), ` +
              `${unacked.length} unanswered`,
          );
        },
      );
    } catch (err) {
      if (nginx !== undefined) console.error(await nginx.errorLog());
      throw err;
    } finally {
      await nginx?.stop();
      await Promise.all(instances.map((i) => i.server.stop()));
      await Deno.remove(root, { recursive: true });
      await Deno.remove(secrets.dir, { recursive: true });
    }
  },
});
