/** The operation registry: metadata, JSON Schemas, input validation, modes, unknown names. */
import assert from "node:assert/strict";
import {
  availableOperations,
  DEFAULT_LIMITS,
  ERROR_CODES,
  getOperation,
  jsonSchemas,
  OPERATIONS,
  parseInput,
  runOperation,
  Workspace,
} from "../../mod.ts";
import { expectError, makeTree, openWorkspace, run, runError, withTempDir } from "./_helpers.ts";

const READ_OPS = [
  "workspace_info",
  "list_directory",
  "read_file",
  "read_files",
  "read_media",
  "get_file_info",
  "find_files",
  "search_text",
];
const WRITE_OPS = [
  "write_file",
  "edit_file",
  "create_directory",
  "move_path",
  "copy_path",
  "delete_path",
];

Deno.test("registry: every operation has complete metadata and 2020-12 JSON Schemas", () => {
  assert.deepStrictEqual(OPERATIONS.map((op) => op.name), [...READ_OPS, ...WRITE_OPS]);
  for (const op of OPERATIONS) {
    assert.match(op.name, /^[a-z][a-z_]*$/, op.name);
    assert.equal(getOperation(op.name), op);
    assert.ok(op.title.length > 0, `${op.name}: title`);
    assert.ok(op.description.length > 40, `${op.name}: description`);
    assert.equal(op.annotations.openWorldHint, false, `${op.name}: openWorldHint`);
    assert.equal(op.annotations.readOnlyHint, !op.needsWrite, `${op.name}: readOnlyHint`);
    assert.equal(op.needsWrite, WRITE_OPS.includes(op.name), `${op.name}: needsWrite`);
    if (op.needsWrite) {
      assert.equal(typeof op.annotations.destructiveHint, "boolean");
    } else {
      assert.equal(op.annotations.destructiveHint, false, `${op.name}: destructiveHint`);
      assert.equal(op.annotations.idempotentHint, true, `${op.name}: idempotentHint`);
    }
    const schemas = jsonSchemas(op);
    assert.equal(jsonSchemas(op), schemas, `${op.name}: schemas are cached`);
    for (const [which, schema] of Object.entries(schemas)) {
      assert.equal(
        schema.$schema,
        "https://json-schema.org/draft/2020-12/schema",
        `${op.name} ${which}: $schema`,
      );
      assert.equal(schema.type, "object", `${op.name} ${which}: type`);
      assert.equal(typeof schema.properties, "object", `${op.name} ${which}: properties`);
      // Serializable as plain JSON.
      assert.deepStrictEqual(JSON.parse(JSON.stringify(schema)), schema);
    }
    assert.equal(schemas.input.additionalProperties, false, `${op.name}: strict input`);
  }
  assert.deepStrictEqual(
    [...new Set(OPERATIONS.map((o) => o.name))].length,
    OPERATIONS.length,
    "unique names",
  );
});

Deno.test("registry: input schemas name their required arguments", () => {
  const required = (name: string) =>
    (jsonSchemas(getOperation(name)!).input.required as string[] | undefined ?? []).slice().sort();
  assert.deepStrictEqual(required("workspace_info"), []);
  assert.deepStrictEqual(required("list_directory"), []);
  assert.deepStrictEqual(required("read_file"), ["path"]);
  assert.deepStrictEqual(required("find_files"), ["pattern"]);
  assert.deepStrictEqual(required("search_text"), ["query"]);
  assert.deepStrictEqual(required("write_file"), ["content", "path"]);
  assert.deepStrictEqual(required("edit_file"), ["edits", "path"]);
  assert.deepStrictEqual(required("move_path"), ["destination", "source"]);
  assert.deepStrictEqual(required("copy_path"), ["destination", "source"]);
  assert.deepStrictEqual(required("delete_path"), ["path"]);
  const props = jsonSchemas(getOperation("read_file")!).input.properties as Record<string, unknown>;
  assert.deepStrictEqual(Object.keys(props).sort(), [
    "endLine",
    "maxBytes",
    "path",
    "startLine",
    "tailLines",
  ]);
});

Deno.test("registry: availableOperations by mode", () => {
  assert.deepStrictEqual(availableOperations(false).map((o) => o.name), READ_OPS);
  assert.deepStrictEqual(availableOperations(true).map((o) => o.name), [
    ...READ_OPS,
    ...WRITE_OPS,
  ]);
  assert.equal(getOperation("READ_FILE"), undefined);
  assert.equal(getOperation("nope"), undefined);
});

