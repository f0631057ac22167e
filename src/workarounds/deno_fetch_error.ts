/**
 * Workaround: Deno's fetch() rejects a network failure with a bare TypeError ("fetch failed")
 * whose cause is a plain Error carrying the OS reason only in its message ("... tcp connect
 * error: Connection refused (os error 111)", "... dns error: failed to lookup address ..."):
 * no Deno.errors class, no `code`. A client message naming the reason ("cannot reach URL:
 * Connection refused (os error 111)") therefore reads it out of the text; errors that do carry
 * a Node-style `code` (ECONNRESET, ...) are read by code.
 *
 * Upstream: denoland/deno#20394 "Deno raising `TypeError` instead of
 * `Deno.errors.ConnectionRefused`" (closed: the fetch spec requires the TypeError; nothing was
 * added to the cause). Checked: Deno 2.9.6.
 * Delete when: tests/workarounds/deno_fetch_error_test.ts fails (the cause of a refused
 * connection carries a code or a Deno.errors class); then read that instead.
 */

const OS_REASON = /([^:()]+\(os error \d+\))/;
const DNS_REASON = /dns error: (.+)$/;
/** Words of an unreachable server in what an OAuth request (through fetch) failed with. */
const UNREACHABLE_WORDS = /fetch|network|connect|ECONNREFUSED|timed out|aborted due to timeout/i;

/** The OS-level reason of a network failure anywhere in err's cause chain, in short words. */
export function networkReason(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  for (let c: unknown = err; c && !seen.has(c); c = (c as { cause?: unknown }).cause) {
    seen.add(c);
    const m = String((c as Error).message ?? "");
    const os = OS_REASON.exec(m);
    if (os) return os[1].trim();
    const dns = DNS_REASON.exec(m);
    if (dns) return `the host name did not resolve (${dns[1].trim()})`;
    const code = (c as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code) && code !== "ENOENT") {
      return `${m || code}`;
    }
  }
  return undefined;
}

/** Whether an error's message reads like a server that could not be reached. */
export function unreachableWords(message: string): boolean {
  return UNREACHABLE_WORDS.test(message);
}
