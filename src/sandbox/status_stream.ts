/**
 * The sandboxed server's pid, taken out of its stderr: inside bubblewrap the command is started
 * by a one-line shell that prints `wmcp-sandbox-pid N` and then execs the server (same pid, in
 * the shared pid namespace), so the launcher learns the pid to signal. bwrap's own
 * `--json-status-fd` cannot be used: it closes that descriptor on exec. Everything else passes
 * through to the launcher's stderr unchanged, except, when asked, the lines before the pid line
 * (bwrap's own setup errors), which the launcher reports in its own words.
 */

/** What the inner shell prints before it execs the server. */
export const PID_LINE_PREFIX = "wmcp-sandbox-pid ";

/** The shell script (for `sh -c SCRIPT COMMAND ARGS...`) that announces its pid, then execs. */
export const ANNOUNCE_AND_EXEC = `echo "${PID_LINE_PREFIX}$$" >&2; exec "$0" "$@"`;

const PID_LINE = new RegExp(`^${PID_LINE_PREFIX}(\\d+)$`);

/**
 * Copies `from` to `to` line by line, without the pid line; reports the inner pid once. With
 * `onEarlyLine`, lines before the pid line go there instead of to `to`.
 */
export async function pipeStderr(
  from: ReadableStream<Uint8Array>,
  options: {
    to: (bytes: Uint8Array) => Promise<unknown>;
    onChildPid: (pid: number) => void;
    onEarlyLine?: (line: string) => void;
  },
): Promise<void> {
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  let pending = "";
  let pidSeen = false;
  const emit = async (line: string) => {
    if (!pidSeen) {
      const m = PID_LINE.exec(line);
      if (m) {
        pidSeen = true;
        options.onChildPid(Number(m[1]));
        return;
      }
      if (options.onEarlyLine !== undefined) {
        options.onEarlyLine(line);
        return;
      }
    }
    await options.to(enc.encode(line + "\n"));
  };
  try {
    for await (const chunk of from) {
      pending += dec.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        await emit(line);
      }
    }
  } finally {
    pending += dec.decode();
    if (pending !== "" && !pidSeen && options.onEarlyLine !== undefined) {
      options.onEarlyLine(pending);
    } else if (pending !== "") await options.to(enc.encode(pending));
  }
}
