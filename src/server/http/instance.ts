/**
 * The instance tag of one server behind a balancer (`--instance NAME`, decision 0037): legacy
 * session ids carry it (`NAME.<uuid>`) so the balancer routes a session to the instance that holds
 * it, and every response names the instance that served it (`Wmcp-Instance`).
 */

/** The response header naming the instance that served a request. */
export const INSTANCE_HEADER = "wmcp-instance";

/** Longest instance tag (characters). */
export const MAX_INSTANCE_CHARS = 32;

const INSTANCE_NAME = /^[a-z0-9-]+$/;

/** Why `name` is not an instance tag (for "must be ..."), or undefined when it is one. */
export function instanceNameProblem(name: string): string | undefined {
  if (name.length < 1 || name.length > MAX_INSTANCE_CHARS || !INSTANCE_NAME.test(name)) {
    return `1 to ${MAX_INSTANCE_CHARS} characters of a-z, 0-9 and -`;
  }
  return undefined;
}

/** A new legacy session id: `NAME.<uuid>` with an instance tag, a bare UUID without one. */
export function newSessionId(instance?: string): string {
  const id = crypto.randomUUID();
  return instance === undefined ? id : `${instance}.${id}`;
}

/** `res` with the Wmcp-Instance header set (a copy when its headers are immutable). */
export function withInstanceHeader(res: Response, instance: string): Response {
  try {
    res.headers.set(INSTANCE_HEADER, instance);
    return res;
  } catch {
    const copy = new Response(res.body, res);
    copy.headers.set(INSTANCE_HEADER, instance);
    return copy;
  }
}
