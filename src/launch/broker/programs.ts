/**
 * The command lines of one checked grep request, ripgrep's and find's, and the bubblewrap sandbox
 * each runs in: only the workspace (read-only), the loader and libraries, and the program itself;
 * no network, no home, no /proc, no environment, new user, IPC, UTS and cgroup namespaces
 * (decision 0054). Every argument comes from a
 * typed field of the checked request: the pattern only ever as the value of `--regexp=`, the base
 * always spelled `./BASE` (a path, never an option or a find expression). rg's config files
 * (`--no-config`, and no RIPGREP_CONFIG_PATH in an empty environment), preprocessors,
 * compressed-file search and link following are never asked for; neither is any find action.
 *
 * @module
 */
import type { GrepRequest } from "../../workspace/native/protocol.ts";
import { LIBRARY_PATHS } from "../../sandbox/bwrap.ts";

/**
 * rg's arguments for a grep: the files holding a line the pattern can match, NUL-separated, as a
 * superset of the built-in engine's matching files. Every file is searched as text (`--text`: a NUL
 * does not end the search), ignore files are not applied (`--no-ignore`: the walk applies
 * .gitignore), BOMs are honoured as rg does by default (a superset: the built-in engine skips what
 * is not UTF-8), and no `--crlf` (it takes CR out of `.` and negated classes: a lone CR in a line
 * could not be matched; a translated regex's `$` allows one CR before the line's end instead, as
 * the built-in engine strips a line's trailing CR: src/workspace/regex/rg.ts). With `debug`, rg
 * also logs on stderr the files over maxFileBytes it did not search, which makes find's pass
 * (findLargeArgs) unneeded where that log has the expected form.
 */
export function rgArgs(r: GrepRequest, o: { debug?: boolean } = {}): string[] {
  // With --debug, rg names on stderr each file --max-filesize skipped (largeFromDebug).
  return [...(o.debug ? ["--debug"] : []), "--no-config", "--files-with-matches", ...rgRules(r)];
}

/**
 * rg's arguments for a grep that asks for lines (decision 0067): every line the pattern can match,
 * with `lines.context` lines around it, at most `lines.maxCount` per file, each as
 * `./PATH` NUL `N:` or `N-` (a candidate or a context line) and the line's bytes; the same file
 * rules as rgArgs (--text, --no-ignore, --max-filesize, hidden, the .git glob).
 */
export function rgLinesArgs(r: GrepRequest, o: { debug?: boolean } = {}): string[] {
  const lines = r.lines!;
  return [
    ...(o.debug ? ["--debug"] : []),
    "--no-config",
    "--line-number",
    "--with-filename",
    "--no-heading",
    "--no-context-separator",
    `--context=${lines.context}`,
    `--max-count=${lines.maxCount}`,
    ...rgRules(r),
  ];
}

/** What both greps share: NUL after names, the file rules, the case, the pattern, the base. */
function rgRules(r: GrepRequest): string[] {
  const args = ["--null", "--text", "--no-ignore", "--no-messages", "--color=never"];
  if (r.hidden) args.push("--hidden");
  if (r.skipGit) args.push("--glob=!.git/");
  args.push(r.ignoreCase ? "--ignore-case" : "--case-sensitive");
  if (r.literal) args.push("--fixed-strings");
  args.push(`--max-filesize=${r.maxFileBytes}`, `--regexp=${r.pattern}`, "--", dotted(r.base));
  return args;
}

/** A byte that is not ASCII, or NUL: a file holding one is read by the server (decision 0067). */
export const NOT_PLAIN = "(?-u:[\\x00\\x80-\\xFF])";

/**
 * rg's arguments naming which of `paths` (workspace-relative, as rg gave them) hold a NUL or a
 * byte that is not ASCII: each path after `--`, spelled `./PATH`, so none can be an option.
 */
export function notPlainArgs(paths: readonly string[]): string[] {
  return [
    "--no-config",
    "--files-with-matches",
    "--null",
    "--text",
    "--no-messages",
    "--color=never",
    `--regexp=${NOT_PLAIN}`,
    "--",
    ...paths.map((p) => `./${p}`),
  ];
}

/** The base as a path no program can take for an option: "./" before it. */
function dotted(base: string): string {
  return base === "." ? "." : `./${base}`;
}

/**
 * find's arguments: the regular files below the base larger than maxFileBytes (those rg does not
 * search), NUL-separated; links are not followed (find's default).
 */
