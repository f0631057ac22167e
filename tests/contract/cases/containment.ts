/**
 * Contract table, section "containment".
 * Containment: paths that leave the workspace, by name or through links.
 */
import type { Case } from "../_model.ts";
import { A, BASE, err, OUT } from "./_shared.ts";

/** The rows of section "containment", in table order. */
export const CONTAINMENT_CASES: Case[] = [
  {
    name: "OUTSIDE_WORKSPACE: .. escapes the root",
    op: "read_file",
    fixture: BASE,
    args: () => ({ path: "../outside/secret.txt" }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: .. after descending still escapes",
    op: "get_file_info",
    fixture: BASE,
    args: (p) => ({ path: p("dir/../../../../../../../../outside/secret.txt") }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: absolute path elsewhere",
    op: "read_file",
    fixture: BASE,
    args: () => ({ path: "/etc/passwd" }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: absolute path that starts inside and climbs out",
    op: "read_file",
    fixture: BASE,
    args: (p) => ({ path: p.abs("../../../outside/secret.txt") }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: write_file to an absolute path outside creates nothing",
    op: "write_file",
    fixture: { "a.txt": A },
    args: (p) => ({ path: p.out("new.txt"), content: "x" }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: through a symlink that leads outside",
    op: "read_file",
    fixture: OUT,
    args: (p) => ({ path: p("out/secret.txt") }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: through a link out even when .. would come back in",
    op: "read_file",
    fixture: OUT,
    args: (p) => ({ path: p("out/../ws/a.txt") }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: list_directory of a link to outside",
    op: "list_directory",
    fixture: OUT,
    args: (p) => ({ path: p("out") }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: search_text path through a link out",
    op: "search_text",
    fixture: OUT,
    args: (p) => ({ query: "secret", path: p("out") }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: write_file through a link out creates nothing outside",
    op: "write_file",
    fixture: OUT,
    args: (p) => ({ path: p("out/new.txt"), content: "x" }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: edit_file through a link out",
    op: "edit_file",
    fixture: OUT,
    args: (p) => ({ path: p("out/secret.txt"), edits: [{ oldText: "secret", newText: "x" }] }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: create_directory below a link out",
    op: "create_directory",
    fixture: OUT,
    args: (p) => ({ path: p("out/newdir") }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
  {
    name: "OUTSIDE_WORKSPACE: move_path source behind a link out",
    op: "move_path",
    fixture: OUT,
    args: (p) => ({ source: p("out/secret.txt"), destination: p("stolen.txt") }),
    expect: err("OUTSIDE_WORKSPACE", "source"),
  },
  {
    name: "OUTSIDE_WORKSPACE: move_path destination outside",
    op: "move_path",
    fixture: { "a.txt": A },
    args: (p) => ({ source: p("a.txt"), destination: "../outside/a.txt" }),
    expect: err("OUTSIDE_WORKSPACE", "destination"),
  },
  {
    name: "OUTSIDE_WORKSPACE: copy_path source behind a link out copies nothing in",
    op: "copy_path",
    fixture: OUT,
    args: (p) => ({ source: p("out/secret.txt"), destination: p("stolen.txt") }),
    expect: err("OUTSIDE_WORKSPACE", "source"),
  },
  {
    name: "OUTSIDE_WORKSPACE: copy_path destination outside",
    op: "copy_path",
    fixture: { "a.txt": A },
    args: (p) => ({ source: p("a.txt"), destination: "../outside/a.txt" }),
    expect: err("OUTSIDE_WORKSPACE", "destination"),
  },
  {
    name: "OUTSIDE_WORKSPACE: copy_path destination through a link out creates nothing outside",
    op: "copy_path",
    fixture: OUT,
    args: (p) => ({ source: p("a.txt"), destination: p("out/copy.txt") }),
    expect: err("OUTSIDE_WORKSPACE", "destination"),
  },
  {
    name: "OUTSIDE_WORKSPACE: delete_path of a file behind a link out",
    op: "delete_path",
    fixture: OUT,
    args: (p) => ({ path: p("out/secret.txt"), confirm: true }),
    expect: err("OUTSIDE_WORKSPACE", "path"),
  },
];
