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

/**
 * Largest maxResultBytes whose response cap, plus another reserve for the JSON-RPC envelope
 * around the result (the cap measures the result), fits MAX_MESSAGE_BYTES: 32 MiB - 64 KiB.
 */
export const MAX_RESULT_BYTES_CEILING = Math.floor(
  (MAX_MESSAGE_BYTES - 2 * MESSAGE_RESERVE_BYTES) / 2,
);

/**
 * Largest request cap a server takes: a request line or body is held as one string (V8's longest
 * is about 512 MiB of UTF-16 code units) and a copy of it is made while framing and parsing, so
 * half of that.
 */
export const MAX_REQUEST_BYTES = 256 * 1024 * 1024;

/** Largest maxWriteBytes whose request cap fits MAX_REQUEST_BYTES (about 42.7 MiB). */
export const MAX_WRITE_BYTES_CEILING = Math.floor(
  (MAX_REQUEST_BYTES - MESSAGE_RESERVE_BYTES) / JSON_ESCAPE_FACTOR,
);

/**
 * Refuses limits an MCP server cannot serve: a response cap over MAX_MESSAGE_BYTES or a request
 * cap over MAX_REQUEST_BYTES (the library and the CLI carry no messages, so they take any).
 */
export function assertServable(limits: Pick<Limits, "maxResultBytes" | "maxWriteBytes">): void {
  if (limits.maxResultBytes > MAX_RESULT_BYTES_CEILING) {
    throw new TypeError(
      `limit "maxResultBytes" is ${limits.maxResultBytes} but a server allows at most ${MAX_RESULT_BYTES_CEILING}: its response cap (2 x maxResultBytes + 64 KiB) plus 64 KiB of envelope must fit the ${MAX_MESSAGE_BYTES}-byte message cap of the bundled client`,
    );
  }
  if (limits.maxWriteBytes > MAX_WRITE_BYTES_CEILING) {
    throw new TypeError(
      `limit "maxWriteBytes" is ${limits.maxWriteBytes} but a server allows at most ${MAX_WRITE_BYTES_CEILING}: its request cap (6 x maxWriteBytes + 64 KiB) must stay within ${MAX_REQUEST_BYTES} bytes, the longest request a server holds as one string`,
    );
  }
}