Deno.test("registry: unknown arguments are INVALID_ARGUMENT naming them", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "a" });
    const ws = await openWorkspace(dir);
    const e = await runError(
      ws,
      "read_file",
      { path: "a.txt", bogus: 1, other: true },
      "INVALID_ARGUMENT",
    );
    assert.match(e.message, /bogus/);
    assert.match(e.message, /other/);
    const issues = (e.details as { issues: { path: string; message: string }[] }).issues;
    assert.ok(issues.length >= 1);
    await runError(ws, "workspace_info", { x: 1 }, "INVALID_ARGUMENT");
    // Type errors name the argument, including nested ones.
    await runError(ws, "read_file", { path: 5 }, "INVALID_ARGUMENT", "path");
    await runError(ws, "read_file", {}, "INVALID_ARGUMENT", "path");
    await runError(
      ws,
      "find_files",
      { pattern: "*", exclude: ["a", 3] },
      "INVALID_ARGUMENT",
      "exclude[1]",
    );
    // parseInput applies defaults.
    assert.deepStrictEqual(parseInput(getOperation("list_directory")!, undefined), {
      path: ".",
      depth: 1,
      includeHidden: false,
      sortBy: "name",
      sizes: false,
    });
    // null arguments are treated as {}.
    const info = await run(ws, "workspace_info", null as unknown as Record<string, unknown>);
    assert.equal(info.mode, "read-only");
  });
});

Deno.test("registry: write operations on a read-only workspace are READ_ONLY", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a.txt": "a" });
    const ws = await openWorkspace(dir);
    assert.equal(ws.writable, false);
    const calls: Record<string, Record<string, unknown>> = {
      write_file: { path: "b.txt", content: "b" },
      edit_file: { path: "a.txt", edits: [{ oldText: "a", newText: "b" }] },
      create_directory: { path: "d" },
      move_path: { source: "a.txt", destination: "c.txt" },
      copy_path: { source: "a.txt", destination: "c.txt" },
      delete_path: { path: "a.txt", confirm: true },
    };
    for (const [name, args] of Object.entries(calls)) {
      const e = await runError(ws, name, args, "READ_ONLY");
      assert.match(e.message, new RegExp(name));
    }
    // Even with invalid arguments, the mode is what is reported.
    await runError(ws, "write_file", { nonsense: true }, "READ_ONLY");
    const names: string[] = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepStrictEqual(names, ["a.txt"]);
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "a");
  });
});

Deno.test("registry: unknown operation is UNKNOWN_OPERATION", async () => {
  await withTempDir(async (dir) => {
    const ws = await openWorkspace(dir);
    const e = await runError(ws, "rm_rf", {}, "UNKNOWN_OPERATION");
    assert.deepStrictEqual((e.details as { available: string[] }).available, READ_OPS);
    const w = await openWorkspace(dir, { writable: true });
    const e2 = await runError(w, "Read_File", {}, "UNKNOWN_OPERATION");
    assert.deepStrictEqual((e2.details as { available: string[] }).available, [
      ...READ_OPS,
      ...WRITE_OPS,
    ]);
  });
});

Deno.test("registry: workspace_info describes mode and limits", async () => {
  await withTempDir(async (dir) => {
    const ws = await openWorkspace(dir, { limits: { maxMatches: 7 } });
    const r = await run(ws, "workspace_info", {});
    assert.equal(r.root, dir.split("/").pop());
    assert.equal(r.mode, "read-only");
    assert.deepStrictEqual(r.limits, { ...DEFAULT_LIMITS, maxMatches: 7 });
    // This test process runs with --allow-read and --allow-write.
    assert.equal(r.permissions.readWorkspace, "granted");
    assert.equal(r.permissions.writeWorkspace, "granted");
    const w = await openWorkspace(dir, { writable: true });
    assert.equal((await run(w, "workspace_info", {})).mode, "read-write");
  });
});

Deno.test("registry: Workspace.open validates its root and limits", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "f.txt": "f" });
    await expectError(Workspace.open({ root: `${dir}/missing` }), "NOT_FOUND", "root");
    await expectError(Workspace.open({ root: `${dir}/f.txt` }), "NOT_A_DIRECTORY", "root");
    await expectError(
      Workspace.open({ root: dir, limits: { maxReadBytes: 0 } }),
      "INVALID_ARGUMENT",
      "limits",
    );
    await expectError(
      Workspace.open({ root: dir, limits: { maxReadBytes: 1.5 } }),
      "INVALID_ARGUMENT",
      "limits",
    );
    const ws = await Workspace.open({ root: dir });
    assert.equal(ws.writable, false);
    assert.deepStrictEqual({ ...ws.limits }, { ...DEFAULT_LIMITS });
    assert.ok(Object.isFrozen(ws.limits));
  });
});

Deno.test("registry: errors from the file system reach callers as WorkspaceError", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, { "a/x.txt": "x", "b/y.txt": "y" });
    const ws = await openWorkspace(dir, { writable: true });
    // rename(2) refuses to replace a non-empty directory; the caller sees a typed code.
    const e = await expectError(
      runOperation({ workspace: ws }, "move_path", {
        source: "a",
        destination: "b",
        overwrite: true,
      }),
      "DIRECTORY_NOT_EMPTY",
    );
    assert.ok((ERROR_CODES as readonly string[]).includes(e.code));
  });
});
