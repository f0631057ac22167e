/** The CLI: argv parsing and command wiring for cli.ts. Returns an exit code; never calls Deno.exit. */
import { EXIT_USAGE, invocationDirectory, UsageError } from "../config.ts";
import { openWorkspaceFromFlags } from "../open_workspace.ts";
import { type ErrorObject, toWorkspaceError, WorkspaceError } from "../workspace/errors.ts";
import {
  availableOperations,
  getOperation,
  jsonSchemas,
  parseInput,
  runOperation,
} from "../operations/registry.ts";
import type { OperationDefinition } from "../operations/types.ts";
import { type GivenArguments, readArguments } from "./arguments.ts";
import {
  COMMANDS,
  helpText,
  programName,
  schemaHelp,
  seeHelp,
  SUBCOMMANDS,
  VERSION,
} from "./help.ts";
import { CLIENT_COMMANDS, OP, OP_LIST, TOOLS_CALL } from "./commands.ts";
import { operationExamples } from "../tools/mod.ts";
import { parseCommand, rootsOf, scanWords } from "./declare.ts";
import {
  didYouMean,
  shorthandTypeHint,
  unknownArgumentMessage,
  unknownFlagMessage,
  unknownKey,
  withheldUnknownMessage,
  withPointer,
} from "./suggest.ts";
import { serveStop } from "./serve_stop.ts";
import { serveLaunch } from "./serve_launch.ts";
import { configPrint } from "./host_config.ts";
import { completionCommand } from "./completion.ts";
import {
  chooseFormat,
  outputBeforeParse,
  type OutputFormat,
  renderOperations,
  renderResult,
  StdoutClosed,
  writeError,
  writeStdout,
} from "./output.ts";
import { onInterrupt } from "./interrupt.ts";
import { startOpProgress } from "./op_progress.ts";

/** Exit code of an `op` ended by Ctrl-C (128 + SIGINT, as a shell reports a death by it). */
const EXIT_INTERRUPTED = 130;

/** Exit codes of the `op` commands. */
export const EXIT = { ok: 0, operationError: 1, usage: EXIT_USAGE } as const;

/** The words of argv before a `--` terminator (flags after it are values). */
function beforeTerminator(argv: readonly string[]): readonly string[] {
  const end = argv.indexOf("--");
  return end < 0 ? argv : argv.slice(0, end);
}

/** The command path a usage error or --help is about: `op`, `tools call`, `auth login`... */
function commandPath(argv: readonly string[]): string[] {
  const [command, ...rest] = argv;
  if (command === undefined || !(COMMANDS as readonly string[]).includes(command)) return [];
  const subs = SUBCOMMANDS[command];
  const word = rest.find((w) => !w.startsWith("-"));
  return subs && word !== undefined && subs.includes(word) ? [command, word] : [command];
}

/** Help for `op NAME`: the operation's arguments from its JSON Schema, annotations, examples. */
function operationHelp(op: OperationDefinition, prog: string): string {
  return schemaHelp({
    usage: `${prog} op ${op.name}${op.needsWrite ? " --write" : ""}`,
    name: op.name,
    title: op.title,
    description: op.description,
    inputSchema: jsonSchemas(op).input,
    annotations: op.annotations as unknown as Record<string, unknown>,
    needsWrite: op.needsWrite,
    examples: operationExamples(op.name, prog),
  });
}

function unknownOperation(name: string): UsageError {
  const names = availableOperations(true).map((o) => o.name);
  return new UsageError(
    `unknown operation ${JSON.stringify(name)}${didYouMean(name, [...names, "list"])}; known: ${
      names.join(", ")
    }`,
  );
}

/**
 * Checks `op` arguments against the operation's input schema before anything runs. A failure
 * the JSON Schema expresses (unknown or missing key, wrong type, bound) is the library's
 * INVALID_ARGUMENT error, reported as a usage error (exit 2), as `tools call` reports the same
 * arguments; refinements beyond JSON Schema (endLine < startLine) are left to the operation.
 */
