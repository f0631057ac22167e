/**
 * Third-party servers the peer suites start as real processes (Node's server-everything, its
 * Streamable HTTP flavour behind the loopback-only preload, fastmcp, ...): ready once the process
 * prints a JSON line whose `event` is the one named, on stdout or stderr.
 */
import assert from "node:assert/strict";

// deno-lint-ignore no-explicit-any
type Json = any;

/** The preload that binds a Node server to 127.0.0.1 and reports its port as a JSON line. */
export const LOOPBACK_ONLY = new URL("./fixtures/loopback_only.mjs", import.meta.url).pathname;

/** A server process we started, ready once it printed a JSON line with `event` (stdout or stderr). */
export interface PeerServer {
  ready: Json;
  stop(): Promise<void>;
  output(): string;
}
export async function startServer(
  command: string,
  args: string[],
  opts: { env?: Record<string, string>; readyEvent: string; cwd?: string },
): Promise<PeerServer> {
  const child = new Deno.Command(command, {
    args,
    env: opts.env,
    cwd: opts.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  let resolveReady!: (v: Json) => void;
  const ready = new Promise<Json>((r) => (resolveReady = r));
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    let buf = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf("\n")) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.startsWith("{")) continue;
        try {
          const v = JSON.parse(line);
          if (v?.event === opts.readyEvent) resolveReady(v);
        } catch { /* not ours */ }
      }
    }
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const status = child.status;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const first = await Promise.race([
    ready,
    status.then((s) => ({ exited: s.code })),
    new Promise((r) => (timer = setTimeout(() => r({ timeout: true }), 30_000))),
  ]);
  clearTimeout(timer);
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* gone */ }
    await status;
    await drained;
  };
  if ((first as Json)?.event !== opts.readyEvent) {
    await stop();
    assert.fail(`${command} ${args.join(" ")} did not become ready: ${text}`);
  }
  return { ready: first, stop, output: () => text };
}
