/**
 * Contract table, section "several roots".
 * Two roots (decision 0064), configuration "roots": the first read-write (`--root` with
 * `--write`), the second read-only (`--read-only-root`). A relative path addresses the first
 * root, an absolute path the root it lies under; results show the first root's paths relative
 * and the second root's absolute (compared as `<second>`, the case's directory there); writes
 * under the second root are READ_ONLY, moves between the roots CROSS_DEVICE; an address in no
 * root (by name, through a link or by `..`) is OUTSIDE_WORKSPACE naming both roots.
 */
import { relative } from "node:path";
import { type Case, type Fixture, limitsOf, link, type Paths } from "../_model.ts";
import { A, B_MD, C_TXT, copied, entry, err, POOL_SIZE, sha } from "./_shared.ts";

/** The second root's own a.txt: a relative `a.txt` must not reach it. */
const SECOND_A = "second root's a\n";
/** The second root's d.txt (a search match). */
const D_TXT = "delta beta\n";

/** The case's fixture in the first root. */
const FIRST: Fixture = { "a.txt": A };
/** The case's fixture in the second (read-only) root. */
const SECOND: Fixture = {
  "a.txt": SECOND_A,
  "b.md": B_MD,
  "docs/c.txt": C_TXT,
  "docs/d.txt": D_TXT,
};

/** What OUTSIDE_WORKSPACE and CROSS_DEVICE add with several roots: the roots, in order. */
const ROOTS = { roots: ["<root>", "<second>"] };
/** The details of a write refused under the read-only root. */
const SECOND_READ_ONLY = { root: "<second>" };

/** A whole read of a text file (read_file, read_files). */
const wholeRead = (path: string, content: string, lines: number) => ({
  path,
  content,
  size: new TextEncoder().encode(content).length,
  startLine: 1,
  endLine: lines,
  truncated: false,
  totalLines: lines,
  sha256: sha(content),
});

/**
 * A glob of the case's directory in every root, for a walk of all roots: `**` where the case has
 * the roots to itself, `PREFIX/**` on the servers, whose roots hold every case's directory (and
 * both eras' over HTTP).
 */
const caseGlob = (p: Paths) => (p(".") === "." ? "**" : `${p(".")}/**`);

