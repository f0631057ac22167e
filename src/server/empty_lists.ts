/**
 * The workspace server's empty resource and prompt lists, as a definition extension: `resources`
 * and `prompts` are declared (without listChanged) so every cacheable list of the 2026-07-28
 * revision exists and carries its cache hint. resources/list, resources/templates/list and
 * prompts/list answer an empty page (any cursor is -32602 "Invalid cursor"); resources/read of a
 * URI that does not parse is -32602 with data.reason "invalid_uri", of any other URI -32602 not
 * found with data.uri; prompts/get of any name is -32602 "Prompt NAME not found".
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
} from "@modelcontextprotocol/server";
import type { ServerExtension, ServingUnit } from "./definition.ts";
import { page } from "./paging.ts";

/** The canonical form of a resource URI (as `new URL(...).href` spells it), or null. */
export function canonicalUri(uri: string): string | null {
  try {
    return new URL(uri).href;
  } catch {
    return null;
  }
}

/** The -32602 answer to a resources/read whose URI does not parse. */
export function invalidUriError(raw: string): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Resource URI ${raw} is invalid`,
    { uri: raw, reason: "invalid_uri" },
  );
}

const NONE: readonly unknown[] = Object.freeze([]);

/** Installs the empty lists' handlers on one serving unit's McpServer. */
function install({ server, pageSize }: ServingUnit): void {
  const s = server.server;
  s.setRequestHandler(
    "prompts/list",
    (request) => page("prompts", "prompts", NONE, request.params?.cursor, pageSize) as never,
  );
  s.setRequestHandler("prompts/get", (request) => {
    const { name } = request.params;
    return Promise.reject(
      new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt ${name} not found`),
    );
  });
  s.setRequestHandler(
    "resources/list",
    (request) => page("resources", "resources", NONE, request.params?.cursor, pageSize) as never,
  );
  s.setRequestHandler(
    "resources/templates/list",
    (request) =>
      page("resourceTemplates", "templates", NONE, request.params?.cursor, pageSize) as never,
  );
  s.setRequestHandler("resources/read", (request) => {
    const raw = request.params.uri;
    return Promise.reject(
      canonicalUri(raw) === null ? invalidUriError(raw) : new ResourceNotFoundError(raw),
    );
  });
}

/** The workspace server's empty resource, resource template and prompt lists. */
export const EMPTY_LISTS: ServerExtension = Object.freeze({
  capabilities: {
    resources: { listChanged: false },
    prompts: { listChanged: false },
  },
  cachedLists: Object.freeze(["prompts/list", "resources/list", "resources/templates/list"]),
  install,
});
