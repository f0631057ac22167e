/** The terminal Redirector: a loopback redirect listener on 127.0.0.1 and the user's browser. */
import type { Redirector } from "./types.ts";

/** Why a sign-in through the browser did not produce a code. */
export type AuthFlowFailure =
  | "headless"
  | "timeout"
  | "cancelled"
  | "denied"
  | "state-mismatch"
  | "unsafe-url"
  | "listen";

/** A failed browser sign-in; `failure` says why (callers branch on it, not on the message). */
export class AuthFlowError extends Error {
  readonly failure: AuthFlowFailure;
  constructor(failure: AuthFlowFailure, message: string) {
    super(message);
    this.name = "AuthFlowError";
    this.failure = failure;
  }
}

/** Options of loopbackRedirector. */
export interface LoopbackOptions {
  /** Port to listen on, 127.0.0.1 only (default 0: any free port). */
  port?: number;
  /** Open the URL in a browser (default true); false prints it only (`--no-browser`). */
  openBrowser?: boolean;
  /** How long to wait for the browser to come back, ms (default 300 000). */
  timeoutMs?: number;
  /** Where messages for the person go (default: stderr). */
  say?: (line: string) => void;
  /** The browser opener command (default: $WMCP_BROWSER, else `open` on macOS, else `xdg-open`). */
  browserCommand?: string;
}

/** The command that opens a URL in the user's browser: $WMCP_BROWSER (tests: a fake), else the OS's. */
export function browserCommand(): string {
  const fake = Deno.env.get("WMCP_BROWSER");
  if (fake) return fake;
  return Deno.build.os === "darwin" ? "open" : "xdg-open";
}

/** Throws unless `url` is an absolute http(s) URL: nothing else ever reaches a browser opener. */
export function assertBrowsable(url: URL | string): URL {
  let u: URL;
  try {
    u = new URL(String(url));
  } catch {
    throw new AuthFlowError("unsafe-url", "refusing an authorization URL that is not a URL");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    // Its text is not echoed: a hostile server chose it.
    throw new AuthFlowError(
      "unsafe-url",
      `refusing to open an authorization URL with scheme ${
        JSON.stringify(u.protocol.slice(0, 20))
      }: only http(s) is opened`,
    );
  }
  return u;
}

/**
 * Starts the opener with an argv array (never a shell); true when it started and exited 0.
 * The URL must have passed assertBrowsable.
 */
