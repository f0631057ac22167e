/**
 * Benchmark anchor: an SDK-less Deno stdio JSON-RPC responder. Every request line gets a fixed
 * result at once (a 4 KiB text content for tools/call, like a read of a 4 KiB file; a one-tool list
 * for tools/list; an initialize result for initialize); notifications get nothing.
 */
const TEXT = "0123456789abcdef".repeat(256);
const RESULTS: Record<string, unknown> = {
  initialize: {
    protocolVersion: "2025-11-25",
    capabilities: { tools: {} },
    serverInfo: { name: "raw-responder", version: "0" },
  },
  "tools/list": {
    tools: [{
      name: "read",
      inputSchema: { type: "object", properties: { path: { type: "string" } } },
    }],
  },
  "tools/call": { content: [{ type: "text", text: TEXT }] },
};

async function main(): Promise<void> {
  const enc = new TextEncoder();
  let buf = "";
  for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    buf += chunk;
    let nl: number;
    let out = "";
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line === "") continue;
      const msg = JSON.parse(line) as { id?: unknown; method?: string };
      if (msg.id === undefined) continue;
      const result = RESULTS[msg.method ?? ""] ?? {};
      out += JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }) + "\n";
    }
    if (out) {
      const bytes = enc.encode(out);
      for (let off = 0; off < bytes.length;) off += Deno.stdout.writeSync(bytes.subarray(off));
    }
  }
}

await main();
