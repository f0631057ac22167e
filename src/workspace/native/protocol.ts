/**
 * The native engine's wire protocol between the server (the client, src/workspace/native/) and
 * the engine broker the launcher starts outside the server's sandbox (src/launch/broker/): one
 * JSON object per line each way, over a Unix socket in a private directory (decision 0054).
 * The broker trusts nothing the server sends: every request is checked against these shapes
 * (checkRequest) before anything runs, and rg's command line is built from the checked fields
 * only.
 *
 * @module
 */

/** What `--engine` takes: native when available (auto), native or fail, built-in only. */
export type EngineChoice = "auto" | "native" | "builtin";

/** The values `--engine` accepts. */
export const ENGINE_CHOICES: readonly EngineChoice[] = ["auto", "native", "builtin"];

/**
 * The variables through which the launcher tells the server about its engine: the broker's
 * socket and token, or why there is no native engine.
 */
export const ENGINE_ENV = {
  socket: "WMCP_ENGINE_SOCKET",
  token: "WMCP_ENGINE_TOKEN",
  reason: "WMCP_ENGINE_REASON",
} as const;

/** The first line the server sends: the token the launcher gave both sides. */
export interface HelloRequest {
  type: "hello";
  token: string;
}

/**
 * Which files below `base` hold a line the pattern can match: a superset of the files where the
 * query matches, searched by ripgrep in the workspace only.
 */
export interface GrepRequest {
  type: "grep";
  /** The request's number, unique among the connection's requests in flight. */
  id: number;
  /** The directory searched, relative to the workspace root ("." for the root). */
  base: string;
  /** The pattern: literal text, or a regex in ripgrep's syntax (src/workspace/regex/rg.ts). */
  pattern: string;
  /** `pattern` is literal text. */
  literal: boolean;
  /** Case-insensitive (Unicode simple case folding). */
  ignoreCase: boolean;
  /** Search names starting with "." too. */
  hidden: boolean;
  /** Leave out directories named ".git". */
  skipGit: boolean;
  /** Files larger than this (bytes) are not searched but listed in the answer's `large`. */
  maxFileBytes: number;
  /**
   * Ask for the candidate lines too (decision 0067): each line the pattern can match, with
   * `context` lines around it, at most `maxCount` candidate lines per file. null: names only.
   */
  lines: LinesAsk | null;
}

/** What a grep asks of its candidate lines (GrepRequest.lines). */
export interface LinesAsk {
  /** Lines of context before and after each candidate line (0 to MAX_LINES_CONTEXT). */
  context: number;
  /** Most candidate lines per file (1 to MAX_LINES_COUNT); a file that reaches it has no lines. */
  maxCount: number;
}

/** Most context lines a grep asks for (search_text's contextLines at most). */
export const MAX_LINES_CONTEXT = 10;
/** Most candidate lines per file a grep asks for (search_text's largest maxMatches). */
export const MAX_LINES_COUNT = 1_000_000;

/** Stops a grep in flight (its process is killed); no answer follows. */
export interface CancelRequest {
  type: "cancel";
  id: number;
}

/** What the server sends. */
export type BrokerRequest = HelloRequest | GrepRequest | CancelRequest;

/** The broker's answer to hello: whether it can search natively, and why not. */
export type HelloAnswer =
  | { type: "hello"; native: true; engine: string }
  | { type: "hello"; native: false; reason: string };

/**
 * The files a grep found (workspace-relative paths, any order), and the regular files below the
 * base larger than its maxFileBytes (not searched).
 */
export interface FilesAnswer {
  type: "files";
  id: number;
  paths: string[];
  large: string[];
  /**
   * When the grep asked for lines: the files whose whole text is in `groups` as far as the pattern
   * can match, each a subset of `paths`: runs of consecutive lines, `[first line number, the lines,
   * each ended by "\n" (a CR kept)]`. Only files rg found to be ASCII throughout, with no NUL, and
   * fewer than maxCount candidate lines; the others are read by the server.
   */
  lines?: LinesOfFile[];
}

/** One file's candidate lines and their context (FilesAnswer.lines). */
export interface LinesOfFile {
  path: string;
  groups: [number, string][];
}

/**
 * A grep that gave no usable answer: `pattern` (ripgrep refused the pattern), `limit` (the
 * answer would pass the broker's output cap), `failed` (ripgrep or bubblewrap failed), `request`
 * (the request did not check out).
 */
export interface ErrorAnswer {
  type: "error";
  id: number;
  code: "pattern" | "limit" | "failed" | "request";
  message: string;
}

/** What the broker sends. */
export type BrokerAnswer = HelloAnswer | FilesAnswer | ErrorAnswer;