async function openInBrowser(command: string, url: URL): Promise<boolean> {
  try {
    const child = new Deno.Command(command, {
      args: [url.href],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const status = await child.status;
    return status.success;
  } catch {
    return false;
  }
}

function page(title: string, text: string, status = 200): Response {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return new Response(
    `<!doctype html><meta charset="utf-8"><title>${esc(title)}</title>` +
      `<h1>${esc(title)}</h1><p>${esc(text)}</p>\n`,
    {
      status,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
        "content-security-policy": "default-src 'none'",
      },
    },
  );
}

/** Printable text from the authorization server (error codes, descriptions): bounded, no controls. */
function clip(s: string | null): string {
  return (s ?? "").replace(/\p{Cc}/gu, " ").slice(0, 200);
}

/** Starts the listener; the Redirector's flow state lives in this closure. */
function startLoopback(options: LoopbackOptions): Redirector {
  const say = options.say ?? ((l: string) => console.error(l));
  const timeoutMs = options.timeoutMs ?? 300_000;
  // One pending flow at a time; the listener routes callbacks to it.
  const pending: {
    state: string | null;
    done: boolean;
    resolve?: (v: { code: string; state: string | null; iss?: string }) => void;
    reject?: (e: AuthFlowError) => void;
  } = { state: null, done: true };

  const handler = (req: Request): Response => {
    const u = new URL(req.url);
    if (u.pathname !== "/callback" || req.method !== "GET") {
      return new Response("not found\n", { status: 404 });
    }
    if (pending.done) {
      return page("No sign-in in progress", "This sign-in is finished; close this tab.", 409);
    }
    const p = u.searchParams;
    const fail = (e: AuthFlowError, title: string, status: number) => {
      pending.done = true;
      pending.reject?.(e);
      return page(title, `${e.message}. You can close this tab.`, status);
    };
    if (p.get("state") !== pending.state) {
      return fail(
        new AuthFlowError(
          "state-mismatch",
          "the authorization response's state does not match the request's; refused",
        ),
        "Sign-in refused",
        400,
      );
    }
    const error = p.get("error");
    if (error !== null) {
      const desc = clip(p.get("error_description"));
      return fail(
        new AuthFlowError(
          "denied",
          `the authorization server answered ${clip(error)}${desc ? `: ${desc}` : ""}`,
        ),
        "Sign-in failed",
        200,
      );
    }
    const code = p.get("code");
    if (!code) {
      return fail(
        new AuthFlowError("denied", "the authorization response carries no code"),
        "Sign-in failed",
        400,
      );
    }
    pending.done = true;
    const iss = p.get("iss");
    pending.resolve?.({ code, state: p.get("state"), ...(iss === null ? {} : { iss }) });
    return page("Signed in", "wmcp has what it needs; you can close this tab.");
  };

  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: "127.0.0.1",
      port: options.port ?? 0,
      onListen: () => {},
    }, handler);
  } catch (err) {
    throw new AuthFlowError(
      "listen",
      `cannot listen on 127.0.0.1:${options.port ?? 0} for the redirect: ${(err as Error).message}`,
    );
  }
  const redirectUri = `http://127.0.0.1:${server.addr.port}/callback`;
  let closed = false;

  return {
    redirectUri,
    async authorize(url, signal) {
      const target = assertBrowsable(url);
      if (closed) throw new AuthFlowError("cancelled", "the redirect listener is closed");
      const result = new Promise<{ code: string; state: string | null; iss?: string }>(
        (resolve, reject) => {
          pending.state = target.searchParams.get("state");
          pending.done = false;
          pending.resolve = resolve;
          pending.reject = reject;
        },
      );
      // Settled (timeout, a refused callback) possibly while the opener still runs: handled below.
      result.catch(() => {});
      const timer = setTimeout(() => {
        if (pending.done) return;
        pending.done = true;
        pending.reject?.(
          new AuthFlowError(
            "timeout",
            `no answer from the browser within ${Math.round(timeoutMs / 1000)} s`,
          ),
        );
      }, timeoutMs);
      const onAbort = () => {
        if (pending.done) return;
        pending.done = true;
        pending.reject?.(new AuthFlowError("cancelled", "sign-in cancelled"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted) onAbort();
      try {
        let opened = false;
        if (options.openBrowser !== false) {
          say("wmcp: opening the authorization page in your browser");
          opened = await openInBrowser(options.browserCommand ?? browserCommand(), target);
          if (!opened) say("wmcp: could not start a browser");
        }
        say(
          `wmcp: ${
            opened ? "if it did not open, visit" : "to sign in, open this URL in a browser"
          }:\n${target.href}\nwmcp: waiting for the redirect to ${redirectUri} (up to ${
            Math.round(timeoutMs / 1000)
          } s)`,
        );
        return await result;
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      if (!pending.done) {
        pending.done = true;
        pending.reject?.(new AuthFlowError("cancelled", "the redirect listener closed"));
      }
      await server.shutdown();
    },
  };
}

/**
 * A Redirector for a person at a terminal: listens on 127.0.0.1 (redirect_uri
 * `http://127.0.0.1:PORT/callback`), opens or prints the authorization URL, and waits (up to the
 * timeout) for the browser to bring back a code with the state the URL carried.
 */
export function loopbackRedirector(options: LoopbackOptions = {}): Promise<Redirector> {
  try {
    return Promise.resolve(startLoopback(options));
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * The Redirector of a run with no person (no terminal, or --non-interactive): it never waits,
 * it fails at once telling how to sign in beforehand.
 */
export function headlessRedirector(redirectUri = "http://127.0.0.1/callback"): Redirector {
  return {
    redirectUri,
    authorize() {
      return Promise.reject(
        new AuthFlowError(
          "headless",
          "this server needs authorization and nobody is here to sign in (no terminal or " +
            "--non-interactive): run `wmcp auth login --endpoint URL` first, or supply a token " +
            "(--bearer-token-env VAR)",
        ),
      );
    },
    close() {
      return Promise.resolve();
    },
  };
}
