/**
 * Contract table, section "INVALID_ARGUMENT".
 * INVALID_ARGUMENT: arguments the schemas or the operations refuse.
 */
import type { Case } from "../_model.ts";
import { A, BASE, err, issue, nameCursor, SORT } from "./_shared.ts";

/** The rows of section "INVALID_ARGUMENT", in table order. */
export const INVALID_ARGUMENT_CASES: Case[] = [
  {
    name: "INVALID_ARGUMENT: unknown argument",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt"), bogus: 1 }),
    expect: err("INVALID_ARGUMENT", "bogus", issue("", 'Unrecognized key: "bogus"')),
  },
  {
    name: "INVALID_ARGUMENT: path of the wrong type",
    op: "get_file_info",
    fixture: BASE,
    args: () => ({ path: 7 }),
    expect: err(
      "INVALID_ARGUMENT",
      "path",
      issue("path", "Invalid input: expected string, received number"),
    ),
  },
  {
    name: "INVALID_ARGUMENT: null path",
    op: "read_file",
    fixture: BASE,
    args: () => ({ path: null }),
    expect: err(
      "INVALID_ARGUMENT",
      "path",
      issue("path", "Invalid input: expected string, received null"),
    ),
  },
  {
    name: "INVALID_ARGUMENT: empty path",
    op: "list_directory",
    fixture: BASE,
    args: () => ({ path: "" }),
    expect: err(
      "INVALID_ARGUMENT",
      "path",
      issue("path", "Too small: expected string to have >=1 characters"),
    ),
  },
  {
    name: "INVALID_ARGUMENT: NUL byte in a path",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt\u0000.png") }),
    expect: err("INVALID_ARGUMENT", "path"),
  },
  {
    name: "INVALID_ARGUMENT: depth out of range",
    op: "list_directory",
    fixture: BASE,
    args: (p) => ({ path: p("."), depth: 11 }),
    expect: err("INVALID_ARGUMENT", "depth", issue("depth", "Too big: expected number to be <=10")),
  },
  {
    name: "INVALID_ARGUMENT: limit above the configured maxListEntries",
    op: "list_directory",
    fixture: BASE,
    args: (p) => ({ path: p("."), limit: 1001 }),
    expect: err("INVALID_ARGUMENT", "limit", { limit: 1000 }),
  },
  {
    name: "INVALID_ARGUMENT: foreign cursor",
    op: "list_directory",
    fixture: BASE,
    args: (p) => ({ path: p("."), cursor: btoa(JSON.stringify({ v: 1, o: 1, k: "nope" })) }),
    expect: err("INVALID_ARGUMENT", "cursor"),
  },
  {
    name: "INVALID_ARGUMENT: unknown list_directory sortBy",
    op: "list_directory",
    fixture: BASE,
    args: (p) => ({ path: p("."), sortBy: "ctime" }),
    expect: err(
      "INVALID_ARGUMENT",
      "sortBy",
      issue("sortBy", 'Invalid option: expected one of "name"|"size"|"mtime"'),
    ),
  },
  {
    name: "INVALID_ARGUMENT: unknown list_directory order",
    op: "list_directory",
    fixture: BASE,
    args: (p) => ({ path: p("."), order: "newest" }),
    expect: err(
      "INVALID_ARGUMENT",
      "order",
      issue("order", 'Invalid option: expected one of "asc"|"desc"'),
    ),
  },
  {
    name: "INVALID_ARGUMENT: a cursor of the name order reused with sortBy size",
    op: "list_directory",
    fixture: SORT,
    args: (p) => ({ path: p("."), limit: 2, sortBy: "size", cursor: nameCursor(p("."), 4) }),
    expect: err("INVALID_ARGUMENT", "cursor"),
  },
  {
    name: "INVALID_ARGUMENT: endLine before startLine",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt"), startLine: 3, endLine: 2 }),
    expect: err(
      "INVALID_ARGUMENT",
      "endLine",
      issue("endLine", "endLine must not be less than startLine"),
    ),
  },
  {
    name: "INVALID_ARGUMENT: tailLines with startLine",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt"), startLine: 1, tailLines: 2 }),
    expect: err(
      "INVALID_ARGUMENT",
      "tailLines",
      issue("tailLines", "tailLines cannot be combined with startLine or endLine"),
    ),
  },
  {
    name: "INVALID_ARGUMENT: read_files with no paths",
    op: "read_files",
    fixture: BASE,
    args: () => ({ paths: [] }),
    expect: err(
      "INVALID_ARGUMENT",
      "paths",
      issue("paths", "Too small: expected array to have >=1 items"),
    ),
  },
  {
    name: "INVALID_ARGUMENT: startLine past the end",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt"), startLine: 9 }),
    expect: err("INVALID_ARGUMENT", "startLine", { totalLines: 3 }),
  },
  {
    name: "INVALID_ARGUMENT: maxBytes above a --limit maxReadBytes",
    op: "read_file",
    config: "small",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt"), maxBytes: 65 }),
    expect: err("INVALID_ARGUMENT", "maxBytes", { limit: 64 }),
  },
  {
    name: "INVALID_ARGUMENT: multi-line literal query",
    op: "search_text",
    fixture: BASE,
    args: (p) => ({ query: "alpha\nbeta", path: p(".") }),
    expect: err("INVALID_ARGUMENT", "query"),
  },
  {
    name: "INVALID_ARGUMENT: edits empty",
    op: "edit_file",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("a.txt"), edits: [] }),
    expect: err(
      "INVALID_ARGUMENT",
      "edits",
      issue("edits", "Too small: expected array to have >=1 items"),
    ),
  },
  {
    name: "INVALID_ARGUMENT: expectedSha256 not 64 hex digits",
    op: "write_file",
    fixture: { "a.txt": A },
    args: (p) => ({
      path: p("a.txt"),
      content: "x",
      ifExists: "overwrite",
      expectedSha256: "abc",
      confirm: true,
    }),
    expect: err(
      "INVALID_ARGUMENT",
      "expectedSha256",
      issue("expectedSha256", "must be 64 hex digits"),
    ),
  },
  {
    name: "INVALID_ARGUMENT: the workspace root cannot be deleted",
    op: "delete_path",
    fixture: { "a.txt": A },
    args: () => ({ path: ".", recursive: true, confirm: true }),
    expect: err("INVALID_ARGUMENT", "path"),
  },
  {
    name: "INVALID_ARGUMENT: the workspace root cannot be moved",
    op: "move_path",
    fixture: { "a.txt": A },
    args: (p) => ({ source: ".", destination: p("x") }),
    expect: err("INVALID_ARGUMENT", "source"),
  },
  {
    name: "INVALID_ARGUMENT: a directory cannot move into itself",
    op: "move_path",
    fixture: BASE,
    args: (p) => ({ source: p("dir"), destination: p("dir/sub/dir") }),
    expect: err("INVALID_ARGUMENT", "destination"),
  },
  {
    name: "INVALID_ARGUMENT: a directory cannot be copied into itself",
    op: "copy_path",
    fixture: BASE,
    args: (p) => ({ source: p("dir"), destination: p("dir/sub/dir"), recursive: true }),
    expect: err("INVALID_ARGUMENT", "destination"),
  },
  {
    name: "INVALID_ARGUMENT: the workspace root cannot be copied",
    op: "copy_path",
    fixture: { "a.txt": A },
    args: (p) => ({ source: ".", destination: p("x"), recursive: true }),
    expect: err("INVALID_ARGUMENT", "source"),
  },
  {
    name: "INVALID_ARGUMENT: source and destination are the same path",
    op: "move_path",
    fixture: { "a.txt": A },
    args: (p) => ({ source: p("a.txt"), destination: p("./a.txt") }),
    expect: err("INVALID_ARGUMENT", "destination"),
  },
  {
    name: "INVALID_ARGUMENT: a lone UTF-16 surrogate in a path",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p("a\ud800.txt") }),
    expect: err("INVALID_ARGUMENT", "path"),
    ignore: {
      httpModern:
        "a transport-level refusal before the tool runs: the v2 client mirrors the path into " +
        "Mcp-Param-Path as UTF-8 (the lone surrogate becomes U+FFFD), so the server's header/body " +
        "check answers HTTP 400 / JSON-RPC -32020; every other adapter reaches the tool",
    },
  },
];
