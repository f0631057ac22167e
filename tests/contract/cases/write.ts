/**
 * Contract table, section "success: write".
 * Successful writes: write_file, edit_file, create_directory, move_path, delete_path.
 */
import { type Case, DIR, link } from "../_model.ts";
import { A, B_MD, BASE, BIG_CONTENT, C_TXT, diff, sha } from "./_shared.ts";

/** The rows of section "success: write", in table order. */
export const WRITE_CASES: Case[] = [
  {
    name: "write_file: creates a new file",
    op: "write_file",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("new.txt"), content: "fresh\n" }),
    expect: { result: { path: "new.txt", created: true, size: 6, sha256: sha("fresh\n") } },
    after: { "a.txt": A, "new.txt": "fresh\n" },
  },
  {
    name: "write_file: large content (over one argv string; CLI gets it on stdin)",
    op: "write_file",
    fixture: {},
    args: (p) => ({ path: p("big.txt"), content: BIG_CONTENT }),
    expect: {
      result: { path: "big.txt", created: true, size: 153_000, sha256: sha(BIG_CONTENT) },
    },
    after: { "big.txt": BIG_CONTENT },
  },
  {
    name: "write_file: createParents creates the missing directories",
    op: "write_file",
    fixture: {},
    args: (p) => ({ path: p("x/y/z.txt"), content: "z\u00e9", createParents: true }),
    expect: {
      result: { path: "x/y/z.txt", created: true, size: 3, sha256: sha("z\u00e9") },
    },
    after: { "x/y/z.txt": "z\u00e9" },
  },
  {
    name: "write_file: overwrite with confirm and a matching expectedSha256",
    op: "write_file",
    fixture: { "a.txt": A },
    args: (p) => ({
      path: p("a.txt"),
      content: "replaced\n",
      ifExists: "overwrite",
      expectedSha256: sha(A),
      confirm: true,
    }),
    expect: {
      result: {
        path: "a.txt",
        created: false,
        size: 9,
        sha256: sha("replaced\n"),
        previousSha256: sha(A),
      },
    },
    after: { "a.txt": "replaced\n" },
  },
  {
    name: "write_file: an NFC path replaces the existing NFD entry (no second file)",
    op: "write_file",
    fixture: { "cafe\u0301.txt": "old\n" },
    args: (p) => ({
      path: p("caf\u00e9.txt"),
      content: "new\n",
      ifExists: "overwrite",
      confirm: true,
    }),
    expect: {
      result: {
        path: "cafe\u0301.txt",
        created: false,
        size: 4,
        sha256: sha("new\n"),
        previousSha256: sha("old\n"),
      },
    },
    after: { "cafe\u0301.txt": "new\n" },
  },
  {
    name: "edit_file: one replacement, unified diff",
    op: "edit_file",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("a.txt"), edits: [{ oldText: "beta", newText: "BETA" }] }),
    expect: {
      result: {
        path: "a.txt",
        dryRun: false,
        changed: true,
        replacements: 1,
        lineEnding: "lf",
        diff: diff("a.txt", "@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n"),
        sha256Before: sha(A),
        sha256After: sha("alpha\nBETA\ngamma\n"),
      },
    },
    after: { "a.txt": "alpha\nBETA\ngamma\n" },
  },
  {
    name: "edit_file: dryRun reports the diff and writes nothing",
    op: "edit_file",
    fixture: { "a.txt": A },
    args: (p) => ({
      path: p("a.txt"),
      edits: [{ oldText: "gamma", newText: "delta" }],
      dryRun: true,
    }),
    expect: {
      result: {
        path: "a.txt",
        dryRun: true,
        changed: true,
        replacements: 1,
        lineEnding: "lf",
        diff: diff("a.txt", "@@ -1,3 +1,3 @@\n alpha\n beta\n-gamma\n+delta\n"),
        sha256Before: sha(A),
        sha256After: sha("alpha\nbeta\ndelta\n"),
      },
    },
  },
  {
    name: "edit_file: CRLF kept, LF oldText matches, replaceAll, no final newline kept",
    op: "edit_file",
    fixture: { "w.txt": "x one\r\nx two\r\nend" },
    args: (p) => ({
      path: p("w.txt"),
      edits: [
        { oldText: "x", newText: "y", replaceAll: true },
        { oldText: "one\ny two", newText: "1\ny 2" },
      ],
    }),
    expect: {
      result: {
        path: "w.txt",
        dryRun: false,
        changed: true,
        replacements: 3,
        lineEnding: "crlf",
        diff: diff(
          "w.txt",
          "@@ -1,3 +1,3 @@\n-x one\n-x two\n+y 1\n+y 2\n end\n\\ No newline at end of file\n",
        ),
        sha256Before: sha("x one\r\nx two\r\nend"),
        sha256After: sha("y 1\r\ny 2\r\nend"),
      },
    },
    after: { "w.txt": "y 1\r\ny 2\r\nend" },
  },
  {
    name: "edit_file: a no-op edit reports changed false and an empty diff",
    op: "edit_file",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("a.txt"), edits: [{ oldText: "beta", newText: "beta" }] }),
    expect: {
      result: {
        path: "a.txt",
        dryRun: false,
        changed: false,
        replacements: 1,
        lineEnding: "lf",
        diff: "",
        sha256Before: sha(A),
        sha256After: sha(A),
      },
    },
  },
  {
    name: "create_directory: missing parents created",
    op: "create_directory",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p("n/m") }),
    expect: { result: { path: "n/m", created: true, createdPaths: ["n", "n/m"] } },
    after: { "a.txt": A, "n/m": DIR },
  },
  {
    name: "create_directory: an existing directory is success, created false",
    op: "create_directory",
    fixture: BASE,
    args: (p) => ({ path: p("dir/sub") }),
    expect: { result: { path: "dir/sub", created: false, createdPaths: [] } },
  },
  {
    name: "create_directory: through a symlink inside, result names the real path",
    op: "create_directory",
    fixture: { "d/": DIR, "l": link("d") },
    args: (p) => ({ path: p("l/new") }),
    expect: { result: { path: "d/new", created: true, createdPaths: ["d/new"] } },
    after: { "d/new": DIR, "l": link("d") },
  },
  {
    name: "move_path: rename a file into another directory",
    op: "move_path",
    fixture: BASE,
    args: (p) => ({ source: p("a.txt"), destination: p("dir/sub/moved.txt") }),
    expect: {
      result: {
        source: "a.txt",
        destination: "dir/sub/moved.txt",
        type: "file",
        overwritten: false,
      },
    },
    after: {
      "dir/b.md": B_MD,
      "dir/sub/c.txt": C_TXT,
      "dir/sub/moved.txt": A,
      ".hidden": "hidden beta\n",
    },
  },
  {
    name: "move_path: a symlink moves as a link (target text unchanged)",
    op: "move_path",
    fixture: { "a.txt": A, "l": link("a.txt"), "d/": DIR },
    args: (p) => ({ source: p("l"), destination: p("d/l2") }),
    expect: {
      result: { source: "l", destination: "d/l2", type: "symlink", overwritten: false },
    },
    after: { "a.txt": A, "d/l2": link("a.txt") },
  },
  {
    name: "move_path: overwrite replaces an empty directory with a directory",
    op: "move_path",
    fixture: { "src/f.txt": "f\n", "empty": DIR },
    args: (p) => ({ source: p("src"), destination: p("empty"), overwrite: true }),
    expect: {
      result: { source: "src", destination: "empty", type: "directory", overwritten: true },
    },
    after: { "empty/f.txt": "f\n" },
  },
  {
    name: "move_path: overwrite replaces an existing file",
    op: "move_path",
    fixture: BASE,
    args: (p) => ({ source: p("a.txt"), destination: p("dir/b.md"), overwrite: true }),
    expect: {
      result: { source: "a.txt", destination: "dir/b.md", type: "file", overwritten: true },
    },
    after: { "dir/b.md": A, "dir/sub/c.txt": C_TXT, ".hidden": "hidden beta\n" },
  },
  {
    name: "delete_path: a file, confirmed",
    op: "delete_path",
    fixture: BASE,
    args: (p) => ({ path: p("a.txt"), confirm: true }),
    expect: { result: { path: "a.txt", type: "file", deleted: true } },
    after: { "dir/b.md": B_MD, "dir/sub/c.txt": C_TXT, ".hidden": "hidden beta\n" },
  },
  {
    name: "delete_path: a non-empty directory with recursive",
    op: "delete_path",
    fixture: BASE,
    args: (p) => ({ path: p("dir"), recursive: true, confirm: true }),
    expect: { result: { path: "dir", type: "directory", deleted: true } },
    after: { "a.txt": A, ".hidden": "hidden beta\n" },
  },
  {
    name: "delete_path: an empty directory needs no recursive",
    op: "delete_path",
    fixture: { "a.txt": A, "e/": DIR },
    args: (p) => ({ path: p("e"), confirm: true }),
    expect: { result: { path: "e", type: "directory", deleted: true } },
    after: { "a.txt": A },
  },
  {
    name: "delete_path: a symlink to a directory, never its target",
    op: "delete_path",
    fixture: { ...BASE, "l": link("dir") },
    args: (p) => ({ path: p("l"), confirm: true }),
    expect: { result: { path: "l", type: "symlink", deleted: true } },
    after: BASE,
  },
];
