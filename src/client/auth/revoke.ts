/** `auth logout`'s token revocation (RFC 7009), only ever at the issuer that issued the tokens. */
import type { StoredCredentials } from "./types.ts";
import { boundedFetch } from "./bounded_fetch.ts";

/** The RFC 8414 metadata (or OpenID configuration) of `issuer`, read from the issuer itself. */
async function issuerMetadata(issuer: string): Promise<Record<string, unknown> | undefined> {
  let iss: URL;
  try {
    iss = new URL(issuer);
  } catch {
    return undefined;
  }
  if (iss.protocol !== "https:" && iss.protocol !== "http:") return undefined;
  const path = iss.pathname === "/" ? "" : iss.pathname.replace(/\/$/, "");
  for (
    const url of [
      new URL(`/.well-known/oauth-authorization-server${path}`, iss),
      new URL(`${path}/.well-known/openid-configuration`, iss),
    ]
  ) {
    try {
      const res = await boundedFetch(url, { headers: { accept: "application/json" } });
      if (res.ok) {
        const meta = await res.json();
        if (typeof meta === "object" && meta !== null && meta.issuer === issuer) return meta;
      } else await res.body?.cancel();
    } catch { /* try the next one */ }
  }
  return undefined;
}

/**
 * The revocation endpoint of the issuer of `c`'s tokens, from that issuer's own metadata (a
 * cached discovery is used only when it is that issuer's); undefined (after a warning when
 * something is wrong) when there is none to use.
 */
async function revocationEndpoint(
  c: StoredCredentials,
  warn: (m: string) => void,
): Promise<URL | undefined> {
  // Revocation goes only to the issuer that issued these tokens: a cached discovery may name
  // another authorization server (the resource's metadata can change), which must never receive
  // them. Cached metadata is used only when it is that issuer's own.
  if (!c.issuer) {
    warn("the stored credentials name no issuer; the tokens were not revoked");
    return undefined;
  }
  const cached = c.discoveryState?.authorizationServerMetadata as
    | Record<string, unknown>
    | undefined;
  let meta = cached?.issuer === c.issuer ? cached : await issuerMetadata(c.issuer);
  if (meta && meta.issuer !== c.issuer) meta = undefined;
  if (!meta) {
    warn(`could not read the metadata of issuer ${c.issuer}; the tokens were not revoked`);
    return undefined;
  }
  const endpoint = meta?.revocation_endpoint;
  if (typeof endpoint !== "string") return undefined;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  return url;
}

/** The revocation request of one token: the client authenticates as it registered. */
function revocationRequest(
  info: Record<string, unknown>,
  hint: string,
  token: string,
): { headers: Record<string, string>; body: URLSearchParams } {
  const body = new URLSearchParams({ token, token_type_hint: hint });
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
  };
  if (typeof info.client_secret === "string" && typeof info.client_id === "string") {
    headers.authorization = `Basic ${
      btoa(`${encodeURIComponent(info.client_id)}:${encodeURIComponent(info.client_secret)}`)
    }`;
  } else if (typeof info.client_id === "string") {
    body.set("client_id", info.client_id);
  }
  return { headers, body };
}

/** Revokes the stored tokens at the authorization server when it offers revocation (RFC 7009). */
export async function revoke(c: StoredCredentials, warn: (m: string) => void): Promise<number> {
  const t = (c.tokens ?? {}) as Record<string, unknown>;
  const tokens = [
    ["refresh_token", t.refresh_token],
    ["access_token", t.access_token],
  ].filter(([, v]) => typeof v === "string") as [string, string][];
  if (tokens.length === 0) return 0;
  const url = await revocationEndpoint(c, warn);
  if (url === undefined) return 0;
  const info = (c.clientInformation ?? {}) as Record<string, unknown>;
  let revoked = 0;
  for (const [hint, token] of tokens) {
    const { headers, body } = revocationRequest(info, hint, token);
    try {
      const res = await boundedFetch(url, { method: "POST", headers, body });
      await res.body?.cancel();
      if (res.ok) revoked++;
      else warn(`revoking the ${hint.replace("_", " ")} failed: HTTP ${res.status}`);
    } catch (err) {
      warn(`revoking the ${hint.replace("_", " ")} failed: ${(err as Error).message}`);
    }
  }
  return revoked;
}