function checkOperationArguments(
  op: OperationDefinition,
  given: GivenArguments,
  words: readonly string[],
): void {
  const args = given.values;
  const parsed = op.inputSchema.safeParse(args);
  try {
    parseInput(op, args);
  } catch (err) {
    if (!(err instanceof WorkspaceError) || err.code !== "INVALID_ARGUMENT") throw err;
    const schemaLevel = String(err.argument ?? "").endsWith("__proto__") ||
      (!parsed.success && parsed.error.issues.some((i) => i.code !== "custom"));
    if (!schemaLevel) return;
    if (given.withheld !== undefined && !parsed.success) {
      // Keys from a file reached through a link are counted, never named (decision 0060).
      const count = parsed.error.issues.reduce(
        (n, i) => n + (i.code === "unrecognized_keys" ? i.keys.length : 0),
        0,
      );
      if (count > 0) {
        throw new ArgumentsMismatch({
          code: "INVALID_ARGUMENT",
          message: withheldUnknownMessage(count, given.withheld),
          details: { unknownArguments: count },
        });
      }
    }
    // A misspelled key is the mistake to report first (before the required key it misses),
    // worded and suggested as `tools call` words it.
    const unknown = unknownKey(jsonSchemas(op).input, args);
    throw new ArgumentsMismatch(
      unknown === undefined
        ? { ...err.toJSON(), message: err.message + shorthandTypeHint(err.message, words) }
        : {
          ...err.toJSON(),
          message: unknownArgumentMessage(unknown.key, unknown.known),
          argument: unknown.key,
        },
    );
  }
}

/** Arguments refused by the operation's schema before it ran (exit 2, the library's error object). */
class ArgumentsMismatch extends Error {
  constructor(readonly error: ErrorObject) {
    super(error.message);
    this.name = "ArgumentsMismatch";
  }
}

function unknownSubcommand(command: string, word: string | undefined): UsageError {
  const subs = SUBCOMMANDS[command] ?? [];
  return new UsageError(
    word === undefined || word.startsWith("-")
      ? `${command} takes ${subs.join(", ")}`
      : `unknown subcommand ${command} ${JSON.stringify(word)}${
        didYouMean(word, subs)
      }; ${command} takes ${subs.join(", ")}`,
  );
}

/**
 * The help asked for by `COMMAND ... --help`, or undefined for `tools call NAME --help`, which
 * needs the server. An unknown operation name is a usage error.
 */
function commandHelp(
  command: string,
  rest: readonly string[],
  prog: string,
): string | undefined {
  if (command === "op") {
    const name = scanWords(OP, rest)[0];
    if (name === "list") return helpText(["op", "list"], prog);
    if (name !== undefined) {
      const op = getOperation(name);
      if (!op) throw unknownOperation(name);
      return operationHelp(op, prog);
    }
  }
  const path = commandPath([command, ...rest]);
  // `tools call NAME --help` (NAME a word, not a flag's value) asks the server.
  if (path[0] === "tools" && path[1] === "call" && scanWords(TOOLS_CALL, rest).length >= 2) {
    return undefined;
  }
  // A client command's examples carry the connection flags given (help.ts connectionWords).
  return helpText(path, prog, rest) ?? helpText([command], prog);
}

/** How an error of the command is reported: its output format and the command path it names. */
interface Report {
  format: OutputFormat;
  path: string[];
}

/**
 * `op list` and `op NAME ...` (argv after `op`): parses by the declarations, checks the arguments
 * against the operation's schema, runs it in this process with progress on a terminal and Ctrl-C
 * handling, and writes its result. Sets `report` as it learns the format and the operation.
 */
