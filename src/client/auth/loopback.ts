/** The terminal Redirector: a loopback redirect listener on 127.0.0.1 and the user's browser. */
import { errLine } from "../../std_streams.ts";
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

/** How long a sign-in waits for the browser to come back by default (ms): `--auth-timeout 300`. */
export const SIGN_IN_TIMEOUT_MS = 300_000;

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

/** What the browser brings back: the code, the state, and `iss` when it carried one. */
type Authorization = { code: string; state: string | null; iss?: string };

/** The one pending flow the listener routes callbacks to (done: nothing is waiting). */
interface Pending {
  state: string | null;
  done: boolean;
  resolve?: (v: Authorization) => void;
  reject?: (e: AuthFlowError) => void;
}

/** The listener on 127.0.0.1 and its one flow at a time (see loopbackRedirector). */
class LoopbackRedirector implements Redirector {
  readonly redirectUri: string;
  readonly timeoutMs: number;
  readonly #options: LoopbackOptions;
  readonly #say: (line: string) => void;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  #pending: Pending = { state: null, done: true };
  #closed = false;

  /** Starts listening; throws an AuthFlowError ("listen") when the port cannot be had. */
  constructor(options: LoopbackOptions) {
    this.#options = options;
    this.#say = options.say ?? errLine;
    this.timeoutMs = options.timeoutMs ?? SIGN_IN_TIMEOUT_MS;
    try {
      this.#server = Deno.serve({
        hostname: "127.0.0.1",
        port: options.port ?? 0,
        onListen: () => {},
      }, (req) => this.#callback(req));
    } catch (err) {
      throw new AuthFlowError(
        "listen",
        `cannot listen on 127.0.0.1:${options.port ?? 0} for the redirect: ${
          (err as Error).message
        }`,
      );
    }
    this.redirectUri = `http://127.0.0.1:${this.#server.addr.port}/callback`;
  }

  /** Ends the pending flow with `e` (the callers have checked that one is pending). */
  #fail(e: AuthFlowError): void {
    this.#pending.done = true;
    this.#pending.reject?.(e);
  }

  /** Answers a request to the listener: only GET /callback, only while a flow waits. */
  #callback(req: Request): Response {
    const u = new URL(req.url);
    if (u.pathname !== "/callback" || req.method !== "GET") {
      return new Response("not found\n", { status: 404 });
    }
    if (this.#pending.done) {
      return page("No sign-in in progress", "This sign-in is finished; close this tab.", 409);
    }
    return this.#answer(u.searchParams);
  }

  /** Settles the pending flow from the callback's parameters: state, then error, then code. */
  #answer(p: URLSearchParams): Response {
    const fail = (e: AuthFlowError, title: string, status: number) => {
      this.#fail(e);
      return page(title, `${e.message}. You can close this tab.`, status);
    };
    if (p.get("state") !== this.#pending.state) {
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
    this.#pending.done = true;
    const iss = p.get("iss");
    this.#pending.resolve?.({ code, state: p.get("state"), ...(iss === null ? {} : { iss }) });
    return page("Signed in", "wmcp has what it needs; you can close this tab.");
  }

  /** Makes the flow for `target` the pending one; settled by a callback or a failure. */
  #await(target: URL): Promise<Authorization> {
    const result = new Promise<Authorization>((resolve, reject) => {
      this.#pending.state = target.searchParams.get("state");
      this.#pending.done = false;
      this.#pending.resolve = resolve;
      this.#pending.reject = reject;
    });
    // Settled (timeout, a refused callback) possibly while the opener still runs: handled later.
    result.catch(() => {});
    return result;
  }

  /** Opens the URL in the browser (unless told not to) and says where to go and what is awaited. */
  async #show(target: URL): Promise<void> {
    let opened = false;
    if (this.#options.openBrowser !== false) {
      this.#say("wmcp: opening the authorization page in your browser");
      opened = await openInBrowser(this.#options.browserCommand ?? browserCommand(), target);
      if (!opened) this.#say("wmcp: could not start a browser");
    }
    this.#say(
      `wmcp: ${
        opened ? "if it did not open, visit" : "to sign in, open this URL in a browser"
      }:\n${target.href}\nwmcp: waiting for the redirect to ${this.redirectUri} (up to ${
        Math.round(this.timeoutMs / 1000)
      } s)`,
    );
  }

  async authorize(url: URL, signal?: AbortSignal): Promise<Authorization> {
    const target = assertBrowsable(url);
    if (this.#closed) throw new AuthFlowError("cancelled", "the redirect listener is closed");
    const result = this.#await(target);
    const timer = setTimeout(() => {
      if (this.#pending.done) return;
      this.#fail(
        new AuthFlowError(
          "timeout",
          `no answer from the browser within ${Math.round(this.timeoutMs / 1000)} s`,
        ),
      );
    }, this.timeoutMs);
    const onAbort = () => {
      if (this.#pending.done) return;
      this.#fail(new AuthFlowError("cancelled", "sign-in cancelled"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort();
    try {
      await this.#show(target);
      return await result;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#pending.done) {
      this.#fail(new AuthFlowError("cancelled", "the redirect listener closed"));
    }
    await this.#server.shutdown();
  }
}

/**
 * A Redirector for a person at a terminal: listens on 127.0.0.1 (redirect_uri
 * `http://127.0.0.1:PORT/callback`), opens or prints the authorization URL, and waits (up to the
 * timeout) for the browser to bring back a code with the state the URL carried.
 */
export function loopbackRedirector(options: LoopbackOptions = {}): Promise<Redirector> {
  try {
    return Promise.resolve(new LoopbackRedirector(options));
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
