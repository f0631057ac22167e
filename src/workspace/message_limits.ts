/**
 * The message caps of every transport, derived from the workspace limits in one place: the
 * largest request a server accepts covers the largest allowed write in any JSON encoding, and the
 * largest response a server can send fits the bundled client's cap (see decision 0022).
 */
import type { Limits } from "./limits.ts";

/**
 * Most bytes of JSON text one UTF-8 byte of a string can become: any character may be sent as a
 * `\uXXXX` escape (six bytes), and JSON.stringify itself does so for control characters.
 */
export const JSON_ESCAPE_FACTOR = 6;

/** Bytes of a message besides its one large string: JSON-RPC envelope, `_meta`, other fields. */
export const MESSAGE_RESERVE_BYTES = 64 * 1024;

/**
 * Largest message the bundled client accepts on stdio (the SDK's default is 10 MiB), and so the
 * ceiling of the response cap of every server configuration.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * Largest request (HTTP body, stdio line) a server accepts: a write_file of maxWriteBytes whose
 * content is sent with every character escaped, plus the reserve.
 */
export function requestCapFor(limits: Pick<Limits, "maxWriteBytes">): number {
  return JSON_ESCAPE_FACTOR * limits.maxWriteBytes + MESSAGE_RESERVE_BYTES;
}

/**
 * Largest response a server sends: a tool result carries its typed result (at most
 * maxResultBytes of JSON) twice at most, as structuredContent and as its text block, plus the
 * reserve.
 */
export function responseCapFor(limits: Pick<Limits, "maxResultBytes">): number {
  return 2 * limits.maxResultBytes + MESSAGE_RESERVE_BYTES;
}

/** Largest maxResultBytes whose response cap fits MAX_MESSAGE_BYTES. */
export const MAX_RESULT_BYTES_CEILING = Math.floor((MAX_MESSAGE_BYTES - MESSAGE_RESERVE_BYTES) / 2);

/**
 * Refuses limits an MCP server cannot serve: a response cap over MAX_MESSAGE_BYTES (the library
 * and the CLI carry no messages, so they take any maxResultBytes).
 */
export function assertServable(limits: Pick<Limits, "maxResultBytes">): void {
  if (limits.maxResultBytes <= MAX_RESULT_BYTES_CEILING) return;
  throw new TypeError(
    `limit "maxResultBytes" is ${limits.maxResultBytes} but a server allows at most ${MAX_RESULT_BYTES_CEILING}: its response cap (2 x maxResultBytes + 64 KiB) must fit the ${MAX_MESSAGE_BYTES}-byte message cap of the bundled client`,
  );
}
