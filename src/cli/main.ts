/** The CLI: argv parsing and command wiring for cli.ts. Returns an exit code; never calls Deno.exit. */
import { parseArgs } from "node:util";
import denoConfig from "../../deno.json" with { type: "json" };
import { invocationDirectory, openWorkspaceFromFlags, UsageError } from "../config.ts";
import { toWorkspaceError } from "../workspace/errors.ts";
import {
  availableOperations,
  getOperation,
  jsonSchemas,
  runOperation,
} from "../operations/registry.ts";
import { readArguments } from "./arguments.ts";
import { serveStop } from "./serve_stop.ts";
import { serveLaunch } from "./serve_launch.ts";
import { configPrint } from "./host_config.ts";
import { chooseFormat, type OutputFormat, render, writeError, writeStdout } from "./output.ts";

/** Exit codes of the `op` commands. */
export const EXIT = { ok: 0, operationError: 1, usage: 2 } as const;

const HELP = `wmcp ${denoConfig.version}: typed, contained access to one workspace directory

Usage:
  cli.ts op list [--write] [--output json|pretty]
  cli.ts op NAME [--arguments JSON | --arguments-file PATH | --arguments-stdin]
                 [--root DIR] [--write] [--limit name=N ...] [--output json|pretty]
  cli.ts serve stdio|http [--sandbox auto|required|off]
                 [server flags: --root DIR --write --host H --port N ...]
  cli.ts serve stop --pid-file FILE [--timeout SECONDS]
  cli.ts config print --host claude-desktop|claude-code|vscode|cursor|generic
                 --root DIR [--write] [--http URL] [--name NAME]
  cli.ts server-info [CONNECTION] [OUTPUT]
  cli.ts tools list [--single-page] [--cursor C] [--max-pages N] [CONNECTION] [OUTPUT]
  cli.ts tools show NAME [CONNECTION] [OUTPUT]
  cli.ts tools call NAME [--arguments JSON | --arguments-file PATH | --arguments-stdin]
                 [--skip-local-validation] [TIME] [INTERACTION] [CONNECTION] [OUTPUT]
  cli.ts tools run FILE|- [--keep-going] [TIME] [INTERACTION] [CONNECTION]
  cli.ts auth login (--endpoint URL | --config FILE --server NAME) [--scope S] [--no-browser]
                 [--redirect-port N] [--auth-timeout S]
  cli.ts auth status [--endpoint URL | --config FILE --server NAME] [--output json|pretty]
  cli.ts auth logout (--endpoint URL | --config FILE --server NAME | --all)
  cli.ts --help | --version

Client CONNECTION (default: the bundled stdio server on --root, read-only unless --write):
  --endpoint URL [--bearer-token-env VAR]   Streamable HTTP (implies --transport http)
  --config FILE --server NAME                a server from an mcpServers JSON file
  --protocol-version auto|2026-07-28|2025-11-25|2025-06-18|2025-03-26|2024-11-05
  --connect-timeout S  --server-logs
Client OUTPUT: --output mcp-json|json|jsonl|pretty (pretty on a terminal, else mcp-json)
Client TIME: --timeout S (inactivity, default 60; progress resets it) --max-timeout S
Client INTERACTION: --non-interactive | --input-responses-file PATH, --max-input-rounds N
Client exit codes: 0 success, 1 tool error, 2 usage, 3 transport, 4 protocol,
  5 invalid result, 6 input required, 7 timeout or cancelled.

Options of serve stdio|http:
  --sandbox MODE    auto (default): on Linux with bubblewrap, run the server in a mount
                    namespace where only the workspace and the runtime exist, else say why
                    not on stderr; required: fail (exit 2) when that is not possible; off

Options of op:
  --root DIR        workspace root (default: the directory you run from)
  --write           enable write_file, edit_file, create_directory, move_path, delete_path
  --limit name=N    override a limit (see workspace_info), repeatable
  --output FORMAT   json (default when not a terminal) or pretty

The result is the operation's JSON object on stdout. Errors are one JSON object
{"error":{"code",...}} on stderr. Exit codes: 0 success, 1 operation error,
2 usage error.
`;

