/**
 * Test fixture: a hostile stdio MCP server (raw JSON-RPC lines, no SDK, so nothing cleans what it
 * sends). Every string it supplies carries terminal sequences: OSC 0 (window title), OSC 52
 * (clipboard), SGR, cursor moves and line erase, a C1 CSI, a bidi override, a bare carriage
 * return and newlines. `deno run hostile_server.ts` serves; `... die` writes EVIL to stderr and
 * exits before answering initialize; `... chatty` also writes EVIL to stderr when it starts.
 *
 * Tools: `result` (EVIL as result text), `fails` (isError with EVIL), `rpcerror` (a JSON-RPC
 * error with EVIL as message), `progress` (progress notifications with EVIL as message for about
 * a second), `ask` (an elicitation/create whose message, field title, description and enum
 * labels are EVIL), and one whose name is EVIL (the client leaves it out, with a warning).
 *
 * Resources and prompts: every name, title, description, MIME type, URI and URI template it lists
 * carries EVIL; `hostile://text` reads as two contents (EVIL text, and a blob whose URI and MIME
 * type are EVIL), `hostile://error` as a JSON-RPC error with EVIL as message; prompt `evil` (one
 * required argument `x`) gets EVIL as description, role, text, an embedded resource and an image.
 */
import { EVIL } from "./_hostile_text.ts";

const mode = Deno.args[0] ?? "serve";
const enc = new TextEncoder();
const send = (msg: unknown) => Deno.stdout.writeSync(enc.encode(JSON.stringify(msg) + "\n"));

if (mode === "die" || mode === "chatty") {
  Deno.stderr.writeSync(enc.encode(`starting ${EVIL}\nsecond ${EVIL}\n`));
  if (mode === "die") Deno.exit(1);
}

const schema = {
  type: "object",
  properties: { [`x`]: { type: "string", description: EVIL, title: EVIL } },
};
const tools = [
  { name: "result", description: EVIL, title: EVIL, inputSchema: schema },
  { name: "fails", description: EVIL, inputSchema: { type: "object" } },
  { name: "rpcerror", description: EVIL, inputSchema: { type: "object" } },
  { name: "progress", description: EVIL, inputSchema: { type: "object" } },
  { name: "ask", description: EVIL, inputSchema: { type: "object" } },
  { name: EVIL, description: EVIL, inputSchema: { type: "object" } },
];

const resources = [
  { uri: "hostile://text", name: EVIL, title: EVIL, description: EVIL, mimeType: `text/${EVIL}` },
  { uri: "hostile://error", name: "error", description: EVIL },
];
const resourceTemplates = [
  { uriTemplate: `hostile://{id}${EVIL}`, name: EVIL, title: EVIL, mimeType: EVIL },
];
const prompts = [
  {
    name: "evil",
    title: EVIL,
    description: EVIL,
    arguments: [{ name: "x", description: EVIL, required: true }],
  },
  { name: EVIL, description: EVIL },
];

/** Base64 of a text's UTF-8 bytes. */
const b64 = (t: string) => btoa(String.fromCharCode(...enc.encode(t)));

/** resources/read: EVIL in every string, a blob beside the text; or an EVIL JSON-RPC error. */
function read(id: unknown, uri: unknown) {
  if (uri !== "hostile://text") {
    return send({ jsonrpc: "2.0", id, error: { code: -32002, message: EVIL } });
  }
  send({
    jsonrpc: "2.0",
    id,
    result: {
      contents: [
        { uri, mimeType: `text/${EVIL}`, text: EVIL },
        { uri: `hostile://${EVIL}`, mimeType: EVIL, blob: b64(EVIL) },
      ],
    },
  });
}

/** prompts/get: EVIL as description, role, text, embedded resource and image type. */
function getPrompt(id: unknown) {
  const messages = [
    { role: "user", content: { type: "text", text: EVIL } },
    {
      role: EVIL,
      content: { type: "resource", resource: { uri: EVIL, mimeType: EVIL, text: EVIL } },
    },
    { role: "assistant", content: { type: "image", mimeType: EVIL, data: b64(EVIL) } },
  ];
  send({ jsonrpc: "2.0", id, result: { description: EVIL, messages } });
}

const waiting = new Map<string, (result: unknown) => void>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call(id: unknown, params: Record<string, unknown>) {
  const name = params.name;
  const token = (params._meta as Record<string, unknown> | undefined)?.progressToken;
  if (name === "result") {
    return send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: EVIL }] } });
  }
  if (name === "fails") {
    return send({
      jsonrpc: "2.0",
      id,
      result: { isError: true, content: [{ type: "text", text: EVIL }] },
    });
  }
  if (name === "rpcerror") {
    return send({ jsonrpc: "2.0", id, error: { code: -32000, message: EVIL } });
  }
  if (name === "progress") {
    for (let i = 0; i < 8; i++) {
      if (token !== undefined) {
        send({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: token, progress: i, total: 8, message: EVIL },
        });
      }
      await sleep(150);
    }
    return send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "done" }] } });
  }
  if (name === "ask") {
    const answer = await new Promise<unknown>((resolve) => {
      waiting.set("e1", resolve);
      send({
        jsonrpc: "2.0",
        id: "e1",
        method: "elicitation/create",
        params: {
          message: EVIL,
          requestedSchema: {
            type: "object",
            properties: {
              pick: { type: "string", title: EVIL, description: EVIL, enum: [EVIL, "plain"] },
            },
            required: ["pick"],
          },
        },
      });
    });
    return send({
      jsonrpc: "2.0",
      id,
      result: { content: [{ type: "text", text: `answered ${JSON.stringify(answer)}` }] },
    });
  }
  send({ jsonrpc: "2.0", id, error: { code: -32602, message: `no tool ${name}` } });
}

function handle(msg: Record<string, unknown>) {
  const { id, method } = msg;
  if (method === undefined) {
    // A response to our elicitation.
    waiting.get(String(id))?.(msg.result ?? msg.error);
    waiting.delete(String(id));
    return;
  }
  if (id === undefined) return; // a notification
  switch (method) {
    case "initialize":
      return send({
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: (msg.params as Record<string, unknown>).protocolVersion,
          capabilities: { tools: {}, resources: {}, prompts: {} },
          serverInfo: { name: `evil${EVIL}`, version: EVIL, title: EVIL },
          instructions: EVIL,
        },
      });
    case "tools/list":
      return send({ jsonrpc: "2.0", id, result: { tools } });
    case "tools/call":
      return void call(id, msg.params as Record<string, unknown>);
    case "resources/list":
      return send({ jsonrpc: "2.0", id, result: { resources } });
    case "resources/templates/list":
      return send({ jsonrpc: "2.0", id, result: { resourceTemplates } });
    case "resources/read":
      return read(id, (msg.params as Record<string, unknown>).uri);
    case "prompts/list":
      return send({ jsonrpc: "2.0", id, result: { prompts } });
    case "prompts/get":
      return getPrompt(id);
    case "ping":
      return send({ jsonrpc: "2.0", id, result: {} });
    default:
      return send({ jsonrpc: "2.0", id, error: { code: -32601, message: "no such method" } });
  }
}

let pending = "";
const dec = new TextDecoder();
for await (const chunk of Deno.stdin.readable) {
  pending += dec.decode(chunk, { stream: true });
  let nl;
  while ((nl = pending.indexOf("\n")) !== -1) {
    const lineText = pending.slice(0, nl).trim();
    pending = pending.slice(nl + 1);
    if (lineText) handle(JSON.parse(lineText));
  }
}
