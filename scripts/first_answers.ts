/**
 * `deno run -A scripts/first_answers.ts`: writes src/server/first_answers.json, the results the
 * stdio server gives a modern `tools/list` (first page) and `server/discover` in each mode, as this
 * checkout's server answers them (in process, default limits and page size). serve_stdio.ts sends
 * them while the server's modules load (src/server/stdio_early.ts, issue 21 §3).
 * tests/server/stdio_early_test.ts fails until it is run after a change to the tools, their
 * schemas or descriptions, the capabilities or the version.
 */
import { PassThrough } from "node:stream";
import { startStdioServer } from "../src/server/stdio_server.ts";
import { Workspace } from "../src/workspace/workspace.ts";
import {
  FIRST_ANSWER_METHODS,
  type FirstAnswers,
  ROOT_PLACEHOLDER,
} from "../src/server/stdio_early.ts";
import { instructionsFor } from "../src/server/instructions.ts";

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "first-answers", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** What this checkout's stdio server answers each first-answer method with, in one mode. */
async function answersOf(writable: boolean): Promise<Record<string, Record<string, unknown>>> {
  const root = await Deno.makeTempDir({ prefix: "wmcp-first-" });
  const workspace = await Workspace.open({ root, writable });
  const input = new PassThrough();
  const output = new PassThrough();
  const server = startStdioServer({ workspace, input, output, log: () => {} });
  const lines: Record<string, unknown>[] = [];
  let text = "";
  const done = new Promise<void>((resolve) => {
    output.on("data", (chunk) => {
      text += chunk;
      for (let nl; (nl = text.indexOf("\n")) >= 0; text = text.slice(nl + 1)) {
        lines.push(JSON.parse(text.slice(0, nl)));
        if (lines.length === FIRST_ANSWER_METHODS.length) resolve();
      }
    });
  });
  FIRST_ANSWER_METHODS.forEach((method, id) =>
    input.write(JSON.stringify({ jsonrpc: "2.0", id, method, params: { _meta: ENVELOPE } }) + "\n")
  );
  await done;
  await server.close();
  workspace.engine.close();
  await Deno.remove(root, { recursive: true });
  const out: Record<string, Record<string, unknown>> = {};
  for (const line of lines) {
    const result = line.result as Record<string, unknown>;
    if (result === undefined) throw new Error(`no result: ${JSON.stringify(line)}`);
    // The one workspace-dependent text: the root's name, filled in at run time.
    if ("instructions" in result) result.instructions = instructionsFor(ROOT_PLACEHOLDER, writable);
    out[FIRST_ANSWER_METHODS[line.id as number]] = result;
  }
  return out;
}

/** The file's text, formatted as deno fmt does. */
export async function firstAnswersText(): Promise<string> {
  const all: FirstAnswers = {
    "read-only": await answersOf(false),
    "read-write": await answersOf(true),
  };
  return JSON.stringify(all, null, 2) + "\n";
}

if (import.meta.main) {
  const file = new URL("../src/server/first_answers.json", import.meta.url);
  await Deno.writeTextFile(file, await firstAnswersText());
  console.error(`wrote ${decodeURIComponent(file.pathname)}`);
}