const OP_OPTIONS = {
  root: { type: "string" },
  write: { type: "boolean" },
  limit: { type: "string", multiple: true },
  output: { type: "string" },
  arguments: { type: "string" },
  "arguments-file": { type: "string" },
  "arguments-stdin": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** Runs the CLI with argv (without the program name) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  let format: OutputFormat = "json";
  try {
    const [command, ...rest] = argv;
    if (command === undefined || command === "--help" || command === "-h" || command === "help") {
      await writeStdout(HELP);
      return command === undefined ? EXIT.usage : EXIT.ok;
    }
    if (command === "--version") {
      await writeStdout(`${denoConfig.version}\n`);
      return EXIT.ok;
    }
    if (command === "server-info" || command === "tools") {
      // The client writes nothing but stored credentials: write on the invocation directory is
      // given up (a separate grant on the credentials directory stays, even when the invocation
      // directory is its ancestor). Under the router (router.ts) this process holds only what
      // the command needs already; the revocations matter when cli.ts runs in process.
      try {
        Deno.permissions.revokeSync({ name: "write", path: invocationDirectory() });
      } catch {
        // No readable invocation directory: no write grant on it either.
      }
      // Loaded only here: the SDK client reads environment variables when imported.
      const { runClient } = await import("./client_cli.ts");
      return await runClient(command, rest);
    }
    if (command === "auth") {
      // Reads and writes only the credentials directory (it re-launches itself narrowed to it).
      const { runAuth } = await import("./auth_cli.ts");
      return await runAuth(rest);
    }
    // `op` and `serve stop` never reach arbitrary hosts or environment variables.
    invocationDirectory();
    if (command === "op") {
      Deno.permissions.revokeSync({ name: "net" });
      Deno.permissions.revokeSync({ name: "run" });
    }
    if (command === "config") {
      // Prints a host's snippet; reads only through its probe child, never writes or connects.
      Deno.permissions.revokeSync({ name: "write" });
      Deno.permissions.revokeSync({ name: "net" });
      if (rest[0] !== "print") throw new UsageError("config takes print --host H --root DIR ...");
      return await configPrint(rest.slice(1), writeStdout);
    }
    if (command === "serve") {
      if (rest[0] === "stdio" || rest[0] === "http") {
        // The launcher only starts the child (with its own, narrower permissions).
        Deno.permissions.revokeSync({ name: "write" });
        Deno.permissions.revokeSync({ name: "net" });
        return await serveLaunch(rest[0], rest.slice(1));
      }
      if (rest[0] !== "stop") {
        throw new UsageError("serve takes stdio|http [server flags] or stop --pid-file FILE");
      }
      return await serveStop(rest.slice(1), writeStdout);
    }
    if (command !== "op") {
      throw new UsageError(`unknown command ${JSON.stringify(command)}; see --help`);
    }
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: OP_OPTIONS, allowPositionals: true, strict: true });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const { values, positionals } = parsed;
    format = chooseFormat(values.output);
    if (values.help) {
      await writeStdout(HELP);
      return EXIT.ok;
    }
    if (positionals.length !== 1) {
      throw new UsageError("op takes one operation name (or `list`); see --help");
    }
    const name = positionals[0];
    if (name === "list") {
      const ops = availableOperations(values.write === true).map((op) => ({
        name: op.name,
        title: op.title,
        description: op.description,
        annotations: op.annotations,
        needsWrite: op.needsWrite,
        inputSchema: jsonSchemas(op).input,
        outputSchema: jsonSchemas(op).output,
      }));
      await writeStdout(render({ operations: ops }, format));
      return EXIT.ok;
    }
    if (!getOperation(name)) {
      throw new UsageError(
        `unknown operation ${JSON.stringify(name)}; known: ${
          availableOperations(true).map((o) => o.name).join(", ")
        }`,
      );
    }
    const args = await readArguments(values);
    const ws = await openWorkspaceFromFlags(values);
    const result = await runOperation({ workspace: ws }, name, args);
    await writeStdout(render(result, format));
    return EXIT.ok;
  } catch (err) {
    if (err instanceof UsageError) {
      writeError({ code: "USAGE", message: err.message }, format);
      return EXIT.usage;
    }
    writeError(toWorkspaceError(err).toJSON(), format);
    return EXIT.operationError;
  }
}
