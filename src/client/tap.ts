/**
 * The tap below the SDK (decision 0009): every raw JSON-RPC response kept by id as received, the
 * requests sent in order, and the notifications still being sent. The lossless output reads these,
 * never the SDK's reshaped objects.
 */
import type { Interaction } from "./interaction.ts";

/** A JSON-RPC message as it crossed the wire. */
export type RawMessage = Record<string, unknown>;

/** What the tap keeps of one connection. */
export interface Tap {
  /** Raw responses by request id, as received. */
  responses: Map<string | number, RawMessage>;
  /** Requests sent, in order (method and id). */
  sent: { id?: string | number; method: string }[];
  /** Notifications being sent (the SDK does not await them); closing waits for these. */
  inFlight: Set<Promise<void>>;
}

/** The two members of a transport the tap wraps. */
interface Tappable {
  onmessage?: unknown;
  send: unknown;
}

/**
 * Wraps a connected transport's `onmessage` and `send`: responses are recorded (a structured
 * clone) before the SDK sees them, a stray elicitation is declined, requests are recorded in order.
 */
export function tapTransport(transport: Tappable, interaction: Interaction): Tap {
  const tap: Tap = { responses: new Map(), sent: [], inFlight: new Set() };
  const inner = transport.onmessage as (m: unknown, e?: unknown) => void;
  const send = (transport.send as (m: unknown, o?: unknown) => Promise<void>).bind(transport);
  transport.onmessage = (message: RawMessage, extra?: unknown) => {
    if ("id" in message && ("result" in message || "error" in message)) {
      tap.responses.set(message.id as string | number, structuredClone(message));
    }
    if (
      message.method === "elicitation/create" && "id" in message &&
      !interaction.advertisesElicitation
    ) {
      // The SDK refuses a handler for a capability we did not declare and would answer -32601;
      // a server that asks anyway gets what --non-interactive promises: a decline.
      declineStray(message, interaction, send);
      return;
    }
    inner(message, extra);
  };
  // Notifications (notifications/cancelled above all) are sent without being awaited by the
  // SDK; closing must not abort them in flight.
  transport.send = (message: RawMessage, opts?: unknown) => {
    if (typeof message.method === "string") {
      tap.sent.push({ id: message.id as string | number | undefined, method: message.method });
    }
    const p = send(message, opts);
    if (!("id" in message)) {
      const tracked = p.catch(() => {}).finally(() => tap.inFlight.delete(tracked));
      tap.inFlight.add(tracked);
    }
    return p;
  };
  return tap;
}

/**
 * Answers an `elicitation/create` request that arrived although the client did not declare
 * elicitation (non-interactive): with the interaction's answer (a decline), below the SDK.
 */
function declineStray(
  message: RawMessage,
  interaction: Interaction,
  send: (m: RawMessage) => Promise<void>,
): void {
  interaction.elicit((message.params ?? {}) as never)
    .then((result) => send({ jsonrpc: "2.0", id: message.id, result }))
    .catch(() => {});
}