export function findLargeArgs(r: GrepRequest): string[] {
  return [dotted(r.base), "-type", "f", "-size", `+${r.maxFileBytes}c`, "-print0"];
}

/** A debug line of rg's walk for a file --max-filesize skipped: `... ignoring ./PATH: N bytes`. */
const SKIPPED_LARGE = /^DEBUG\|ignore::walk\|[^|]*: ignoring (\.\/.*): \d+ bytes$/;
/** A debug line of rg's walk for an entry a rule left out (hidden, the `.git` glob). */
const SKIPPED_RULE = /^DEBUG\|ignore::walk\|[^|]*: ignoring \.\/.*: Ignore\(/;
/** The module prefix of rg's walk's debug lines. */
const WALK = "DEBUG|ignore::walk|";

/**
 * The files over maxFileBytes named by rg's --debug log on stderr (workspace-relative, as
 * outputPaths gives them); the lines that are not debug lines (an error message: rg runs with
 * --no-messages, so it has no other); and whether the log can be trusted. It can when every line
 * is a debug line and every line of rg's walk has one of the walk's two known forms, its path
 * starting with `./` (other modules' lines come in any order: rg builds some glob sets lazily, on
 * another thread). A name holding a newline splits a line in two, and the second part cannot be a
 * walk line of a known form (a name holds no `/`): such a log, or one of another ripgrep's form,
 * is not trusted, and find lists the large files instead. A name built to continue as another
 * module's whole debug line is not caught; it can only make `tooLarge` miscount, never change what
 * is read or matched.
 */
export function largeFromDebug(
  stderr: string,
): { large: string[]; other: string; trusted: boolean } {
  const large: string[] = [];
  const other: string[] = [];
  let trusted = true;
  for (const line of stderr.split("\n")) {
    if (line === "") continue;
    if (!line.startsWith("DEBUG|")) {
      other.push(line);
      trusted = false;
      continue;
    }
    const m = SKIPPED_LARGE.exec(line);
    if (m) large.push(m[1].slice(2));
    else if (line.startsWith(WALK) && !SKIPPED_RULE.test(line)) trusted = false;
  }
  return { large, other: other.join("\n"), trusted };
}

/** Where rg is looked for, in order (the broker may read these paths and its own directory). */
export const RG_CANDIDATES: readonly string[] = ["/usr/bin/rg", "/usr/local/bin/rg", "/bin/rg"];
/** Where GNU find is looked for, in order. */
export const FIND_CANDIDATES: readonly string[] = ["/usr/bin/find", "/bin/find"];

/**
 * The namespace flags of the programs' sandbox: user, IPC, network, UTS and cgroup unshared; the
 * pid namespace is not (its init would outlive a killed bwrap and hold the output pipe open), so a
 * killed bwrap takes its program with it (--die-with-parent).
 */
const ISOLATION = [
  "--die-with-parent",
  "--new-session",
  "--unshare-user",
  "--unshare-ipc",
  "--unshare-net",
  "--unshare-uts",
  "--unshare-cgroup-try",
];

/**
 * bwrap's arguments (without the program name) that run `program` (its absolute path) with
 * `args` in `root` (the workspace's real path), which is all of the file system it sees besides
 * the loader, the libraries and the program.
 */
export function sandboxArgs(o: { root: string; program: string; args: string[] }): string[] {
  const out = [...ISOLATION];
  for (const p of LIBRARY_PATHS) out.push("--ro-bind-try", p, p);
  if (!LIBRARY_PATHS.some((p) => o.program.startsWith(`${p}/`))) {
    out.push("--ro-bind", o.program, o.program);
  }
  out.push("--ro-bind", o.root, o.root, "--chdir", o.root, "--clearenv", o.program, ...o.args);
  return out;
}

/**
 * The workspace-relative paths in NUL-separated output of rg or find given the dotted base
 * ("./" taken off). Bytes that are not UTF-8 decode to U+FFFD: the walk reads such names whatever
 * the answer (search_prefiltered.ts).
 */
export function outputPaths(output: Uint8Array): string[] {
  const text = new TextDecoder().decode(output);
  const out: string[] = [];
  for (const p of text.split("\0")) {
    if (p === "") continue;
    out.push(p.startsWith("./") ? p.slice(2) : p);
  }
  return out;
}
