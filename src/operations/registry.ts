/** The operation registry: the one table every adapter (CLI, stdio, HTTP, library) reads. */
import { z } from "zod";
import type { OperationContext, OperationDefinition } from "./types.ts";
import { TOOLS } from "../tools/mod.ts";
import { WorkspaceError } from "../workspace/errors.ts";
import PRECOMPUTED from "../tools/json_schemas.json" with { type: "json" };
import { checkedInput, generatedChecks, type OperationChecks } from "./checks.ts";
import { runOnRoots } from "./roots_route.ts";

/** Every operation, in the deterministic order adapters list them (src/tools/mod.ts's order). */
export const OPERATIONS: readonly OperationDefinition[] = Object.freeze(
  TOOLS.map((t) => t.operation),
);

const BY_NAME = new Map(OPERATIONS.map((op) => [op.name, op]));

/** The operations available in a mode: write operations only when writing is enabled. */
export function availableOperations(writable: boolean): OperationDefinition[] {
  return OPERATIONS.filter((op) => writable || !op.needsWrite);
}

/** Looks an operation up by exact (case-sensitive) name. */
export function getOperation(name: string): OperationDefinition | undefined {
  return BY_NAME.get(name);
}

/** JSON Schemas (2020-12) of one operation, derived from its zod schemas once and cached. */
export interface OperationJsonSchemas {
  /** JSON Schema of the arguments (MCP inputSchema). */
  input: Record<string, unknown>;
  /** JSON Schema of the result (MCP outputSchema). */
  output: Record<string, unknown>;
}

const JSON_SCHEMAS = new Map<string, OperationJsonSchemas>();

/**
 * The JSON Schemas of an operation as zod converts them (what src/tools/json_schemas.json holds, written
 * by scripts/json_schemas.ts; tests/operations/json_schemas_test.ts keeps the two equal).
 */
export function computeJsonSchemas(op: OperationDefinition): OperationJsonSchemas {
  return {
    input: z.toJSONSchema(op.inputSchema, { target: "draft-2020-12", io: "input" }) as Record<
      string,
      unknown
    >,
    output: z.toJSONSchema(op.outputSchema, { target: "draft-2020-12", io: "output" }) as Record<
      string,
      unknown
    >,
  };
}

/**
 * The JSON Schemas of an operation: precomputed (src/tools/json_schemas.json) for the registry's own
 * operations, so a server's first tools/list does not wait for zod's conversion (decision
 * 0036); computed on first use, then reused, for any other definition.
 */
export function jsonSchemas(op: OperationDefinition): OperationJsonSchemas {
  let s = JSON_SCHEMAS.get(op.name);
  if (!s) {
    const pre = (PRECOMPUTED as Record<string, OperationJsonSchemas | undefined>)[op.name];
    s = pre !== undefined && BY_NAME.get(op.name) === op
      ? { input: structuredClone(pre.input), output: structuredClone(pre.output) }
      : computeJsonSchemas(op);
    JSON_SCHEMAS.set(op.name, s);
  }
  return s;
}

function argumentPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) {
    out += typeof p === "number" ? `[${p}]` : out === "" ? String(p) : `.${String(p)}`;
  }
  return out;
}

/**
 * The name an own `__proto__` argument key is given by transports whose parser would otherwise
 * drop it (src/workarounds/proto_key.ts); refused like `__proto__` itself.
 */
export const PROTO_KEY_SENTINEL = "\u0000__proto__";

/**
 * Finds an argument object whose prototype was set through a `__proto__` key: JSON.parse keeps
 * `"__proto__"` as an own key (which the strict schemas refuse as unknown), but a parser that
 * assigns keys one by one (as the MCP SDK's does) turns it into the object's prototype, where a
 * schema never sees it. Returns the argument path of the first one, or null. The path is built
 * only on the way back from a find: the common answer, none, allocates nothing per key.
 */
function prototypeKeyAt(value: unknown, depth = 0): PropertyKey[] | null {
  if (value === null || typeof value !== "object" || depth > 64) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = prototypeKeyAt(value[i], depth + 1);
      if (found) return [i, ...found];
    }
    return null;
  }
  const proto = Object.getPrototypeOf(value);
  if (
    proto !== Object.prototype || Object.hasOwn(value, "__proto__") ||
    Object.hasOwn(value, PROTO_KEY_SENTINEL)
  ) {
    return ["__proto__"];
  }
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const found = prototypeKeyAt((value as Record<string, unknown>)[keys[i]], depth + 1);
    if (found) return [keys[i], ...found];
  }
  return null;
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v = raw;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  array: "an array",
  object: "an object",
};

/**
 * One plain sentence for a schema issue, worded for a model (`path` is required, `startLine`
 * must be an integer, the bound of a too-small or too-big value); zod's own message for the
 * rest. The issue itself stays in the error's details.
 */
