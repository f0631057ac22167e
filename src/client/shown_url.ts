/** How a server URL is shown in what the client prints (messages, help examples). */

/**
 * A server URL as client messages show it: without userinfo and fragment, each query value
 * replaced by `***` (a config's url may carry an expanded secret, `?api_key=${KEY}`).
 */
export function shownUrl(url: URL): string {
  const query = [...url.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=***`).join("&");
  return `${url.origin}${url.pathname}${query === "" ? "" : `?${query}`}`;
}
