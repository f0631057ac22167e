/**
 * The fetch of `auth login` and `auth logout` for the authorization server and the resource:
 * http(s) only, a time limit, and the small OAuth response cap.
 */
import { isHttpUrl, schemeRefusal } from "./http_only.ts";
import { AUTH_RESPONSE_BYTES, cappedFetch } from "../response_cap.ts";

/** Network requests to the authorization server give up after this long. */
const AS_REQUEST_TIMEOUT_MS = 30_000;

/** `fetch` with a time limit, for every request to the authorization server and the resource. */
export function boundedFetch(
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> {
  // Every URL here comes from the server or its AS: a file: (or other) URL is never fetched.
  if (!isHttpUrl(input)) {
    return Promise.reject(schemeRefusal(input instanceof Request ? input.url : String(input)));
  }
  const signal = init?.signal
    ? AbortSignal.any([init.signal, AbortSignal.timeout(AS_REQUEST_TIMEOUT_MS)])
    : AbortSignal.timeout(AS_REQUEST_TIMEOUT_MS);
  // Every response of the sign-in is a small document: capped (AUTH_RESPONSE_BYTES, 0047).
  const capped = cappedFetch((i, o) => fetch(i, o), () => ({
    maxBytes: AUTH_RESPONSE_BYTES,
    failure: "auth",
    what: "OAuth response",
  }));
  return capped(input, { ...init, signal });
}
