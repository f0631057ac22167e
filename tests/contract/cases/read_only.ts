/**
 * Contract table, section "read-only mode, unknown".
 * Read-only mode and unknown operations.
 */
import type { Case } from "../_model.ts";
import { A, err, SERVERS_UNKNOWN_TOOL } from "./_shared.ts";

/** The rows of section "read-only mode, unknown", in table order. */
export const READ_ONLY_CASES: Case[] = [
  {
    name: "READ_ONLY: write_file in read-only mode (servers do not list it: unknown tool)",
    op: "write_file",
    config: "ro",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("new.txt"), content: "x" }),
    expect: err("READ_ONLY"),
    byAdapter: SERVERS_UNKNOWN_TOOL,
  },
  {
    name: "READ_ONLY: delete_path in read-only mode (servers do not list it: unknown tool)",
    op: "delete_path",
    config: "ro",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("a.txt"), confirm: true }),
    expect: err("READ_ONLY"),
    byAdapter: SERVERS_UNKNOWN_TOOL,
  },
  {
    name: "READ_ONLY: copy_path in read-only mode (servers do not list it: unknown tool)",
    op: "copy_path",
    config: "ro",
    fixture: { "a.txt": A },
    args: (p) => ({ source: p("a.txt"), destination: p("b.txt") }),
    expect: err("READ_ONLY"),
    byAdapter: SERVERS_UNKNOWN_TOOL,
  },
  {
    name: "UNKNOWN_OPERATION: no such operation (CLI: usage error; servers: unknown tool)",
    op: "no_such_operation",
    fixture: {},
    args: () => ({}),
    expect: err("UNKNOWN_OPERATION", undefined, {
      available: [
        "workspace_info",
        "list_directory",
        "read_file",
        "read_files",
        "read_media",
        "get_file_info",
        "find_files",
        "search_text",
      ],
    }),
    byAdapter: { cli: { usage: true }, ...SERVERS_UNKNOWN_TOOL },
  },
];
