/** Confirmation of destructive calls: elicitation (modern input_required, legacy elicitation/create) or confirm: true. */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1HttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  makeWorkspace,
  modernRequest,
  permissionFlags,
  SERVE_STDIO,
  startHttpServer,
} from "./_harness.ts";

type Answer = "accept" | "decline" | "cancel" | "accept-false";

function answerOf(a: Answer) {
  if (a === "accept") return { action: "accept" as const, content: { confirm: true } };
  if (a === "accept-false") return { action: "accept" as const, content: { confirm: false } };
  return { action: a };
}

function v2Client(mode: "auto" | "legacy", answer: Answer | null, seen: string[]) {
  const client = new Client({ name: "confirm-test", version: "0" }, {
    versionNegotiation: { mode, probe: { timeoutMs: 5000 } },
    capabilities: answer === null ? {} : { elicitation: { form: {} } },
  });
  if (answer !== null) {
    client.setRequestHandler("elicitation/create", (req) => {
      seen.push(String((req.params as { message?: string }).message));
      return answerOf(answer);
    });
  }
  return client;
}

const CASES: { answer: Answer; deleted: boolean }[] = [
  { answer: "accept", deleted: true },
  { answer: "decline", deleted: false },
  { answer: "cancel", deleted: false },
  { answer: "accept-false", deleted: false },
];

