/**
 * For cancellation tests: a server definition whose tools wait to be cancelled or released, and
 * a watcher of a response stream (its text, its end, whether it is still open).
 */
import type { RequestId } from "@modelcontextprotocol/server";
import assert from "node:assert/strict";
import { NO_ARGUMENTS, type ServerDefinition } from "../../src/server/definition.ts";
import { until } from "../server/_harness.ts";

interface Call {
  ctx: { mcpReq: { id: RequestId; signal: AbortSignal } };
}

/**
 * Tools `wait` (runs until cancelled; records the ids whose signal was aborted, before or while
 * it ran) and `gate` (answers once the test opens the gate).
 */
export function cancelFixture(aborted: Set<RequestId>, gate: Promise<void>): ServerDefinition {
  return Object.freeze({
    name: "legacy-cancel-fixture",
    version: "0.0.0",
    tools: Object.freeze([
      Object.freeze({
        name: "wait",
        description: "Waits until cancelled",
        inputSchema: NO_ARGUMENTS,
        handler: (_args: Record<string, unknown>, call: Call) =>
          new Promise<never>((_, reject) => {
            const { id, signal } = call.ctx.mcpReq;
            const stop = () => {
              aborted.add(id);
              reject(signal.reason);
            };
            if (signal.aborted) stop();
            else signal.addEventListener("abort", stop, { once: true });
          }),
      }),
      Object.freeze({
        name: "gate",
        description: "Answers once the gate opens",
        inputSchema: NO_ARGUMENTS,
        handler: async (_args: Record<string, unknown>, call: Call) => {
          await gate;
          if (call.ctx.mcpReq.signal.aborted) aborted.add(call.ctx.mcpReq.id);
          return { content: [{ type: "text", text: "gate open" }] };
        },
      }),
    ]),
  }) as ServerDefinition;
}

/** A response body read to its end in the background. */
export function watch(res: Response) {
  assert.equal(res.status, 200);
  let text = "";
  let ended = false;
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const done = (async () => {
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        text += value;
      }
    } catch { /* failed: ended too */ }
    ended = true;
  })();
  const keepalives = () => (text.match(/: keepalive/g) ?? []).length;
  return {
    text: () => text,
    ended: () => ended,
    /** Whether the stream is still open: two more keep-alive comments came, and no end. */
    open: async () => {
      const seen = keepalives();
      await until(() => ended || keepalives() >= seen + 2);
      return !ended;
    },
    /** Whether the stream ends (bounded generously). */
    ends: async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([done, new Promise((r) => (timer = setTimeout(r, 10_000)))]);
      clearTimeout(timer);
      return ended;
    },
    /** Whether it carries a JSON-RPC response (result or error) for id. */
    answers: (id: RequestId) =>
      text.split("\n").some((l) =>
        l.startsWith("data: ") && (JSON.parse(l.slice(6)) as { id?: unknown }).id === id
      ),
    /** Settles when the body has ended. */
    done,
    stop: async () => {
      await reader.cancel().catch(() => {});
      await done;
    },
  };
}

/** The legacy protocol version the cancel tests speak. */
export const LEGACY = "2025-11-25";

/** A legacy Streamable HTTP POST of body, in sessionId's session (none for initialize). */
export function legacyPost(sessionId: string | undefined, body: unknown): Request {
  return new Request("http://127.0.0.1/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(sessionId === undefined ? {} : {
        "mcp-session-id": sessionId,
        "mcp-protocol-version": LEGACY,
      }),
    },
    body: JSON.stringify(body),
  });
}
