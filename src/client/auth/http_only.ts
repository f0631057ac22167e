/**
 * A fetch for the authorization flow that requests only http(s) URLs. Every URL the flow
 * fetches comes from the server or its authorization server (resource_metadata in
 * WWW-Authenticate, authorization_servers, advertised endpoints); Deno's fetch would also read
 * `file:` (and other scheme) URLs, so anything else is refused before a request is made.
 */
import { ClientError } from "../errors.ts";

/** The refusal of a URL whose scheme is not http or https. */
export function schemeRefusal(url: string): ClientError {
  let shown = url;
  try {
    shown = `${new URL(url).protocol} URL`;
  } catch { /* not a URL: name it as given, cut short */ }
  return new ClientError(
    "auth",
    `the server advertised a non-http(s) URL (${
      shown.slice(0, 80)
    }) for its authorization; refused`,
    { details: { auth: "unsafe-url" } },
  );
}

/** Whether `input` names an http(s) URL. */
export function isHttpUrl(input: string | URL | Request): boolean {
  const href = input instanceof Request ? input.url : String(input);
  try {
    const p = new URL(href).protocol;
    return p === "http:" || p === "https:";
  } catch {
    return false;
  }
}

/** `inner` (default: the global fetch), refusing non-http(s) URLs; `onRefuse` sees the error. */
export function httpOnlyFetch(
  inner: typeof fetch = fetch,
  onRefuse: (err: ClientError) => void = () => {},
): typeof fetch {
  return (input, init) => {
    if (!isHttpUrl(input)) {
      const err = schemeRefusal(input instanceof Request ? input.url : String(input));
      onRefuse(err);
      return Promise.reject(err);
    }
    return inner(input, init);
  };
}
