/**
 * `serve stop` many times in one process (pid_file_test.ts): each stdin line is the arguments of
 * one `serve stop` as JSON; each answer is one stdout line, `{code, stdout, stderr}`, what that
 * stop exited with and wrote. Runs serveStop, what `cli serve stop` runs, under the permissions
 * its caller gives this process (those `serve stop` needs to run in process: read on the pid
 * file, net on loopback, run kill, sys uid).
 */
import { serveStop } from "../../src/cli/serve_stop.ts";

const enc = new TextEncoder();
const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream());
let buf = "";
for await (const chunk of lines) {
  buf += chunk;
  let nl;
  while ((nl = buf.indexOf("\n")) !== -1) {
    const args = JSON.parse(buf.slice(0, nl)) as string[];
    buf = buf.slice(nl + 1);
    let stdout = "";
    let stderr = "";
    let code: number;
    try {
      code = await serveStop(args, (line) => {
        stdout += line;
        return Promise.resolve();
      });
    } catch (err) {
      stderr = String(err);
      code = -1;
    }
    await Deno.stdout.write(enc.encode(JSON.stringify({ code, stdout, stderr }) + "\n"));
  }
}
