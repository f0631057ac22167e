/**
 * Ctrl-C handling shared by the commands that cancel on SIGINT (`op`, `tools`, `auth login`).
 *
 * Under the router (cli.ts) one Ctrl-C arrives twice: the terminal sends SIGINT to the whole
 * foreground process group, and the router forwards the SIGINT it received as well. A listener
 * removed after the first delivery lets the second one kill the process with the default action
 * (exit 130) while it is still reporting the cancellation. So once a listener has fired it stays
 * installed until the process exits; a listener that never fired is removed as usual.
 *
 * @module
 */

/** A SIGINT listener; `dispose()` removes it unless it has fired. */
export interface InterruptListener {
  /** Whether SIGINT arrived while the listener was installed. */
  readonly fired: boolean;
  /** Removes the listener if it never fired; after a SIGINT it stays, absorbing a repeat. */
  dispose(): void;
}

/** Calls `handler` on SIGINT (every delivery; make it idempotent) until disposed. */
export function onInterrupt(handler: () => void): InterruptListener {
  let fired = false;
  let installed = true;
  const listener = () => {
    fired = true;
    handler();
  };
  Deno.addSignalListener("SIGINT", listener);
  return {
    get fired() {
      return fired;
    },
    dispose() {
      if (!installed || fired) return;
      installed = false;
      Deno.removeSignalListener("SIGINT", listener);
    },
  };
}