async function runOp(rest: string[], report: Report): Promise<number> {
  // A flag error is reported in the format the command would have used (pretty on a terminal).
  report.format = outputBeforeParse(rest, chooseFormat);
  const { values, words: positionals } = await parseCommand(OP, rest);
  report.format = chooseFormat(values.output);
  if (positionals.length === 0) {
    throw new UsageError("op takes an operation name (or `list`)");
  }
  const name = positionals[0];
  if (name === "list") {
    if (positionals.length > 1) {
      throw new UsageError(`op list takes no arguments, got ${JSON.stringify(positionals[1])}`);
    }
    // `op list` takes only its own flags (--write, --output).
    await parseCommand(OP_LIST, rest.toSpliced(rest.indexOf("list"), 1));
    const ops = availableOperations(values.write === true).map((op) => ({
      name: op.name,
      title: op.title,
      description: op.description,
      annotations: op.annotations,
      needsWrite: op.needsWrite,
      inputSchema: jsonSchemas(op).input,
      outputSchema: jsonSchemas(op).output,
    }));
    await writeStdout(renderOperations(ops, report.format));
    return EXIT.ok;
  }
  const op = getOperation(name);
  if (!op) throw unknownOperation(name);
  report.path = ["op", name];
  const given = await readArguments(values, positionals.slice(1));
  const args = given.values;
  // The one broad-root rule of every entry: no --root from / or $HOME is a usage error.
  // Every --root and --read-only-root, in command-line order (decision 0064).
  const ws = await openWorkspaceFromFlags(
    { roots: rootsOf(OP, rest), write: values.write, limit: values.limit },
    { refuseBroadDefaultRoot: true },
  );
  checkOperationArguments(op, given, positionals.slice(1));
  // Progress on stderr while it runs, when stderr is a terminal; erased before any output.
  const progress = startOpProgress(name);
  // Ctrl-C: the progress line is erased (with the terminal's echoed ^C), the operation is
  // cancelled, and the command ends at once with 130 (128 + SIGINT), writing nothing more.
  const cancel = new AbortController();
  const interrupted = Promise.withResolvers<"interrupted">();
  const interrupt = onInterrupt(() => {
    progress.stop();
    cancel.abort();
    interrupted.resolve("interrupted");
  });
  let result;
  try {
    const running = runOperation(
      { workspace: ws, onProgress: progress.report, signal: cancel.signal },
      name,
      args,
    );
    running.catch(() => {}); // after an interrupt nobody awaits it
    result = await Promise.race([running, interrupted.promise]);
  } finally {
    interrupt.dispose();
    progress.stop();
  }
  if (result === "interrupted") return EXIT_INTERRUPTED;
  await writeStdout(renderResult(name, result, { format: report.format, args }));
  return EXIT.ok;
}

/**
 * What is answered before any command runs: the program's help (no command, `help`, `--help`),
 * `--version`, a command's help, and an unknown command (a UsageError). Undefined when the command
 * runs; `serve stdio|http` hands every flag (--help and --version too) to the server entry, and
 * `tools call NAME --help` asks the server.
 */
async function answerInfo(argv: string[], prog: string): Promise<number | undefined> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    await writeStdout(helpText([], prog)!);
    return EXIT.usage;
  }
  if (command === "--help" || command === "-h" || command === "help") {
    const text = helpText(rest.filter((w) => !w.startsWith("-")).slice(0, 2), prog) ??
      helpText([], prog)!;
    await writeStdout(text);
    return EXIT.ok;
  }
  const launches = command === "serve" && (rest[0] === "stdio" || rest[0] === "http");
  if (!(COMMANDS as readonly string[]).includes(command)) {
    if (command === "--version" || command === "-V") {
      await writeStdout(`${VERSION}\n`);
      return EXIT.ok;
    }
    throw new UsageError(
      command.startsWith("-")
        ? unknownFlagMessage(command, ["--help", "-h", "--version", "-V"])
        : `unknown command ${JSON.stringify(command)}${didYouMean(command, COMMANDS)}`,
    );
  }
  // `serve stdio|http` hands every flag (--help and --version included) to the server entry.
  if (!launches) {
    const words = beforeTerminator(rest);
    if (words.includes("--version") || words.includes("-V")) {
      await writeStdout(`${VERSION}\n`);
      return EXIT.ok;
    }
    if (words.includes("--help") || words.includes("-h")) {
      const help = commandHelp(command, rest, prog);
      if (help !== undefined) {
        await writeStdout(help);
        return EXIT.ok;
      }
      // `tools call NAME --help`: the tool's arguments come from the server (client_cli.ts).
    }
  }
  return undefined;
}