function issueSentence(issue: z.core.$ZodIssue, argument: string | undefined, value: unknown) {
  const name = argument === undefined ? "the arguments" : `\`${argument}\``;
  const plain = (s: string) => (argument === undefined ? s : `${argument}: ${s}`);
  switch (issue.code) {
    case "unrecognized_keys":
      return `unknown argument${issue.keys.length === 1 ? "" : "s"}: ${
        issue.keys.map((k) => `\`${argumentPath([...issue.path, k])}\``).join(", ")
      }`;
    case "invalid_type":
      if (value === undefined && argument !== undefined) return `${name} is required`;
      return `${name} must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case "invalid_value":
      return `${name} must be ${issue.values.length === 1 ? "" : "one of "}${
        issue.values.map((v) => JSON.stringify(v)).join(", ")
      }`;
    case "too_small":
    case "too_big": {
      const small = issue.code === "too_small";
      const bound = small
        ? (issue as z.core.$ZodIssueTooSmall).minimum
        : (issue as z.core.$ZodIssueTooBig).maximum;
      const n = Number(bound);
      const unit = issue.origin === "string"
        ? ` character${n === 1 ? "" : "s"}`
        : issue.origin === "array" || issue.origin === "set"
        ? ` item${n === 1 ? "" : "s"}`
        : "";
      if (small && n === 1 && unit !== "" && issue.inclusive !== false) {
        return `${name} must not be empty`;
      }
      const which = issue.inclusive === false
        ? (small ? "more than" : "less than")
        : (small ? "at least" : "at most");
      return `${name} must ${unit === "" ? "be" : "have"} ${which} ${bound}${unit}`;
    }
    default:
      return plain(issue.message);
  }
}

/**
 * The generated checks of a registry operation (generated/json_checks.js, decision 0062); undefined
 * for any other definition, which zod alone validates.
 */
export function operationChecks(op: OperationDefinition): OperationChecks | undefined {
  return BY_NAME.get(op.name) === op ? generatedChecks(op.name) : undefined;
}

/**
 * Validates raw arguments against an operation's input schema; failures are INVALID_ARGUMENT.
 * The generated check answers first: what it accepts (with the schema's refinements passed) is
 * returned as zod's parse would return it; anything else is zod's to parse and to word.
 */
export function parseInput(op: OperationDefinition, raw: unknown): unknown {
  const protoAt = prototypeKeyAt(raw);
  if (protoAt) {
    const argument = argumentPath(protoAt);
    throw new WorkspaceError("INVALID_ARGUMENT", "unknown argument: `__proto__`", {
      argument,
      details: {
        issues: [{
          path: argumentPath(protoAt.slice(0, -1)),
          message: "__proto__ is not an argument",
        }],
      },
    });
  }
  const checks = operationChecks(op);
  if (checks !== undefined) {
    const checked = checkedInput(checks, op.inputSchema, raw ?? {});
    if (checked !== undefined) return checked;
  }
  const parsed = op.inputSchema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  let argument = argumentPath(issue.path) || undefined;
  if (issue.code === "unrecognized_keys") {
    // Name the (first) unknown argument itself, under its parent if nested.
    argument = argumentPath([...issue.path, issue.keys[0]]);
  }
  throw new WorkspaceError(
    "INVALID_ARGUMENT",
    issueSentence(issue, argument, valueAt(raw ?? {}, issue.path)),
    {
      argument,
      details: {
        issues: parsed.error.issues.map((i) => ({
          path: argumentPath(i.path),
          message: i.message,
        })),
      },
    },
  );
}

/**
 * Runs an operation by name: checks it exists and is enabled, validates the input,
 * runs it. Throws WorkspaceError; the result is what MCP returns as structuredContent.
 *
 * @example
 * ```ts
 * import { runOperation, Workspace } from "@wmcp/wmcp";
 *
 * const workspace = await Workspace.open({ root: "." });
 * const { content } = await runOperation({ workspace }, "read_file", { path: "README.md" });
 * ```
 */
export async function runOperation(
  ctx: OperationContext,
  name: string,
  rawInput: unknown,
): Promise<Record<string, unknown>> {
  const op = getOperation(name);
  if (!op) {
    throw new WorkspaceError("UNKNOWN_OPERATION", `no operation named ${JSON.stringify(name)}`, {
      details: { available: availableOperations(ctx.workspace.writable).map((o) => o.name) },
    });
  }
  if (op.needsWrite && !ctx.workspace.writable) {
    ctx.workspace.assertWritable(op.name);
  }
  const input = parseInput(op, rawInput);
  if (ctx.signal?.aborted) throw new WorkspaceError("CANCELLED", "the operation was cancelled");
  // The workspace's readers/writer discipline: no write runs while another operation is between
  // its check and its use. Held only for this one run: a confirmation asked of a person happens
  // between two runs, never inside one.
  const release = await ctx.workspace.lock.acquire(op.needsWrite ? "write" : "read", {
    signal: ctx.signal,
    timeoutMs: ctx.workspace.limits.maxOperationMs,
  });
  try {
    // Cancelled while the lock was being granted: nothing has run yet.
    if (ctx.signal?.aborted) throw new WorkspaceError("CANCELLED", "the operation was cancelled");
    return await runOnRoots(op, ctx, input as Record<string, unknown>);
  } finally {
    release();
  }
}
