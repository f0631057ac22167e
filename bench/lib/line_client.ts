/** The benchmark's stdio client: newline-delimited JSON-RPC to a child process, nothing else. */

/** A JSON-RPC message as parsed. */
export type Message = Record<string, unknown>;

/** A running stdio server and the minimal client talking to it. */
export interface LineServer {
  pid: number;
  /** Sends a request and resolves with its response (result or error), rejecting after timeoutMs. */
  request: (
    method: string,
    params: Record<string, unknown>,
    timeoutMs?: number,
  ) => Promise<Message>;
  /** Sends a notification. */
  notify: (method: string, params?: Record<string, unknown>) => Promise<void>;
  /** Closes stdin, then SIGTERM after 2 s and SIGKILL after 5 s; resolves when it exited. */
  close: () => Promise<void>;
  /** What the child wrote to stderr so far. */
  stderr: () => string;
}

/** Spawns command with piped stdio and returns the client; stdout is read in the background. */
export function spawnLineServer(
  command: string,
  options: { args: string[]; cwd?: string; env?: Record<string, string> },
): LineServer {
  const child = new Deno.Command(command, {
    args: options.args,
    cwd: options.cwd,
    env: options.env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const enc = new TextEncoder();
  const pending = new Map<number, (m: Message) => void>();
  const state = { nextId: 1, err: "", exited: false };
  const errDone = (async () => {
    const dec = new TextDecoder();
    for await (const c of child.stderr) state.err += dec.decode(c, { stream: true });
  })().catch(() => {});
  const readDone = (async () => {
    let buf = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim() === "") continue;
        let msg: Message;
        try {
          msg = JSON.parse(line);
        } catch {
          continue; // not protocol: ignored (the server's stdout should be protocol-only)
        }
        const id = msg.id;
        if (typeof id === "number" && ("result" in msg || "error" in msg)) {
          pending.get(id)?.(msg);
          pending.delete(id);
        }
      }
    }
  })().catch(() => {});
  const status = child.status.then((s) => {
    state.exited = true;
    return s;
  });
  const send = (msg: Message) => writer.write(enc.encode(JSON.stringify(msg) + "\n"));
  return {
    pid: child.pid,
    stderr: () => state.err,
    request: (method, params, timeoutMs = 60_000) => {
      const id = state.nextId++;
      return new Promise<Message>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${method}: no response in ${timeoutMs} ms; stderr: ${state.err}`));
        }, timeoutMs);
        pending.set(id, (m) => {
          clearTimeout(timer);
          resolve(m);
        });
        send({ jsonrpc: "2.0", id, method, params }).catch((err) => {
          clearTimeout(timer);
          pending.delete(id);
          reject(new Error(`${method}: cannot write: ${err}; stderr: ${state.err}`));
        });
      });
    },
    notify: (method, params = {}) => send({ jsonrpc: "2.0", method, params }),
    close: async () => {
      try {
        await writer.close();
      } catch { /* already closed */ }
      const timers: ReturnType<typeof setTimeout>[] = [];
      const signal = (sig: Deno.Signal) => {
        if (state.exited) return;
        try {
          child.kill(sig);
        } catch { /* gone */ }
      };
      timers.push(setTimeout(() => signal("SIGTERM"), 2_000));
      timers.push(setTimeout(() => signal("SIGKILL"), 5_000));
      await status;
      for (const t of timers) clearTimeout(t);
      await Promise.all([readDone, errDone]);
    },
  };
}