/**
 * The client commands (`server-info`, `tools`, `resources`, `prompts`, `ping`): write on the
 * invocation directory given up, then the client, loaded only here (the SDK client reads
 * environment variables when imported).
 */
async function runClientCommand(command: string, rest: string[]): Promise<number> {
  // The client writes nothing but stored credentials: write on the invocation directory is
  // given up (a separate grant on the credentials directory stays, even when the invocation
  // directory is its ancestor). Under the router (router.ts) this process holds only what
  // the command needs already; the revocations matter when cli.ts runs in process.
  try {
    Deno.permissions.revokeSync({ name: "write", path: invocationDirectory() });
  } catch {
    // No readable invocation directory: no write grant on it either.
  }
  const { runClient } = await import("./client_cli.ts");
  return await runClient(command, rest);
}

/** `completion SHELL`: every permission given up, then the script. */
async function runCompletion(rest: string[]): Promise<number> {
  // Static text from the declarations: nothing to read, write, reach, run or look up. In the
  // router's process (the router starts no child for it) the env and run grants go too.
  for (const name of ["read", "write", "net", "env", "run", "sys", "ffi"] as const) {
    Deno.permissions.revokeSync({ name });
  }
  const ops = availableOperations(true).map((op) => op.name);
  await writeStdout(await completionCommand(rest, ops));
  return EXIT.ok;
}

/** `serve stdio|http` (the launcher) and `serve stop`. */
async function runServe(rest: string[]): Promise<number> {
  if (rest[0] === "stdio" || rest[0] === "http") {
    // The launcher only starts the child (with its own, narrower permissions).
    Deno.permissions.revokeSync({ name: "write" });
    Deno.permissions.revokeSync({ name: "net" });
    return await serveLaunch(rest[0], rest.slice(1));
  }
  if (rest[0] !== "stop") throw unknownSubcommand("serve", rest[0]);
  return await serveStop(rest.slice(1), writeStdout);
}

/** Runs one known command (help, version and unknown commands already answered). */
async function runCommand(command: string, rest: string[], report: Report): Promise<number> {
  if ((CLIENT_COMMANDS as readonly string[]).includes(command)) {
    return await runClientCommand(command, rest);
  }
  if (command === "completion") return await runCompletion(rest);
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
    if (rest[0] !== "print") throw unknownSubcommand("config", rest[0]);
    return await configPrint(rest.slice(1), writeStdout);
  }
  if (command === "serve") return await runServe(rest);
  if (command !== "op") throw new UsageError(`${command} takes a subcommand`);
  return await runOp(rest, report);
}

/** A command's failure written as the CLI reports it (stderr, the output's shape) and its exit code. */
function reportFailure(err: unknown, report: Report, prog: string): number {
  // The reader of stdout went away (`| head`): end quietly, exit 0 (INTERFACES.md).
  if (err instanceof StdoutClosed) return EXIT.ok;
  if (err instanceof UsageError) {
    writeError(
      { code: "USAGE", message: withPointer(err.message, seeHelp(report.path, prog)) },
      report.format,
    );
    return EXIT.usage;
  }
  if (err instanceof ArgumentsMismatch) {
    writeError(
      { ...err.error, message: withPointer(err.message, seeHelp(report.path, prog)) },
      report.format,
    );
    return EXIT.usage;
  }
  writeError(toWorkspaceError(err).toJSON(), report.format);
  return EXIT.operationError;
}

/** Runs the CLI with argv (without the program name) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const prog = programName();
  const report: Report = { format: "json", path: commandPath(argv) };
  try {
    const [command, ...rest] = argv;
    const answered = await answerInfo(argv, prog);
    if (answered !== undefined) return answered;
    return await runCommand(command, rest, report);
  } catch (err) {
    return reportFailure(err, report, prog);
  }
}
