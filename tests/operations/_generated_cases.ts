/**
 * The cases of generated_checks_test.ts: hand-made hostile inputs for an operation, every single
 * change of a value (a key removed, added, retyped; bounds crossed; prototype keys), and real
 * results of every operation run on a temporary workspace, as MCP's structuredContent.
 */
import { z } from "zod";
import { runOperation, Workspace } from "../../mod.ts";
import type { OperationDefinition } from "../../src/operations/types.ts";
import { structuredFor } from "../../src/server/content.ts";
import { makeTree, withTempDir } from "../_support/fs.ts";
import { Arbitrary } from "./_arbitrary.ts";

type Json = Record<string, unknown>;

/** Values of every kind, put in place of any one value. */
const WRONG: readonly unknown[] = [null, undefined, 0, 1.5, "", "x", true, [], {}, NaN];

function isPlain(v: unknown): v is Json {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** A value with an own `__proto__` key, as JSON.parse makes it. */
function withProtoKey(v: Json): Json {
  const text = JSON.stringify(v);
  return JSON.parse(text === "{}" ? '{"__proto__":{}}' : `{"__proto__":{"a":1},${text.slice(1)}`);
}

/** Changes of a scalar: bounds crossed, floats for integers, astral and lone surrogate text. */
function scalarChanges(v: unknown): unknown[] {
  if (typeof v === "string") return ["", "😀", "\ud800", v + "😀", " " + v, v.slice(1)];
  if (typeof v === "number") {
    return [v + 0.5, v - 1, v + 1, -v - 1, -0, 2 ** 53, -(2 ** 53), Infinity, String(v), 1e21];
  }
  if (typeof v === "boolean") return [!v, String(v), v ? 1 : 0];
  return [];
}

/** Every value one change away from `value` (depth-bounded), the root replaced included. */
export function mutations(value: unknown, depth = 0): unknown[] {
  const out: unknown[] = depth === 0 ? [...WRONG] : [];
  out.push(...scalarChanges(value));
  if (depth > 4) return out;
  if (Array.isArray(value)) {
    out.push([], [...value, ...value], [undefined, ...value]);
    if (value.length > 0) {
      out.push(new Array(10_001).fill(value[0]));
      for (const m of mutations(value[0], depth + 1)) out.push([m, ...value.slice(1)]);
    }
  } else if (isPlain(value)) {
    out.push({ ...value, extra: 1 }, { ...value, constructor: 1 }, withProtoKey(value));
    out.push(Object.assign(Object.create(null), value), { ...value, [Symbol("s")]: 1 });
    const hidden = { ...value };
    Object.defineProperty(hidden, "extra", { value: 1, enumerable: false });
    out.push(hidden);
    for (const key of Object.keys(value)) {
      const { [key]: _gone, ...rest } = value;
      out.push(rest, { ...value, [key]: undefined });
      for (const w of WRONG) out.push({ ...value, [key]: w });
      for (const m of mutations(value[key], depth + 1)) out.push({ ...value, [key]: m });
    }
  }
  return out;
}

/** A few inputs zod accepts, derived from the schema with a fixed seed (one with every key). */
function validInputs(op: OperationDefinition): unknown[] {
  const json = z.toJSONSchema(op.inputSchema, { io: "input" }) as Json;
  const arbitrary = new Arbitrary(7, 0);
  const found: unknown[] = [];
  for (let i = 0; i < 2000 && found.length < 6; i++) {
    const v = arbitrary.value(json);
    if (op.inputSchema.safeParse(v).success) found.push(v);
  }
  if (found.length === 0) throw new Error(`${op.name}: no valid input found`);
  found.sort((a, b) => Object.keys(b as Json).length - Object.keys(a as Json).length);
  return found;
}

/** Range arguments, valid and not: endLine before startLine, tailLines with either. */
const RANGES: readonly Json[] = [
  { startLine: 3, endLine: 2 },
  { startLine: 2, endLine: 2 },
  { tailLines: 1, startLine: 1 },
  { tailLines: 1, endLine: 1 },
  { tailLines: 4 },
  { endLine: 1 },
];

/** Valid and hostile inputs of an operation: each valid one, and every change of the first. */
export function hostileInputs(op: OperationDefinition): unknown[] {
  const valid = validInputs(op);
  const first = valid[0] as Json;
  const reversed = Object.fromEntries(Object.entries(first).reverse());
  // The refinements a JSON Schema cannot hold (read_file's and read_files' rangeChecks).
  const { startLine: _s, endLine: _e, tailLines: _t, ...bare } = first;
  const ranges = "startLine" in (op.inputSchema as z.ZodObject).shape
    ? RANGES.map((r) => ({ ...bare, ...r }))
    : [];
  return [
    ...valid,
    ...ranges,
    reversed,
    undefined,
    new Date(0),
    Object.create(null),
    Object.create({ path: "a" }),
    JSON.parse('{"__proto__":{"path":"a"}}'),
    ...mutations(first),
  ];
}

const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

/** Runs each call on a workspace and collects the structuredContent of each result. */
async function collect(ws: Workspace, calls: [string, Json][]): Promise<[string, Json][]> {
  const out: [string, Json][] = [];
  for (const [name, args] of calls) {
    const result = await runOperation({ workspace: ws }, name, args);
    out.push([name, structuredFor(name, result)]);
  }
  return out;
}

const READ_CALLS: [string, Json][] = [
  ["workspace_info", {}],
  ["list_directory", { depth: 3, sizes: true }],
  ["list_directory", { path: "src", sortBy: "size" }],
  ["read_file", { path: "a.txt" }],
  ["read_file", { path: "a.txt", startLine: 2, endLine: 3 }],
  ["read_file", { path: "a.txt", tailLines: 2 }],
  ["read_file", { path: "a.txt", maxBytes: 8 }],
  ["read_file", { path: "big.txt" }],
  ["read_files", { paths: ["a.txt", "missing.txt", "src/x.ts"] }],
  ["read_media", { path: "p.png" }],
  ["get_file_info", { path: "a.txt" }],
  ["get_file_info", { path: "src" }],
  ["find_files", { pattern: "**/*.ts" }],
  ["search_text", { query: "line", contextLines: 1 }],
  ["search_text", { query: "l.ne [0-9]", regex: true, include: ["*.txt"] }],
];

const WRITE_CALLS: [string, Json][] = [
  ["write_file", { path: "new/w.txt", content: "hello\n", createParents: true }],
  ["edit_file", { path: "a.txt", edits: [{ oldText: "line 3 é", newText: "LINE 3 é" }] }],
  ["create_directory", { path: "made/deep" }],
  ["copy_path", { source: "src", destination: "src2", recursive: true }],
  ["move_path", { source: "src2", destination: "src3" }],
  ["delete_path", { path: "src3", recursive: true, confirm: true }],
];

/** Real results of every operation, as MCP's structuredContent, from a temporary workspace. */
export function realResults(): Promise<[string, Json][]> {
  return withTempDir(async (root) => {
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1} é😀`).join("\n") + "\n";
    await makeTree(root, {
      "a.txt": lines,
      "big.txt": lines.repeat(4),
      "src/x.ts": "export {};\n",
    });
    await Deno.writeFile(`${root}/p.png`, PNG);
    const limits = { maxHashBytes: 2000 };
    const read = await Workspace.open({ root, writable: false, limits, engine: "inline" });
    const write = await Workspace.open({ root, writable: true, limits, engine: "inline" });
    return [...await collect(read, READ_CALLS), ...await collect(write, WRITE_CALLS)];
  });
}