/** Longest line either side accepts (bytes), a request or an answer. */
export const MAX_REQUEST_LINE = 64 * 1024;
/** Longest pattern (UTF-16 units): the longest query a search takes, with room to translate. */
export const MAX_PATTERN = 16 * 1024;
/** Longest base path (UTF-16 units). */
export const MAX_BASE = 4096;
/** Most bytes of paths in one answer: past it the answer is `limit`. */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** The Unix socket's name in the broker's private directory. */
export const SOCKET_NAME = "engine.sock";

/** A request that did not check out, with the reason. */
export class BadRequest extends Error {}

const GREP_KEYS = [
  "type",
  "id",
  "base",
  "pattern",
  "literal",
  "ignoreCase",
  "hidden",
  "skipGit",
  "maxFileBytes",
  "lines",
];

function linesAsk(v: unknown): LinesAsk | null {
  if (v === null) return null;
  if (typeof v !== "object" || Array.isArray(v)) {
    throw new BadRequest("lines must be null or an object");
  }
  const o = v as Record<string, unknown>;
  exactKeys(o, ["context", "maxCount"]);
  const int = (k: string, min: number, max: number) => {
    const n = o[k];
    if (!Number.isSafeInteger(n) || (n as number) < min || (n as number) > max) {
      throw new BadRequest(`lines.${k} must be an integer from ${min} to ${max}`);
    }
    return n as number;
  };
  return {
    context: int("context", 0, MAX_LINES_CONTEXT),
    maxCount: int("maxCount", 1, MAX_LINES_COUNT),
  };
}

function exactKeys(o: Record<string, unknown>, keys: readonly string[]): void {
  const own = Object.keys(o);
  const extra = own.find((k) => !keys.includes(k));
  if (extra !== undefined) throw new BadRequest(`unknown field ${JSON.stringify(extra)}`);
  const missing = keys.find((k) => !Object.hasOwn(o, k));
  if (missing !== undefined) throw new BadRequest(`missing field ${JSON.stringify(missing)}`);
}

function requestId(v: unknown): number {
  if (!Number.isSafeInteger(v) || (v as number) < 0) {
    throw new BadRequest("id must be a non-negative integer");
  }
  return v as number;
}

function bool(o: Record<string, unknown>, key: string): boolean {
  if (typeof o[key] !== "boolean") throw new BadRequest(`${key} must be a boolean`);
  return o[key] as boolean;
}

/**
 * A workspace-relative directory path as the walk spells one: "." or segments joined by "/",
 * none empty, "." or "..", no NUL. Never absolute, never leaving the root.
 */
export function checkBase(v: unknown): string {
  if (typeof v !== "string" || v.length === 0 || v.length > MAX_BASE) {
    throw new BadRequest("base must be a non-empty string of at most 4096 characters");
  }
  if (v === ".") return v;
  for (const seg of v.split("/")) {
    if (seg === "" || seg === "." || seg === ".." || seg.includes("\0")) {
      throw new BadRequest(
        "base must be a workspace-relative path without empty, . or .. segments",
      );
    }
  }
  return v;
}

function grep(o: Record<string, unknown>): GrepRequest {
  exactKeys(o, GREP_KEYS);
  const pattern = o.pattern;
  if (typeof pattern !== "string" || pattern.length === 0 || pattern.length > MAX_PATTERN) {
    throw new BadRequest("pattern must be a non-empty string of at most 16384 characters");
  }
  if (pattern.includes("\0")) throw new BadRequest("pattern must not contain NUL");
  if (!Number.isSafeInteger(o.maxFileBytes) || (o.maxFileBytes as number) < 0) {
    throw new BadRequest("maxFileBytes must be a non-negative integer");
  }
  return {
    type: "grep",
    id: requestId(o.id),
    base: checkBase(o.base),
    pattern,
    literal: bool(o, "literal"),
    ignoreCase: bool(o, "ignoreCase"),
    hidden: bool(o, "hidden"),
    skipGit: bool(o, "skipGit"),
    maxFileBytes: o.maxFileBytes as number,
    lines: linesAsk(o.lines),
  };
}

/** Checks one parsed request line; a BadRequest says what is wrong. */
export function checkRequest(v: unknown): BrokerRequest {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new BadRequest("a request is a JSON object");
  }
  const o = v as Record<string, unknown>;
  switch (o.type) {
    case "hello":
      exactKeys(o, ["type", "token"]);
      if (typeof o.token !== "string") throw new BadRequest("token must be a string");
      return { type: "hello", token: o.token };
    case "grep":
      return grep(o);
    case "cancel":
      exactKeys(o, ["type", "id"]);
      return { type: "cancel", id: requestId(o.id) };
    default:
      throw new BadRequest("type must be hello, grep or cancel");
  }
}
