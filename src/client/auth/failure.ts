/** The class (and so the exit code) of a failure of `auth login|status|logout`. */
import { OAuthError } from "@modelcontextprotocol/client";
import { authFlowFailure, ClientError } from "../errors.ts";
import { CredentialStoreError } from "./store.ts";
import { AuthFlowError } from "./loopback.ts";
import { unreachableWords } from "../../workarounds/deno_fetch_error.ts";

/** The class (and so the exit code) of an authorization failure. */
export function authFailure(err: unknown): ClientError {
  if (err instanceof ClientError) return err;
  if (err instanceof CredentialStoreError) return new ClientError("usage", err.message);
  if (err instanceof AuthFlowError) return authFlowFailure(err);
  if (err instanceof OAuthError) {
    return new ClientError("auth", `authorization server: ${err.message}`, {
      details: { auth: "oauth", oauthError: err.code },
    });
  }
  const e = err as Error;
  // A hanging authorization server ends in boundedFetch's TimeoutError: unreachable, as documented.
  if (
    e instanceof TypeError || e?.name === "TimeoutError" ||
    unreachableWords(e?.message ?? "")
  ) {
    return new ClientError("transport", e.message, { details: { auth: "unreachable" } });
  }
  return new ClientError("auth", e?.message ?? String(err), { details: { auth: "flow" } });
}
