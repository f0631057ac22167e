/**
 * A Redirector for runs without a person: it follows the authorization URL itself (fetch,
 * redirects handled by hand) and reads the code from the redirect to the redirect URI. Only
 * an authorization server that approves without a login page (test and CI servers, some
 * machine-to-machine setups) can be used this way.
 */
import { ClientError } from "../errors.ts";
import type { Redirector } from "./types.ts";

/** The redirect URI the headless redirector registers (nothing listens there; never fetched). */
export const FOLLOW_REDIRECT_URI = "http://127.0.0.1/wmcp/oauth/callback";
/** Most redirects followed before the one to the redirect URI. */
const MAX_HOPS = 8;
/** How long following one authorization URL may take by default (ms). */
const FOLLOW_TIMEOUT_MS = 30_000;

/** Whether `url` is the redirect URI (same origin and path; the query is the response). */
function isCallback(url: URL, redirectUri: URL): boolean {
  return url.origin === redirectUri.origin && url.pathname === redirectUri.pathname;
}

/** A Redirector that follows the authorization URL itself (see the file comment). */
export function followingRedirector(
  options: { redirectUri?: string; fetch?: typeof fetch; timeoutMs?: number } = {},
): Redirector {
  const redirectUri = options.redirectUri ?? FOLLOW_REDIRECT_URI;
  const target = new URL(redirectUri);
  const fetchFn = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? FOLLOW_TIMEOUT_MS;
  return {
    redirectUri,
    timeoutMs,
    async authorize(url, signal) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
      let current = url;
      for (let hop = 0; hop < MAX_HOPS; hop++) {
        if (current.protocol !== "https:" && current.protocol !== "http:") {
          throw new ClientError("auth", `the authorization server redirected to a non-HTTP URL`);
        }
        const res = await fetchFn(current, { redirect: "manual", signal: both });
        await res.body?.cancel();
        const location = res.headers.get("location");
        if (res.status < 300 || res.status > 399 || location === null) {
          throw new ClientError(
            "auth",
            `headless authorization needs an authorization server that approves without a ` +
              `person; ${current.origin}${current.pathname} answered HTTP ${res.status}` +
              ` instead of redirecting back (sign in interactively instead)`,
          );
        }
        const next = new URL(location, current);
        if (isCallback(next, target)) {
          const q = next.searchParams;
          const error = q.get("error");
          if (error !== null) {
            // The text is the authorization server's: shown as a quoted value only.
            throw new ClientError(
              "auth",
              `the authorization server refused: ${JSON.stringify(error)}${
                q.get("error_description")
                  ? ` (${JSON.stringify(q.get("error_description")!.slice(0, 200))})`
                  : ""
              }`,
            );
          }
          const code = q.get("code");
          if (!code) {
            throw new ClientError("auth", "the authorization response carried no code");
          }
          const iss = q.get("iss");
          return { code, state: q.get("state"), ...(iss === null ? {} : { iss }) };
        }
        current = next;
      }
      throw new ClientError("auth", `more than ${MAX_HOPS} redirects during authorization`);
    },
    close: () => Promise.resolve(),
  };
}
