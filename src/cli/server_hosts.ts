/** Bind hosts: how a --host value is bound, whether it is loopback, how a URL spells it. */

/**
 * A --host value as Deno binds it, normalised by the WHATWG URL parser (`0` and `0.0` become
 * 0.0.0.0, `::0` and `0::0` become ::, 127.1 becomes 127.0.0.1; IPv6 without brackets); a value
 * the parser refuses is returned as given (the bind then fails with its own message).
 */
export function bindHost(host: string): string {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  try {
    const name = new URL(`http://${bare.includes(":") ? `[${bare}]` : bare}/`).hostname;
    return name.replace(/^\[(.*)\]$/, "$1");
  } catch {
    return bare;
  }
}

/**
 * The loopback URL host that reaches a wildcard bind (127.0.0.1 for 0.0.0.0, [::1] for ::), or
 * undefined for a concrete address; `host` normalised by bindHost first.
 */
export function wildcardLoopback(host: string): string | undefined {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return undefined;
}

/** Whether a bind host is a loopback address or name (normalised by bindHost first). */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A host as a URL spells it (IPv6 in brackets). */
export function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}
