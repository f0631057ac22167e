/**
 * Paging of the precomputed wire lists (tools/list and the others): a page of at most pageSize
 * items and an opaque cursor naming the list, the offset and the list's length, so a cursor of
 * another list, or of a list that changed, is -32602 "Invalid cursor". The factory's SDK path and
 * the fast path (fast_path.ts) page with the same function, so they give the same pages.
 */
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";

/** The list a cursor belongs to. */
export type ListKind = "tools" | "prompts" | "resources" | "templates";

function encodeCursor(kind: ListKind, offset: number, total: number): string {
  return btoa(JSON.stringify({ k: kind, o: offset, t: total })).replaceAll("=", "");
}

function decodeCursor(kind: ListKind, cursor: string, total: number): number {
  try {
    const c = JSON.parse(atob(cursor)) as { k?: unknown; o?: unknown; t?: unknown };
    if (
      c.k === kind && Number.isSafeInteger(c.o) && c.t === total && (c.o as number) > 0 &&
      (c.o as number) < total
    ) {
      return c.o as number;
    }
  } catch {
    // fall through
  }
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid cursor");
}

/** One page of a precomputed list; an invalid cursor is -32602 "Invalid cursor". */
export function page<K extends string>(
  key: K,
  kind: ListKind,
  items: readonly unknown[],
  cursor: string | undefined,
  pageSize: number,
): Record<string, unknown> {
  const start = cursor === undefined ? 0 : decodeCursor(kind, cursor, items.length);
  const end = Math.min(start + pageSize, items.length);
  const out: Record<string, unknown> = { [key]: items.slice(start, end) };
  if (end < items.length) out.nextCursor = encodeCursor(kind, end, items.length);
  return out;
}
