/** The class (and so the exit code) of a failure of `auth login|status|logout`. */
import { OAuthError } from "@modelcontextprotocol/client";
import { ClientError } from "../errors.ts";
import { CredentialStoreError } from "./store.ts";
import { AuthFlowError } from "./loopback.ts";
import { unreachableWords } from "../../workarounds/deno_fetch_error.ts";

/** The class (and so the exit code) of an authorization failure. */
export function authFailure(err: unknown): ClientError {
  if (err instanceof ClientError) return err;
  if (err instanceof CredentialStoreError) return new ClientError("usage", err.message);
  if (err instanceof AuthFlowError) {
    // Timing out and failing to listen keep their classes (7, 3); every other failure of the
    // sign-in (nobody here to sign in, state mismatch, denied, unsafe URL) is class auth (8).
    const cls = err.failure === "timeout" || err.failure === "cancelled"
      ? "timeout"
      : err.failure === "listen"
      ? "transport"
      : "auth";
    return new ClientError(cls, err.message, { details: { auth: err.failure } });
  }
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
