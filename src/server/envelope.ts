/**
 * The 2026-07-28 request envelope as the fast path (fast_path.ts) and the stdio entry's first
 * answers (stdio_early.ts) both read it: its keys, and the ids either answers without the SDK.
 * No imports, so the stdio entry can use it before anything else loads.
 */

/** The protocol revision the fast path (and the early answers) serve. */
export const FAST_PATH_REVISION = "2026-07-28";

export const PROTOCOL_KEY = "io.modelcontextprotocol/protocolVersion";
export const CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo";
export const CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";

/** Longest string id taken (longer ids go to the SDK path). */
const MAX_ID_LENGTH = 256;

/** Whether a request id is one the SDK path would echo as it is (a short string, a safe integer). */
export function isEchoableId(id: unknown): id is string | number {
  return (typeof id === "string" && id.length <= MAX_ID_LENGTH) ||
    (typeof id === "number" && Number.isSafeInteger(id));
}
