/**
 * The declarations of the CLI commands that run in this process (src/cli/declare.ts): `op`,
 * `op list`, `serve stop` and `config print`. Plain data: help, parsing and the router read them
 * without loading the commands' work.
 */
import type { CommandDecl } from "./declare.ts";

/** The MCP hosts `config print` writes a snippet for. */
export const HOSTS = ["claude-desktop", "claude-code", "vscode", "cursor", "generic"] as const;

/** The `key=value` / `key:=json` argument syntax of `op` and `tools call`, for help. */
export const SHORTHAND =
  `Arguments: key=value (a string), key:=json (a JSON value: n:=5, flag:=true,
  list:='["a","b"]'), beside or instead of one of --arguments JSON | --arguments-file PATH |
  --arguments-stdin. Keys are literal (no nesting: give an object with key:='{...}'); a key given
  twice, also across --arguments and key=value, is a usage error.`;

const OUTPUT = { kind: "choice", choices: ["json", "pretty"], value: "FORMAT" } as const;

/** `op NAME ...`: one workspace operation in this process. */
export const OP = {
  path: ["op"],
  usage: [
    "list [--write] [--output json|pretty]",
    `NAME [key=value | key:=json ...] [--arguments JSON | --arguments-file PATH |
               --arguments-stdin] [--root DIR] [--write] [--limit name=N ...] [--output json|pretty]`,
    "NAME --help     the operation's arguments, defaults and an example",
  ],
  about: "Runs one workspace operation in this process: no server, no network.",
  flags: {
    root: { kind: "dir", help: "workspace root (default: the directory you run from)" },
    write: {
      kind: "bool",
      help: "enable write_file, edit_file, create_directory, move_path, delete_path",
    },
    limit: {
      kind: "limit",
      multiple: true,
      help: "override a limit (see workspace_info), repeatable",
    },
    output: { ...OUTPUT, help: "json (default when not a terminal) or pretty" },
    arguments: { kind: "string", value: "JSON", help: "the arguments as one JSON object" },
    "arguments-file": {
      kind: "path",
      value: "PATH",
      help: "the arguments as a JSON object in a file (- for stdin)",
    },
    "arguments-stdin": { kind: "bool", help: "the arguments as a JSON object on stdin" },
  },
  words: true,
  sections: [
    SHORTHAND,
    `The result is the operation's JSON object on stdout. Errors are one JSON object
{"error":{"code",...}} on stderr. Exit codes: 0 success, 1 operation error, 2 usage error
(including arguments that do not match the operation's input schema: nothing ran), 130
interrupted (Ctrl-C).`,
  ],
  examples: [
    "op list --write",
    "op read_file path=README.md startLine:=1 endLine:=20",
    "op search_text --root ~/project query=TODO include:='[\"*.ts\"]'",
    "op write_file --write path=notes.txt content='hello'",
  ],
} as const satisfies CommandDecl;

/** `op list`: the operations and their schemas. */
export const OP_LIST = {
  path: ["op", "list"],
  usage: ["[--write] [--output json|pretty]"],
  about:
    "Lists the operations with their annotations and JSON Schemas; --write adds the write operations.",
  flags: {
    write: { kind: "bool", help: "list the write operations too" },
    output: { ...OUTPUT, help: "json (default when not a terminal) or pretty" },
  },
  examples: ["op list --write --output pretty"],
} as const satisfies CommandDecl;

/** `serve stop --pid-file FILE`: stops a server started with --pid-file. */
export const SERVE_STOP = {
  path: ["serve", "stop"],
  usage: ["--pid-file FILE [--timeout SECONDS]"],
  about: `Stops the server that wrote FILE (serve http --pid-file FILE): SIGTERM, then waits up to
--timeout seconds (default 15) for it to drain. Prints one JSON line saying what happened.`,
  flags: {
    "pid-file": { kind: "path", help: "the pid file the server wrote" },
    timeout: { kind: "seconds", help: "how long to wait for it to drain (default 15)" },
  },
  examples: ["serve stop --pid-file /tmp/wmcp.pid --timeout 5"],
} as const satisfies CommandDecl;

/** `config print --host HOST ...`: an MCP host's configuration snippet. */
export const CONFIG_PRINT = {
  path: ["config", "print"],
  usage: [`--host claude-desktop|claude-code|vscode|cursor|generic
                         (--root DIR [--write] | --http URL) [--name NAME]`],
  about:
    `Prints the host's configuration snippet as JSON on stdout: it runs wmcp on DIR over stdio, or
connects to a running wmcp HTTP server at URL. Notes go to stderr (for claude-code, the
\`claude mcp add-json\` command line that installs the snippet).`,
  flags: {
    host: { kind: "choice", choices: HOSTS, value: "HOST", help: "the MCP host to configure" },
    root: { kind: "dir", help: "the directory to serve (stdio)" },
    write: { kind: "bool", help: "let the host's server write" },
    http: { kind: "url", help: "a running wmcp HTTP server instead of a stdio one" },
    name: { kind: "string", value: "NAME", help: "the server's name in the host (default wmcp)" },
  },
  examples: [
    "config print --host claude-desktop --root ~/project",
    "config print --host vscode --http http://127.0.0.1:8080/mcp",
  ],
} as const satisfies CommandDecl;

/** `deno task -q install`: the `wmcp` command on PATH (src/cli/install.ts). */
export const INSTALL = {
  path: ["install"],
  usage: ["[--bin-dir DIR] [--data-dir DIR] [--uninstall]"],
  about: `Puts a \`wmcp\` command on PATH: copies this Deno to DATA/runtime, caches the modules
with it, and writes BIN/wmcp, a launcher that runs this checkout's cli.ts with the router's
permissions. Run it again after moving the checkout. --uninstall removes the launcher and the
runtime it names.`,
  flags: {
    "bin-dir": { kind: "dir", help: "where the launcher goes (default ~/.local/bin)" },
    "data-dir": {
      kind: "dir",
      help: "where the runtime goes (default ${XDG_DATA_HOME:-~/.local/share}/wmcp)",
    },
    uninstall: { kind: "bool", help: "remove the launcher and its runtime instead" },
  },
  examples: ["install", "install --bin-dir ~/bin", "install --uninstall"],
} as const satisfies CommandDecl;

/** Every declared command, by its path (`"serve stop"`). */
export const DECLARED: ReadonlyMap<string, CommandDecl> = new Map(
  [OP, OP_LIST, SERVE_STOP, CONFIG_PRINT].map((d) => [d.path.join(" "), d]),
);