/** The rows of section "several roots", in table order. */
export const ROOTS_CASES: Case[] = [
  {
    name: "roots: read_file by a relative path reads the first root",
    op: "read_file",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ path: p("a.txt") }),
    expect: { result: wholeRead("a.txt", A, 3) },
  },
  {
    name: "roots: read_file by an absolute path in the second root (result path absolute)",
    op: "read_file",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ path: p.second("b.md") }),
    expect: { result: wholeRead("<second>/b.md", B_MD, 2) },
  },
  {
    name: "roots: list_directory of the second root shows its paths absolute",
    op: "list_directory",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ path: p.second(".") }),
    expect: {
      result: {
        path: "<second>",
        entries: [
          entry("<second>/a.txt", "file", 16),
          entry("<second>/b.md", "file", 14),
          entry("<second>/docs", "directory", 0),
        ],
        total: 3,
        truncated: false,
      },
    },
  },
  {
    name: "roots: find_files in the second root shows its paths absolute",
    op: "find_files",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ pattern: "*.txt", path: p.second(".") }),
    expect: {
      result: {
        path: "<second>",
        matches: [
          { path: "<second>/a.txt", type: "file" },
          { path: "<second>/docs/c.txt", type: "file" },
          { path: "<second>/docs/d.txt", type: "file" },
        ],
        visited: 5,
        truncated: false,
      },
    },
  },
  {
    name: "roots: search_text in the second root shows its paths absolute",
    op: "search_text",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ query: "beta", path: p.second(".") }),
    expect: {
      result: {
        matches: [
          { path: "<second>/b.md", line: 2, column: 1, text: "beta line" },
          { path: "<second>/docs/d.txt", line: 1, column: 7, text: "delta beta" },
        ],
        filesSearched: 4,
        filesMatched: 2,
        filesSkipped: { binary: 0, tooLarge: 0, unreadable: 0 },
        visited: 5,
        truncated: false,
      },
    },
  },
  {
    name: "roots: read_files reads each path on the root it addresses",
    op: "read_files",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ paths: [p("a.txt"), p.second("a.txt"), "/etc/passwd"] }),
    expect: {
      result: {
        files: [
          wholeRead("a.txt", A, 3),
          wholeRead("<second>/a.txt", SECOND_A, 1),
          {
            path: "/etc/passwd",
            error: {
              code: "OUTSIDE_WORKSPACE",
              message: 'path "/etc/passwd" is an absolute path outside the workspace ' +
                "(the roots: <root>, <second> (read-only))",
              argument: "paths[2]",
              details: ROOTS,
            },
          },
        ],
        truncated: false,
      },
    },
  },
  {
    name: "roots: workspace_info lists both roots, the second read-only",
    op: "workspace_info",
    config: "roots",
    args: () => ({}),
    expect: {
      result: {
        root: "ws",
        mode: "read-write",
        roots: [
          { name: "ws", path: ".", mode: "read-write" },
          { name: "second", path: "<second>", mode: "read-only" },
        ],
        rootsFrom: "configured",
        limits: limitsOf("roots"),
        permissions: "<process-dependent>",
        // As the other workspace_info rows: the pool everywhere, search built in (decision 0054).
        engine: { mode: "workers", workers: POOL_SIZE, search: "builtin" },
        containment: "<process-dependent>",
      },
    },
  },
  {
    name: "roots: write_file by a relative path writes the first root",
    op: "write_file",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ path: p("new.txt"), content: "fresh\n" }),
    expect: { result: { path: "new.txt", created: true, size: 6, sha256: sha("fresh\n") } },
    after: { ...FIRST, "new.txt": "fresh\n" },
  },
  {
    name: "READ_ONLY: write_file in the read-only root creates nothing",
    op: "write_file",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ path: p.second("new.txt"), content: "x" }),
    expect: err("READ_ONLY", undefined, SECOND_READ_ONLY),
  },
  {
    name: "READ_ONLY: create_directory in the read-only root creates nothing",
    op: "create_directory",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ path: p.second("newdir") }),
    expect: err("READ_ONLY", undefined, SECOND_READ_ONLY),
  },
  {
    name: "READ_ONLY: edit_file in the read-only root changes nothing",
    op: "edit_file",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ path: p.second("b.md"), edits: [{ oldText: "beta", newText: "BETA" }] }),
    expect: err("READ_ONLY", undefined, SECOND_READ_ONLY),
  },
  {
    name: "READ_ONLY: delete_path in the read-only root deletes nothing",
    op: "delete_path",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ path: p.second("docs"), recursive: true, confirm: true }),
    expect: err("READ_ONLY", undefined, SECOND_READ_ONLY),
  },
  {
    name: "roots: copy_path from the read-only root into the first",
    op: "copy_path",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ source: p.second("b.md"), destination: p("b-copy.md") }),
    expect: {
      result: copied("<second>/b.md", "b-copy.md", "file", { files: 1, bytes: 14 }),
    },
    after: { ...FIRST, "b-copy.md": B_MD },
  },
  {
    name: "READ_ONLY: copy_path into the read-only root copies nothing",
    op: "copy_path",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ source: p("a.txt"), destination: p.second("copy.txt") }),
    expect: err("READ_ONLY", undefined, SECOND_READ_ONLY),
  },
  {
    name: "CROSS_DEVICE: move_path between the roots moves nothing",
    op: "move_path",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ source: p("a.txt"), destination: p.second("moved.txt") }),
    expect: err("CROSS_DEVICE", "destination", ROOTS),
  },
  {
    name: "OUTSIDE_WORKSPACE: an absolute path in neither root names both",
    op: "read_file",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    args: (p) => ({ path: p.out("secret.txt") }),
    expect: err("OUTSIDE_WORKSPACE", "path", ROOTS),
  },
  {
    name: "OUTSIDE_WORKSPACE: a link in the second root into the first is not followed",
    op: "read_file",
    config: "roots",
    fixture: FIRST,
    second: { ...SECOND, "to-first.txt": link("{{first}}/a.txt") },
    args: (p) => ({ path: p.second("to-first.txt") }),
    expect: err("OUTSIDE_WORKSPACE", "path", ROOTS),
  },
  {
    name: "OUTSIDE_WORKSPACE: .. out of the second root, even into the first",
    op: "read_file",
    config: "roots",
    fixture: FIRST,
    second: SECOND,
    // `<second>/../…/a.txt`: lexically the first root's a.txt, but addressed under the second.
    args: (p) => ({ path: p.second(relative(p.second("."), p.abs("a.txt"))) }),
    expect: err("OUTSIDE_WORKSPACE", "path", ROOTS),
  },
  {
    // The servers share their roots between cases (and eras), so the walk is held to the case's
    // directory by a glob and its counts are masked.
    name: "roots: find_files with allRoots walks both roots in order (the second's paths absolute)",
    op: "find_files",
    config: "roots",
    fixture: { "allroots-find-1.txt": "one\n" },
    second: { "docs/allroots-find-2.txt": "two\n" },
    args: (p) => ({ pattern: `${caseGlob(p)}/allroots-find-*.txt`, allRoots: true }),
    mask: ["visited"],
    expect: {
      result: {
        path: ".",
        matches: [
          { path: "allroots-find-1.txt", type: "file" },
          { path: "<second>/docs/allroots-find-2.txt", type: "file" },
        ],
        visited: "<masked>",
        truncated: false,
      },
    },
  },
  {
    name: "roots: search_text with allRoots finds matches in both roots, first root first",
    op: "search_text",
    config: "roots",
    fixture: { "n.txt": "the allroots-needle-7 here\n" },
    second: { "docs/m.txt": "x\nallroots-needle-7\n" },
    args: (p) => ({
      query: "allroots-needle-7",
      allRoots: true,
      include: [`${caseGlob(p)}/*`],
    }),
    mask: ["visited", "filesSearched", "filesSkipped"],
    expect: {
      result: {
        matches: [
          { path: "n.txt", line: 1, column: 5, text: "the allroots-needle-7 here" },
          { path: "<second>/docs/m.txt", line: 2, column: 1, text: "allroots-needle-7" },
        ],
        filesSearched: "<masked>",
        filesMatched: 2,
        filesSkipped: "<masked>",
        visited: "<masked>",
        truncated: false,
      },
    },
  },
];
