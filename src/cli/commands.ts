/**
 * The declarations of the CLI commands (src/cli/declare.ts): `op`, `op list`, `serve stop`,
 * `config print`, the client and auth commands, and `completion`. Plain data: help, parsing, the
 * router and the completion scripts read them without loading the commands' work.
 */
import type { CommandDecl, FlagDecl, FlagKind } from "./declare.ts";

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
               --arguments-stdin] [--root DIR ...] [--read-only-root DIR ...] [--write]
               [--limit name=N ...] [--output json|pretty]`,
    "NAME --help     the operation's arguments, defaults and an example",
  ],
  about: "Runs one workspace operation in this process: no server, no network.",
  flags: {
    root: {
      kind: "dir",
      multiple: true,
      help: "workspace root, repeatable (default: the directory you run from)",
    },
    "read-only-root": {
      kind: "dir",
      multiple: true,
      help: "a root that refuses every write, even with --write; repeatable",
    },
    write: {
      kind: "bool",
      help: "enable write_file, edit_file, create_directory, move_path, copy_path, delete_path",
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
                         (--root DIR ... [--read-only-root DIR ...] [--write] | --http URL)
                         [--name NAME] [--via deno|npx]`],
  about:
    `Prints the host's configuration snippet as JSON on stdout: it runs wmcp on DIR over stdio, or
connects to a running wmcp HTTP server at URL. Notes go to stderr (for claude-code, the
\`claude mcp add-json\` command line that installs the snippet). The entry starts wmcp with Deno
from this copy (--via deno, the default in a checkout) or through npx from the npm package
(--via npx, the default when this copy is the npm package).`,
  flags: {
    host: { kind: "choice", choices: HOSTS, value: "HOST", help: "the MCP host to configure" },
    root: { kind: "dir", multiple: true, help: "a directory to serve (stdio), repeatable" },
    "read-only-root": {
      kind: "dir",
      multiple: true,
      help: "a directory to serve that refuses writes even with --write, repeatable",
    },
    write: { kind: "bool", help: "let the host's server write" },
    http: { kind: "url", help: "a running wmcp HTTP server instead of a stdio one" },
    name: { kind: "string", value: "NAME", help: "the server's name in the host (default wmcp)" },
    via: {
      kind: "choice",
      choices: ["deno", "npx"],
      value: "HOW",
      help: "deno (this copy's serve.ts) or npx (the npm package @wmcp/wmcp)",
    },
  },
  examples: [
    "config print --host claude-desktop --root ~/project",
    "config print --host claude-code --root ~/project --via npx",
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

/** How the client commands reach a server (help: CONNECTION). */
export const CONNECTION =
  `Connection (default: the bundled stdio server on --root, read-only unless --write):
  --root DIR [--write]                        the bundled server's workspace
  --endpoint URL [--bearer-token-env VAR]     a Streamable HTTP server (--transport sse: HTTP+SSE;
                                              --transport stdio|http|sse checks the kind)
  --config FILE --server NAME                 a server from an mcpServers JSON file
  --protocol-version auto|2026-07-28|2025-11-25|2025-06-18|2025-03-26|2024-11-05
  --connect-timeout S (default 10)  --server-logs (the stdio server's stderr)
  --max-message-bytes N (one message from the server: stdio line, HTTP body, SSE event;
    default 67108864 = 64 MiB; over it: exit 4)
  OAuth: --client-id ID --client-secret-env VAR|--client-secret-file F --client-metadata-url URL
    --client-issuer URL --scope S --no-browser --auth-follow-redirects, or --no-auth-store (sign in
    without keeping tokens), --no-auth (never sign in); a --config entry's "oauth" gives the same
    --auth-timeout S (the sign-in at the browser, default 300; --connect-timeout does not count it)
Output: --output mcp-json|json|jsonl|pretty (pretty on a terminal, else mcp-json)
Exit codes: 0 success, 1 tool error, 2 usage, 3 transport, 4 protocol, 5 invalid result,
  6 input required, 7 timeout or cancelled, 8 authorization.`;

/** Time bounds and answers to a server's questions (help: TIME, INTERACTION). */
export const TIME = `Time: --timeout S (inactivity, default 60; progress resets it) --max-timeout S
Interaction: --non-interactive | --input-responses-file PATH, --max-input-rounds N (default 8)
Paging: --max-pages N (pages listed at most, default 100; a tool is found by listing)`;

/**
 * A flag described by a group's section (CONNECTION or TIME), its literal types kept. The
 * "connection" group is how a client command reaches its server: the flags its help examples
 * carry over from the command line (src/cli/help.ts).
 */
function grouped<G extends string>(group: G) {
  // deno-lint-ignore ban-types
  return <K extends FlagKind, const M extends Partial<FlagDecl> = {}>(
    kind: K,
    help: string,
    more?: M,
  ) => ({ kind, help, group, ...more }) as { kind: K; help: string; group: G } & M;
}
const connection = grouped("connection");
const output = grouped("output");
const time = grouped("time");

/**
 * The flags every client command takes (`server-info`, `tools`, `resources`, `prompts`, `ping`):
 * how to reach the server, time bounds, answers, and the paging bound (a tool is found by listing).
 */
export const CLIENT_FLAGS = {
  transport: connection("string", "the kind of server", { value: "stdio|http|sse" }),
  endpoint: connection("url", "a Streamable HTTP server"),
  config: connection("path", "an mcpServers JSON file"),
  server: connection("string", "the server's name in --config", { value: "NAME" }),
  root: connection("dir", "the bundled server's workspace"),
  write: connection("bool", "the bundled server's write tools"),
  "protocol-version": connection("string", "the protocol era", { default: "auto" }),
  "connect-timeout": connection("seconds", "connecting", { default: "10" }),
  "server-logs": connection("bool", "the stdio server's stderr"),
  "max-message-bytes": connection("count", "largest message from the server", {
    default: String(64 * 1024 * 1024),
  }),
  "bearer-token-env": connection("string", "a bearer token", { value: "VAR" }),
  "client-id": connection("string", "OAuth client", { value: "ID" }),
  "client-secret-env": connection("string", "OAuth client secret", { value: "VAR" }),
  "client-secret-file": connection("secret-file", "OAuth client secret"),
  "client-metadata-url": connection("url", "OAuth client metadata document"),
  "client-issuer": connection("url", "the issuer the client id belongs to"),
  scope: connection("string", "OAuth scope", { value: "S" }),
  "no-auth": connection("bool", "never sign in"),
  "no-auth-store": connection("bool", "sign in without keeping tokens"),
  "no-browser": connection("bool", "print the sign-in URL"),
  "auth-follow-redirects": connection("bool", "follow redirects to other origins"),
  "auth-timeout": connection("seconds", "the sign-in at the browser (default 300)"),
  output: output("string", "the output format", { value: "mcp-json|json|jsonl|pretty" }),
  timeout: time("seconds", "inactivity", { default: "60" }),
  "max-timeout": time("seconds", "the whole request"),
  "non-interactive": time("bool", "answer no question"),
  "input-responses-file": time("path", "answers to the server's questions"),
  "max-input-rounds": time("count", "rounds of questions", { default: "8" }),
  "max-pages": time("count", "pages listed at most", { default: "100" }),
} as const satisfies Record<string, FlagDecl>;

const SKIP_VALIDATION = {
  kind: "bool",
  help: "send arguments the tool's input schema refuses",
} as const;

/** `server-info`: the server's name, version, era and instructions. */
export const SERVER_INFO = {
  path: ["server-info"],
  usage: ["[CONNECTION] [--output FORMAT]"],
  about:
    "Connects, prints the server's name, version, protocol era and instructions, and disconnects.",
  flags: CLIENT_FLAGS,
  sections: [CONNECTION, TIME],
  examples: [
    "server-info --root ~/project",
    "server-info --endpoint http://127.0.0.1:8080/mcp --output json",
  ],
} as const satisfies CommandDecl;

/** The paging flags of a list command (`tools list`, `resources list`, ...). */
const PAGING_FLAGS = {
  "single-page": { kind: "bool", help: "only the first page" },
  cursor: { kind: "string", value: "C", help: "start at this page cursor" },
} as const satisfies Record<string, FlagDecl>;

/** `tools list`: every page of the server's tools. */
export const TOOLS_LIST = {
  path: ["tools", "list"],
  usage: ["[--single-page] [--cursor C] [--max-pages N] [CONNECTION] [OUTPUT]"],
  about:
    "Lists the server's tools (every page unless --single-page; at most --max-pages, default 100).",
  flags: { ...CLIENT_FLAGS, ...PAGING_FLAGS },
  sections: [CONNECTION, TIME],
  examples: [
    "tools list --root ~/project",
    "tools list --config ~/.mcp.json --server files --output json",
  ],
} as const satisfies CommandDecl;

/** `tools show NAME`: one tool's definition. */
export const TOOLS_SHOW = {
  path: ["tools", "show"],
  usage: ["NAME [CONNECTION] [OUTPUT]"],
  about:
    "Prints one tool's definition (input and output schema, annotations) as the server lists it.",
  flags: CLIENT_FLAGS,
  words: true,
  sections: [CONNECTION, TIME],
  examples: ["tools show read_file --root ~/project"],
} as const satisfies CommandDecl;

/** `tools call NAME ...`: one call. */
export const TOOLS_CALL = {
  path: ["tools", "call"],
  usage: [
    `NAME [key=value | key:=json ...]
         [--arguments JSON | --arguments-file PATH | --arguments-stdin]
         [--skip-local-validation] [TIME] [INTERACTION] [CONNECTION] [OUTPUT]`,
    "NAME --help [CONNECTION]   NAME's arguments, from the server",
  ],
  about:
    `Calls one tool. The arguments are checked against the tool's input schema before anything is
sent (--skip-local-validation sends them anyway); a mismatch is a usage error (exit 2).`,
  flags: {
    ...CLIENT_FLAGS,
    arguments: { kind: "string", value: "JSON", help: "the arguments as one JSON object" },
    "arguments-file": {
      kind: "path",
      value: "PATH",
      help: "the arguments as a JSON object in a file (- for stdin)",
    },
    "arguments-stdin": { kind: "bool", help: "the arguments as a JSON object on stdin" },
    "skip-local-validation": SKIP_VALIDATION,
  },
  words: true,
  sections: [SHORTHAND, TIME, CONNECTION],
  examples: [
    "tools call read_file --root ~/project path=README.md endLine:=10",
    "tools call search_text --endpoint http://127.0.0.1:8080/mcp query=TODO regex:=false",
    "tools call read_file --help --root ~/project",
  ],
} as const satisfies CommandDecl;

/** `tools run FILE|-`: calls from JSON lines. */
export const TOOLS_RUN = {
  path: ["tools", "run"],
  usage: ["FILE|- [--keep-going] [TIME] [INTERACTION] [CONNECTION]"],
  about:
    `Calls tools one after another from JSON lines {"name": ..., "arguments": {...}} in FILE (or
stdin for -); prints one envelope line each. Stops at the first failure unless --keep-going;
the exit code is the worst one.`,
  flags: {
    ...CLIENT_FLAGS,
    "keep-going": { kind: "bool", help: "run every line after a failure" },
    "skip-local-validation": SKIP_VALIDATION,
  },
  words: true,
  sections: [TIME, CONNECTION],
  examples: [
    `printf '%s\\n' '{"name":"read_file","arguments":{"path":"a.txt"}}' | {prog} tools run - --root .`,
  ],
} as const satisfies CommandDecl;

/** `resources list`: every page of the server's resources. */
export const RESOURCES_LIST = {
  path: ["resources", "list"],
  usage: ["[--single-page] [--cursor C] [--max-pages N] [CONNECTION] [OUTPUT]"],
  about:
    "Lists the server's resources (every page unless --single-page; at most --max-pages, default 100).",
  flags: { ...CLIENT_FLAGS, ...PAGING_FLAGS },
  sections: [CONNECTION, TIME],
  examples: [
    "resources list --config ~/.mcp.json --server everything",
    "resources list --endpoint http://127.0.0.1:8080/mcp --output jsonl",
  ],
} as const satisfies CommandDecl;

/** `resources templates`: every page of the server's resource templates. */
export const RESOURCES_TEMPLATES = {
  path: ["resources", "templates"],
  usage: ["[--single-page] [--cursor C] [--max-pages N] [CONNECTION] [OUTPUT]"],
  about: `Lists the server's resource templates (URI templates such as file:///{path}; every page
unless --single-page; at most --max-pages, default 100).`,
  flags: { ...CLIENT_FLAGS, ...PAGING_FLAGS },
  sections: [CONNECTION, TIME],
  examples: ["resources templates --config ~/.mcp.json --server everything"],
} as const satisfies CommandDecl;

/** `resources read URI`: one resource's contents. */
export const RESOURCES_READ = {
  path: ["resources", "read"],
  usage: ["URI [TIME] [CONNECTION] [OUTPUT]"],
  about:
    `Reads one resource. For people, text contents are shown (escaped) and binary ones as a note
with their size and type; the JSON outputs keep every content as the server sent it.`,
  flags: CLIENT_FLAGS,
  words: true,
  sections: [TIME, CONNECTION],
  examples: [
    "resources read demo://resource/static/document/features.md --config mcp.json --server everything",
    "resources read file:///notes.txt --endpoint http://127.0.0.1:8080/mcp --output json",
  ],
} as const satisfies CommandDecl;

/** `prompts list`: every page of the server's prompts. */
export const PROMPTS_LIST = {
  path: ["prompts", "list"],
  usage: ["[--single-page] [--cursor C] [--max-pages N] [CONNECTION] [OUTPUT]"],
  about:
    "Lists the server's prompts and their arguments (every page unless --single-page; at most --max-pages, default 100).",
  flags: { ...CLIENT_FLAGS, ...PAGING_FLAGS },
  sections: [CONNECTION, TIME],
  examples: ["prompts list --config ~/.mcp.json --server everything"],
} as const satisfies CommandDecl;

/** `prompts get NAME ...`: one prompt, its arguments filled in by the server. */
export const PROMPTS_GET = {
  path: ["prompts", "get"],
  usage: [
    `NAME [key=value ...] [--arguments JSON | --arguments-file PATH | --arguments-stdin]
         [--skip-local-validation] [TIME] [INTERACTION] [CONNECTION] [OUTPUT]`,
  ],
  about:
    `Gets one prompt's messages, with its arguments filled in. The prompt is looked up in the server's
list first: an unknown name, an argument it does not declare, a missing required one or a value
that is not a string is a usage error (exit 2) before anything is sent (--skip-local-validation
sends them anyway).`,
  flags: {
    ...CLIENT_FLAGS,
    arguments: { kind: "string", value: "JSON", help: "the arguments as one JSON object" },
    "arguments-file": {
      kind: "path",
      value: "PATH",
      help: "the arguments as a JSON object in a file (- for stdin)",
    },
    "arguments-stdin": { kind: "bool", help: "the arguments as a JSON object on stdin" },
    "skip-local-validation": {
      kind: "bool",
      help: "send arguments the prompt's declared arguments refuse",
    },
  },
  words: true,
  sections: [
    `Arguments: key=value, beside or instead of one of --arguments JSON | --arguments-file PATH |
  --arguments-stdin (a JSON object of strings). A prompt's arguments are strings.`,
    TIME,
    CONNECTION,
  ],
  examples: [
    "prompts get args-prompt city=Lisbon --config ~/.mcp.json --server everything",
    `prompts get args-prompt --arguments '{"city":"Oslo","state":"Oslo"}' --endpoint http://127.0.0.1:8080/mcp`,
  ],
} as const satisfies CommandDecl;

/** `ping`: one ping request and its round trip. */
export const PING = {
  path: ["ping"],
  usage: ["[TIME] [CONNECTION] [OUTPUT]"],
  about: `Connects, sends one ping and disconnects: exit 0 when the server answers. For people, the
round trip in milliseconds. The 2026-07-28 revision has no ping: there the round trip is one
server/discover, which every server of that revision answers.`,
  flags: CLIENT_FLAGS,
  sections: [CONNECTION, TIME],
  examples: [
    "ping --endpoint http://127.0.0.1:8080/mcp",
    "ping --config ~/.mcp.json --server everything --timeout 5",
  ],
} as const satisfies CommandDecl;

/** The client commands: each connects to an MCP server (`tools`, `resources`, ...). */
export const CLIENT_COMMANDS = ["server-info", "tools", "resources", "prompts", "ping"] as const;

/** The server an auth command is about, and its output (every auth command). */
const AUTH_FLAGS = {
  endpoint: { kind: "url", help: "the MCP server's URL" },
  config: { kind: "path", help: "an mcpServers JSON file (with --server)" },
  server: { kind: "string", value: "NAME", help: "the HTTP server's name in --config" },
  output: {
    kind: "string",
    value: "json|pretty",
    help: "json (default when not a terminal) or pretty",
  },
} as const satisfies Record<string, FlagDecl>;

/** `auth login`: OAuth sign-in through the browser. */
export const AUTH_LOGIN = {
  path: ["auth", "login"],
  usage: [`(--endpoint URL | --config FILE --server NAME) [--scope S]
                       [--no-browser] [--redirect-port N] [--auth-timeout S]`],
  about:
    `Signs in through the browser (authorization code with PKCE on a loopback redirect) and stores
the tokens.`,
  flags: {
    ...AUTH_FLAGS,
    scope: { kind: "string", value: "S", help: "the scopes to ask for" },
    "no-browser": { kind: "bool", help: "print the sign-in URL instead of opening a browser" },
    "redirect-port": {
      kind: "string",
      value: "N",
      help: "the loopback redirect's port (default: any free one)",
    },
    "auth-timeout": {
      kind: "string",
      value: "S",
      default: "300",
      help: "seconds to wait for the browser (default 300)",
    },
    "non-interactive": { kind: "bool", help: "refuse instead of waiting for a person" },
  },
  examples: ["auth login --endpoint https://mcp.example.com/mcp --scope files:read"],
} as const satisfies CommandDecl;

/** `auth status`: the stored sign-ins. */
export const AUTH_STATUS = {
  path: ["auth", "status"],
  usage: ["[--endpoint URL | --config FILE --server NAME] [--output json|pretty]"],
  about: "Lists the stored sign-ins (issuer, client, scopes, expiry), or the one for a server.",
  flags: AUTH_FLAGS,
  examples: ["auth status --output json"],
} as const satisfies CommandDecl;

/** `auth logout`: forget (and revoke) a sign-in. */
export const AUTH_LOGOUT = {
  path: ["auth", "logout"],
  usage: ["(--endpoint URL | --config FILE --server NAME | --all)"],
  about:
    "Revokes (where the server supports it) and forgets the stored sign-in of one server, or all.",
  flags: { ...AUTH_FLAGS, all: { kind: "bool", help: "every stored sign-in" } },
  examples: ["auth logout --endpoint https://mcp.example.com/mcp"],
} as const satisfies CommandDecl;

/** The shells `completion` writes a script for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;

/** `completion bash|zsh|fish`: a shell completion script, generated from these declarations. */
export const COMPLETION = {
  path: ["completion"],
  usage: ["bash|zsh|fish"],
  about: `Prints a completion script for the shell on stdout. It completes the command \`wmcp\`: its
commands and subcommands, the operation names of \`op\`, every flag of each command, the values
of flags that take one of a few, and files or directories for the flags that take a path. The
script is generated from the same declarations as this help, and holds nothing else.`,
  flags: {},
  words: true,
  sections: [
    `Install: bash reads completions/wmcp from ~/.local/share/bash-completion (bash-completion
2.x); zsh loads _wmcp from a directory on $fpath (for ~/.zfunc: mkdir -p ~/.zfunc, and
fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc); fish reads completions/wmcp.fish from
~/.config/fish. Open a new shell after installing.`,
    "Exit codes: 0 success, 2 usage error (no shell, or one it does not know).",
  ],
  examples: [
    "completion bash > ~/.local/share/bash-completion/completions/wmcp",
    "completion zsh > ~/.zfunc/_wmcp",
    "completion fish > ~/.config/fish/completions/wmcp.fish",
    "source <({prog} completion bash)   # this bash only",
  ],
} as const satisfies CommandDecl;

/** Every declared command, by its path (`"serve stop"`). */
export const DECLARED: ReadonlyMap<string, CommandDecl> = new Map(
  [
    OP,
    OP_LIST,
    SERVE_STOP,
    CONFIG_PRINT,
    SERVER_INFO,
    TOOLS_LIST,
    TOOLS_SHOW,
    TOOLS_CALL,
    TOOLS_RUN,
    RESOURCES_LIST,
    RESOURCES_TEMPLATES,
    RESOURCES_READ,
    PROMPTS_LIST,
    PROMPTS_GET,
    PING,
    AUTH_LOGIN,
    AUTH_STATUS,
    AUTH_LOGOUT,
    COMPLETION,
  ]
    .map((d) => [d.path.join(" "), d]),
);