Deno.test("delete_path confirmation through elicitation: accept, decline, cancel; every transport and era", async (t) => {
  const root = await makeWorkspace();
  const server = await startHttpServer(root, { write: true });
  try {
    const transports = [
      { name: "http", make: () => new StreamableHTTPClientTransport(new URL(server.url)) },
      {
        name: "stdio",
        make: () =>
          new StdioClientTransport({
            command: Deno.execPath(),
            args: ["run", ...permissionFlags(root, true), SERVE_STDIO, "--root", root, "--write"],
            stderr: "ignore",
          }),
      },
    ];
    for (const tr of transports) {
      for (const mode of ["auto", "legacy"] as const) {
        for (const c of CASES) {
          await t.step(`${tr.name} ${mode} ${c.answer}`, async () => {
            const file = `victim-${tr.name}-${mode}-${c.answer}.txt`;
            await Deno.writeTextFile(`${root}/${file}`, "x");
            const seen: string[] = [];
            const client = v2Client(mode, c.answer, seen);
            await client.connect(tr.make());
            try {
              const r = await client.callTool({ name: "delete_path", arguments: { path: file } });
              assert.equal(seen.length, 1, "exactly one elicitation reached the user");
              assert.match(seen[0], new RegExp(file.replaceAll(".", "\\.")));
              const exists = await Deno.stat(`${root}/${file}`).then(() => true, () => false);
              assert.equal(exists, !c.deleted);
              if (c.deleted) {
                assert.equal(r.isError, undefined);
              } else {
                assert.equal(r.isError, true);
                assert.equal(
                  (r._meta?.["wmcp/error"] as { code: string }).code,
                  "CONFIRMATION_REQUIRED",
                );
              }
            } finally {
              await client.close();
            }
          });
        }
      }
      await t.step(`${tr.name}: a client without elicitation must pass confirm: true`, async () => {
        const file = `plain-${tr.name}.txt`;
        await Deno.writeTextFile(`${root}/${file}`, "x");
        const client = v2Client("auto", null, []);
        await client.connect(tr.make());
        try {
          const r = await client.callTool({ name: "delete_path", arguments: { path: file } });
          assert.equal(r.isError, true);
          const err = r._meta?.["wmcp/error"] as { code: string; message: string };
          assert.equal(err.code, "CONFIRMATION_REQUIRED");
          assert.match(err.message, /confirm: true/);
          const text = (r.content[0] as { text: string }).text;
          assert.match(text, /^CONFIRMATION_REQUIRED: .*confirm: true/);
          assert.ok(await Deno.stat(`${root}/${file}`));
          const ok = await client.callTool({
            name: "delete_path",
            arguments: { path: file, confirm: true },
          });
          assert.equal(ok.isError, undefined);
          await assert.rejects(Deno.stat(`${root}/${file}`));
        } finally {
          await client.close();
        }
      });
    }
    for (
      const c of [{ answer: "accept" as const, replaced: true }, {
        answer: "decline" as const,
        replaced: false,
      }]
    ) {
      await t.step(
        `write_file overwrite asks first (modern HTTP, ${c.answer}); a new file does not`,
        async () => {
          await Deno.writeTextFile(`${root}/keep-${c.answer}.txt`, "precious\n");
          const seen: string[] = [];
          const client = v2Client("auto", c.answer, seen);
          await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
          try {
            const r = await client.callTool({
              name: "write_file",
              arguments: { path: `keep-${c.answer}.txt`, content: "new\n", ifExists: "overwrite" },
            });
            assert.equal(seen.length, 1);
            assert.equal(r.isError, c.replaced ? undefined : true);
            assert.equal(
              await Deno.readTextFile(`${root}/keep-${c.answer}.txt`),
              c.replaced ? "new\n" : "precious\n",
            );
            const fresh = await client.callTool({
              name: "write_file",
              arguments: { path: `fresh-${c.answer}.txt`, content: "f", ifExists: "overwrite" },
            });
            assert.equal(fresh.isError, undefined);
            assert.equal(seen.length, 1, "creating a file asks nothing");
          } finally {
            await client.close();
          }
        },
      );
    }
    await t.step("v1 client (legacy HTTP session) gets elicitation/create", async () => {
      const file = "v1-victim.txt";
      await Deno.writeTextFile(`${root}/${file}`, "x");
      const client = new V1Client({ name: "v1", version: "0" }, {
        capabilities: { elicitation: {} },
      });
      let asked = 0;
      client.setRequestHandler(ElicitRequestSchema, () => {
        asked++;
        return { action: "accept", content: { confirm: true } };
      });
      await client.connect(new V1HttpTransport(new URL(server.url)));
      try {
        const r = await client.callTool({ name: "delete_path", arguments: { path: file } });
        assert.equal(r.isError, undefined, JSON.stringify(r));
        assert.equal(asked, 1);
        await assert.rejects(Deno.stat(`${root}/${file}`));
      } finally {
        await client.close();
      }
    });
    await t.step(
      "modern raw: input_required carries a requestState; tampered or foreign state is refused",
      async () => {
        const file = "raw-victim.txt";
        await Deno.writeTextFile(`${root}/${file}`, "x");
        const caps = { elicitation: { form: {} } };
        const first = await modernRequest(server.url, "tools/call", {
          name: "delete_path",
          arguments: { path: file },
        }, {
          capabilities: caps,
        });
        const result = first.messages[0].result as {
          resultType: string;
          requestState: string;
          inputRequests: Record<string, { method: string }>;
        };
        assert.equal(result.resultType, "input_required");
        assert.equal(result.inputRequests.confirm.method, "elicitation/create");
        const accept = { confirm: { action: "accept", content: { confirm: true } } };
        const tampered = result.requestState.slice(0, -4) +
          (result.requestState.endsWith("AAAA") ? "BBBB" : "AAAA");
        const bad = await modernRequest(server.url, "tools/call", {
          name: "delete_path",
          arguments: { path: file },
          inputResponses: accept,
          requestState: tampered,
        }, { capabilities: caps });
        assert.equal((bad.messages[0].error as { code: number }).code, -32602);
        await Deno.stat(`${root}/${file}`);
        await Deno.writeTextFile(`${root}/other.txt`, "y");
        const foreign = await modernRequest(server.url, "tools/call", {
          name: "delete_path",
          arguments: { path: "other.txt" },
          inputResponses: accept,
          requestState: result.requestState,
        }, { capabilities: caps });
        const fr = foreign.messages[0].result as {
          isError: boolean;
          _meta: { "wmcp/error": { code: string } };
        };
        assert.equal(fr.isError, true);
        assert.equal(fr._meta["wmcp/error"].code, "INVALID_ARGUMENT");
        await Deno.stat(`${root}/other.txt`);
        const good = await modernRequest(server.url, "tools/call", {
          name: "delete_path",
          arguments: { path: file },
          inputResponses: accept,
          requestState: result.requestState,
        }, { capabilities: caps });
        const gr = good.messages[0].result as { isError?: boolean };
        assert.equal(gr.isError, undefined, JSON.stringify(good.messages));
        await assert.rejects(Deno.stat(`${root}/${file}`));
      },
    );
  } finally {
    await server.stop();
    await Deno.remove(root, { recursive: true });
  }
});
